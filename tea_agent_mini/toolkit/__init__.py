"""The tool framework: how a tool is declared, found, checked and run. The tools themselves are
the families in ``tea_agent_mini.tools``.

    toolkit = Toolkit.load()                       # the modules listed in manifest.SHIPPED
    executor = ToolExecutor(toolkit, ToolContext(workspace=..., home=...))
    result = await executor.run(ToolCall(id="1", name="toolkit_file", arguments='{...}'))

``registry`` (``@tool``, ``ToolSpec``, ``Toolkit``), ``executor`` (arguments checked, approval,
parallel runs, output truncated, failures as data), ``arguments`` and ``callfix`` (the checks and
repairs of a call), ``context`` (``ToolContext``: workspace confinement, per-topic state, the
runtime's parts), ``selection`` and ``schemas`` (which tools a request offers, in compact form),
``manifest`` (the bundled modules), ``usercode``/``userstore``/``usertools`` (self-made tools),
and helpers tools share: ``modelcall``, ``programs``, ``notices``.

Names are imported lazily so that importing one tool module stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "context": ("ToolContext",),
        "executor": ("ToolExecutor", "truncate_output"),
        "registry": ("ToolSpec", "Toolkit", "tool"),
    },
)
