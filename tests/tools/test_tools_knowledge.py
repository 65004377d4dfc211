from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.errors import ToolError
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.store import Store
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.history import toolkit_dump_topic, toolkit_query_chat_history
from tea_agent_mini.tools.knowledge import toolkit_kb
from tea_agent_mini.tools.mdfiles import read_document
from tea_agent_mini.tools.publish import markdown_to_html, toolkit_publish_doc
from tea_agent_mini.tools.topics import toolkit_set_topic_title, toolkit_topic_prompt
from tea_agent_mini.types import Message, ToolCall


@pytest.fixture
def store(tmp_path: Path):
    store = Store.open(tmp_path / "chat.db")
    yield store
    store.close()


@pytest.fixture
def ctx(store, workspace: Path, tea_home: Path) -> ToolContext:
    topic = store.topics.create("Current chat")
    return ToolContext(workspace=workspace, home=tea_home, store=store, topic_id=topic.id)


# ---- knowledge base -------------------------------------------------------------------------

NOTES = {
    "Postgres backups": (
        ["database", "ops"],
        "Run pg_dump nightly; keep 7 daily and 4 weekly backups. Restore drills monthly.",
    ),
    "Python packaging": (
        ["python"],
        "Use hatchling and pyproject.toml. Build wheels with `python -m build`.",
    ),
    "Release checklist": (
        ["process"],
        "Bump the version, update the changelog, tag, then build and upload the wheels.",
    ),
    "数据库备份策略": (["数据库"], "每天凌晨备份数据库，保留七天。"),
    "Schema migrations": (["python"], "Take a backup, then migrate the database with alembic."),
}


@pytest.fixture
def kb(ctx):
    for title, (tags, content) in NOTES.items():
        toolkit_kb(ctx, "add", title=title, content=content, tags=tags)
    return ctx


def test_notes_are_markdown_files_with_front_matter(kb, tea_home):
    meta, body = read_document(tea_home / "kb" / "postgres-backups.md")
    assert meta["title"] == "Postgres backups"
    assert meta["tags"] == ["database", "ops"]
    assert meta["created"] == meta["updated"]
    assert body.strip() == NOTES["Postgres backups"][1]
    assert (tea_home / "kb" / "数据库备份策略.md").is_file()


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("backup database", "Postgres backups"),
        ("build wheels", "Python packaging"),
        ("changelog", "Release checklist"),
        ("python", "Python packaging"),
        ("数据库备份", "数据库备份策略"),
    ],
)
def test_search_ranks_the_right_note_first(kb, query, best):
    out = toolkit_kb(kb, "search", query=query)
    first = out.splitlines()[1]
    assert first.startswith(f"1. {best}")


def test_search_puts_title_and_tag_hits_above_body_hits(kb):
    lines = toolkit_kb(kb, "search", query="backup database").splitlines()
    assert lines[0] == "2 note(s) for 'backup database', best first:"
    assert lines[1].startswith("1. Postgres backups") and lines[3].startswith("2. Schema")
    assert "Take a backup, then migrate the database" in lines[4]


def test_search_shows_a_snippet_and_respects_the_limit(kb):
    out = toolkit_kb(kb, "search", query="wheels", limit=1)
    assert out.splitlines()[0] == "1 note(s) for 'wheels', best first:"
    assert "Build wheels with `python -m build`." in out
    assert toolkit_kb(kb, "search", query="kubernetes") == "No note matches 'kubernetes'."


def test_get_update_list_and_delete(kb, tea_home):
    out = toolkit_kb(kb, "get", title="python packaging")
    assert out.startswith("# Python packaging\ntags: python\n")
    created = read_document(tea_home / "kb" / "python-packaging.md")[0]["created"]
    out = toolkit_kb(kb, "add", title="Python packaging", content="Use uv.", tags=["python"])
    assert out.startswith("Updated the note 'Python packaging'")
    meta, body = read_document(tea_home / "kb" / "python-packaging.md")
    assert body.strip() == "Use uv." and meta["created"] == created
    listing = toolkit_kb(kb, "list", tags=["database"])
    assert listing.splitlines()[0] == "1 note(s), most recently updated first:"
    assert "Postgres backups  [database, ops]" in listing
    assert toolkit_kb(kb, "delete", title="Postgres backups") == (
        "Deleted the note 'Postgres backups'."
    )
    assert not (tea_home / "kb" / "postgres-backups.md").exists()
    with pytest.raises(ToolError, match="Did you mean: Python packaging"):
        toolkit_kb(kb, "get", title="Python packagin")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"action": "add", "content": "x"}, "needs 'title'"),
        ({"action": "add", "title": "t"}, "needs 'content'"),
        ({"action": "add", "title": "!!!", "content": "x"}, "at least one letter"),
        ({"action": "search", "query": "the and"}, "no searchable words"),
        ({"action": "get"}, "give the note's 'title'"),
        ({"action": "burn"}, "unknown action"),
    ],
)
def test_kb_errors(ctx, kwargs, fragment):
    with pytest.raises(ToolError, match=fragment):
        toolkit_kb(ctx, **kwargs)


