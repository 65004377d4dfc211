"""``tea-agent-mini doctor``: is the config valid, the model reachable, the database healthy?"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import sqlite3
from dataclasses import dataclass

from ..config import Config, load_config
from ..errors import TeaAgentError
from ..redact import guard_logs, mask_url
from ..runtime import config_secrets


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True

    def line(self) -> str:
        mark = "ok  " if self.ok else ("FAIL" if self.required else "--  ")
        return f"[{mark}] {self.name}: {self.detail}"


def check_config(profile: str | None) -> tuple[Check, Config | None]:
    try:
        config = load_config(profile)
    except TeaAgentError as exc:
        return Check("config", False, str(exc)), None
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


def check_database(config: Config) -> Check:
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
    config: Config, message: str = "Create hello.py that prints hello world."
) -> Check:
    """The size of a first request for a plain task, against the configured window."""
    from ..context.prompts import PromptParts, build_system_prompt, profile_for
    from ..context.turn import PROMPT_SHARE
    from ..llm.tokens import estimate_messages_tokens
    from ..toolkit.registry import Toolkit
    from ..toolkit.selection import ToolMenu
    from ..toolkit.usertools import sync_user_tools

    window = config.main_model.max_context_tokens
    profile = profile_for(config.agent.prompt, window)
    system = build_system_prompt(
        PromptParts(config.workspace, approval=config.agent.approval, profile=profile)
    )
    toolkit = Toolkit.load()
    sync_user_tools(toolkit, config.home)
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


def optional_features() -> list[Check]:
    programs = {
        "git": "git tools",
        "pdftotext": "PDF checks (poppler)",
        "ruff": "code review / formatting",
        "chromium": "UI tests",
    }
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


def run_doctor(profile: str | None) -> bool:
    config_check, config = check_config(profile)
    checks = [config_check]
    if config is not None:
        if config_check.ok:
            checks.append(check_model(config))
            checks.append(check_request(config))
        checks.append(check_database(config))
        checks.append(check_sandbox(config))
    checks.extend(optional_features())
    for check in checks:
        print(check.line())
    return all(c.ok for c in checks if c.required)
