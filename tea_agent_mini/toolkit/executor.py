"""`ToolExecutor`: turns a model's `ToolCall` into a `ToolResult`, whatever happens.

This is where tool failures become data. It holds the one broad ``except Exception`` of the code
base: a tool may fail in any way, and the model must always get an answer it can read.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.arguments import validate_arguments
from tea_agent_mini.toolkit.callfix import complete_action
from tea_agent_mini.toolkit.context import CURRENT_CALL, ToolContext, TurnLedger
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec
from tea_agent_mini.types import EventSink, ToolCall, ToolResult

logger = logging.getLogger(__name__)
SKILLS_TOOL = "toolkit_skills"


class ToolExecutor:
    """Runs tool calls, at most ``max_parallel`` at a time: ``async def`` tools on the event
    loop, plain functions in worker threads."""

    def __init__(
        self,
        toolkit: Toolkit,
        context: ToolContext,
        *,
        max_output_bytes: int = 128 * 1024,
        max_parallel: int = 4,
        allowed: frozenset[str] | None = None,
        owner: str = "",
    ) -> None:
        self.toolkit = toolkit
        self.context = context
        # a subagent's whitelist (None: every installed tool); ``owner`` names it in refusals
        self.allowed = allowed
        self.owner = owner
        self.max_output_bytes = max_output_bytes
        self.max_parallel = max(1, max_parallel)
        # asyncio primitives belong to one event loop; keep one semaphore per running loop
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._semaphores = weakref.WeakKeyDictionary()

    @property
    def workspace(self) -> Path:
        return self.context.workspace

    def begin_turn(self) -> None:
        """A new turn: its subagents get a budget of their own."""
        self.context.turn = TurnLedger()

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call. Never raises, except asyncio.CancelledError."""
        CURRENT_CALL.set(call.id)
        started = time.monotonic()
        try:
            output = await self._run(call)
        except Exception as exc:  # the one broad handler: any tool failure becomes data
            error = _describe(exc)
            if not isinstance(exc, ToolError):
                logger.warning("tool %s failed", call.name, exc_info=True)
            return ToolResult(
                call.id, call.name, ok=False, error=error, duration=time.monotonic() - started
            )
        text, truncated = truncate_output(output, self.max_output_bytes)
        return ToolResult(
            call.id,
            call.name,
            ok=True,
            output=text,
            duration=time.monotonic() - started,
            truncated=truncated,
        )

    async def run_many(
        self, calls: Sequence[ToolCall], on_event: EventSink | None = None
    ) -> list[ToolResult]:
        """Run calls in order; consecutive concurrency-safe ones run in parallel.

        Results come back in the order of ``calls``. Subagents started by the calls send their
        events to ``on_event`` while they run.
        """
        self.context.cancel_event.clear()
        self.context.emit = on_event
        try:
            return await self._run_in_order(calls)
        finally:
            self.context.emit = None

    async def _run_in_order(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        results: list[ToolResult] = []
        batch: list[ToolCall] = []
        for call in calls:
            if self._parallel_ok(call):
                batch.append(call)
                continue
            results += await self._gather(batch)
            batch = []
            results.append(await self.run(call))
        results += await self._gather(batch)
        return results

    async def _gather(self, calls: list[ToolCall]) -> list[ToolResult]:
        if not calls:
            return []
        if len(calls) == 1:
            return [await self.run(calls[0])]
        return list(await asyncio.gather(*(self.run(call) for call in calls)))

    def _parallel_ok(self, call: ToolCall) -> bool:
        spec = self.toolkit.get(call.name)
        return spec is not None and spec.concurrency_safe and not spec.mutates

    async def _run(self, call: ToolCall) -> str:
        if self.allowed is not None and call.name not in self.allowed:
            raise ToolError(self._not_allowed_message(call.name))
        spec = self.toolkit.get(call.name)
        if spec is None:
            if call.name in self.skill_names():
                return await asyncio.to_thread(self._skill_instructions, call.name)
            raise ToolError(self._unknown_tool_message(call.name))
        from tea_agent_mini.llm.repair import parse_tool_arguments

        arguments, assumed = complete_action(spec, parse_tool_arguments(call.arguments))
        if assumed is None:
            return await self._invoke(spec, arguments)
        logger.info("%s: the call had no action; %r assumed", spec.name, assumed)
        try:
            return await self._invoke(spec, arguments)
        except ToolError as exc:
            # Only a failure mentions the guess: the model must learn which action failed, while
            # a successful output is the tool's own text, left as it is.
            raise ToolError(f"{exc} (the call had no 'action'; {assumed!r} was assumed)") from exc

    async def _invoke(self, spec: ToolSpec, arguments: dict[str, Any]) -> str:
        arguments = validate_arguments(spec.name, spec.parameters, arguments)
        if spec.mutates_with(arguments):
            await self._check_approval(spec, arguments)
        async with self._semaphore():
            try:
                if inspect.iscoroutinefunction(spec.func):
                    result = await spec.func(self.context, **arguments)
                else:
                    result = await asyncio.to_thread(spec.func, self.context, **arguments)
            except asyncio.CancelledError:
                self.context.cancel_event.set()  # lets a running command stop early
                raise
        return render_output(result)

    async def _check_approval(self, spec: ToolSpec, arguments: dict[str, Any]) -> None:
        from tea_agent_mini.policy import decide

        approve = self.context.approve
        decision = decide(
            self.context.approval,
            spec.name,
            changes=spec.mutates_with(arguments),
            can_ask=approve is not None,
        )
        if decision.verdict == "refuse":
            hint = " Use read-only tools instead." if self.context.approval == "never" else ""
            raise ToolError(f"{decision.reason}.{hint}")
        if decision.verdict == "ask" and approve is not None:
            arguments_json = json.dumps(arguments, ensure_ascii=False)
            if not await asyncio.to_thread(approve, spec.name, arguments_json):
                raise ToolError(f"the user declined to run {spec.name}; the call was not run.")

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = asyncio.Semaphore(self.max_parallel)
            self._semaphores[loop] = semaphore
        return semaphore

    def callable_names(self) -> set[str]:
        """What a call may name: the installed tools, and the skills (a small model calls a
        skill named in its context as if it were a tool)."""
        names = set(self.toolkit.names()) | self.skill_names()
        return names if self.allowed is None else names & self.allowed

    def skill_names(self) -> set[str]:
        if SKILLS_TOOL not in self.toolkit.names():
            return set()
        from tea_agent_mini.skills.loader import load_skills

        return set(load_skills(self.context.home, self.context.workspace).skills)

    def _skill_instructions(self, name: str) -> str:
        # the registered toolkit_skills (skill_names() is empty without it), not an import of
        # tools/skills.py: the framework does not reach into the tool families
        skills = self.toolkit.get(SKILLS_TOOL)
        if skills is None:
            raise ToolError(self._unknown_tool_message(name))
        text = skills.func(self.context, "load", name=name)
        return f"{name} is a skill, not a tool. Its instructions:\n\n{text}"

    def _not_allowed_message(self, name: str) -> str:
        allowed = ", ".join(sorted(self.allowed or ())) or "none"
        if self.toolkit.get(name) is None:
            return f"{self._unknown_tool_message(name)} (your tools: {allowed})"
        return f"{name} is not one of the {self.owner or 'allowed'} tools; use one of: {allowed}"

    def _unknown_tool_message(self, name: str) -> str:
        from tea_agent_mini.llm.toolnames import unknown_tool_message

        return unknown_tool_message(name, self.toolkit.names())


def _describe(exc: Exception) -> str:
    if isinstance(exc, ToolError):
        return str(exc) or type(exc).__name__
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def render_output(result: Any) -> str:
    """A tool's return value as text for the model (dicts and lists as JSON)."""
    if result is None:
        return "(no output)"
    if isinstance(result, str):
        return result
    if isinstance(result, bytes):
        return result.decode("utf-8", errors="replace")
    if isinstance(result, (dict, list, tuple)):
        return json.dumps(result, ensure_ascii=False, default=str)
    return str(result)


def truncate_output(text: str, limit_bytes: int) -> tuple[str, bool]:
    """Keep the head and tail of ``text`` within ``limit_bytes`` (UTF-8), cut at line ends.

    Returns (text, truncated). The middle is replaced by a marker saying how much was left out;
    limits below ~100 bytes cannot hold the marker itself and are exceeded by it.
    """
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text, False
    budget = max(limit_bytes - 80, 2)  # room for the marker
    head_end = _cut_head(data, budget // 2)
    tail_start = _cut_tail(data, len(data) - (budget - head_end))
    tail_start = max(tail_start, head_end)
    omitted = data[head_end:tail_start]
    lines = omitted.count(b"\n")
    marker = f"\n... [truncated {len(omitted):,} bytes ({lines:,} lines)] ...\n"
    head = data[:head_end].decode("utf-8", errors="ignore")
    tail = data[tail_start:].decode("utf-8", errors="ignore")
    return head.rstrip("\n") + marker + tail, True


def _cut_head(data: bytes, end: int) -> int:
    """End of the head: just after the last newline before ``end`` (if it is not too early)."""
    newline = data.rfind(b"\n", 0, end)
    return newline + 1 if newline >= end // 2 else end


def _cut_tail(data: bytes, start: int) -> int:
    """Start of the tail: just after the first newline at or after ``start`` (if close enough)."""
    newline = data.find(b"\n", start)
    remaining = len(data) - start
    return newline + 1 if 0 <= newline < start + remaining // 2 else start
