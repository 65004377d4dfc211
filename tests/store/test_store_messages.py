"""Messages: exact round trips, order, last-n paging, search, trimming, concurrent writers."""

from __future__ import annotations

import threading

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store
from tea_agent_mini.types import Message, ToolCall


@pytest.fixture
def topic_id(store):
    return store.topics.create("t").id


def _user(text: str) -> Message:
    return Message(role="user", content=text)


ROUND_TRIP = [
    Message(role="system", content="You are terse."),
    Message(role="user", content=""),
    Message(role="user", content="héllo 中文 \U0001f375 'quotes' \"double\" \\ back"),
    Message(
        role="user",
        content=[
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "text", "text": " and this"},
        ],
    ),
    Message(role="user", content=[]),
    Message(
        role="assistant",
        content=None,
        reasoning="I should look it up.",
        tool_calls=(
            ToolCall("call_1", "web_search", '{"q": "tea"}'),
            ToolCall("call_2", "read_file", "{}"),
        ),
        tokens=42,
    ),
    Message(role="assistant", content="", reasoning=""),
    Message(role="tool", content="result text", tool_call_id="call_1", name="web_search"),
    Message(role="assistant", content="Done.", reasoning="Thought a bit.", tokens=7),
]


@pytest.mark.parametrize("message", ROUND_TRIP, ids=lambda m: m.role)
def test_message_round_trips_exactly(store, topic_id, message):
    saved = store.messages.add(topic_id, message)
    assert saved.id is not None and saved.topic_id == topic_id and saved.created_at > 0
    assert message.id is None  # the caller's object is left alone
    (loaded,) = store.messages.of_topic(topic_id)
    assert loaded == saved
    assert type(loaded.tool_calls) is tuple
    assert loaded.content == message.content
    assert loaded.to_openai(include_reasoning=True) == message.to_openai(include_reasoning=True)
    assert store.messages.get(saved.id) == saved


def test_given_created_at_is_kept(store, topic_id):
    saved = store.messages.add(topic_id, Message(role="user", content="old", created_at=123.5))
    assert saved.created_at == 123.5
    assert store.messages.of_topic(topic_id)[0].created_at == 123.5


def test_add_to_missing_topic_raises(store):
    with pytest.raises(StoreError, match="no topic"):
        store.messages.add("missing", _user("hi"))
    assert store.db.query_one("SELECT COUNT(*) FROM messages")[0] == 0


def test_unstorable_content_raises(store, topic_id):
    with pytest.raises(StoreError):
        store.messages.add(topic_id, Message(role="user", content={"not": "a list"}))
    with pytest.raises(StoreError):
        store.messages.add(topic_id, Message(role="user", content=[{"bad": object()}]))
    assert store.messages.count(topic_id) == 0


def test_list_is_chronological_and_per_topic(store, topic_id):
    other = store.topics.create("other").id
    for i in range(5):
        store.messages.add(topic_id, _user(f"m{i}"))
        store.messages.add(other, _user(f"o{i}"))
    listed = store.messages.of_topic(topic_id)
    assert [m.content for m in listed] == [f"m{i}" for i in range(5)]
    assert [m.id for m in listed] == sorted(m.id for m in listed)
    assert store.messages.count(topic_id) == 5
    assert store.messages.count("missing") == 0


def test_limit_takes_the_last_n_in_order(store, topic_id):
    for i in range(10):
        store.messages.add(topic_id, _user(str(i)))
    assert [m.content for m in store.messages.of_topic(topic_id, limit=3)] == ["7", "8", "9"]
    assert [m.content for m in store.messages.of_topic(topic_id, limit=50)] == [
        str(i) for i in range(10)
    ]
    assert store.messages.of_topic(topic_id, limit=0) == []


