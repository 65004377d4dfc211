"""Running shell commands, for ``toolkit_exec``, scheduled shell tasks and external programs.

``runner`` runs one command (activity-aware timeout, process-group kill, cancel); ``denylist``
refuses destructive commands (best effort: ``shellwords`` reads the line as the shell would,
``denyrules``, ``denycode`` and ``denypaths`` judge it); ``sandbox`` confines a command with
bubblewrap; ``proctree`` reads process trees from /proc; ``orphans`` records running commands
so that a crash leaves none behind. Nothing here knows about tools or the model.
"""
