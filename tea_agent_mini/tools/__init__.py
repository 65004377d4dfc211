"""The tool families: one module, or one subpackage, per family of ``@tool`` functions.

``files/`` (read, write, edit, patch, diff, save, search, batch), ``shell`` (toolkit_exec),
``web/`` (fetch, search), ``git/``, ``dev/`` (format, review, tests, builds, releases),
``dates/`` (date arithmetic, the lunar calendar) and single modules for the rest. The framework
that runs them (registry, executor, context) is ``tea_agent_mini.toolkit``; which modules load
is ``toolkit/manifest.py``. Nothing is imported here.
"""