def test_before_id_pages_backwards(store, topic_id):
    ids = [store.messages.add(topic_id, _user(str(i))).id for i in range(10)]
    page = store.messages.of_topic(topic_id, limit=3, before_id=ids[7])
    assert [m.content for m in page] == ["4", "5", "6"]
    page = store.messages.of_topic(topic_id, limit=3, before_id=page[0].id)
    assert [m.content for m in page] == ["1", "2", "3"]
    assert [m.content for m in store.messages.of_topic(topic_id, before_id=ids[2])] == ["0", "1"]


def test_after_id_pages_forwards(store, topic_id):
    ids = [store.messages.add(topic_id, _user(str(i))).id for i in range(10)]
    page = store.messages.of_topic(topic_id, limit=3, after_id=ids[2])
    assert [m.content for m in page] == ["3", "4", "5"]
    page = store.messages.of_topic(topic_id, limit=3, after_id=page[-1].id)
    assert [m.content for m in page] == ["6", "7", "8"]
    between = store.messages.of_topic(topic_id, limit=2, after_id=ids[1], before_id=ids[6])
    assert [m.content for m in between] == ["4", "5"]  # both bounds: the last n between them


def _turns(store, topic_id, count):
    """``count`` turns of user, tool call, tool result and answer; their messages, in order."""
    added = [store.messages.add(topic_id, Message(role="system", content="odd start"))]
    for n in range(count):
        call = ToolCall(f"c{n}", "read_file", "{}")
        for message in (
            _user(f"question {n}"),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", content=f"output {n}", tool_call_id=call.id),
            Message(role="assistant", content=f"answer {n}"),
        ):
            added.append(store.messages.add(topic_id, message))
    return added


@pytest.mark.parametrize("turns", [1, 3, 6, 7, 50])
def test_recent_turns_is_the_window_of_the_last_user_turns(store, topic_id, turns):
    from tea_agent_mini.context.history import recent_messages

    added = _turns(store, topic_id, 6)
    other = store.topics.create("other").id
    _turns(store, other, 3)  # interleaved ids of another topic stay out
    window = store.messages.recent_turns(topic_id, turns)
    assert window[0].role == "user"
    assert window == added[1 + 4 * max(0, 6 - turns) :]
    assert recent_messages(window, turns) == recent_messages(added, turns)


def test_recent_turns_without_user_messages_and_its_cap(store, topic_id):
    assert store.messages.recent_turns(topic_id, 10) == []
    notes = [store.messages.add(topic_id, Message(role="system", content=str(i))) for i in range(5)]
    assert store.messages.recent_turns(topic_id, 10) == notes
    assert store.messages.recent_turns(topic_id, 10, max_messages=2) == notes[-2:]
    _turns(store, topic_id, 3)
    capped = store.messages.recent_turns(topic_id, 3, max_messages=5)
    assert [m.content for m in capped][-1] == "answer 2" and len(capped) == 5


