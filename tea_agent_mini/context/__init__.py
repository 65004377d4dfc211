"""What one request holds: the system prompt, the history levels within a token budget, the
volatile context block (time, memories, skills, unfinished work, mode)."""
