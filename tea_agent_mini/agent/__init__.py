"""The agent: the turn loop (Session), the corrections of small models' slips, the loop guard,
and the background worker for follow-up jobs."""
