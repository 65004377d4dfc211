"""The evolution pass: statistics from stored tool messages, TOOLS.md, skill housekeeping, its
cadence on the background worker, and toolkit_evolution."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tea_agent_mini.config import EvolutionConfig
from tea_agent_mini.evaluation.evolution import maybe_run_evolution, read_report, run_evolution
from tea_agent_mini.skills.authoring import create_skill
from tea_agent_mini.skills.toolskills import write_tool_skill
from tea_agent_mini.store import Store
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.evolve.evolution import toolkit_evolution
from tea_agent_mini.types import Message

DAY = 86400.0


@dataclass(frozen=True)
class Spec:
    name: str
    description: str = "does things"
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


def add_calls(store: Store, calls: list[tuple[str, str, float]], at: float | None = None) -> str:
    """Tool messages (name, status, duration) in one new topic, in this order."""
    topic = store.topics.create("work").id
    for name, status, duration in calls:
        message = Message(
            role="tool",
            content="out",
            name=name,
            status=status,
            duration=duration,
            created_at=at or 0.0,
        )
        store.messages.add(topic, message)
    return topic


def test_statistics_come_from_the_stored_tool_messages(store, tea_home):
    grep, edit = ("toolkit_grep", "ok", 0.5), ("toolkit_edit", "ok", 1.5)
    add_calls(store, [grep, edit, grep, edit, grep, edit, ("toolkit_edit", "failed", 0.5)])
    add_calls(store, [("toolkit_grep", "failed", 0.5)] * 3)
    add_calls(store, [("toolkit_exec", "ok", 9.0)], at=1.0)  # long before the window
    tools = [(Spec("toolkit_grep"), False), (Spec("toolkit_edit"), False)]
    tools.append((Spec("toolkit_exec"), False))
    report = run_evolution(store, tea_home, EvolutionConfig(), tools)
    by_name = {s.name: s for s in report.tools}
    assert report.calls == 10 and list(by_name) == ["toolkit_grep", "toolkit_edit"]
    assert (by_name["toolkit_grep"].calls, by_name["toolkit_grep"].failures) == (6, 3)
    assert by_name["toolkit_edit"].average == pytest.approx(1.25)
    assert report.unused == ["toolkit_exec"]
    assert [(p.first, p.then, p.count) for p in report.pairs] == [
        ("toolkit_grep", "toolkit_edit", 3)
    ]
    assert any("toolkit_grep failed 3 of 6 calls" in s for s in report.suggestions)
    assert any("toolkit_grep is followed by toolkit_edit 3 times" in s for s in report.suggestions)
    saved = json.loads((tea_home / "evolution" / "report.json").read_text())
    assert saved["tools"][0] == {
        "name": "toolkit_grep",
        "calls": 6,
        "failures": 3,
        "failure_rate": 0.5,
        "avg_seconds": 0.5,
        "total_seconds": 3.0,
    }
    assert "| toolkit_edit | 4 | 1 | 1.25 |" in read_report(tea_home)


def test_tools_md_describes_your_own_tools(store, tea_home):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    (tea_home / "tools").mkdir()
    (tea_home / "tools" / "word_count.json").write_text(json.dumps({"version": 3}))
    add_calls(store, [("word_count", "ok", 0.25), ("word_count", "failed", 0.75)])
    tools = [(Spec("word_count", "Count the words.", schema), True), (Spec("toolkit_grep"), False)]
    report = run_evolution(store, tea_home, EvolutionConfig(), tools)
    assert report.user_tools == ["word_count"]
    text = (tea_home / "tools" / "TOOLS.md").read_text()
    assert "## word_count (v3)\n\nCount the words." in text
    assert "Parameters: `text` (string, required)" in text
    assert "2 calls, 1 failed, 0.50 s on average" in text
    assert "toolkit_grep" not in text


def test_weak_skills_retire_and_orphaned_tool_skills_go(store, tea_home):
    create_skill(tea_home, "weak-one", "A skill that rarely helps.", "Do it.")
    learned = tea_home / "skills" / "learned" / "weak-learned"
    learned.mkdir(parents=True)
    (learned / "SKILL.md").write_text(
        "---\nname: weak-learned\ndescription: Learned, rarely helps.\n---\nSteps.\n"
    )
    create_skill(tea_home, "good-one", "A skill that helps.", "Do it well.")
    write_tool_skill(tea_home, "gone_tool", "Was a tool.", {"type": "object"})
    write_tool_skill(tea_home, "kept_tool", "Is a tool.", {"type": "object"})
    stats = (
        ("weak-one", 10, 1),
        ("good-one", 10, 9),
        ("code-review", 9, 0),
        ("weak-learned", 6, 0),
    )
    for name, uses, good in stats:
        for turn in range(uses):
            store.skill_stats.used(name)
            store.skill_stats.outcome(name, turn < good)
    tools = [(Spec("kept_tool"), True)]
    report = run_evolution(store, tea_home, EvolutionConfig(), tools)
    care = report.skills
    assert care.retired == ["weak-learned", "weak-one"]
    assert care.weak == ["code-review"]  # bundled: only reported
    assert care.removed == ["tool-gone-tool"]
    skills = tea_home / "skills"
    assert (skills / ".retired" / "weak-one" / "SKILL.md").is_file()
    assert (skills / ".retired" / "weak-learned" / "SKILL.md").is_file()
    assert not (skills / "learned" / "weak-learned").exists()
    assert not (skills / "weak-one").exists() and (skills / "good-one").is_dir()
    assert not (skills / "tool-gone-tool").exists() and (skills / "tool-kept-tool").is_dir()


def test_without_skill_statistics_nothing_is_judged(store, tea_home):
    create_skill(tea_home, "any-skill", "Some skill.", "Steps.")
    report = run_evolution(store, tea_home, EvolutionConfig(), [])
    assert report.skills.judged == 0 and report.skills.retired == []
    assert (tea_home / "skills" / "any-skill").is_dir()
    assert not (tea_home / "tools" / "TOOLS.md").exists()  # no tools of your own, no file


def test_the_pass_runs_at_most_once_per_interval(store, tea_home):
    now = [1000.0]
    settings = EvolutionConfig(interval=3600)

    def due():
        inventory = lambda: [(Spec("toolkit_grep"), False)]  # noqa: E731
        run = maybe_run_evolution(store, tea_home, settings, inventory, clock=lambda: now[0])
        return asyncio.run(run)

    assert due() is None  # the first call starts the clock
    now[0] += 3599
    assert due() is None and read_report(tea_home) is None
    now[0] += 2
    assert due() is not None and read_report(tea_home) is not None
    assert due() is None
    now[0] += 3600
    assert due() is not None
    off = EvolutionConfig(interval=0)
    now[0] += 10 * DAY
    inventory = lambda: []  # noqa: E731
    assert asyncio.run(maybe_run_evolution(store, tea_home, off, inventory)) is None


def test_toolkit_evolution_runs_the_pass_and_shows_the_report(store, tea_home, workspace):
    ctx = ToolContext(workspace=workspace, home=tea_home, store=store)
    assert "no evolution report yet" in toolkit_evolution(ctx, "report")
    add_calls(store, [("toolkit_grep", "ok", 0.1)])
    shown = toolkit_evolution(ctx, "run")
    assert shown.startswith("# Evolution report") and "| toolkit_grep | 1 | 0 | 0.10 |" in shown
    assert toolkit_evolution(ctx, "report") == shown


def test_the_runtime_runs_the_pass_after_turns(model_config, scripted_server, write_config):
    import yaml

    from tea_agent_mini.config import load_config
    from tea_agent_mini.runtime import Runtime

    data = yaml.safe_load(model_config.read_text())
    data["agent"]["evolution"] = {"interval": 0.01}
    home = write_config(data).parent

    async def turns():
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            for text in ("first", "second"):
                [event async for event in session.run_turn(text)]
                await runtime.background.drain()
                await asyncio.sleep(0.02)
        finally:
            await runtime.aclose()

    asyncio.run(turns())
    report = json.loads((home / "evolution" / "report.json").read_text())
    assert report["calls"] == 0 and "toolkit_file" in report["unused"]
