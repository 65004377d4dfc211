"""Evolving the agent's own work: toolkit_self_evolve (a checked change to a file, rolled back
when any check fails; target.py, checks.py, selfevolve.py) and toolkit_evolution (the evolution
pass run now, its report shown; evolution.py)."""
