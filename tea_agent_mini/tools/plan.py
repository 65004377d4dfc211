"""toolkit_plan and toolkit_task_resume: a goal broken into steps, kept per topic in the store.

The plan survives restarts (it lives in the topic's state), so ``toolkit_task_resume`` can show
where the work stopped, in this topic or in the most recent one with unfinished work.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Annotated, Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.store.worklist import (
    OPEN_STATUSES,
    PLAN_KEY,
    PLAN_STATUSES,
    Plan,
    PlanStep,
    render_plan,
    render_todo,
)
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools import todo

if TYPE_CHECKING:
    from tea_agent_mini.store import Store, Topic

Action = Literal["create", "show", "update_step", "add_step", "complete", "clear"]
ACTIONS: tuple[str, ...] = get_args(Action)
MAX_STEPS = 50
MAX_TEXT = 500
RESUME_SCAN = 100  # how many recent topics task_resume looks through


def load_plan(ctx: ToolContext) -> Plan | None:
    return Plan.from_state(ctx.state_get(PLAN_KEY))


def save_plan(ctx: ToolContext, plan: Plan | None) -> None:
    if plan is not None:
        plan.updated_at = time.time()
    ctx.state_set(PLAN_KEY, plan.to_state() if plan is not None else None)


@tool("toolkit_plan")
def toolkit_plan(
    ctx: ToolContext,
    action: Action,
    goal: str | None = None,
    steps: list[str] | None = None,
    step: int | None = None,
    status: Annotated[str | None, {"enum": list(PLAN_STATUSES)}] = None,
    note: str | None = None,
) -> str:
    """A plan for a larger task: a goal and numbered steps, each pending, in_progress, done or
    skipped. It is kept with this conversation and survives restarts (see
    toolkit_task_resume). Create it before starting, mark a step in_progress while working on
    it and done (with a short note) when finished; add steps you discover on the way;
    complete the plan at the end. Every action returns the whole plan.

    Args:
        action: create a plan (replaces the current one), show it, update_step (status and/or
            note), add_step (new steps), complete the plan, or clear it
        goal: [create] what the plan achieves
        steps: [create/add_step] step texts, in order
        step: [update_step] the step's number / [add_step] insert after this step (default:
            at the end; 0 inserts at the start)
        status: [update_step]
        note: [update_step] a short result or reason (e.g. why it was skipped)
    """
    if action == "clear":
        save_plan(ctx, None)
        return "The plan was cleared."
    if action == "create":
        created = _create(ctx, goal, steps)
        save_plan(ctx, created)
        return render_plan(created)
    plan = load_plan(ctx)
    if action == "show":
        return render_plan(plan)
    if action not in ACTIONS:
        raise ToolError(f"unknown action {action!r}; use {', '.join(ACTIONS)}")
    if plan is None:
        raise ToolError("there is no plan for this topic; create one first (action 'create')")
    if action == "update_step":
        _update(plan, step, status, note)
    elif action == "add_step":
        _insert(plan, _texts(steps), step)
    else:
        return _complete(ctx, plan)
    plan.completed_at = None
    save_plan(ctx, plan)
    return render_plan(plan)


def _create(ctx: ToolContext, goal: str | None, steps: list[str] | None) -> Plan:
    if not goal or not goal.strip():
        raise ToolError("create needs 'goal' (what the plan achieves)")
    texts = _texts(steps)
    now = time.time()
    plan = Plan(goal=_clip(goal), created_at=now, updated_at=now)
    _insert(plan, texts, None)
    return plan


def _texts(steps: list[str] | None) -> list[str]:
    texts = [_clip(text) for text in steps or [] if isinstance(text, str) and text.strip()]
    if not texts:
        raise ToolError("give the steps as 'steps', a list of short texts")
    return texts


def _insert(plan: Plan, texts: list[str], after: int | None) -> None:
    if len(plan.steps) + len(texts) > MAX_STEPS:
        raise ToolError(f"a plan holds at most {MAX_STEPS} steps; split the work into plans")
    position = len(plan.steps) if after is None else after
    if not 0 <= position <= len(plan.steps):
        raise ToolError(f"'step' must be between 0 and {len(plan.steps)} to insert after it")
    plan.steps[position:position] = [PlanStep(text) for text in texts]


def _update(plan: Plan, number: int | None, status: str | None, note: str | None) -> None:
    if number is None:
        raise ToolError("update_step needs 'step' (the step's number)")
    if not 1 <= number <= len(plan.steps):
        raise ToolError(f"no step {number}; the plan has steps 1 to {len(plan.steps)}")
    if status is None and note is None:
        raise ToolError("update_step needs 'status' and/or 'note'")
    target = plan.steps[number - 1]
    if status is not None:
        if status not in PLAN_STATUSES:
            raise ToolError(f"status must be one of {', '.join(PLAN_STATUSES)}")
        if status == "in_progress":
            for other in plan.steps:
                if other is not target and other.status == "in_progress":
                    other.status = "pending"
        target.status = status
    if note is not None:
        target.note = _clip(note)


def _complete(ctx: ToolContext, plan: Plan) -> str:
    skipped = [step for step in plan.steps if step.status in OPEN_STATUSES]
    for step in skipped:
        step.status = "skipped"
        step.note = step.note or "left open when the plan was completed"
    plan.completed_at = time.time()
    save_plan(ctx, plan)
    text = render_plan(plan)
    if skipped:
        text += f"\n({len(skipped)} open step(s) were marked skipped.)"
    return text


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


# ---- resume -------------------------------------------------------------------------------


@tool("toolkit_task_resume", concurrency_safe=True)
def toolkit_task_resume(ctx: ToolContext) -> str:
    """Find unfinished work to continue after a restart or an interruption: the open plan and
    todo list of this conversation, or else of the most recent conversation that has some,
    with that conversation's last request. Call it when the user says 'continue' or 'resume'.
    """
    own = _unfinished_work(ctx)
    if own:
        return "Unfinished work in this conversation:\n\n" + own
    store = ctx.store
    if store is None:
        return "Nothing unfinished in this conversation (and no store to look further)."
    for topic in store.topics.recent(limit=RESUME_SCAN, include_archived=True):
        if topic.id == ctx.topic_id:
            continue
        work = _unfinished_work(dataclasses.replace(ctx, topic_id=topic.id))
        if work:
            return _describe_topic(store, topic) + "\n\n" + work
    return "There is no unfinished plan or todo list in this or any recent conversation."


def _unfinished_work(ctx: ToolContext) -> str:
    parts = []
    plan = load_plan(ctx)
    if plan is not None and plan.unfinished:
        parts.append(render_plan(plan))
    items = todo.load_items(ctx)
    if any(item.status != "done" for item in items):
        parts.append(render_todo(items))
    return "\n\n".join(parts)


def _describe_topic(store: Store, topic: Topic) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(topic.updated_at))
    title = topic.title or "(untitled)"
    lines = [
        "Nothing unfinished in this conversation. The most recent conversation with "
        f"unfinished work is '{title}' (id {topic.id}, last active {when}).",
    ]
    last = next(
        (m for m in reversed(store.messages.of_topic(topic.id, limit=50)) if m.role == "user"),
        None,
    )
    if last is not None and last.text.strip():
        lines.append(f"Its last request was: {_clip(last.text)}")
    lines.append(
        "To continue it here, recreate the plan with toolkit_plan (action 'create') from the "
        "open steps below."
    )
    return "\n".join(lines)
