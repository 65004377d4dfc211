"""toolkit_export_last_pdf: the current conversation written as a PDF into the workspace."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.store import Store
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.export import toolkit_export_last_pdf
from tea_agent_mini.types import Message, ToolCall

FIRST_ANSWER = "The report is ready: revenue grew by 12 percent."
LAST_ANSWER = "收入增长了百分之十二。"
needs_poppler = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("pdftotext", "pdfinfo")),
    reason="poppler-utils not installed (apt-get install poppler-utils poppler-data)",
)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


@pytest.fixture
def ctx(store, workspace, tea_home) -> ToolContext:
    topic = store.topics.create(title="Quarterly report 季度")
    for message in (
        Message("user", "Summarise the report"),
        Message("assistant", FIRST_ANSWER),
        Message("user", "用中文说一遍"),
        Message("assistant", LAST_ANSWER),
        # the turn running the tool: its answer is not written yet
        Message("user", "Now export that as a PDF"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "toolkit_export_last_pdf", "{}"),)),
    ):
        store.messages.add(topic.id, message)
    return ToolContext(workspace=workspace, home=tea_home, store=store, topic_id=topic.id)


def pdf_text(path: Path) -> str:
    result = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def pdf_pages(path: Path) -> int:
    result = subprocess.run(
        ["pdfinfo", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return int(next(line for line in result.stdout.splitlines() if line.startswith("Pages:"))[6:])


@needs_poppler
def test_writes_the_last_finished_answer_as_a_pdf(ctx, workspace):
    out = toolkit_export_last_pdf(ctx)
    path = workspace / "Quarterly_report_季度.pdf"
    assert out.startswith("wrote Quarterly_report_季度.pdf (") and "mode latest" in out
    assert path.read_bytes().startswith(b"%PDF-") and pdf_pages(path) == 1
    lines = [line.strip() for line in pdf_text(path).splitlines()]
    assert "1. 用中文说一遍" in lines and LAST_ANSWER in lines
    assert FIRST_ANSWER not in lines and "Now export that as a PDF" not in " ".join(lines)
    assert [p.name for p in workspace.iterdir()] == [path.name]  # nothing else left behind


@needs_poppler
def test_answers_mode_and_a_chosen_file_name(ctx, workspace):
    out = toolkit_export_last_pdf(ctx, filename="exports/report", mode="answers")
    path = workspace / "exports" / "report.pdf"
    assert out.startswith("wrote exports/report.pdf (")
    text = pdf_text(path)
    assert FIRST_ANSWER in text and LAST_ANSWER in text
    assert "(no answer)" in text  # the turn still running is listed, without an answer


def test_refuses_paths_outside_the_workspace(ctx):
    with pytest.raises(WorkspaceError):
        toolkit_export_last_pdf(ctx, filename="../outside.pdf")


def test_refuses_a_directory(ctx, workspace):
    (workspace / "docs.pdf").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        toolkit_export_last_pdf(ctx, filename="docs.pdf")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"store": None}, "no stored conversation"),
        ({"topic_id": None}, "no stored conversation"),
        ({"topic_id": "nope"}, "not in the store"),
    ],
)
def test_needs_a_stored_conversation(ctx, change, fragment):
    for name, value in change.items():
        setattr(ctx, name, value)
    with pytest.raises(ToolError, match=fragment):
        toolkit_export_last_pdf(ctx)


def test_refuses_an_unknown_mode(ctx):
    with pytest.raises(ToolError, match="latest, answers, full"):
        toolkit_export_last_pdf(ctx, mode="everything")


def test_registers_as_a_mutating_tool():
    toolkit = Toolkit.load(["export"])
    assert not toolkit.load_errors
    spec = next(s for s in toolkit.specs() if s.name == "toolkit_export_last_pdf")
    assert spec.mutates and spec.requires == ()
    assert spec.parameters["properties"]["mode"]["enum"] == ["latest", "answers", "full"]
