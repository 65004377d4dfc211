"""Skill crystallisation: a task that went well becomes a learned SKILL.md, deduplicated against
the skills there are, versioned, and offered to later conversations by meaning."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.evaluation.crystallise import (
    Draft,
    heuristic_draft,
    learned_dir,
    slug,
    worth_crystallising,
    write_learned,
)
from tea_agent_mini.evaluation.crystallise import _Turn as Turn
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.skills.loader import load_skills
from tea_agent_mini.store import Evaluation
from tests.fakes.background import answer_background, is_evaluation, turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec

CSV_SKILL = (
    '{"name": "count-csv-rows", "description": "Count the data rows of a CSV file, without '
    'its header.", "when_to_use": "When asked how many rows or records a CSV file has.", '
    '"steps": ["Find the file with toolkit_glob", "Count lines with wc -l and subtract the '
    'header"], "pitfalls": ["The header is not a data row"], '
    '"triggers": ["how many rows in the csv", "count csv records"]}'
)


def evaluation(**changes) -> Evaluation:
    values = dict(
        topic_id="a" * 32,
        user_message_id=1,
        outcome="success",
        quality=5,
        source="model",
        user_text="count the rows of data.csv",
        tools=("toolkit_glob", "toolkit_exec"),
        tool_calls=2,
    )
    return Evaluation(**{**values, **changes})


def draft(**changes) -> Draft:
    values = dict(
        name="count-csv-rows",
        description="Count the data rows of a CSV file, without its header.",
        when_to_use="When asked how many rows a CSV file has.",
        steps=("Find the file", "Count the lines, minus the header"),
        triggers=("how many rows in the csv",),
        tools=("toolkit_glob", "toolkit_exec"),
    )
    return Draft(**{**values, **changes})


def test_only_multi_step_successes_of_quality_four_or_more_are_kept():
    assert worth_crystallising(evaluation())
    assert not worth_crystallising(evaluation(quality=3))
    assert not worth_crystallising(evaluation(outcome="partial"))
    assert not worth_crystallising(evaluation(tool_calls=1))
    assert not worth_crystallising(evaluation(tool_calls=2, errors=2))


def test_a_learned_skill_is_written_with_its_provenance_and_reads_back(tea_home):
    crystal = write_learned(tea_home, draft(), evaluation())
    assert crystal.action == "created" and crystal.version == 1
    assert crystal.path == learned_dir(tea_home) / "count-csv-rows" / "SKILL.md"
    skill = load_skills(tea_home).skills["count-csv-rows"]
    assert skill.source == "learned"
    meta = skill.metadata["metadata"]
    assert meta["learned_from"] == "a" * 32 and meta["score"] == 5 and meta["version"] == 1
    assert "## Steps\n1. Find the file" in skill.body and "toolkit_glob, toolkit_exec" in skill.body


def test_a_similar_success_makes_the_next_version_and_keeps_the_old_one(tea_home):
    write_learned(tea_home, draft(), evaluation())
    again = draft(name="csv-row-count", triggers=("count csv records",), steps=("Use wc -l",))
    crystal = write_learned(tea_home, again, evaluation(quality=4))
    assert (crystal.action, crystal.name, crystal.version) == ("updated", "count-csv-rows", 2)
    folder = learned_dir(tea_home) / "count-csv-rows"
    assert (folder / "versions" / "v1.md").read_text(encoding="utf-8").count("Find the file") == 1
    skill = load_skills(tea_home).skills["count-csv-rows"]
    assert set(skill.triggers) == {"how many rows in the csv", "count csv records"}
    assert "Use wc -l" in skill.body
    assert not (learned_dir(tea_home) / "csv-row-count").exists()


def test_what_a_bundled_skill_covers_is_not_written_again(tea_home):
    review = draft(
        name="review-code-change",
        description="Review a code change (diff, pull request or files) for correctness, "
        "security, design, tests and readability, and report findings ranked by severity.",
        triggers=("review this code", "review my PR"),
    )
    crystal = write_learned(tea_home, review, evaluation())
    assert crystal.action == "skipped" and crystal.name == "code-review"
    assert not learned_dir(tea_home).exists()


def test_without_a_model_the_calls_make_the_steps():
    turn = Turn("Count the rows of data.csv!", [("toolkit_glob", '{"pattern": "*.csv"}')])
    made = heuristic_draft(turn)
    assert made.name == "count-rows-data-csv" and made.source == "heuristic"
    assert made.steps == ('Call toolkit_glob with arguments like {"pattern": "*.csv"}',)
    assert slug("  Hello, World_2 ") == "hello-world-2"


async def turn(runtime: Runtime, text: str) -> str:
    session = runtime.session()
    [event async for event in session.run_turn(text)]
    await runtime.background.drain()
    return session.topic_id


@pytest.fixture
def verdicts(scripted_server):
    """A task that failed (its tool errors) is partial; one whose tools worked a success."""

    def verdict(request: dict) -> Reply:
        text = str(request["messages"][-1]["content"])
        if "missing.csv" in text:
            return Reply(text='{"outcome": "partial", "quality": 2, "reason": "an error"}')
        return Reply(text='{"outcome": "success", "quality": 5, "reason": "done"}')

    answer_background(scripted_server, skill=CSV_SKILL)
    scripted_server.on(is_evaluation, verdict)


def test_a_failing_then_succeeding_task_leaves_a_skill_a_new_conversation_receives(
    model_config, scripted_server, verdicts, workspace, tea_home
):
    (workspace / "data.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    wrong = {"action": "read", "filename": "missing.csv"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", wrong)]),
        Reply(tool_calls=[ToolCallSpec("toolkit_file", wrong)]),
        Reply(text="I could not find it."),
        Reply(tool_calls=[ToolCallSpec("toolkit_glob", {"pattern": "*.csv"})]),
        Reply(tool_calls=[ToolCallSpec("toolkit_exec", {"command": "wc -l data.csv"})]),
        Reply(text="data.csv has 2 data rows."),
        Reply(text="Let me count them."),
        Reply(text="Sunny."),
    )

    async def go():
        runtime = Runtime(load_config())
        try:
            await turn(runtime, "count the rows in the csv file")
            await turn(runtime, "count the rows in data.csv")
            outcomes = [e.outcome for e in reversed(runtime.store.evaluations.recent(5))]
            lessons = runtime.store.lessons.recent(5)
            await turn(runtime, "how many rows are in the csv of sales?")
            await turn(runtime, "what is the weather in Paris?")
            return outcomes, lessons
        finally:
            await runtime.aclose()

    outcomes, lessons = asyncio.run(go())
    assert outcomes == ["partial", "success"]
    assert len(lessons) == 1
    skill = load_skills(tea_home).skills["count-csv-rows"]
    assert skill.source == "learned" and skill.metadata["metadata"]["score"] == 5
    requests = turn_requests(scripted_server)
    relevant, unrelated = requests[-2], requests[-1]
    assert "- count-csv-rows:" in str(relevant["messages"][-1]["content"])
    assert "count-csv-rows" not in str(unrelated["messages"][-1]["content"])


def test_a_loaded_skill_counts_a_use_and_the_outcome_of_its_task(
    model_config, scripted_server, verdicts
):
    load = {"action": "load", "name": "code-review"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_skills", load)]),
        Reply(tool_calls=[ToolCallSpec("toolkit_glob", {"pattern": "*"})]),
        Reply(text="Reviewed."),
    )

    async def go():
        runtime = Runtime(load_config())
        try:
            await turn(runtime, "review my change")
            return runtime.store.skill_stats.get("code-review")
        finally:
            await runtime.aclose()

    stats = asyncio.run(go())
    assert stats is not None and (stats.uses, stats.successes, stats.failures) == (1, 1, 0)


def test_a_small_models_copied_placeholders_are_dropped():
    from tea_agent_mini.evaluation.crystallise import _draft_from

    turn = Turn("How many rows are in sales.csv?", [("toolkit_exec", '{"command": "wc -l"}')])
    copied = {
        "name": "lowercase-words-with-hyphens",
        "description": "Counts the data rows of a CSV file with a shell command.",
        "when_to_use": "<...>",
        "steps": ["Run wc -l on the file", "<...>"],
        "triggers": ["phrases a user would say"],
    }
    made = _draft_from(copied, turn)
    assert made is not None
    assert made.name == "many-rows-sales-csv"
    assert made.steps == ("Run wc -l on the file",)
    assert made.triggers == ("How many rows are in sales.csv?",)
    assert made.when_to_use == made.description
    assert _draft_from({**copied, "description": "<what the skill does>"}, turn) is None
