"""Helpers of ``build_mini.py``: whitelist, static checks, wheel build, install proof, report.

Standard library only: ``whitelist`` is also loaded by ``hatch_build.py`` inside the build backend.
"""
