"""Subagents as tools: toolkit_subagent, toolkit_parallel_subtasks, toolkit_subagent_msg.

The work is done by the runtime's ``agent.subagents.Subagents``; these functions check the
arguments, label the children's events with the call that started them, and turn a result into
text for the model. A failed child comes back as a failed call carrying the child's error.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Literal

from tea_agent_mini.errors import LLMError, TeaAgentError, ToolError
from tea_agent_mini.toolkit.context import CURRENT_CALL, ToolContext
from tea_agent_mini.toolkit.modelcall import require_runtime
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.agent.subagents import SubagentResult, Subagents

MAX_SUBTASKS = 6
SELF = "topic:"


def hub(ctx: ToolContext) -> Subagents:
    return require_runtime(ctx).subagents


@tool(
    "toolkit_subagent",
    concurrency_safe=True,
    keywords="subagent delegate explore investigate research review agent parallel",
)
async def toolkit_subagent(
    ctx: ToolContext,
    task: str,
    agent: str = "worker",
    mode: Literal["sync", "async"] = "sync",
    context: str = "",
) -> str:
    """Delegate a task to a subagent (explorer, researcher, reviewer, worker ...): it works in
    its own conversation with its own tools and returns only its answer. Several subagent calls
    in one reply run at the same time. The agents: explorer (reads the workspace, changes
    nothing), researcher (web), reviewer (reviews code), worker (may write files and run
    commands), analyst, coder, tester; toolkit_subagent_msg action=list shows all, with the
    user's own.

    Args:
        task: what the subagent should do and report, complete in itself (it does not see this
            conversation)
        agent: explorer (read-only search), researcher (web), reviewer, worker (default: writes,
            runs)
        mode: sync waits for the answer; async returns at once and the answer arrives in your
            inbox (toolkit_subagent_msg action=check_inbox)
        context: facts from this conversation the subagent needs (paths, decisions, errors)
    """
    subagents = hub(ctx)
    try:
        if mode == "async":
            topic = await subagents.start(agent, task, context=context, parent=ctx)
            return (
                f"Started the {agent} subagent in the background (topic {topic[:8]}). Its "
                "answer will arrive in your inbox: toolkit_subagent_msg action=check_inbox."
            )
        result = await subagents.run(
            agent, task, context=context, parent=ctx, call_id=CURRENT_CALL.get()
        )
    except TeaAgentError as exc:
        raise ToolError(str(exc)) from exc
    return render(result)


def render(result: SubagentResult) -> str:
    """A child's result for the model; raises ToolError for a failed child."""
    if not result.ok:
        raise ToolError(f"{result.summary_line()} the subagent failed: {result.error}")
    return f"{result.summary_line()}\n{result.text}"


@tool("toolkit_parallel_subtasks", concurrency_safe=True, keywords="split parallel subtasks")
async def toolkit_parallel_subtasks(
    ctx: ToolContext,
    task: str,
    n: Annotated[int, {"minimum": 2, "maximum": MAX_SUBTASKS}] = 3,
    agent: str = "worker",
) -> str:
    """Split a task into independent subtasks, run each as a subagent at the same time, and
    return each subtask's answer and a combined answer. Use it for work that divides cleanly
    (several files, several questions); not for steps that depend on each other.

    Args:
        task: the whole task, complete in itself
        n: how many subtasks at most (2-6, default 3)
        agent: which subagent runs each subtask (default worker)
    """
    runtime = require_runtime(ctx)
    subtasks = await _split(runtime.llm_for("cheap"), task, max(2, min(n, MAX_SUBTASKS)))
    call_id = CURRENT_CALL.get()
    runs = [
        runtime.subagents.run(
            agent, subtask, context=f"Part of: {task}", parent=ctx, call_id=call_id
        )
        for subtask in subtasks
    ]
    try:
        results = await asyncio.gather(*runs)
    except TeaAgentError as exc:
        raise ToolError(str(exc)) from exc
    parts = [
        f"## Subtask {number}: {subtask}\n"
        + (f"{r.summary_line()}\n{r.text}" if r.ok else f"{r.summary_line()} failed: {r.error}")
        for number, (subtask, r) in enumerate(zip(subtasks, results, strict=True), 1)
    ]
    combined = await _combine(runtime.llm_for("cheap"), task, parts)
    return "\n\n".join([*parts, f"## Combined answer\n{combined}"])


SPLIT_PROMPT = (
    "Split the task below into at most {n} independent subtasks that can be done at the same "
    "time by different people who cannot talk to each other. Each subtask must be complete in "
    "itself. Answer with a JSON array of strings only.\n\nTask: {task}"
)
COMBINE_PROMPT = (
    "Several workers each did part of a task. Write the combined answer to the task from their "
    "reports: short, concrete, noting any part that failed.\n\nTask: {task}\n\n{reports}"
)


