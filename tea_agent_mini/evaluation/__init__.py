"""Learning from work: what the agent's own records say about how it works, and what follows.

The parts here read the store and the user's folders and write records and reports; they never
run tools or turns (the layer sits next to ``toolkit``, below ``agent`` and ``runtime``, which
call them on the one background worker). ``evolution.py`` is the evolution pass: tool usage
statistics, suggestions, ``TOOLS.md`` for the user's own tools, skill housekeeping.
"""
