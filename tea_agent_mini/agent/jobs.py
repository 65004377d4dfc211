"""The durable follow-up jobs: which a finished turn queues, and how each kind runs.

    worker = BackgroundWorker(jobs=store.jobs, kinds=follow_up_kinds(runtime))
    worker.enqueue(turn_follow_ups(runtime, topic_id, user_text, done, user_message_id))

A kind is rebuilt from its name and payload each time it runs (``follow_up_kinds``), with the
runtime's parts as they are then: after a restart, or after a switch of profile, a job uses the
models and memory of the runtime that runs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from .background import JobKind

if TYPE_CHECKING:
    from ..config import Config
    from ..context.upkeep import TurnUpkeep
    from ..evaluation.review import TaskReview
    from ..memory.manager import MemoryManager
    from ..store import Store
    from ..store.jobs import JobSpec
    from ..toolkit.registry import Toolkit
    from ..types import ChatModel, Done

__all__ = ["FollowUpHost", "evolution_job", "follow_up_kinds", "turn_follow_ups"]


class FollowUpHost(Protocol):
    """What the jobs need of the runtime (``Runtime`` fits it)."""

    @property
    def config(self) -> Config: ...

    @property
    def store(self) -> Store: ...

    @property
    def cheap_llm(self) -> ChatModel: ...

    @property
    def memory(self) -> MemoryManager: ...

    @property
    def toolkit(self) -> Toolkit: ...


def _cheap(host: FollowUpHost) -> ChatModel | None:
    # no model configured (a resume before the user set one up): heuristics and first words
    return host.cheap_llm if host.config.main_model.is_set else None


def upkeep_of(host: FollowUpHost) -> TurnUpkeep:
    from ..context.upkeep import TurnUpkeep

    return TurnUpkeep(host.store, _cheap(host), host.memory)


def review_of(host: FollowUpHost) -> TaskReview:
    from ..evaluation.review import TaskReview

    config = host.config
    return TaskReview(host.store, _cheap(host), host.memory.embedder, config.home, config.workspace)


def evolution_job(host: FollowUpHost) -> Callable[[], Awaitable[Any]]:
    """The evolution pass (``evaluation/evolution.py``), which runs when its interval is up."""
    import functools

    from ..evaluation.evolution import maybe_run_evolution
    from ..toolkit.usertools import tool_inventory

    config = host.config
    inventory = functools.partial(tool_inventory, host.toolkit)
    where = (host.store, config.home, config.agent.evolution, inventory, config.workspace)
    return functools.partial(maybe_run_evolution, *where)


def follow_up_kinds(host: FollowUpHost) -> dict[str, JobKind]:
    """Every kind of follow-up job, by name."""
    from ..context.upkeep import TIME_CAPS as UPKEEP_CAPS
    from ..evaluation.review import TIME_CAPS as REVIEW_CAPS

    def upkeep(kind: str) -> JobKind:
        return JobKind(lambda payload: upkeep_of(host).run(kind, payload), UPKEEP_CAPS[kind])

    def review(kind: str) -> JobKind:
        return JobKind(lambda payload: review_of(host).run(kind, payload), REVIEW_CAPS[kind])

    return {
        **{kind: upkeep(kind) for kind in UPKEEP_CAPS},
        **{kind: review(kind) for kind in REVIEW_CAPS},
    }


def turn_follow_ups(
    host: FollowUpHost, topic_id: str, user_text: str, done: Done, user_message_id: int | None
) -> list[JobSpec]:
    """A finished turn's jobs in order: title, history, memory, memory upkeep, evaluation."""
    from ..evaluation.review import evaluate_job

    specs = upkeep_of(host).follow_ups(topic_id, user_text, done)
    return specs + evaluate_job(topic_id, user_message_id, done)