# ---- chat history ---------------------------------------------------------------------------


def fill_history(store, current_id: str) -> str:
    other = store.topics.create("Deploy notes").id
    store.messages.add(other, Message("user", "How do I rotate the nginx certificates?"))
    store.messages.add(other, Message("assistant", "Use certbot renew, then reload nginx."))
    store.messages.add(current_id, Message("user", "remind me about nginx later"))
    store.messages.add(current_id, Message("tool", "nginx: ok", tool_call_id="c1", name="exec"))
    return other


def test_query_chat_history_groups_by_topic(ctx, store):
    other = fill_history(store, ctx.topic_id)
    out = toolkit_query_chat_history(ctx, "NGINX")
    assert out.splitlines()[0] == "4 message(s) mention 'NGINX', newest first:"
    assert f"## Current chat  (topic {ctx.topic_id})  ← this conversation" in out
    assert f"## Deploy notes  (topic {other})" in out
    assert "user: How do I rotate the nginx certificates?" in out
    only = toolkit_query_chat_history(ctx, "nginx", topic_id=other, limit=1)
    assert only.splitlines()[0] == "1 message(s) mention 'nginx', newest first:"
    assert "certbot renew" in only


def test_query_chat_history_matches_words_when_the_phrase_is_absent(ctx, store):
    fill_history(store, ctx.topic_id)
    out = toolkit_query_chat_history(ctx, "certificates rotate")
    assert "How do I rotate the nginx certificates?" in out
    assert toolkit_query_chat_history(ctx, "kubernetes") == "No message mentions 'kubernetes'."


def conversation(store, topic_id: str) -> None:
    call = ToolCall("c1", "toolkit_gettime", "{}")
    store.messages.add(topic_id, Message("user", "What time is it?"))
    store.messages.add(topic_id, Message("assistant", None, tool_calls=(call,)))
    store.messages.add(topic_id, Message("tool", "12:00", tool_call_id="c1", name="gettime"))
    store.messages.add(topic_id, Message("assistant", "It is <b>noon</b>."))


def test_dump_topic_as_markdown_and_json(ctx, store):
    conversation(store, ctx.topic_id)
    markdown = toolkit_dump_topic(ctx)
    assert markdown.startswith("# Current chat\n")
    assert "## User — " in markdown and "It is <b>noon</b>." in markdown
    assert "12:00" not in markdown and "toolkit_gettime" not in markdown
    full = toolkit_dump_topic(ctx, include_tools=True)
    assert "## Tool result (gettime)" in full and "→ `toolkit_gettime` {}" in full
    data = json.loads(toolkit_dump_topic(ctx, format="json", include_tools=True))
    assert data["topic"]["title"] == "Current chat"
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert data["messages"][1]["tool_calls"][0]["function"]["name"] == "toolkit_gettime"


def test_dump_topic_writes_into_the_workspace(ctx, store, workspace):
    conversation(store, ctx.topic_id)
    out = toolkit_dump_topic(ctx, format="json", path="exports/chat.json")
    assert out.startswith("Wrote 2 message(s) to exports/chat.json")
    data = json.loads((workspace / "exports" / "chat.json").read_text(encoding="utf-8"))
    assert [m["content"] for m in data["messages"]] == ["What time is it?", "It is <b>noon</b>."]
    with pytest.raises(ToolError, match="outside the workspace"):
        toolkit_dump_topic(ctx, path="../escape.md")
    with pytest.raises(ToolError, match="no conversation with id 'nope'"):
        toolkit_dump_topic(ctx, topic_id="nope")


# ---- title and per-topic prompt -------------------------------------------------------------


def test_set_topic_title(ctx, store):
    assert toolkit_set_topic_title(ctx, "  Fix   the parser ") == (
        "This conversation is now titled 'Fix the parser'."
    )
    assert store.topics.get(ctx.topic_id).title == "Fix the parser"
    with pytest.raises(ToolError, match="must not be empty"):
        toolkit_set_topic_title(ctx, "   ")


