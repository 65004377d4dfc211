"""Extraction after a turn: tolerant parsing of the model's JSON, kind -> priority mapping, and
the whole path through a real HTTP client talking to the scripted model."""

from __future__ import annotations

import asyncio
import json

import pytest

from tea_agent_mini.config import ModelConfig
from tea_agent_mini.llm.client import OpenAIChatClient
from tea_agent_mini.memory.extract import DEFAULT_REMINDER_DAYS, parse_candidates
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.model import Priority
from tea_agent_mini.store import Store
from tests.fakes import Reply
from tests.fakes.background import is_extraction

NOW = 1_700_000_000.0
DAY = 86400.0

ITEMS = [
    {"content": "Always answer in English", "kind": "instruction", "importance": 5},
    {"content": "Prefers concise answers", "kind": "preference", "tags": ["Style", "style"]},
    {"content": "Renew the passport", "kind": "reminder", "expires_in_days": 30},
    {"content": "Works on a Raspberry Pi 4", "kind": "fact", "importance": 9},
    {"content": "Mentioned liking jazz", "kind": "other"},
]
EXPECTED = [
    ("Always answer in English", Priority.CRITICAL, "instruction"),
    ("Prefers concise answers", Priority.HIGH, "preference"),
    ("Renew the passport", Priority.HIGH, "reminder"),
    ("Works on a Raspberry Pi 4", Priority.MEDIUM, "fact"),
    ("Mentioned liking jazz", Priority.LOW, "general"),
]


def summary(candidates):
    return [(c.content, c.priority, c.category) for c in candidates]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"memories": ITEMS}),
        json.dumps(ITEMS),
        "```json\n" + json.dumps({"memories": ITEMS}, indent=2) + "\n```",
        "Here is what I found worth keeping:\n" + json.dumps({"memories": ITEMS}) + "\nDone.",
        "<think>The user said a few things.</think>\n" + json.dumps({"result": {"items": ITEMS}}),
        "{'memories': " + json.dumps(ITEMS).replace('"', "'")[:-1] + ",]}",  # quotes, comma
    ],
    ids=["wrapped", "bare", "fenced", "prose", "think+nested", "sloppy"],
)
def test_tolerant_parsing(text):
    assert summary(parse_candidates(text, NOW)) == EXPECTED


def test_fields_are_cleaned():
    by_content = {c.content: c for c in parse_candidates(json.dumps(ITEMS), NOW)}
    assert by_content["Always answer in English"].importance == 5
    assert by_content["Works on a Raspberry Pi 4"].importance == 5  # clamped
    assert by_content["Mentioned liking jazz"].importance == 3  # default
    assert by_content["Prefers concise answers"].tags == ("style",)
    assert by_content["Renew the passport"].expires_at == NOW + 30 * DAY
    assert by_content["Always answer in English"].expires_at is None


@pytest.mark.parametrize(
    "content",
    [
        "Remember that my favourite colour is turquoise.",
        "please remember: my favourite colour is turquoise.",
        "Note that my favourite colour is turquoise.",
    ],
)
def test_a_request_to_remember_is_stored_as_the_fact(content):
    item = {"content": content, "kind": "instruction", "importance": 3}
    (candidate,) = parse_candidates(json.dumps([item]), NOW)
    assert candidate.content == "My favourite colour is turquoise."
    assert (candidate.category, candidate.priority) == ("fact", Priority.MEDIUM)


def test_reminder_without_expiry_gets_the_default():
    (candidate,) = parse_candidates('[{"content": "Call mum", "type": "reminder"}]', NOW)
    assert candidate.expires_at == NOW + DEFAULT_REMINDER_DAYS * DAY


def test_expiry_as_a_date():
    text = '[{"content": "Conference", "kind": "reminder", "expires_at": "2030-01-02T00:00:00Z"}]'
    (candidate,) = parse_candidates(text, NOW)
    assert candidate.expires_at == 1893542400.0


@pytest.mark.parametrize(
    "text",
    ["", "Nothing worth remembering.", '{"memories": []}', "[]", "{}", "null", "[1, 2, {}]"],
)
def test_nothing_to_remember(text):
    assert parse_candidates(text, NOW) == []


def test_plain_strings_become_general_memories():
    candidates = parse_candidates('{"memories": ["Has two kids", ""]}', NOW)
    assert summary(candidates) == [("Has two kids", Priority.LOW, "general")]


def test_single_object_and_unknown_kind():
    (candidate,) = parse_candidates('{"memory": "Uses vim", "category": "tooling"}', NOW)
    assert (candidate.content, candidate.category) == ("Uses vim", "general")


def test_extraction_end_to_end_with_the_scripted_model(tmp_path, scripted_server):
    answer = Reply(text="```json\n" + json.dumps({"memories": ITEMS}) + "\n```")
    scripted_server.on(is_extraction, answer)  # overrides the fixture's empty default
    llm = OpenAIChatClient(ModelConfig(api_url=scripted_server.base_url, model_name="m"))

    async def run(manager):
        try:
            return await manager.extract_from_turn(
                "Please remember: always answer in English. I like concise answers.",
                "Noted, I will keep answers short and in English.",
                "topic-7",
            )
        finally:
            await llm.aclose()

    with Store.open(tmp_path / "chat.db") as store:
        manager = MemoryManager(store, cheap_llm=llm, clock=lambda: NOW)
        outcomes = asyncio.run(run(manager))
        assert [o.action for o in outcomes] == ["added"] * 5
        stored = {m.content: m for m in manager.matching()}
        assert stored["Always answer in English"].priority == Priority.CRITICAL
        assert stored["Always answer in English"].source_topic == "topic-7"
        assert stored["Renew the passport"].expires_at == NOW + 30 * DAY
        assert all(m.embedding_model == "local-hash-256" for m in stored.values())
    request = scripted_server.requests[-1]
    assert request["messages"][0]["role"] == "system"
    assert "always answer in English" in request["messages"][1]["content"]


def test_a_failing_model_yields_no_memories(tmp_path, scripted_server):
    scripted_server.on(is_extraction, Reply(status=400, error_message="bad request"))
    config = ModelConfig(api_url=scripted_server.base_url, model_name="m", max_retries=0)
    llm = OpenAIChatClient(config)

    async def run(manager):
        try:
            return await manager.extract_from_turn("remember I like tea", "ok")
        finally:
            await llm.aclose()

    with Store.open(tmp_path / "chat.db") as store:
        manager = MemoryManager(store, cheap_llm=llm, clock=lambda: NOW)
        assert asyncio.run(run(manager)) == []
        assert manager.matching() == []


def test_no_cheap_model_no_extraction(tmp_path):
    with Store.open(tmp_path / "chat.db") as store:
        manager = MemoryManager(store, clock=lambda: NOW)
        assert asyncio.run(manager.extract_from_turn("remember I like tea", "ok")) == []