async def _split(llm: object, task: str, n: int) -> list[str]:
    from tea_agent_mini.llm.repair import repair_json

    reply = await _ask(llm, SPLIT_PROMPT.format(n=n, task=task))
    try:
        items = repair_json(reply)
    except LLMError as exc:
        raise ToolError(f"the model did not split the task into a list: {exc}") from exc
    subtasks = (
        [str(item).strip() for item in items if str(item).strip()]
        if isinstance(items, list)
        else []
    )
    if not subtasks:
        raise ToolError("the model did not split the task; run it with toolkit_subagent")
    return subtasks[:n]


async def _combine(llm: object, task: str, parts: list[str]) -> str:
    try:
        return await _ask(llm, COMBINE_PROMPT.format(task=task, reports="\n\n".join(parts)))
    except ToolError as exc:
        return f"(no combined answer: {exc})"


async def _ask(llm: object, prompt: str) -> str:
    complete = getattr(llm, "complete", None)
    if complete is None:
        raise ToolError("no model is available to split or combine the task")
    try:
        completion = await complete([{"role": "user", "content": prompt}])
    except LLMError as exc:
        raise ToolError(f"the model failed: {exc}") from exc
    return str(completion.content or "").strip()


@tool(
    "toolkit_subagent_msg",
    mutates=False,
    keywords="inbox message subagent",
)
async def toolkit_subagent_msg(
    ctx: ToolContext,
    action: Literal["list", "check_inbox", "send", "cancel"],
    to: str = "",
    text: str = "",
) -> str:
    """Messages between agents, and the subagents of this conversation: list (the agents you
    can start, the ones running in the background and the ones that ran here), check_inbox
    (read your unread messages, e.g. async subagents' answers), send (a message to another
    agent's inbox: 'parent', a subagent's topic id, or a teammate's name), cancel (stop a
    background subagent by its topic id).

    Args:
        action: list, check_inbox, send or cancel
        to: [send] the recipient; [cancel] the subagent's topic id (or its first characters)
        text: [send] the message
    """
    if ctx.store is None or ctx.topic_id is None:
        raise ToolError("messages need the store and a conversation, which are not available here")
    if action == "list":
        return await asyncio.to_thread(_listing, ctx)
    if action == "check_inbox":
        return await asyncio.to_thread(_read_inbox, ctx)
    if action == "send":
        return await asyncio.to_thread(_send, ctx, to, text)
    return _cancel(ctx, to)


def _listing(ctx: ToolContext) -> str:
    assert ctx.store is not None and ctx.topic_id is not None
    subagents = hub(ctx)
    found = subagents.load_identities()
    lines = ["Agents you can start (toolkit_subagent agent=...):", found.describe()]
    running = set(subagents.running())
    children = ctx.store.topics.children(ctx.topic_id)
    if children:
        lines.append("Subagents of this conversation (topic id, agent, state, task):")
        for child in children[-20:]:
            state = "running" if child.id in running else "finished"
            lines.append(f"- {child.id[:12]} {child.agent} {state}: {child.title}")
    return "\n".join(lines)


def _read_inbox(ctx: ToolContext) -> str:
    assert ctx.store is not None and ctx.topic_id is not None
    messages = ctx.store.inbox.read(SELF + ctx.topic_id)
    if not messages:
        return "Your inbox is empty."
    return "\n\n".join(f"From {m.sender} ({m.kind}):\n{m.text}" for m in messages)


def _send(ctx: ToolContext, to: str, text: str) -> str:
    assert ctx.store is not None and ctx.topic_id is not None
    if not text.strip():
        raise ToolError("send needs text")
    recipient = _address(ctx, to.strip())
    ctx.store.inbox.send(SELF + ctx.topic_id, recipient, text.strip())
    if ctx.runtime is not None:
        ctx.runtime.team.poke(recipient)  # a teammate wakes at once
    return f"Sent to {recipient}."


def _address(ctx: ToolContext, to: str) -> str:
    assert ctx.store is not None and ctx.topic_id is not None
    if not to:
        raise ToolError("send needs to: 'parent', a subagent's topic id or a teammate's name")
    if to == "parent":
        topic = ctx.store.topics.get(ctx.topic_id)
        if topic is None or topic.parent_id is None:
            raise ToolError("this conversation has no parent agent")
        return SELF + topic.parent_id
    if ctx.store.teammates.get(to) is not None:
        return to
    matches = ctx.store.topics.with_id_prefix(to.removeprefix(SELF))
    if len(matches) == 1:
        return SELF + matches[0].id
    raise ToolError(f"no agent {to!r}: use 'parent', a subagent's topic id or a teammate's name")


def _cancel(ctx: ToolContext, to: str) -> str:
    subagents = hub(ctx)
    prefix = to.strip().removeprefix(SELF)
    matches = [topic for topic in subagents.running() if prefix and topic.startswith(prefix)]
    if len(matches) != 1:
        raise ToolError(f"no single background subagent's topic starts with {to!r}")
    subagents.cancel(matches[0])
    return f"Cancelled the subagent in topic {matches[0][:12]}."