@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)  # SQLite's query plans
def test_recent_turns_reads_through_indexes(store, topic_id):
    # the cost must follow the window, not the topic: no statement may scan the messages table
    _turns(store, topic_id, 12)
    statements: list[str] = []
    store.db._conn.set_trace_callback(statements.append)
    store.messages.recent_turns(topic_id, 10)
    store.messages.recent_turns(topic_id, 20)  # fewer turns than asked: the first user message
    store.db._conn.set_trace_callback(None)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(reads) == 5
    for sql in reads:
        plan = " ".join(row[3] for row in store.db.query("EXPLAIN QUERY PLAN " + sql))
        assert "USING" in plan and "SCAN" not in plan, plan
    assert "messages_user_turns" in " ".join(
        row[3] for row in store.db.query("EXPLAIN QUERY PLAN " + reads[0])
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("apple", ["Apple pie", "I like APPLES"]),
        ("50%", ["50% off"]),
        ("%", ["50% off"]),
        ("a_c", ["a_c literal"]),
        ("_", ["a_c literal"]),
        ("\\", ["back\\slash"]),
        ("image", []),  # the JSON of image parts is not searched, only their text
        ("look", ["look at this"]),
        ("", []),
        ("   ", []),
    ],
)
def test_search_is_literal_and_case_insensitive(store, topic_id, query, expected):
    texts = [
        "Apple pie",
        "I like APPLES",
        "50% off",
        "500 off",
        "a_c literal",
        "abc",
        "back\\slash",
    ]
    for text in texts:
        store.messages.add(topic_id, _user(text))
    parts = [
        {"type": "text", "text": "look at this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    store.messages.add(topic_id, Message(role="user", content=parts))
    found = store.messages.search(query)
    assert sorted(m.text for m in found) == sorted(expected)


def test_search_newest_first_with_limit_and_topic_filter(store, topic_id):
    other = store.topics.create("other").id
    for i in range(5):
        store.messages.add(topic_id, _user(f"needle {i}"))
    store.messages.add(other, _user("needle elsewhere"))
    found = store.messages.search("needle", limit=3)
    assert [m.content for m in found] == ["needle elsewhere", "needle 4", "needle 3"]
    assert found[0].topic_id == other
    in_topic = store.messages.search("needle", topic_id=topic_id)
    assert [m.content for m in in_topic] == [f"needle {i}" for i in reversed(range(5))]


def test_delete_after(store, topic_id):
    other = store.topics.create("other").id
    ids = [store.messages.add(topic_id, _user(str(i))).id for i in range(5)]
    store.messages.add(other, _user("untouched"))
    assert store.messages.delete_after(topic_id, ids[2]) == 2
    assert [m.content for m in store.messages.of_topic(topic_id)] == ["0", "1", "2"]
    assert store.messages.delete_after(topic_id, ids[1], inclusive=True) == 2
    assert [m.content for m in store.messages.of_topic(topic_id)] == ["0"]
    assert store.messages.count(other) == 1
    # ids are never reused, so a client holding an old id cannot confuse it with a new message
    assert store.messages.add(topic_id, _user("new")).id > ids[-1]


def test_eight_threads_write_to_one_topic(store, topic_id):
    threads_n, per_thread = 8, 40
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []
    saved: dict[int, list[int]] = {}

    def writer(n: int) -> None:
        try:
            barrier.wait()
            ids = []
            for i in range(per_thread):
                ids.append(store.messages.add(topic_id, _user(f"{n}:{i}")).id)
                if i % 10 == 0:
                    store.messages.of_topic(topic_id, limit=5)
                    store.topics.add_usage(topic_id, 1, 1)
            saved[n] = ids
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    listed = store.messages.of_topic(topic_id)
    assert len(listed) == threads_n * per_thread == store.messages.count(topic_id)
    assert len({m.id for m in listed}) == len(listed)
    for n in range(threads_n):
        mine = [int(m.content.split(":")[1]) for m in listed if m.content.startswith(f"{n}:")]
        assert mine == list(range(per_thread))  # each writer's messages keep their order
        assert sorted(saved[n]) == saved[n]
    topic = store.topics.get(topic_id)
    assert topic.prompt_tokens == threads_n * (per_thread // 10)


def test_two_connections_to_one_database_write_concurrently(store_target):
    # the CLI and the server may open the same chat.db: BEGIN IMMEDIATE + busy_timeout serialise;
    # several instances share one PostgreSQL database
    first, second = Store.open(store_target), Store.open(store_target)
    try:
        topic_id = first.topics.create("shared").id
        barrier = threading.Barrier(4)
        errors: list[BaseException] = []

        def writer(store: Store, tag: str) -> None:
            try:
                barrier.wait()
                for i in range(25):
                    store.messages.add(topic_id, _user(f"{tag}{i}"))
            except BaseException as exc:
                errors.append(exc)

        jobs = [(first, "a"), (first, "b"), (second, "c"), (second, "d")]
        threads = [threading.Thread(target=writer, args=job) for job in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert first.messages.count(topic_id) == second.messages.count(topic_id) == 100
    finally:
        first.close()
        second.close()
