"""``tea-agent-mini doctor``: is the config valid, the model reachable, the database healthy,
do the MCP servers start? Warnings logged meanwhile become doctor lines too."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..config import Config, load_config
from ..errors import TeaAgentError
from ..redact import guard_logs, mask_url
from ..runtime import config_secrets
from .mcpwait import wait_for_mcp

if TYPE_CHECKING:
    from ..runtime import Runtime
    from ..toolkit.registry import Toolkit


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True
    warning: bool = False  # something logged while checking; never fails the doctor

    def line(self) -> str:
        mark = "ok  " if self.ok else ("FAIL" if self.required else "--  ")
        return f"[{'warn' if self.warning else mark}] {self.name}: {self.detail}"


def check_config(profile: str | None, workspace: str | None = None) -> tuple[Check, Config | None]:
    try:
        config = load_config(profile)
    except TeaAgentError as exc:
        return Check("config", False, str(exc)), None
    if workspace:
        config.agent = replace(config.agent, workspace=workspace)
    guard_logs(config_secrets(config))
    where = str(config.source) if config.source else "no config file (environment only)"
    try:
        model = config.require_model()
    except TeaAgentError as exc:
        return Check("config", False, str(exc)), config
    detail = f"{where}; model {model.model_name} at {mask_url(model.api_url)}"
    return Check("config", True, detail), config


def check_model(config: Config) -> Check:
    from ..llm.client import OpenAIChatClient

    async def probe() -> str:
        client = OpenAIChatClient(config.main_model)
        try:
            models = await client.list_models()
        finally:
            await client.aclose()
        listed = "listed" if config.main_model.model_name in models else "not in /models list"
        return f"reachable, {len(models)} model(s), {config.main_model.model_name} {listed}"

    try:
        return Check("model", True, asyncio.run(probe()))
    except TeaAgentError as exc:
        return Check("model", False, str(exc))


def check_database(config: Config) -> list[Check]:
    if config.store.url:
        return check_postgres(config.store.url)
    return [check_sqlite(config)]


def check_postgres(url: str) -> list[Check]:
    """The connection, the server's version, the schema's and the extensions; changes nothing
    (the migrations run when the agent starts)."""
    from ..store.migrations import MIGRATIONS
    from ..store.postgres import PostgresDatabase

    try:
        db = PostgresDatabase.connect(url)
    except TeaAgentError as exc:
        return [Check("database", False, str(exc))]
    try:
        version, latest, tables = db.schema_version(), MIGRATIONS[-1][0], db.tables()
    except TeaAgentError as exc:
        return [Check("database", False, str(exc))]
    finally:
        db.close()
    detail = f"{db.location}: PostgreSQL {db.server_version}, schema v{version}"
    if version > latest:
        checks = [Check("database", False, f"{detail}, newer than this version knows (v{latest})")]
    elif version == 0 and tables:
        found = ", ".join(tables[:5])
        checks = [Check("database", False, f"{detail}, holds tables it did not create: {found}")]
    elif version < latest:
        checks = [Check("database", True, f"{detail}, migrated to v{latest} at the next start")]
    else:
        checks = [Check("database", True, f"{detail}, up to date")]
    vector = db.extensions.get("vector")
    if vector:
        note = f"pgvector {vector} installed: it ranks the vectors (an HNSW index per model)"
    elif "vector" in db.available:
        note = (
            "pgvector available, not installed (CREATE EXTENSION vector; as a superuser); "
            "vectors are ranked in Python"
        )
    else:
        note = "no pgvector; vectors are stored as bytea and ranked in Python"
    checks.append(Check("pgvector", bool(vector), note, required=False))
    return checks


def check_sqlite(config: Config) -> Check:
    path = config.db_path
    if not path.exists():
        return Check("database", True, f"{path} will be created on first use")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            result = conn.execute("PRAGMA quick_check").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        return Check("database", False, f"{path}: {exc}")
    return Check("database", result == "ok", f"{path}: {result}, schema v{version}")


def check_request(
    config: Config, toolkit: Toolkit, message: str = "Create hello.py that prints hello world."
) -> Check:
    """The size of a first request for a plain task, against the configured window."""
    from ..context.prompts import PromptParts, build_system_prompt, profile_for
    from ..context.turn import PROMPT_SHARE
    from ..llm.tokens import estimate_messages_tokens
    from ..toolkit.selection import ToolMenu

    window = config.main_model.max_context_tokens
    profile = profile_for(config.agent.prompt, window)
    system = build_system_prompt(
        PromptParts(config.workspace, approval=config.agent.approval, profile=profile)
    )
    menu = ToolMenu(toolkit, profile)
    tools = menu.choose(message, [], []).names
    fixed = estimate_messages_tokens([{"role": "system", "content": system}])
    fixed += menu.tokens(tools)
    total = fixed + estimate_messages_tokens([{"role": "user", "content": message}])
    detail = (
        f"a first request is ~{total:,} tokens (system prompt and {len(tools)} of "
        f"{len(toolkit.tools)} tools ~{fixed:,}), prompt profile {profile}"
    )
    if window <= 0:
        return Check("request", True, f"{detail}; main_model.max_context_tokens is not set")
    share = fixed / window
    detail += f"; {share:.0%} of the {window:,}-token window"
    if share > PROMPT_SHARE:
        return Check(
            "request",
            False,
            f"{detail}, over {PROMPT_SHARE:.0%}: raise max_context_tokens or set "
            "agent.prompt: compact",
        )
    return Check("request", True, detail)


def check_sandbox(config: Config) -> Check:
    """Whether shell commands run confined; a failure only when agent.sandbox is required."""
    from ..shell.sandbox import sandbox_for

    box = sandbox_for(config)
    confined, detail = box.status()
    return Check("sandbox", confined, detail, required=box.mode == "required")


USER_PROGRAMS = {"git": "git tools", "ruff": "code review / formatting"}
DEV_PROGRAMS = {"pdftotext": "PDF tests (poppler)", "chromium": "web UI tests"}


def optional_features(dev: bool = False) -> list[Check]:
    programs = {**USER_PROGRAMS, **(DEV_PROGRAMS if dev else {})}
    checks = [
        Check(name, shutil.which(name) is not None, purpose, required=False)
        for name, purpose in programs.items()
    ]
    has_fts5 = _sqlite_has_fts5()
    checks.append(Check("sqlite fts5", has_fts5, "full-text search", required=False))
    has_zoneinfo = importlib.util.find_spec("zoneinfo") is not None
    checks.append(Check("zoneinfo", has_zoneinfo, "time zones for schedules", required=False))
    return checks


def _sqlite_has_fts5() -> bool:
    try:
        with sqlite3.connect(":memory:") as conn:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.Error:
        return False


def check_mcp(runtime: Runtime) -> list[Check]:
    """Start each configured MCP server and list its tools (the servers' tools then join the
    runtime's toolkit, as they would for a turn)."""
    statuses = wait_for_mcp(runtime)
    manager = runtime.mcp
    checks = [Check("mcp", False, error) for error in manager.config_errors] if manager else []
    for status in statuses:
        name = f"mcp {status.name}"
        if status.state == "ready":
            tools = ", ".join(status.tools) or "no tools"
            detail = f"{status.transport} {status.target}: {len(status.tools)} tool(s): {tools}"
            checks.append(Check(name, True, detail))
        elif status.state == "stopped" and not status.error:
            checks.append(Check(name, False, "disabled in the configuration", required=False))
        else:
            checks.append(Check(name, False, status.error or f"still {status.state}"))
    return checks


def check_identities(config: Config) -> list[Check]:
    """The subagent identities found; each file that cannot be used is a (non-fatal) line."""
    from ..agent.identities import load_identities

    found = load_identities(config.home, config.workspace)
    names = ", ".join(sorted(found.identities))
    checks = [Check("agents", True, f"{len(found.identities)} subagent identities: {names}")]
    for path, problem in found.problems.items():
        checks.append(Check("agent file", False, f"{path}: {problem} (skipped)", required=False))
    return checks


def run_doctor(profile: str | None, workspace: str | None = None, *, dev: bool = False) -> bool:
    """Print one line per check; True when every required check passed."""
    with captured_warnings() as logged:
        checks = _run_checks(profile, workspace)
        checks.extend(optional_features(dev))
    shown = [check.detail for check in checks]
    for message in logged:
        if not any(detail and detail in message for detail in shown):
            checks.append(Check("warning", False, message, required=False, warning=True))
    for check in checks:
        print(check.line())
    return all(c.ok for c in checks if c.required)


def _run_checks(profile: str | None, workspace: str | None) -> list[Check]:
    from ..runtime import Runtime

    config_check, config = check_config(profile, workspace)
    if config is None:
        return [config_check]
    runtime = Runtime(config)
    try:
        mcp = check_mcp(runtime)
        checks = [config_check]
        if config_check.ok:
            checks += [check_model(config), check_request(config, runtime.toolkit)]
        checks += [*check_database(config), check_sandbox(config), *check_identities(config)]
        return [*checks, *mcp]
    finally:
        asyncio.run(runtime.aclose())


@contextlib.contextmanager
def captured_warnings() -> Iterator[list[str]]:
    """Warnings logged meanwhile, collected (to be shown as doctor lines) instead of printed.
    The collector sits on the root logger like the printing handlers, so the secrets that
    ``guard_logs`` masks are masked here too."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(self.format(record))

    def below_warning(record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING

    root = logging.getLogger()
    printers = list(root.handlers)
    collect = Collect(logging.WARNING)
    for handler in printers:
        for existing in handler.filters:
            collect.addFilter(existing)
        handler.addFilter(below_warning)
    root.addHandler(collect)
    try:
        yield messages
    finally:
        root.removeHandler(collect)
        for handler in printers:
            handler.removeFilter(below_warning)
