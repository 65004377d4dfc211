"""Learning from work: how finished tasks went, what they taught, and what follows.

- ``facts.py``       a turn as stored, read back: the request, the tools in order, their errors
- ``evaluator.py``   the verdict on a turn: heuristics (the floor), the cheap model when present
- ``lessons.py``     lessons of failed, partial or corrected tasks; the relevant ones for a request
- ``review.py``      the background jobs' work: evaluate a turn, draw its lesson
- ``feedback.py``    the user's 👍/👎 (``/good``, ``/bad``, ``POST .../feedback``), which overrides
- ``crystallise.py`` a task that went well becomes a learned SKILL.md; ``skillmatch.py`` offers
  learned skills by meaning
- ``evolution.py``   the evolution pass: tool usage statistics, suggestions, ``TOOLS.md`` for the
  user's own tools, skill housekeeping (``usage.py``, ``skillcare.py``)

The parts here read the store and the user's folders and write records and reports; they never
run tools or turns (the layer sits next to ``toolkit``, below ``agent`` and ``runtime``, which
call them). The records live in ``store/evaluations.py``; the jobs run on the runtime's one
background worker (``agent/jobs.py`` names them), so a stop or a crash loses none.
"""
