"""A topic's plan and todo list as kept in its state (keys "plan" and "todo"): the records, and
the checklists that both the tools (``tools/plan.py``, ``tools/todo.py``) and the context block's
unfinished-work section (``context/resume.py``) show, so the model reads one format."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PLAN_KEY = "plan"
PLAN_STATUSES = ("pending", "in_progress", "done", "skipped")
OPEN_STATUSES = ("pending", "in_progress")
_PLAN_MARKS = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]", "skipped": "[-]"}

TODO_KEY = "todo"
TODO_STATUSES = ("pending", "in_progress", "done")
_TODO_MARKS = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}


@dataclass
class PlanStep:
    text: str
    status: str = "pending"
    note: str = ""


@dataclass
class Plan:
    goal: str
    steps: list[PlanStep] = field(default_factory=list)
    created_at: float = 0.0
    updated_at: float = 0.0
    completed_at: float | None = None

    @property
    def unfinished(self) -> bool:
        return self.completed_at is None and any(s.status in OPEN_STATUSES for s in self.steps)

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_state(cls, raw: Any) -> Plan | None:
        if not isinstance(raw, dict) or not raw.get("goal"):
            return None
        steps = [
            PlanStep(
                str(s.get("text", "")), str(s.get("status", "pending")), str(s.get("note", ""))
            )
            for s in raw.get("steps", [])
            if isinstance(s, dict)
        ]
        return cls(
            goal=str(raw["goal"]),
            steps=steps,
            created_at=float(raw.get("created_at") or 0.0),
            updated_at=float(raw.get("updated_at") or 0.0),
            completed_at=raw.get("completed_at"),
        )


def render_plan(plan: Plan | None) -> str:
    """The plan as a compact checklist with the next step named."""
    if plan is None:
        return "There is no plan for this topic."
    done = sum(step.status == "done" for step in plan.steps)
    state = "completed" if plan.completed_at is not None else f"{done}/{len(plan.steps)} done"
    lines = [f"Plan: {plan.goal}  ({state})"]
    for number, step in enumerate(plan.steps, 1):
        suffix = "  (in progress)" if step.status == "in_progress" else ""
        note = f"  — {step.note}" if step.note else ""
        lines.append(f"{_PLAN_MARKS.get(step.status, '[?]')} {number}. {step.text}{suffix}{note}")
    following = next_step(plan)
    if following is not None and plan.completed_at is None:
        lines.append(f"Next: step {following[0]}. {following[1].text}")
    return "\n".join(lines)


def next_step(plan: Plan) -> tuple[int, PlanStep] | None:
    """The step in progress, else the first pending one (1-based number and step)."""
    numbered = list(enumerate(plan.steps, 1))
    for status in OPEN_STATUSES[::-1]:
        for number, step in numbered:
            if step.status == status:
                return number, step
    return None


@dataclass
class TodoItem:
    id: int
    text: str
    status: str = "pending"


def render_todo(items: list[TodoItem]) -> str:
    if not items:
        return "The todo list is empty."
    done = sum(item.status == "done" for item in items)
    lines = [f"Todo ({done}/{len(items)} done):"]
    for item in items:
        suffix = "  (in progress)" if item.status == "in_progress" else ""
        lines.append(f"{_TODO_MARKS.get(item.status, '[?]')} {item.id}. {item.text}{suffix}")
    return "\n".join(lines)
