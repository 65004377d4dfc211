"""The agent: the turn loop (Session), prompts, loop guard, and the sync facade."""
