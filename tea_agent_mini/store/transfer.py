"""Copy an SQLite store (a home's ``chat.db``) into a PostgreSQL database: ``tea-agent-mini
migrate --to postgresql://…``.

Both are migrated to the same schema version first (the source as opening the store would;
a target newer than this code is refused). The tables are the source's, as its migrations made
them (SQLite's internal tables of the FTS5 index left out), copied parents first (foreign
keys), each in batches of rows, one transaction a batch. Every column keeps its value: ids,
bytes (vectors become ``bytea``), NULLs, floats; a table with an implicit rowid on SQLite keeps
it in PostgreSQL's ``rowid`` column. A row whose key the target already holds is skipped
(``ON CONFLICT DO NOTHING``), so a copy stopped halfway continues where it was and a second
run copies nothing. The memory keyword index is not copied but rebuilt from the memories
(its terms). Afterwards the identity sequences start past the largest id (and past SQLite's
``sqlite_sequence``, so deleted ids are not reused), and the row counts of every table are
compared: a difference raises :class:`StoreError`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .database import Database, is_postgres_url
from .memory_keywords import FTS_TABLE, _terms_text
from .migrations import MIGRATIONS, migrate

__all__ = ["BATCH_ROWS", "CopyReport", "TableCopy", "copy_to_postgres"]

log = logging.getLogger(__name__)

BATCH_ROWS = 500
MAX_PARAMETERS = 30000  # per INSERT; PostgreSQL's protocol allows 65535


@dataclass
class TableCopy:
    """One table: rows in the source, in the target before and after, rows copied now."""

    name: str
    source: int
    before: int
    copied: int = 0
    after: int = 0
    note: str = ""

    @property
    def matches(self) -> bool:
        return self.after == self.source


@dataclass
class CopyReport:
    source: str
    target: str
    version: int
    dry_run: bool
    tables: list[TableCopy] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def copied(self) -> int:
        return sum(table.copied for table in self.tables)

    @property
    def mismatches(self) -> list[TableCopy]:
        return [table for table in self.tables if not self.dry_run and not table.matches]


@dataclass
class _Plan:
    """How one table is read from the source and written to the target."""

    name: str
    columns: list[str]  # in the target, in this order
    select: list[str]  # what the source's SELECT reads for them
    key: list[str]  # the source's order: ["rowid"], or the primary key of a WITHOUT ROWID table


def copy_to_postgres(
    source: str | os.PathLike[str],
    target_url: str,
    *,
    dry_run: bool = False,
    batch: int = BATCH_ROWS,
    on_table: Callable[[TableCopy], None] | None = None,
) -> CopyReport:
    """Copy the SQLite store at ``source`` into the PostgreSQL database at ``target_url``.

    ``dry_run`` changes nothing (neither database is migrated) and reports the counts.
    ``on_table`` hears of each table when it is done.

    Raises:
        StoreError: the target is not a PostgreSQL URL, the source is missing or not a store,
            a schema version is newer than this code, the schemas differ, a write failed (the
            batches copied so far stay: run again to continue) or the counts differ afterwards.
    """
    if not is_postgres_url(target_url):
        raise StoreError("the target must be a postgresql:// URL")
    path = Path(source).expanduser()
    if not path.is_file():
        raise StoreError(f"there is no SQLite store at {path}")
    src = Database.open(path)
    try:
        dst = Database.open(target_url)
        try:
            return _copy(src, dst, dry_run, max(1, batch), on_table)
        finally:
            dst.close()
    finally:
        src.close()


def _copy(
    src: Database,
    dst: Database,
    dry_run: bool,
    batch: int,
    on_table: Callable[[TableCopy], None] | None,
) -> CopyReport:
    latest = MIGRATIONS[-1][0]
    source_version, target_version = src.schema_version(), dst.schema_version()
    if source_version > latest:
        raise StoreError(
            f"the source {src.location} has schema version {source_version}, newer than this "
            f"tea_agent_mini knows ({latest}); upgrade tea_agent_mini"
        )
    if target_version > latest:
        raise StoreError(
            f"the target {dst.location} has schema version {target_version}, newer than the "
            f"source's ({latest} once migrated); refusing to copy into it"
        )
    report = CopyReport(src.location, dst.location, latest, dry_run)
    if source_version < latest:
        report.notes.append(f"source migrated from schema version {source_version} to {latest}")
    if target_version < latest:
        report.notes.append(f"target migrated from schema version {target_version} to {latest}")
    if dry_run:
        report.notes = [note.replace(" migrated ", " to be migrated ") for note in report.notes]
    else:
        migrate(src)
        migrate(dst)
    target_tables = set(dst.tables())
    for name in _tables(src):
        if name == FTS_TABLE:
            continue
        if not dry_run and name not in target_tables:
            raise StoreError(f"the target has no table {name}: the schemas differ")
        plan = _plan(src, dst, name, name in target_tables)
        table = TableCopy(name, _count(src, name), _count(dst, name, name in target_tables))
        if not dry_run and table.before != table.source:
            table.copied = _copy_rows(src, dst, plan, batch)
        _finish(dst, table, dry_run, on_table, report)
    has_memories = "memories" in src.tables()  # not before migration 2 (a dry run's source)
    if has_memories and (FTS_TABLE in target_tables or dry_run):
        live = src.query_one("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
        table = TableCopy(
            FTS_TABLE,
            int(live[0]) if live else 0,
            _count(dst, FTS_TABLE, FTS_TABLE in target_tables),
        )
        table.note = "rebuilt from the memories' terms"
        if not dry_run and table.before != table.source:
            table.copied = _rebuild_keywords(src, dst, batch)
        _finish(dst, table, dry_run, on_table, report)
    if not dry_run:
        _advance_sequences(src, dst, [table.name for table in report.tables])
        if report.mismatches:
            wrong = ", ".join(f"{t.name} {t.after} of {t.source}" for t in report.mismatches)
            raise StoreError(f"the row counts differ after the copy: {wrong}")
    return report


def _finish(
    dst: Database,
    table: TableCopy,
    dry_run: bool,
    on_table: Callable[[TableCopy], None] | None,
    report: CopyReport,
) -> None:
    table.after = table.before if dry_run else _count(dst, table.name)
    report.tables.append(table)
    if on_table is not None:
        on_table(table)


def _tables(src: Database) -> list[str]:
    """The source's tables, parents before the tables referring to them, without SQLite's
    internal tables of virtual (FTS5) tables."""
    rows = src.query(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
    )
    virtual = [row[0] for row in rows if str(row[1] or "").upper().startswith("CREATE VIRTUAL")]
    names = [row[0] for row in rows if not any(row[0].startswith(f"{v}_") for v in virtual)]
    parents = {
        name: {str(fk[2]) for fk in src.query(f'PRAGMA foreign_key_list("{name}")')} - {name}
        for name in names
    }
    ordered: list[str] = []
    while len(ordered) < len(names):
        done = set(ordered)
        ready = [n for n in names if n not in done and parents[n] & set(names) <= done]
        if not ready:  # a cycle: the rest in name order (none in the current schema)
            ready = [n for n in names if n not in ordered]
        ordered.extend(ready)
    return ordered


def _plan(src: Database, dst: Database, name: str, in_target: bool) -> _Plan:
    info = src.query(f'PRAGMA table_info("{name}")')
    source_columns = [str(row[1]) for row in info]
    sql = src.query_one("SELECT sql FROM sqlite_master WHERE name = ?", (name,))
    without_rowid = "WITHOUT ROWID" in str(sql[0] if sql else "").upper()
    if without_rowid:
        keyed = sorted((int(row[5]), str(row[1])) for row in info if int(row[5]) > 0)
        key = [column for _, column in keyed] or source_columns
    else:
        key = ["rowid"]
    if not in_target:  # a dry run before the target is migrated
        return _Plan(name, source_columns, source_columns, key)
    rows = dst.query(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (name,),
    )
    columns = [str(row[0]) for row in rows]
    missing = [c for c in columns if c not in source_columns and c != "rowid"]
    if missing or ("rowid" in columns and without_rowid):
        raise StoreError(f"the schemas of {name} differ: the source has no {missing or 'rowid'}")
    absent = [c for c in source_columns if c not in columns]
    if absent:
        raise StoreError(f"the schemas of {name} differ: the target has no {absent}")
    return _Plan(name, columns, columns, key)


def _count(db: Database, table: str, exists: bool = True) -> int:
    if not exists:
        return 0
    row = db.query_one(f"SELECT count(*) FROM {table}")
    return int(row[0]) if row else 0


def _copy_rows(src: Database, dst: Database, plan: _Plan, batch: int) -> int:
    size = max(1, min(batch, MAX_PARAMETERS // max(1, len(plan.columns))))
    reads = ", ".join(plan.select)
    order = ", ".join(plan.key)
    copied = 0
    if plan.key == ["rowid"]:
        after = None
        while True:
            where = "" if after is None else "WHERE rowid > ? "
            params: list[Any] = [] if after is None else [after]
            rows = src.query(
                f"SELECT rowid, {reads} FROM {plan.name} {where}ORDER BY rowid LIMIT ?",
                [*params, size],
            )
            if not rows:
                return copied
            copied += _insert(dst, plan, [tuple(row)[1:] for row in rows])
            after = rows[-1][0]
    offset = 0
    while rows := src.query(
        f"SELECT {reads} FROM {plan.name} ORDER BY {order} LIMIT ? OFFSET ?", (size, offset)
    ):
        copied += _insert(dst, plan, [tuple(row) for row in rows])
        offset += len(rows)
    return copied


def _insert(dst: Database, plan: _Plan, rows: Sequence[tuple[Any, ...]]) -> int:
    """One batch in one transaction; rows whose key the target holds are skipped."""
    marks = "(" + ", ".join("?" * len(plan.columns)) + ")"
    sql = (
        f"INSERT INTO {plan.name} ({', '.join(plan.columns)}) OVERRIDING SYSTEM VALUE "
        f"VALUES {', '.join([marks] * len(rows))} ON CONFLICT DO NOTHING"
    )
    values = [value for row in rows for value in row]
    with dst.transaction() as tx:
        return tx.execute(sql, values).rowcount


def _rebuild_keywords(src: Database, dst: Database, batch: int) -> int:
    plan = _Plan(FTS_TABLE, ["rowid", "terms"], [], [])
    copied = 0
    after = 0
    while rows := src.query(
        "SELECT id, content FROM memories WHERE deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?",
        (after, batch),
    ):
        copied += _insert(dst, plan, [(int(r[0]), _terms_text(str(r[1]))) for r in rows])
        after = int(rows[-1][0])
    return copied


def _advance_sequences(src: Database, dst: Database, tables: list[str]) -> None:
    """Every identity column's next value past the largest id in the target and past the
    source's ``sqlite_sequence`` (the ids AUTOINCREMENT has handed out, deleted ones too)."""
    used: dict[str, int] = {}
    if src.query_one("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'"):
        rows = src.query("SELECT name, seq FROM sqlite_sequence")
        used = {str(row[0]): int(row[1]) for row in rows}
    identities = dst.query(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND is_identity = 'YES'"
    )
    with dst.transaction() as tx:
        for table, column in identities:
            if table not in tables:
                continue
            top = tx.query_one(f"SELECT COALESCE(MAX({column}), 0) FROM {table}")
            value = max(int(top[0]) if top else 0, used.get(table, 0) if column != "rowid" else 0)
            called = "true" if value > 0 else "false"
            tx.query_one(
                f"SELECT setval(pg_get_serial_sequence(?, ?), ?, {called})",
                (table, column, max(value, 1)),
            )
