"""Lessons: drawn from failed or partial tasks (by the model, else by heuristics), stored with a
vector, and offered to later requests by relevance only, within the section's budget."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.evaluation.lessons import (
    CANDIDATES,
    SECTION_HEADING,
    LessonBook,
    LessonDraft,
    guess_category,
    heuristic_lesson,
    parse_lesson,
)
from tea_agent_mini.memory.embedder import LocalEmbedder
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.store import Evaluation, Store
from tests.fakes.background import answer_background, is_lesson, turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec

LESSON = (
    '{"category": "dependency", "mistake": "Parsed config.yaml with PyYAML before installing '
    'it.", "instead": "Install pyyaml with pip first, then parse config.yaml."}'
)


def evaluation(**changes) -> Evaluation:
    values = dict(
        topic_id="t",
        user_message_id=1,
        outcome="partial",
        quality=3,
        source="heuristic",
        user_text="parse config.yaml",
        tools=("toolkit_exec", "toolkit_exec"),
        error_text="toolkit_exec: ModuleNotFoundError: No module named 'yaml'",
    )
    return Evaluation(**{**values, **changes})


def test_the_models_lesson_is_read_and_a_bad_answer_is_none():
    draft = parse_lesson(f"```json\n{LESSON}\n```")
    assert draft == LessonDraft(
        "Parsed config.yaml with PyYAML before installing it.",
        "Install pyyaml with pip first, then parse config.yaml.",
        "dependency",
        "model",
    )
    assert parse_lesson('{"mistake": "only half"}') is None
    assert parse_lesson("no json at all") is None
    odd = parse_lesson('{"category": "cooking", "mistake": "pytest failed", "instead": "fix it"}')
    assert odd is not None and odd.category == "testing"  # an unknown category is guessed


def test_heuristic_lessons_come_from_the_errors_the_loop_or_the_users_words():
    from_errors = heuristic_lesson(evaluation())
    assert from_errors.category == "dependency" and "No module named 'yaml'" in from_errors.mistake
    looped = heuristic_lesson(evaluation(finish_reason="loop", iterations=9))
    assert looped.category == "workflow" and "9 steps" in looped.mistake
    corrected = heuristic_lesson(evaluation(rating="bad", comment="use tomllib, not yaml"))
    assert corrected.source == "user" and corrected.instead == "use tomllib, not yaml"
    assert guess_category("the button layout is off") == "ui"


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


def add_lesson(store, book, text, draft):
    topic = store.topics.create("t")
    stored = store.evaluations.add(evaluation(topic_id=topic.id, user_text=text))
    return book.add(stored, draft)


def test_only_relevant_lessons_are_found(store):
    book = LessonBook(store, LocalEmbedder(256))
    yaml = add_lesson(
        store,
        book,
        "parse config.yaml",
        LessonDraft("No yaml module.", "pip install pyyaml first.", "dependency", "model"),
    )
    css = add_lesson(
        store,
        book,
        "fix the login page css",
        LessonDraft("The button overlapped.", "Use flex layout for the login form.", "ui", "model"),
    )
    assert store.evaluations.get(yaml.evaluation_id).lesson_id == yaml.id
    assert [lesson.id for lesson, _ in book.relevant("please parse the yaml config")] == [yaml.id]
    assert [lesson.id for lesson, _ in book.relevant("the login form css is broken")] == [css.id]
    assert book.relevant("what is the weather in Paris tomorrow") == []
    section = book.section("parse the yaml config", limit=3, chars=500)
    assert section.startswith(SECTION_HEADING) and "pip install pyyaml first." in section
    assert "flex" not in section
    assert book.section("parse the yaml config", limit=3, chars=40) == ""  # over the budget


def test_relevance_looks_at_a_bounded_number_of_the_newest_lessons(store):
    book = LessonBook(store, None)  # keywords alone
    old = add_lesson(
        store,
        book,
        "deploy the docker image",
        LessonDraft("Forgot the tag.", "Tag docker images.", "deployment", "model"),
    )
    for n in range(CANDIDATES):
        topic = store.topics.create("t")
        stored = store.evaluations.add(evaluation(topic_id=topic.id, user_text=f"task {n}"))
        book.add(stored, LessonDraft(f"Mistake {n}.", f"Fix {n}.", "general", "heuristic"))
    assert old.id not in [lesson.id for lesson, _ in book.relevant("deploy the docker image")]


# ---- the whole path: a failing then succeeding task, then a new conversation ----------------


async def turn(runtime: Runtime, text: str, topic_id: str | None = None) -> str:
    session = runtime.session(topic_id)
    [event async for event in session.run_turn(text)]
    await runtime.background.drain()
    return session.topic_id


def test_a_failing_then_succeeding_task_leaves_a_lesson_a_new_conversation_receives(
    model_config, scripted_server, workspace
):
    answer_background(
        scripted_server, verdict='{"outcome": "partial", "quality": 3}', lesson=LESSON
    )
    read = {"action": "read", "filename": "config.yaml"}
    write = {"action": "write", "filename": "config.yaml", "content": "a: 1\n"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", read)]),  # fails: no such file
        Reply(tool_calls=[ToolCallSpec("toolkit_file", write)]),
        Reply(tool_calls=[ToolCallSpec("toolkit_file", read)]),
        Reply(text="config.yaml has a: 1."),
        Reply(text="Sure."),
        Reply(text="Sunny."),
    )

    async def go():
        runtime = Runtime(load_config())
        try:
            first = await turn(runtime, "parse config.yaml with the yaml parser")
            evaluations = runtime.store.evaluations.recent(5)
            lessons = runtime.store.lessons.recent(5)
            second = await turn(runtime, "now parse config.yaml again with yaml")
            await turn(runtime, "what is the weather in Paris?")
            return first, second, evaluations, lessons
        finally:
            await runtime.aclose()

    first, second, evaluations, lessons = asyncio.run(go())
    (evaluation_,) = evaluations
    assert (evaluation_.topic_id, evaluation_.outcome, evaluation_.source) == (
        first,
        "partial",
        "model",
    )
    assert evaluation_.tools == ("toolkit_file",) * 3 and evaluation_.errors == 1
    (lesson,) = lessons
    assert lesson.category == "dependency" and lesson.evaluation_id == evaluation_.id
    assert lesson.embedding and lesson.embedding_model.startswith("local-hash")
    lesson_request = next(r for r in scripted_server.requests if is_lesson(r))
    assert "toolkit_file" in lesson_request["messages"][1]["content"]

    requests = turn_requests(scripted_server)
    relevant, irrelevant = requests[-2], requests[-1]
    assert SECTION_HEADING in relevant["messages"][-1]["content"]
    assert "Install pyyaml with pip first" in relevant["messages"][-1]["content"]
    assert SECTION_HEADING not in irrelevant["messages"][-1]["content"]
    assert second != first  # a new conversation: relevance, not the topic, brings the lesson
