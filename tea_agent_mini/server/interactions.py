"""How a server turn's tools reach the user: questions (``toolkit_question``), approvals (a
mutating tool under ``approval: ask``) and notices (``toolkit_notify`` without a desktop).

Tools run in worker threads; a turn's event log lives on the event loop. A question goes onto
the log (through ``call_soon_threadsafe``) as a :class:`Question` event, and the tool's thread
waits on a ``concurrent.futures.Future`` that ``POST /v1/sessions/{id}/questions/{qid}``
resolves. Nobody answering in time, or the turn ending, gives ``None`` (the tool then uses its
default). An approval is a question of kind ``approval`` with the choices Allow and Deny;
no answer in time denies. A notice goes onto the log as a :class:`UserNotice` event.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..types import ApprovalCallback, AskUserCallback, NoticeCallback

log = logging.getLogger(__name__)

KEEP_CLOSED = 1000  # closed question ids remembered, so a late answer gets 409 rather than 404
APPROVAL_TIMEOUT = 600.0  # seconds an approval waits; then the call is denied
ALLOW, DENY = "Allow", "Deny"

Publish = Callable[[Any], None]
"""Logs an event in the turn that asked; called on the event loop only."""

AnswerOutcome = Literal["answered", "unknown", "closed"]


@dataclass(frozen=True)
class Question:
    """A tool asks the user; open until a :class:`QuestionClosed` with the same id."""

    id: str
    question: str
    choices: tuple[str, ...]
    timeout: float
    deadline: float  # time.time() when the tool stops waiting
    default: str | None = None
    kind: Literal["question", "approval"] = "question"
    tool: str | None = None  # an approval's tool and its arguments (JSON)
    arguments: str | None = None


@dataclass(frozen=True)
class QuestionClosed:
    """A question got its answer (``answered``) or nobody answered in time (``timeout``)."""

    id: str
    status: Literal["answered", "timeout"]
    answer: str | None = None


@dataclass(frozen=True)
class UserNotice:
    """A notice a tool stored for the user (shown at once by the web UI as a toast)."""

    title: str
    message: str
    urgency: str = "normal"
    time: float = field(default_factory=time.time)


@dataclass(frozen=True)
class TurnHooks:
    """What one turn's tools get to reach the user (passed on to ``Runtime.session``)."""

    ask_user: AskUserCallback
    approve: ApprovalCallback
    on_notice: NoticeCallback


@dataclass
class _Open:
    topic_id: str
    turn: str
    future: concurrent.futures.Future[str]
    publish: Publish


class Interactions:
    """The open questions of the running turns. Every method but the callbacks that
    :meth:`hooks` returns runs on the event loop."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}
        self._closed: OrderedDict[str, str] = OrderedDict()  # question id -> topic id
        self._live: set[str] = set()  # turns that may still ask

    def hooks(self, topic_id: str, turn: str, publish: Publish) -> TurnHooks:
        """The callbacks for one turn; call :meth:`end_turn` when the turn is over."""
        loop = asyncio.get_running_loop()
        self._live.add(turn)

        def ask(asked: Question) -> str | None:
            future: concurrent.futures.Future[str] = concurrent.futures.Future()
            opened = (asked, future, topic_id, turn, publish)
            if not _call(loop, self._open_question, *opened):
                return None
            try:
                return future.result(asked.timeout)
            except concurrent.futures.CancelledError:
                return None  # the turn ended
            except concurrent.futures.TimeoutError:
                if not future.cancel():
                    return future.result()  # answered at the last moment
                _call(loop, self._expire, asked.id)
                return None

        def ask_user(
            question: str, choices: list[str] | None, timeout: float, default: str | None
        ) -> str | None:
            options = tuple(choices or ())
            return ask(Question(_new_id(), question, options, timeout, _after(timeout), default))

        def approve(name: str, arguments: str) -> bool:
            asked = Question(
                _new_id(),
                f"Allow {name} to run?",
                (ALLOW, DENY),
                APPROVAL_TIMEOUT,
                _after(APPROVAL_TIMEOUT),
                default=DENY,
                kind="approval",
                tool=name,
                arguments=arguments,  # all of it: an approval shows what will run
            )
            answer = ask(asked)
            return answer is not None and answer.strip().lower() in ("allow", "yes", "y")

        def on_notice(title: str, message: str, urgency: str) -> None:
            _call(loop, publish, UserNotice(title, message, urgency))

        return TurnHooks(ask_user, approve, on_notice)

    def answer(self, topic_id: str, question_id: str, text: str) -> AnswerOutcome:
        """Hand ``text`` to the tool waiting for it: ``unknown`` when no such question was
        asked in this session, ``closed`` when it was answered or timed out already."""
        item = self._open.get(question_id)
        if item is None or item.topic_id != topic_id:
            return "closed" if self._closed.get(question_id) == topic_id else "unknown"
        try:
            item.future.set_result(text)
        except concurrent.futures.InvalidStateError:
            return "closed"  # it timed out just now; _expire is on its way
        self._close(question_id)
        item.publish(QuestionClosed(question_id, "answered", text))
        return "answered"

    def end_turn(self, turn: str) -> None:
        """The turn is over: questions it still waits for end with no answer."""
        self._live.discard(turn)
        for question_id, item in list(self._open.items()):
            if item.turn == turn:
                item.future.cancel()
                self._close(question_id)

    def _open_question(
        self,
        asked: Question,
        future: concurrent.futures.Future[str],
        topic_id: str,
        turn: str,
        publish: Publish,
    ) -> None:
        if turn not in self._live:
            future.cancel()
            return
        self._open[asked.id] = _Open(topic_id, turn, future, publish)
        publish(asked)

    def _expire(self, question_id: str) -> None:
        item = self._open.get(question_id)
        if item is not None:
            self._close(question_id)
            item.publish(QuestionClosed(question_id, "timeout"))

    def _close(self, question_id: str) -> None:
        item = self._open.pop(question_id)
        self._closed[question_id] = item.topic_id
        while len(self._closed) > KEEP_CLOSED:
            self._closed.popitem(last=False)


def _new_id() -> str:
    return uuid.uuid4().hex[:12]


def _after(seconds: float) -> float:
    return time.time() + seconds


def _call(loop: asyncio.AbstractEventLoop, func: Callable[..., Any], *args: Any) -> bool:
    """Run ``func(*args)`` on ``loop`` from a worker thread; False when the loop is closed."""
    try:
        loop.call_soon_threadsafe(func, *args)
    except RuntimeError:
        log.debug("the event loop is closed; dropped a call to %s", func)
        return False
    return True
