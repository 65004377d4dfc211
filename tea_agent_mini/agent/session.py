"""One conversation (a stored topic) and its turn loop: ``Session.run_turn(text) -> events``.

Every front end (CLI, server, subagents, scheduled tasks) runs turns through this one loop.
Messages are stored as they complete, so a crash or a cancel loses at most the one in flight and
leaves a history whose tool calls and tool results still pair up. How a turn ended is stored too
(``Message.status``): a stopped or failed turn leaves an assistant message with the error and the
part of the answer that had arrived, so a front end shows it again as it was.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import (
    ConfigError,
    ContextTooLong,
    LLMError,
    RateLimited,
    StreamInterrupted,
    TeaAgentError,
)
from ..store.outcomes import PartialAnswer, tool_message
from ..types import (
    CallOptions,
    ChatModel,
    ChildEvent,
    Completion,
    Done,
    Error,
    Event,
    Message,
    Notice,
    ToolCall,
    ToolCallStart,
    ToolResult,
    ToolRunner,
    TurnStore,
    Usage,
)
from .corrections import Corrections
from .loopguard import LoopGuard

if TYPE_CHECKING:
    from ..context.turn import TurnContext
    from ..llm.tokens import TokenCalibrator

log = logging.getLogger(__name__)

UserContent = str | list[dict[str, Any]]
MIN_REPLY_TOKENS = 256
REPLY_MARGIN = 64  # tokens of slack for estimates that run a little low
REPLY_SHARE = 4  # a reply gets at most 1/4 of the window unless main_model.max_tokens says more
ToolOffer = Callable[["Session", list[Message]], list[dict[str, Any]]]


@dataclass(frozen=True)
class TurnSettings:
    max_iterations: int = 50
    max_context_tokens: int = 0
    max_output_tokens: int | None = None  # main_model.max_tokens

    def reply_room(self, prompt_tokens: int) -> int | None:
        """The ``max_tokens`` of a request whose prompt is ``prompt_tokens``: what is left of
        the window, within main_model.max_tokens or else a quarter of the window (a small model
        that never stops would otherwise fill it, minutes on a small machine); None when neither
        is known."""
        if self.max_context_tokens <= 0:
            return self.max_output_tokens
        room = max(MIN_REPLY_TOKENS, self.max_context_tokens - prompt_tokens - REPLY_MARGIN)
        if self.max_output_tokens is not None:
            return min(room, self.max_output_tokens)
        return min(room, max(MIN_REPLY_TOKENS, self.max_context_tokens // REPLY_SHARE))


class Session:
    """A topic plus what a turn needs: the model, the tools, the store and the prompt builder.

    ``build_context(session, history[, target_tokens]) -> list[dict]`` turns stored messages into
    the request (``target_tokens``: trim harder, after a context-length error); the runtime
    supplies it so memory and skills can join without the loop knowing about them.
    ``offer_tools(session, history)`` chooses the tool schemas of each call (default: every
    tool). Both may keep what they computed for the turn in ``turn_context``, which each turn
    starts empty, so the calls of a turn share their prefix. The ``calibrator`` learns from each
    call's reported prompt_tokens; ``after_turn(session, content, done)`` is called as a turn
    finishes (the runtime queues its background jobs there).
    """

    def __init__(
        self,
        *,
        topic_id: str,
        llm: ChatModel,
        executor: ToolRunner,
        store: TurnStore,
        build_context: Callable[..., list[dict[str, Any]]],
        settings: TurnSettings = TurnSettings(),
        calibrator: TokenCalibrator | None = None,
        after_turn: Callable[[Session, UserContent, Done], None] | None = None,
        offer_tools: ToolOffer | None = None,
    ) -> None:
        self.topic_id = topic_id
        self.llm = llm
        self.executor = executor
        self.store = store
        self.build_context = build_context
        self.settings = settings
        self.calibrator = calibrator
        self.after_turn = after_turn
        self.offer_tools = offer_tools
        self.last_context_tokens = 0
        self.turn_context: TurnContext | None = None
        self.turn_message_id: int | None = None  # the stored user message of the latest turn

    def tools_for(self, history: list[Message]) -> list[dict[str, Any]]:
        """The tool schemas of the next model call."""
        if self.offer_tools is not None:
            return self.offer_tools(self, history)
        return self.executor.toolkit.openai_tools()

    def read_history(self) -> list[Message]:
        """What a request can hold of the topic: its last turns (older ones reach the model as
        L2 pairs and the L3 summary), read through an index however long the topic is."""
        from ..context.history import RECENT_TURNS

        return self.store.messages.recent_turns(self.topic_id, RECENT_TURNS)

    def _save(self, message: Message) -> Message:
        return self.store.messages.add(self.topic_id, message)

    async def run_turn(
        self, content: UserContent, options: CallOptions = CallOptions()
    ) -> AsyncGenerator[Event, None]:
        """Run one user turn to its end, yielding events; the last one is Done or Error.
        ``options`` (sampling, output format) apply to every model call of the turn."""
        saved = await asyncio.to_thread(self._save, Message(role="user", content=content))
        self.turn_message_id = saved.id
        self.turn_context = None
        self.executor.begin_turn()
        request = content if isinstance(content, str) else _text_of(content)
        turn = _Turn(self, request, options)
        partial = PartialAnswer()
        try:
            async for event in turn.run():
                partial.see(event)
                if isinstance(event, Error):
                    await asyncio.to_thread(self._save, partial.outcome("failed", event.message))
                # before yielding: a consumer may stop iterating at Done
                if isinstance(event, Done) and self.after_turn is not None:
                    self.after_turn(self, content, event)
                yield event
        # Saved without a thread: a cancelled task must not await again before it ends.
        except asyncio.CancelledError as exc:
            if not partial.ended:
                why = f": {exc.args[0]}" if exc.args and exc.args[0] else ""
                self._save(partial.outcome("stopped", f"the turn was stopped{why}"))
            raise
        except GeneratorExit:
            if not partial.ended:  # the consumer walked away mid-turn
                self._save(partial.outcome("stopped", "the turn was stopped"))
            raise
        except TeaAgentError as exc:
            self._save(partial.outcome("failed", str(exc)))
            raise


class _Turn:
    """The state of one running turn (kept off Session so sessions stay reusable)."""

    def __init__(
        self, session: Session, request: str = "", options: CallOptions = CallOptions()
    ) -> None:
        self.s = session
        self.options = options
        self.usage = Usage()
        self.guard = LoopGuard()
        self.hard_target: int | None = None  # set after a context-length error
        self.corrections = Corrections(session.executor.toolkit, request)

    async def run(self) -> AsyncIterator[Event]:
        from ..llm.textcalls import extract_text_tool_calls

        settings = self.s.settings
        for iteration in range(1, settings.max_iterations + 1):
            history = await asyncio.to_thread(self.s.read_history)
            # re-chosen per call: a tool enabled or saved during the turn joins at once
            try:
                tools = await asyncio.to_thread(self.s.tools_for, history)
            except ConfigError as exc:
                yield _config_error(exc)
                return
            completion: Completion | None = None
            async for event in self._call_model(tools, history):
                if isinstance(event, Completion):
                    completion = event
                else:
                    yield event
                    if isinstance(event, Error):
                        return
            assert completion is not None
            if completion.usage:
                self.usage = self.usage + completion.usage
                yield completion.usage
            content, calls = completion.content, list(completion.tool_calls)
            if not calls and tools and content:
                # any installed tool or skill: the request offers a selection, the executor runs all
                installed = await asyncio.to_thread(self.s.executor.callable_names)
                content, calls = extract_text_tool_calls(content, installed)
                calls = calls or self.corrections.requested_call(content)
                if calls:
                    yield Notice(
                        f"model wrote {len(calls)} tool call(s) as text", kind="text_tools"
                    )
            if not calls and tools and self.corrections.described(content):
                yield Notice(
                    "the model described tool calls instead of making them; asked it to call",
                    kind="text_tools",
                )
                continue
            if not calls and tools and self.corrections.unapplied_code(content):
                yield Notice(
                    "the model showed code instead of applying it; asked it to", kind="text_tools"
                )
                continue
            workspace = self.s.executor.workspace
            if not calls and tools and self.corrections.unchecked_file(content, workspace):
                yield Notice(
                    "the model named a file it never looked for; asked it to check", "text_tools"
                )
                continue
            if not calls and self.corrections.empty(content, completion):
                yield Notice("the model's reply was empty; asked it again", kind="empty")
                continue
            if not calls:
                async for event in self._finish(completion, content, iteration):
                    yield event
                return
            await self._store_assistant(completion, content, calls)
            async for event in self._run_tools(calls):
                yield event
            repeated = self.guard.repeated_success()
            if repeated:
                self.corrections.repeated(repeated)
            stop = self.guard.verdict()
            if stop:
                yield Notice(stop, kind="loop")
                await self._store_stop(stop)
                yield await self._done(stop, iteration, "loop")
                return
        text = f"Stopped after {settings.max_iterations} iterations without a final answer."
        yield Notice(text, kind="max_iterations")
        await self._store_stop(text)
        yield await self._done(text, settings.max_iterations, "max_iterations")

    async def _call_model(
        self, tools: list[dict[str, Any]], history: list[Message]
    ) -> AsyncIterator[Any]:
        from ..context.budget import hard_target
        from ..llm.tokens import estimate_messages_tokens, estimate_tools_tokens

        extra = (self.hard_target,) if self.hard_target else ()
        try:
            messages = await asyncio.to_thread(self.s.build_context, self.s, history, *extra)
        except ConfigError as exc:  # e.g. the window cannot hold the request: send nothing
            yield _config_error(exc)
            return
        tools_estimate = estimate_tools_tokens(tools)
        estimate = estimate_messages_tokens(messages) + tools_estimate
        calibrator = self.s.calibrator
        calibrate = calibrator.apply if calibrator else int
        self.s.last_context_tokens = calibrate(estimate)
        messages = messages + self.corrections.take_pending()
        try:
            room = self.options.reply_tokens(self.s.settings.reply_room(self.s.last_context_tokens))
            params = self.options.params()
            if room is not None:
                params["max_tokens"] = room
            async for event in self.s.llm.stream(messages, tools or None, **params):
                if isinstance(event, Completion) and event.usage and calibrator is not None:
                    calibrator.observe(estimate, event.usage.prompt_tokens)
                yield event
        except ContextTooLong as exc:
            if self.hard_target:
                yield Error(str(exc), kind="context")
                return
            max_tokens = self.s.settings.max_context_tokens
            refused = self.s.last_context_tokens
            self.hard_target = hard_target(refused, max_tokens, calibrate(tools_estimate))
            yield Notice("context too long for the model; trimming history and retrying", "trim")
            async for event in self._call_model(tools, history):
                yield event
        except StreamInterrupted as exc:
            yield Error(str(exc), kind="interrupted")
        except RateLimited as exc:
            yield Error(str(exc), kind="rate_limited")
        except LLMError as exc:
            yield Error(str(exc), kind="upstream")

    async def _store_assistant(self, completion: Completion, content: str, calls: list) -> None:
        message = Message(
            role="assistant",
            content=content or None,
            reasoning=completion.reasoning or None,
            tool_calls=tuple(calls),
            tokens=completion.usage.completion_tokens if completion.usage else 0,
        )
        await asyncio.to_thread(self.s._save, message)

    async def _run_tools(self, calls: list[ToolCall]) -> AsyncIterator[Event]:
        for call in calls:
            yield ToolCallStart(call.id, call.name, call.arguments)
        done: set[str] = set()
        why = "cancelled by the user"
        try:
            async for item in self._results(calls):
                if isinstance(item, ChildEvent):
                    if isinstance(item.event, Usage):  # a subagent's tokens count for this turn
                        self.usage = self.usage + item.event
                    yield item
                    continue
                result = item
                await asyncio.to_thread(self.s._save, tool_message(result))
                done.add(result.call_id)
                call = _call_of(calls, result)
                self.guard.record(result, call.arguments)
                self.corrections.record(call, result.ok, result.content_for_model)
                yield result
        except asyncio.CancelledError as exc:
            # whoever cancels may say why (task.cancel("...")): a shutdown is not the user's stop
            if exc.args and exc.args[0]:
                why = f"{exc.args[0]}; the call's outcome is unknown"
            raise
        finally:
            # A cancelled turn still answers every call it stored, so the history stays valid.
            missing = [c for c in calls if c.id not in done]
            for call in missing:
                cancelled = ToolResult(call.id, call.name, ok=False, error=why)
                self.s._save(tool_message(cancelled, "stopped"))

    async def _results(self, calls: list[ToolCall]) -> AsyncIterator[ToolResult | ChildEvent]:
        """The calls' results in call order, and meanwhile the events of the subagents they
        run, as those arrive."""
        loop = asyncio.get_running_loop()
        relayed: asyncio.Queue[ChildEvent] = asyncio.Queue()

        def relay(event: ChildEvent) -> None:  # from any thread
            loop.call_soon_threadsafe(relayed.put_nowait, event)

        running = asyncio.ensure_future(self.s.executor.run_many(calls, relay))
        try:
            while not running.done():
                waiter = asyncio.ensure_future(relayed.get())
                await asyncio.wait({running, waiter}, return_when=asyncio.FIRST_COMPLETED)
                if waiter.done():
                    yield waiter.result()
                else:
                    waiter.cancel()
                    await asyncio.gather(waiter, return_exceptions=True)
            await asyncio.sleep(0)  # let relays scheduled by the last calls land
            while not relayed.empty():
                yield relayed.get_nowait()
            for result in running.result():
                yield result
        finally:
            if not running.done():
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)

    async def _finish(self, completion: Completion, content: str, iteration: int):
        from ..llm.assemble import clean_template_tokens

        text = clean_template_tokens(content)
        message = Message(
            role="assistant",
            content=text,
            reasoning=completion.reasoning or None,
            tokens=completion.usage.completion_tokens if completion.usage else 0,
            status="completed",
        )
        await asyncio.to_thread(self.s._save, message)
        if completion.finish_reason == "length":
            yield Notice("the answer was cut at the model's output limit", kind="length")
        yield await self._done(text, iteration, completion.finish_reason)

    async def _store_stop(self, why: str) -> None:
        """The record of a turn the loop guard ended: for the front ends, not the model."""
        message = Message(role="assistant", status="stopped", error=why)
        await asyncio.to_thread(self.s._save, message)

    async def _done(self, text: str, iteration: int, finish_reason: str | None) -> Done:
        store, topic = self.s.store, self.s.topic_id
        usage = self.usage
        await asyncio.to_thread(
            store.topics.add_usage, topic, usage.prompt_tokens, usage.completion_tokens
        )
        return Done(
            text=text,
            usage=self.usage,
            topic_id=topic,
            iterations=iteration,
            finish_reason=finish_reason,
            context_tokens=self.s.last_context_tokens,
            context_limit=self.s.settings.max_context_tokens,
        )


def _config_error(exc: ConfigError) -> Error:
    from ..context.turn import WindowTooSmall

    return Error(str(exc), kind="context" if isinstance(exc, WindowTooSmall) else "config")


def _text_of(content: list[dict[str, Any]]) -> str:
    return " ".join(str(part.get("text", "")) for part in content if part.get("type") == "text")


def _call_of(calls: list[ToolCall], result: ToolResult) -> ToolCall:
    made = (c for c in calls if c.id == result.call_id)
    return next(made, ToolCall(result.call_id, result.name, ""))
