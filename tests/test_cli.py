"""The CLI as a user runs it: a subprocess talking to the scripted model server over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tea_agent_mini import __version__
from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parent.parent


def cli_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}


def cli(*args: str, stdin: str | None = None, cwd: Path | None = None, timeout: float = 60):
    return subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=cwd,
        timeout=timeout,
    )


def test_version():
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"tea-agent-mini {__version__}"
    assert cli("version").stdout.strip() == f"tea-agent-mini {__version__}"


def test_run_performs_a_multi_step_tool_task(model_config, scripted_server, workspace: Path):
    scripted_server.push(
        Reply(
            tool_calls=[
                ToolCallSpec(
                    "toolkit_file",
                    {"action": "write", "filename": "data.csv", "content": "a,b\n1,2\n3,4\n"},
                )
            ]
        ),
        Reply(
            tool_calls=[ToolCallSpec("toolkit_exec", {"command": "tail -n +2 data.csv | wc -l"})]
        ),
        Reply(text="data.csv has 2 data rows."),
    )
    result = cli("run", "make data.csv and count the rows")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "data.csv has 2 data rows."
    assert "toolkit_file" in result.stderr and "toolkit_exec" in result.stderr
    assert (workspace / "data.csv").exists()
    exec_output = turn_requests(scripted_server)[2]["messages"][-1]["content"]
    assert "2" in exec_output and "exit code: 0" in exec_output.lower()


def test_run_json_prints_one_object(model_config, scripted_server):
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_gettime", {})]),
        Reply(text="It is late."),
    )
    result = cli("run", "--json", "what time is it?")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] is True and data["answer"] == "It is late."
    assert [c["name"] for c in data["tool_calls"]] == ["toolkit_gettime"]
    assert data["tool_calls"][0]["ok"] is True
    assert data["usage"]["total_tokens"] > 0 and len(data["topic_id"]) >= 8


def test_run_keeps_its_session_in_a_postgresql_store(
    scripted_server, write_config, workspace: Path, postgres_url
):
    from tea_agent_mini.store import Store

    model = {"api_url": scripted_server.base_url, "model_name": "scripted-model"}
    config = {"main_model": model, "agent": {"workspace": str(workspace)}}
    write_config({**config, "store": {"url": postgres_url}})
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_gettime", {})]),
        Reply(text="It is late."),
    )
    result = cli("run", "--json", "what time is it?")
    assert result.returncode == 0, result.stderr
    topic_id = json.loads(result.stdout)["topic_id"]
    with Store.open(postgres_url) as store:
        roles = [m.role for m in store.messages.of_topic(topic_id)]
        assert roles == ["user", "assistant", "tool", "assistant"]
        assert store.topics.get(topic_id).source == "cli"


def test_run_json_shows_a_subagents_calls_and_usage_under_its_call(model_config, scripted_server):
    child = iter(
        [
            Reply(tool_calls=[ToolCallSpec("toolkit_glob", {"pattern": "*"})], prompt_tokens=70),
            Reply(text="nothing here", prompt_tokens=80, completion_tokens=4),
        ]
    )
    scripted_server.on(
        lambda request: "You are the explorer" in str(request["messages"][0]["content"]),
        lambda request: next(child),
    )
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_subagent", {"task": "look", "agent": "explorer"})]),
        Reply(text="The explorer found nothing."),
    )
    result = cli("run", "--json", "explore")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    (call,) = data["tool_calls"]
    (sub,) = call["subagents"]
    assert sub["agent"] == "explorer" and sub["answer"] == "nothing here"
    assert [c["name"] for c in sub["tool_calls"]] == ["toolkit_glob"]
    assert sub["usage"]["prompt_tokens"] == 150
    assert data["usage"]["prompt_tokens"] >= 150  # the parent's total includes the child


def test_the_terminal_shows_a_subagents_steps_indented(model_config, scripted_server):
    child = iter([Reply(tool_calls=[ToolCallSpec("toolkit_glob", {"pattern": "*"})]), Reply("ok")])
    scripted_server.on(
        lambda request: "You are the explorer" in str(request["messages"][0]["content"]),
        lambda request: next(child),
    )
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_subagent", {"task": "look", "agent": "explorer"})]),
        Reply(text="Done looking."),
    )
    result = cli("run", "explore")
    assert result.returncode == 0, result.stderr
    assert "[explorer] → toolkit_glob" in result.stderr
    assert "[explorer] done" in result.stderr


def test_run_refuses_writes_outside_the_workspace(model_config, scripted_server, tmp_path):
    target = tmp_path / "escape.txt"
    scripted_server.push(
        Reply(
            tool_calls=[
                ToolCallSpec(
                    "toolkit_file", {"action": "write", "filename": str(target), "content": "x"}
                )
            ]
        ),
        Reply(text="Refused."),
    )
    result = cli("run", "--json", "write outside")
    data = json.loads(result.stdout)
    assert data["tool_calls"][0]["ok"] is False
    assert "outside the workspace" in data["tool_calls"][0]["result"]
    assert not target.exists()


def test_run_retries_two_500s(model_config, scripted_server):
    scripted_server.push(Reply(status=500), Reply(status=500), Reply(text="recovered"))
    result = cli("run", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "recovered"
    assert result.stderr.count("[retry]") == 2


def test_run_reports_a_cut_stream_as_interrupted(model_config, scripted_server):
    scripted_server.push(Reply(text="A long answer that never gets to its end", cut_after=5))
    result = cli("run", "hello")
    assert result.returncode != 0
    assert "interrupted" in result.stderr and "incomplete" in result.stderr
    data_run = cli("run", "--json", "hello again")  # echo default: the server still works
    assert data_run.returncode == 0


def test_run_json_reports_a_cut_stream(model_config, scripted_server):
    scripted_server.push(Reply(text="A long answer that never gets to its end", cut_after=5))
    result = cli("run", "--json", "hello")
    data = json.loads(result.stdout)
    assert result.returncode == 1 and data["ok"] is False and data["answer"] is None
    assert data["error"]["kind"] == "interrupted"


def test_run_without_a_model_is_one_clear_line(tea_home):
    result = cli("run", "hello")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "main_model.model_name is not set" in lines[0]
    assert "Traceback" not in result.stderr


def test_bad_config_is_one_clear_line(write_config):
    path = write_config({"main_model": {"model_name": "m", "api_url": "http://x/v1"}, "agnet": {}})
    result = cli("run", "hello")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert str(path) in result.stderr and "'agnet'" in result.stderr


def test_unreachable_model_is_one_clear_line(write_config):
    write_config(
        {"main_model": {"model_name": "m", "api_url": "http://127.0.0.1:9/v1", "max_retries": 0}}
    )
    result = cli("run", "hello")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "error" in result.stderr.lower()


def test_api_key_never_printed(scripted_server, write_config):
    secret = "sk-very-secret-token-4242"
    model = {"api_key": secret, "api_url": scripted_server.base_url, "model_name": "m"}
    write_config({"main_model": model})
    scripted_server.push(Reply(status=401, error_message="invalid api key"))
    result = cli("run", "-v", "hello")
    assert result.returncode == 1
    assert secret not in result.stdout + result.stderr
    assert scripted_server.headers[0]["authorization"] == f"Bearer {secret}"


def test_tools_json_lists_valid_schemas():
    result = cli("tools", "--json")
    assert result.returncode == 0, result.stderr
    tools = {t["name"]: t for t in json.loads(result.stdout)}
    core = {
        "toolkit_file",
        "toolkit_edit",
        "toolkit_exec",
        "toolkit_glob",
        "toolkit_grep",
        "toolkit_web_fetch",
        "toolkit_gettime",
        "toolkit_os_info",
        "toolkit_todo",
    }
    assert core <= tools.keys()
    for spec in tools.values():
        assert spec["parameters"]["type"] == "object"
        assert (
            set(spec["parameters"].get("required", [])) <= spec["parameters"]["properties"].keys()
        )
    assert tools["toolkit_exec"]["mutates"] is True and tools["toolkit_grep"]["mutates"] is False


def test_doctor_checks_config_model_and_database(model_config, scripted_server):
    result = cli("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[ok  ] config" in result.stdout and "[ok  ] model" in result.stdout
    assert "database" in result.stdout


def test_doctor_measures_a_first_request_against_the_window(
    scripted_server, write_config, workspace
):
    model = {"api_url": scripted_server.base_url, "model_name": "scripted-model"}
    write_config({"main_model": {**model, "max_context_tokens": 8192}})
    result = cli("doctor")
    line = next(x for x in result.stdout.splitlines() if "] request:" in x)
    assert line.startswith("[ok  ]") and "of the 8,192-token window" in line
    assert "prompt profile compact" in line
    write_config({"main_model": {**model, "max_context_tokens": 2048}})
    result = cli("doctor")
    line = next(x for x in result.stdout.splitlines() if "] request:" in x)
    assert result.returncode == 1 and line.startswith("[FAIL]")
    assert "raise max_context_tokens" in line


def test_doctor_reports_a_bad_agent_file_and_still_passes(model_config, scripted_server, tea_home):
    (tea_home / "agents").mkdir()
    (tea_home / "agents" / "half.md").write_text("---\nname: half\n---\nbody", encoding="utf-8")
    result = cli("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "subagent identities: analyst, coder, explorer" in result.stdout
    line = next(x for x in result.stdout.splitlines() if "half.md" in x)
    assert "needs a description" in line and "(skipped)" in line


def test_doctor_checks_a_postgresql_store_without_changing_it(
    scripted_server, write_config, empty_postgres_url
):
    from tea_agent_mini.store import Store

    url = empty_postgres_url.replace("postgres@", "postgres:sekrit-pass@")  # trust: ignored
    model = {"api_url": scripted_server.base_url, "model_name": "scripted-model"}
    write_config({"main_model": model, "store": {"url": url}})
    result = cli("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if "] database:" in x)
    assert line.startswith("[ok  ]") and "PostgreSQL 1" in line and "schema v0" in line
    assert "migrated to v" in line and "sekrit" not in result.stdout
    assert "] pgvector:" in result.stdout
    with Store.open(url) as store:  # the doctor left it empty; the agent's start migrates it
        assert store.db.tables()
    line = next(x for x in cli("doctor").stdout.splitlines() if "] database:" in x)
    assert line.endswith("up to date")


def test_doctor_fails_on_an_unreachable_postgresql(scripted_server, write_config):
    pytest.importorskip("pg8000", reason="pg8000 is not installed (the postgres extra)")
    from tests.pg import free_port

    model = {"api_url": scripted_server.base_url, "model_name": "scripted-model"}
    url = f"postgresql://tea:sekrit-pass@127.0.0.1:{free_port()}/agents"
    write_config({"main_model": model, "store": {"url": url}})
    result = cli("doctor")
    assert result.returncode == 1
    line = next(x for x in result.stdout.splitlines() if "] database:" in x)
    assert line.startswith("[FAIL]") and "cannot connect" in line and "sekrit" not in line


@pytest.mark.sqlite_only
def test_migrate_copies_the_home_into_postgresql_then_run_continues_there(
    model_config, scripted_server, write_config, tea_home, empty_postgres_url
):
    from tea_agent_mini.store import Store

    scripted_server.push(Reply(text="Noted: tabs."))
    assert cli("run", "remember: tabs over spaces").returncode == 0
    with Store.open(tea_home / "chat.db") as store:
        store.memories.add("the user prefers tabs", embedding=[1.0, 0.0], embedding_model="m")
        topic_id = store.topics.recent(limit=1)[0].id
    url = empty_postgres_url.replace("postgres@", "postgres:sekrit-pass@")  # trust: ignored

    dry = cli("migrate", "--to", url, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "dry run: nothing was changed" in dry.stdout and "sekrit" not in dry.stdout
    assert next(x for x in dry.stdout.splitlines() if x.startswith("messages")).split()[1] == "2"

    first = cli("migrate", "--to", url)
    assert first.returncode == 0, first.stderr
    assert "counts match" in first.stdout and "sekrit" not in first.stdout + first.stderr
    line = next(x for x in first.stdout.splitlines() if x.startswith("messages")).split()
    assert line[1:5] == ["2", "0", "2", "2"]
    again = cli("migrate", "--to", url)
    assert again.returncode == 0 and "nothing to copy" in again.stdout

    import yaml

    config = yaml.safe_load(model_config.read_text(encoding="utf-8"))
    write_config({**config, "store": {"url": url}})
    history = cli("history", topic_id)
    assert history.returncode == 0 and "tabs over spaces" in history.stdout
    with Store.open(url) as store:
        found = [m.content for m, _ in store.memories.search_keyword("prefers tabs")]
        assert "the user prefers tabs" in found


def test_migrate_refuses_a_target_that_is_not_postgresql(model_config, tmp_path):
    result = cli("migrate", "--to", str(tmp_path / "other.db"))
    assert result.returncode == 1 and "postgresql://" in result.stderr


def test_doctor_fails_without_model(tea_home):
    result = cli("doctor")
    assert result.returncode == 1 and "[FAIL] config" in result.stdout


def test_chat_repl(model_config, scripted_server):
    scripted_server.push(Reply(text="Hi from chat."), Reply(text="Second topic."))
    result = cli("chat", stdin="hello\n/topics\n/new\nanother\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "Hi from chat." in result.stdout and "Second topic." in result.stdout
    assert result.stderr.count("topic ") >= 2
    assert len(turn_requests(scripted_server)) == 2
    assert len(turn_requests(scripted_server)[1]["messages"]) == 2  # the new topic starts fresh


def test_import_is_cheap():
    code = (
        "import sys, tea_agent_mini; "
        "heavy = [m for m in ('httpx', 'starlette', 'sqlite3', 'yaml', 'asyncio', 'uvicorn') "
        "if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"


def test_runtime_dependencies_are_exactly_the_six():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = {
        d.split(">")[0].split("=")[0].split("[")[0].strip().lower()
        for d in data["project"]["dependencies"]
    }
    assert names == {"httpx", "pyyaml", "requests", "starlette", "uvicorn", "python-multipart"}
    assert data["project"]["scripts"]["tea-agent-mini"] == "tea_agent_mini.__main__:main"


@pytest.mark.parametrize("banned", ["numpy", "pydantic", "openai", "psutil", "tiktoken"])
def test_package_never_imports_heavy_modules(banned):
    import ast

    for path in (ROOT / "tea_agent_mini").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            assert all(n.split(".")[0] != banned for n in names), f"{path} imports {banned}"


def test_chat_ctrl_c_cancels_the_turn_not_the_program(model_config, scripted_server):
    import signal
    import time

    scripted_server.push(Reply(text="slow " * 200, delay=0.05), Reply(text="Still here."))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        proc.stdin.write("tell me a long story\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 20
        while not turn_requests(scripted_server) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the answer is streaming now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate("are you there?\n/exit\n", timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "[cancelled]" in err
    assert "Still here." in out
    assert len(turn_requests(scripted_server)) == 2