def test_topic_prompt_reaches_the_system_prompt(model_config):
    runtime = Runtime(load_config())
    try:
        topic_id = runtime.store.topics.create("t").id
        ctx = runtime.tool_context(topic_id)
        assert (
            toolkit_topic_prompt(ctx, "get") == "This conversation has no instructions of its own."
        )
        toolkit_topic_prompt(ctx, "set", prompt="Always answer in French.")
        assert toolkit_topic_prompt(ctx, "get").endswith("Always answer in French.")
        messages = runtime.build_context(SimpleNamespace(topic_id=topic_id), [])
        assert "Always answer in French." in messages[0]["content"]
        toolkit_topic_prompt(ctx, "clear")
        messages = runtime.build_context(SimpleNamespace(topic_id=topic_id), [])
        assert "French" not in messages[0]["content"]
        with pytest.raises(ToolError, match="needs 'prompt'"):
            toolkit_topic_prompt(ctx, "set")
    finally:
        asyncio.run(runtime.aclose())


def test_topic_tools_need_a_store(workspace, tea_home):
    bare = ToolContext(workspace=workspace, home=tea_home)
    with pytest.raises(ToolError, match="needs the conversation store"):
        toolkit_set_topic_title(bare, "x")


# ---- publish --------------------------------------------------------------------------------

DOC = """Intro with **bold**, `code <x>` and a [link](https://example.com/a?b=1&c=2).

## Steps

1. first
2. second
   - nested <item>
3. third

```
if a < b:
    print("&")
```

---

Bad [link](javascript:alert(1)) stays text. <script>alert(1)</script>
"""


def test_markdown_to_html_escapes_and_nests():
    body = markdown_to_html(DOC)
    assert "<strong>bold</strong>" in body
    assert "<code>code &lt;x&gt;</code>" in body
    assert '<a href="https://example.com/a?b=1&amp;c=2">link</a>' in body
    assert "<h2>Steps</h2>" in body
    assert (
        "<ol><li>first</li><li>second<ul><li>nested &lt;item&gt;</li></ul></li><li>third</li></ol>"
    ) in body
    assert '<pre><code>if a &lt; b:\n    print("&amp;")</code></pre>' in body
    assert "<hr>" in body
    assert "<script>" not in body and "&lt;script&gt;" in body
    assert 'href="javascript' not in body


def test_markdown_to_html_quotes_and_tables():
    body = markdown_to_html(
        "> **Note:** *quoted*\n>> deeper\n\n| a | b |\n|---|--:|\n| <x> | 1<br>2 |\n"
    )
    assert (
        "<blockquote>\n<p><strong>Note:</strong> <em>quoted</em></p>\n"
        "<blockquote>\n<p>deeper</p>\n</blockquote>\n</blockquote>"
    ) in body
    assert (
        '<table><thead><tr><th style="text-align:left">a</th>'
        '<th style="text-align:right">b</th></tr></thead><tbody>'
        '<tr><td style="text-align:left">&lt;x&gt;</td>'
        '<td style="text-align:right">1<br>2</td></tr></tbody></table>'
    ) in body


def test_publish_html_and_markdown(ctx, workspace):
    out = toolkit_publish_doc(ctx, "Release Notes 1.0", DOC, format="html")
    assert out.startswith("Published docs/release-notes-1.0.html (")
    page = (workspace / "docs" / "release-notes-1.0.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Release Notes 1.0</title>" in page and "<style>" in page
    assert "<h1>Release Notes 1.0</h1>" in page
    out = toolkit_publish_doc(ctx, "Guide", "# Guide\n\nText.", filename="guide")
    assert out.startswith("Published docs/guide.md")
    assert (workspace / "docs" / "guide.md").read_text(encoding="utf-8") == "# Guide\n\nText.\n"
    out = toolkit_publish_doc(ctx, "Guide", "New text.", filename="guide.md")
    assert out.startswith("Replaced docs/guide.md")
    assert (workspace / "docs" / "guide.md").read_text(encoding="utf-8") == (
        "# Guide\n\nNew text.\n"
    )


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"title": "T", "content": "x", "filename": "../up.md"}, "plain file name"),
        ({"title": "T", "content": "x", "filename": ".hidden"}, "plain file name"),
        ({"title": "T", "content": "x", "format": "pdf"}, "format must be"),
        ({"title": "  ", "content": "x"}, "needs a title"),
    ],
)
def test_publish_errors(ctx, kwargs, fragment):
    with pytest.raises(ToolError, match=fragment):
        toolkit_publish_doc(ctx, **kwargs)
