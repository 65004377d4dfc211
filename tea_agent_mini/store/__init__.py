"""Persistence: ``Store.open(target)`` returns one object whose attributes are repositories.

The target is an SQLite file path (the default, ``~/.tea_agent/chat.db``) or a
``postgresql://`` URL (``store.url``; see ``database.py`` for the two backends). For example
``store.topics.create("hello")``, ``store.messages.add(topic.id, message)``,
``store.state.put("topic:" + topic.id, "todo", [...])``, and ``store.close()`` at shutdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .agents import AgentMessage, InboxRepository, Teammate, TeammateRepository
from .database import Database
from .evaluations import Evaluation, EvaluationRepository, Lesson, LessonRepository
from .jobs import Job, JobRepository, JobSpec
from .memories import Memory, MemoryRepository
from .messages import MessageRepository
from .migrations import migrate
from .prompts import PromptVersion, PromptVersionRepository
from .shared import SharedFile, SharedFileRepository
from .skillstats import SkillStats, SkillStatsRepository
from .state import StateRepository, topic_scope
from .tasks import Task, TaskRepository, TaskRun
from .topics import Topic, TopicRepository
from .turn_log import TurnLogRepository

if TYPE_CHECKING:
    import os
    from contextlib import AbstractContextManager
    from pathlib import Path

__all__ = [
    "AgentMessage",
    "Database",
    "Evaluation",
    "EvaluationRepository",
    "InboxRepository",
    "Job",
    "JobRepository",
    "JobSpec",
    "Lesson",
    "LessonRepository",
    "Memory",
    "MemoryRepository",
    "MessageRepository",
    "PromptVersion",
    "PromptVersionRepository",
    "SharedFile",
    "SharedFileRepository",
    "StateRepository",
    "SkillStats",
    "SkillStatsRepository",
    "Store",
    "Task",
    "TaskRepository",
    "TaskRun",
    "Teammate",
    "TeammateRepository",
    "Topic",
    "TopicRepository",
    "TurnLogRepository",
    "topic_scope",
]


class Store:
    """The store: a :class:`Database` plus one repository per kind of record.

    Thread-safe; one instance per process, built by the runtime. To add a kind of record
    (memories, tasks, skills ...):

    1. append a migration creating its table to ``migrations.MIGRATIONS``;
    2. write ``store/<records>.py`` with a dataclass for the record and a ``<Record>Repository``
       whose constructor takes the :class:`Database` and whose methods use ``db.query``,
       ``db.execute`` and ``db.transaction``;
    3. add one line below: ``self.<records> = <Record>Repository(db)``;
    4. test it in ``tests/store/test_store_<records>.py`` with the ``store`` fixture, which runs
       each test on SQLite and on PostgreSQL.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self.topics = TopicRepository(db)
        self.messages = MessageRepository(db)
        self.state = StateRepository(db)
        self.memories = MemoryRepository(db)
        self.tasks = TaskRepository(db)
        self.inbox = InboxRepository(db)
        self.teammates = TeammateRepository(db)
        self.jobs = JobRepository(db)
        self.evaluations = EvaluationRepository(db)
        self.lessons = LessonRepository(db)
        self.prompts = PromptVersionRepository(db)
        self.skill_stats = SkillStatsRepository(db)
        self.turn_log = TurnLogRepository(db)
        self.shared = SharedFileRepository(db)

    @classmethod
    def open(cls, target: str | os.PathLike[str]) -> Store:
        """Open or create the database at ``target``, an SQLite file path (parents are created)
        or a ``postgresql://`` URL, and bring its schema up to date.

        Raises:
            StoreError: the database is not a tea_agent_mini database, is newer than this code,
                or cannot be opened; it is left as it was.
        """
        db = Database.open(target)
        try:
            migrate(db)
            db.enable_wal()
        except BaseException:
            db.close()
            raise
        return cls(db)

    @property
    def path(self) -> Path | None:
        """The SQLite file (None on PostgreSQL)."""
        return self.db.path

    @property
    def location(self) -> str:
        """Where the data is, for people: the file, or the URL without credentials."""
        return self.db.location

    def transaction(self) -> AbstractContextManager[Database]:
        """Group calls on several repositories into one atomic unit; keep it short."""
        return self.db.transaction()

    def close(self) -> None:
        """Checkpoint the WAL and close; later calls raise StoreError."""
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
