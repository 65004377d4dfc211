"""Session export over real HTTP: Markdown and PDF downloads (the PDF opened with poppler)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import unquote

import pytest

from tea_agent_mini.export.session_markdown import session_to_markdown
from tea_agent_mini.types import Message, ToolCall

ENGLISH_QUESTION = "How do I list files in Python?"
ENGLISH_ANSWER = "Use pathlib: call iterdir on a Path and print each entry."
CHINESE_QUESTION = "请用中文解释一下。"
CHINESE_ANSWER = "使用标准库中的路径模块，逐个打印目录里的文件。"
TITLE = "Files 文件 / listing"
needs_poppler = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("pdftotext", "pdfinfo", "pdftoppm")),
    reason="poppler-utils not installed (apt-get install poppler-utils poppler-data)",
)


def seed_session(live, title: str = TITLE, rounds: int = 1) -> str:
    """A stored session: an English exchange with a tool call, then a Chinese one (x rounds)."""
    store = live.runtime.store
    topic = store.topics.create(title=title)
    call = ToolCall("c1", "toolkit_exec", json.dumps({"command": "ls -1"}))
    for _ in range(rounds):
        for message in (
            Message("user", ENGLISH_QUESTION),
            Message("assistant", "Checking.", reasoning="List the workspace.", tool_calls=(call,)),
            Message("tool", "main.py\nREADME.md", tool_call_id="c1", name="toolkit_exec"),
            Message("assistant", ENGLISH_ANSWER),
            Message("user", CHINESE_QUESTION),
            Message("assistant", CHINESE_ANSWER),
        ):
            store.messages.add(topic.id, message)
    return topic.id


def run(*command: str | Path) -> str:
    result = subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def pdf_text(path: Path) -> str:
    return run("pdftotext", "-enc", "UTF-8", path, "-")


def pdf_info(path: Path) -> dict[str, str]:
    lines = run("pdfinfo", "-enc", "UTF-8", path).splitlines()
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in lines)}


def filename_of(disposition: str) -> str:
    match = re.search(r"filename\*=UTF-8''([^;]+)", disposition)
    assert match and disposition.startswith("attachment;"), disposition
    return unquote(match.group(1))


@pytest.mark.parametrize("mode", ["latest", "answers", "full"])
def test_markdown_export(live, http, mode):
    topic_id = seed_session(live)
    response = http.get(f"/v1/export/md/{topic_id}", params={"mode": mode})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert filename_of(response.headers["content-disposition"]) == "Files_文件_listing.md"
    assert 'filename="Files__listing.md"' in response.headers["content-disposition"]
    assert response.text == session_to_markdown(live.runtime.store, topic_id, mode)
    assert CHINESE_ANSWER in response.text
    assert (ENGLISH_ANSWER in response.text) == (mode != "latest")
    assert ("toolkit_exec" in response.text) == (mode == "full")


def test_markdown_export_defaults_to_latest(live, http):
    topic_id = seed_session(live)
    text = http.get(f"/v1/export/md/{topic_id}").text
    assert "Latest answer" in text and f"## 1. {CHINESE_QUESTION}" in text


@needs_poppler
def test_pdf_export_text_comes_out_exactly(live, http, tmp_path):
    topic_id = seed_session(live)
    response = http.get(f"/v1/export/pdf/{topic_id}", params={"mode": "full"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert filename_of(response.headers["content-disposition"]) == "Files_文件_listing.pdf"
    assert response.content.startswith(b"%PDF-")
    path = tmp_path / "export.pdf"
    path.write_bytes(response.content)
    info = pdf_info(path)
    assert info["Pages"] == "1" and info["Title"] == TITLE
    lines = [line.strip() for line in pdf_text(path).splitlines()]
    for expected in (
        TITLE,
        f"1. {ENGLISH_QUESTION}",
        ENGLISH_ANSWER,
        f"2. {CHINESE_QUESTION}",
        CHINESE_ANSWER,
        "Reasoning: List the workspace.",  # a quote: indented, no ">" (nor "**")
        '"command": "ls -1"',
        "main.py",
        "README.md",
    ):
        assert expected in lines, (expected, lines)


@needs_poppler
def test_a_long_pdf_export_has_sane_pages_that_all_render(live, http, tmp_path):
    topic_id = seed_session(live, rounds=40)
    response = http.get(f"/v1/export/pdf/{topic_id}?mode=full")
    path = tmp_path / "long.pdf"
    path.write_bytes(response.content)
    pages = int(pdf_info(path)["Pages"])
    assert 3 <= pages <= 40
    text = pdf_text(path)
    assert text.count(CHINESE_ANSWER) == 40 and text.count(ENGLISH_ANSWER) == 40
    assert f"Page {pages} of {pages}" in text
    run("pdftoppm", "-r", "10", "-png", path, tmp_path / "page")
    assert len(list(tmp_path.glob("page*.png"))) == pages


def test_pdf_export_writes_no_temporary_files(live, http, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the export must be built in memory")

    for name in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, refuse)
    topic_id = seed_session(live)
    response = http.get(f"/v1/export/pdf/{topic_id}")
    assert response.status_code == 200 and response.content.startswith(b"%PDF-")


def test_a_title_without_ascii_letters_still_gets_a_file_name(live, http):
    topic_id = seed_session(live, title="报告")
    disposition = http.get(f"/v1/export/pdf/{topic_id}").headers["content-disposition"]
    assert 'filename="session.pdf"' in disposition and filename_of(disposition) == "报告.pdf"
    untitled = seed_session(live, title="")
    disposition = http.get(f"/v1/export/md/{untitled}").headers["content-disposition"]
    assert filename_of(disposition) == f"Session_{untitled[:8]}.md"  # "Session <id>"


@pytest.mark.parametrize("kind", ["md", "pdf"])
def test_unknown_session_is_a_json_404(http, kind):
    response = http.get(f"/v1/export/{kind}/nope")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["type"] == "not_found_error" and "nope" in error["message"]


@pytest.mark.parametrize("kind", ["md", "pdf"])
def test_unknown_mode_is_a_json_400(live, http, kind):
    topic_id = seed_session(live)
    response = http.get(f"/v1/export/{kind}/{topic_id}?mode=everything")
    assert response.status_code == 400
    assert "latest, answers, full" in response.json()["error"]["message"]


def test_openapi_documents_the_export_routes(http):
    document = http.get("/openapi.json").json()
    for kind, media in (("md", "text/markdown"), ("pdf", "application/pdf")):
        operation = document["paths"][f"/v1/export/{kind}/{{session_id}}"]["get"]
        assert media in operation["responses"]["200"]["content"]
        assert "Content-Disposition" in operation["responses"]["200"]["headers"]
        assert {"400", "404"} <= set(operation["responses"])
        assert [p["name"] for p in operation["parameters"]] == ["session_id", "mode"]
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)
