"""The four history levels: L1 window and placeholders, L2 recording and relevance, L3 and L0."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from tea_agent_mini.config import load_config
from tea_agent_mini.context.builder import ContextInputs, build_request, load_levels
from tea_agent_mini.context.history import PLACEHOLDER_PREFIX, RECENT_TURNS
from tea_agent_mini.context.pairs import record_pairs
from tea_agent_mini.context.records import ContextRecords, ToolUse, TopicSummary, TurnPair
from tea_agent_mini.context.relevance import select_pairs
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.store import topic_scope
from tea_agent_mini.terms import keyword_terms
from tea_agent_mini.types import Message, ToolCall
from tests.context.context_helpers import add_turn, assert_consistent
from tests.fakes.script import without_context_block


def build(store, topic_id, **kwargs):
    pairs, summary = load_levels(store, topic_id)
    history = store.messages.of_topic(topic_id)
    return build_request(ContextInputs("SYSTEM", history, pairs=pairs, summary=summary, **kwargs))


def user_texts(messages):
    return [without_context_block(m["content"]) for m in messages if m["role"] == "user"]


def context_of(messages):
    """The context block before the current user message ("" when there is none)."""
    content = messages[-1]["content"]
    return content[: len(content) - len(without_context_block(content))]


def test_l1_holds_the_last_turns_and_older_ones_reach_l2(store):
    topic = store.topics.create().id
    for i in range(15):
        add_turn(store, topic, f"question {i} about topic{i}", f"answer {i}")
    add_turn(store, topic, "question 15 about topic3", "unfinished")
    store.messages.delete_after(topic, store.messages.of_topic(topic)[-1].id, inclusive=True)
    assert record_pairs(store, ContextRecords(store.db), topic, now=1.0) == 15
    messages = build(store, topic)
    first_kept = 16 - RECENT_TURNS
    assert user_texts(messages) == [
        f"question {i} about topic{i}" for i in range(first_kept, 15)
    ] + ["question 15 about topic3"]
    assert messages[0]["content"] == "SYSTEM"  # L2 stays out of the cacheable prefix
    block = context_of(messages)
    assert "Relevant earlier exchanges" in block
    assert "question 3 about topic3" in block  # the relevant older turn, from L2
    assert "question 7 about topic7" not in block  # still in L1: never repeated from L2


def test_old_tool_outputs_become_placeholders_stating_their_size(store):
    topic = store.topics.create().id
    big = "line of file content\n" * 100
    for i in range(5):
        add_turn(
            store, topic, f"read it {i}", f"done {i}", tool_output=f"{i}:{big}", call_id=f"c{i}"
        )
    messages = build(store, topic)
    tool_outputs = [m["content"] for m in messages if m["role"] == "tool"]
    assert len(tool_outputs) == 5
    # 5 turns: the two older than the last 3 user turns are placeholders
    for content in tool_outputs[:2]:
        assert content.startswith(PLACEHOLDER_PREFIX)
        assert f"{len(big) + 2} characters" in content
    assert tool_outputs[2:] == [f"{i}:{big}" for i in range(2, 5)]
    assert_consistent(messages[1:])


def test_orphan_tool_results_and_unanswered_calls_are_repaired(store):
    topic = store.topics.create().id
    store.messages.add(topic, Message(role="user", content="go"))
    store.messages.add(topic, Message(role="tool", tool_call_id="ghost", content="orphan"))
    call = ToolCall("c9", "toolkit_exec", '{"command": "ls"}')
    store.messages.add(topic, Message(role="assistant", tool_calls=(call,)))
    store.messages.add(topic, Message(role="user", content="still there?"))
    messages = build(store, topic)
    assert_consistent(messages[1:])
    assert not any(m.get("content") == "orphan" for m in messages)
    answered = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answered] == ["c9"]
    # the call was running when the server stopped: the model must not assume it did nothing
    assert "outcome is unknown" in answered[0]["content"]


def test_recorded_pairs_keep_answer_thinking_files_and_tools(store):
    topic = store.topics.create().id
    add_turn(
        store,
        topic,
        "fix src/app.py",
        "Fixed the off-by-one.",
        tool_output="code",
        path="src/app.py",
    )
    records = ContextRecords(store.db)
    record_pairs(store, records, topic, now=1.0)
    (pair,) = records.pairs(topic)
    assert (pair.user_text, pair.answer_text) == ("fix src/app.py", "Fixed the off-by-one.")
    assert pair.thinking == "thinking: fix src/app.py"
    assert pair.files == ("src/app.py",)
    assert pair.tools == (ToolUse("toolkit_file", True),)
    # recording again adds nothing new; an edited message drops its pair with it
    assert record_pairs(store, records, topic, now=2.0) == 1  # the newest is re-recorded
    assert records.count(topic) == 1
    first = store.messages.of_topic(topic)[0]
    store.messages.delete_after(topic, first.id, inclusive=True)
    assert records.count(topic) == 0


def test_a_request_reads_only_the_newest_pairs_of_an_overgrown_ring(store):
    topic = store.topics.create().id
    for i in range(8):
        add_turn(store, topic, f"question {i}", f"answer {i}")
    records = ContextRecords(store.db)
    record_pairs(store, records, topic, now=1.0)  # no summaries: the ring only grows
    everything = records.pairs(topic)
    assert [p.user_text for p in everything] == [f"question {i}" for i in range(8)]
    assert records.pairs(topic, limit=3) == everything[-3:]
    assert records.pairs(topic, limit=0) == []


def pair(n: int, user: str, answer: str = "", files: tuple[str, ...] = ()) -> TurnPair:
    return TurnPair(
        user_message_id=n,
        user_text=user,
        answer_text=answer,
        files=files,
        terms=frozenset(keyword_terms(f"{user}\n{answer}\n{' '.join(files)}")),
    )


def test_relevance_thresholds_full_excerpt_skip():
    query = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    filler = " ".join(f"omega{i}" for i in range(11))
    pairs = [
        pair(1, "alpha beta gamma delta epsilon"),  # 5 of 10 terms shared: 0.5, whole
        pair(2, f"alpha beta {filler}"),  # 2 shared of 21: 0.095, an excerpt
        pair(3, f"alpha {filler}"),  # 1 shared of 21: 0.048, skipped
        pair(4, "unrelated words entirely"),  # 0, skipped
    ]
    chosen = {p.pair.user_message_id: p.full for p in select_pairs(pairs, query)}
    assert chosen == {1: True, 2: False}


def test_the_best_pair_always_joins_and_files_boost_the_score():
    pairs = [
        pair(1, "cooking pasta"),
        pair(2, "tuning things", files=("src/x.py",)),
        pair(3, "more cooking"),
    ]
    plain = select_pairs(pairs, "fix the bug")
    # nothing is relevant, yet the best one (ties: the newest) joins as an excerpt
    assert [(p.pair.user_message_id, p.full) for p in plain] == [(3, False)]
    touched = select_pairs(pairs, "fix the bug", current_files=["./src/x.py"])
    assert [(p.pair.user_message_id, p.full) for p in touched] == [(2, False)]
    named = select_pairs(pairs, "fix the bug in x.py")
    assert (2, True) in [(p.pair.user_message_id, p.full) for p in named]


def test_summary_and_pairs_join_the_context_block(store):
    topic = store.topics.create().id
    summary = TopicSummary(
        topic_id=topic,
        content="## Decisions\n- use SQLite",
        tool_counts={"toolkit_exec": (3, 1)},
        files=("db.py",),
        pairs_covered=30,
    )
    messages = build_request(
        ContextInputs("SYSTEM", [Message(role="user", content="hi", id=99)], summary=summary)
    )
    assert messages[0]["content"] == "SYSTEM"
    block = context_of(messages)
    assert block.startswith("<context>") and messages[-1]["content"].endswith("\n\nhi")
    assert "30 older exchanges" in block and "- use SQLite" in block
    assert "toolkit_exec ×3 (1 failed)" in block and "db.py" in block


def test_unfinished_todo_and_plan_join_the_context_block(model_config):
    runtime = Runtime(load_config())
    try:
        topic = runtime.store.topics.create().id
        history = [Message(role="user", content="go on", id=1)]

        def block() -> str:  # a new turn each time: the context is fixed for a turn
            session = SimpleNamespace(topic_id=topic)
            return context_of(runtime.build_context(session, history))

        assert "Unfinished work" not in block()
        scope = topic_scope(topic)
        items = [
            {"id": 1, "text": "write the parser", "status": "done"},
            {"id": 2, "text": "test the parser", "status": "in_progress"},
        ]
        runtime.store.state.put(scope, "todo", {"items": items})
        plan = {"goal": "ship v2", "steps": [{"text": "tag the release", "status": "pending"}]}
        runtime.store.state.put(scope, "plan", plan)
        text = block()
        assert "Unfinished work" in text
        assert "test the parser" in text and "ship v2" in text and "tag the release" in text
        items[1]["status"] = "done"
        runtime.store.state.put(scope, "todo", {"items": items})
        runtime.store.state.put(scope, "plan", None)
        assert "Unfinished work" not in block()
    finally:
        asyncio.run(runtime.aclose())
