"""Learning from work: how finished tasks went, and what they taught.

- ``facts.py``      a turn as stored, read back: the request, the tools in order, their errors
- ``evaluator.py``  the verdict on a turn: heuristics (the floor), the cheap model when present
- ``lessons.py``    lessons of failed, partial or corrected tasks; the relevant ones for a request
- ``review.py``     the background jobs' work: evaluate a turn, draw its lesson
- ``feedback.py``   the user's 👍/👎 (``/good``, ``/bad``, ``POST .../feedback``), which overrides

The records live in ``store/evaluations.py``; the jobs run on the runtime's one background worker
(``agent/jobs.py`` names them), so a stop or a crash loses none.
"""
