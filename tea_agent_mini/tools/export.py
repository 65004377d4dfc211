"""toolkit_export_last_pdf: the current conversation as a PDF file in the workspace.

Uses the same export as ``GET /v1/export/pdf/{id}`` (``export/session_markdown.py``) and the
pure-Python PDF writer; the file is written atomically, with no temporary files elsewhere.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated

from tea_agent_mini.errors import ToolError
from tea_agent_mini.export.session_markdown import (
    MODES,
    UnknownSession,
    export_filename,
    session_title,
    session_to_pdf,
)
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files.fileio import write_atomic


@tool("toolkit_export_last_pdf", mutates=True)
def toolkit_export_last_pdf(
    ctx: ToolContext,
    filename: str | None = None,
    # the enum is session_markdown.MODES, the list the export itself accepts
    mode: Annotated[str, {"enum": list(MODES)}] = "latest",
) -> str:
    """Export this conversation as a PDF file in the workspace (Chinese, Japanese and Korean
    text included). By default it holds the last finished answer with its question; the
    answer being written in this turn is not part of it yet.

    Args:
        filename: where to write the PDF, relative to the workspace (default: the
            conversation title + .pdf)
        mode: latest (default): the last finished question and its answer; answers: every
            question with its final answer; full: everything, with reasoning and tool calls
    """
    if ctx.store is None or not ctx.topic_id:
        raise ToolError("there is no stored conversation to export here")
    if mode not in MODES:
        raise ToolError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    topic = ctx.store.topics.get(ctx.topic_id)
    if topic is None:
        raise ToolError(f"the conversation {ctx.topic_id!r} is not in the store")
    title = session_title(topic)
    name = (filename or "").strip() or export_filename(title, topic.id, ".pdf")
    if not PurePath(name).suffix:
        name += ".pdf"
    path = ctx.resolve(name)
    if path.is_dir():
        raise ToolError(f"'{name}' is a directory; give a file name")
    try:
        data = session_to_pdf(ctx.store, topic.id, mode)
    except UnknownSession as exc:
        raise ToolError(str(exc)) from exc
    write_atomic(path, data, label=name)
    return f"wrote {ctx.relative(path)} ({len(data)} bytes, mode {mode}) from '{title}'"
