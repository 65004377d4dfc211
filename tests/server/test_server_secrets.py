"""No configured secret leaves the process: not in any route's answer, the model's requests, the
logs, `doctor`, or the files the server writes (the database and its WAL included).

The real server runs as a subprocess (so its log handlers are the CLI's own) with every kind of
secret configured: model and server keys, a header value, credentials in a URL, and MCP servers
whose ``${VAR}`` arguments, header and URL query carry tokens. The model lists and inspects the
MCP servers with toolkit_mcp, an upstream proxy echoes the request headers in a 502, and every
GET route in /openapi.json is called.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.pg import home_store
from tests.server.server_helpers import parse_sse
from tests.server.test_server_serve import ROOT, free_port, wait_healthy

MAIN_KEY = "sk-main-4f3e2d1c0b9a8877"
CHEAP_KEY = "sk-cheap-a1b2c3d4e5f60718"
HEADER_VALUE = "hdr-secret-77aa55bb33cc"
SERVER_KEY = "srv-key-0123456789abcdef"
EMBED_KEY = "emb-key-13579bdf2468ace0"
EMBED_PASSWORD = "emb-pw-5a5a5a5a5a5a"
MCP_TOKEN = "tok-mcp-5e6f7a8b9c0d1e2f"
MCP_BEARER = "brr-mcp-1122334455ff6677"
MCP_QUERY_KEY = "qk-mcp-9988776655aa4433"
SECRETS = {
    "main_model.api_key": MAIN_KEY,
    "cheap_model.api_key": CHEAP_KEY,
    "main_model.extra_headers": HEADER_VALUE,
    "server.api_key": SERVER_KEY,
    "embedding.api_key": EMBED_KEY,
    "embedding.api_url password": EMBED_PASSWORD,
    "MCP ${MCP_TOKEN} argument": MCP_TOKEN,
    "MCP ${MCP_BEARER} header": MCP_BEARER,
    "MCP url ?api_key=": MCP_QUERY_KEY,
}
ECHO = (
    f"bad gateway; the proxy got X-Upstream-Key: {HEADER_VALUE}, Authorization: Bearer {MAIN_KEY}"
)


def write_config(home: Path, workspace: Path, model_url: str) -> None:
    closed = free_port()  # the HTTP MCP server is down: its errors show the URL
    config = {
        "main_model": {
            "api_key": MAIN_KEY,
            "api_url": model_url,
            "model_name": "scripted-model",
            "max_retries": 0,
            "extra_headers": {"X-Upstream-Key": HEADER_VALUE},
        },
        "cheap_model": {"api_key": CHEAP_KEY},
        "embedding": {
            "model": "text-embedding-3-small",
            "api_key": EMBED_KEY,
            "api_url": f"http://me:{EMBED_PASSWORD}@127.0.0.1:9/v1",
        },
        "agent": {"workspace": str(workspace)},
        "server": {"api_key": SERVER_KEY},
        "mcp_servers": {
            "local": {
                "command": sys.executable,
                "args": ["-c", "import sys; sys.exit(3)", "--token", "${MCP_TOKEN}"],
            },
            "remote": {
                "url": f"http://127.0.0.1:{closed}/mcp?api_key={MCP_QUERY_KEY}",
                "headers": {"Authorization": "Bearer ${MCP_BEARER}"},
            },
        },
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def environment(home: Path) -> dict[str, str]:
    import os

    return {
        **os.environ,
        "TEA_AGENT_HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "MCP_TOKEN": MCP_TOKEN,
        "MCP_BEARER": MCP_BEARER,
    }


def leaks(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def test_no_configured_secret_is_shown_logged_or_stored(scripted_server, tea_home, workspace):
    write_config(tea_home, workspace, scripted_server.base_url)
    mcp_calls = [ToolCallSpec("toolkit_mcp", {"action": "list"})]
    mcp_calls.append(ToolCallSpec("toolkit_mcp", {"action": "status"}))
    scripted_server.push(Reply(tool_calls=mcp_calls), Reply(text="two servers, both down"))
    scripted_server.push(Reply(status=502, error_message=ECHO))  # the session's second turn
    scripted_server.push(Reply(status=502, error_message=ECHO))  # /v1/chat/completions
    port = free_port()
    command = [sys.executable, "-m", "tea_agent_mini.server", "--port", str(port), "--verbose"]
    server = subprocess.Popen(command, env=environment(tea_home), stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    seen: dict[str, str] = {}
    try:
        wait_healthy(url, server)
        headers = {"Authorization": f"Bearer {SERVER_KEY}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
            wait_for_mcp_failures(http)
            session = http.post("/v1/sessions", json={}).json()["id"]
            seen["turn with toolkit_mcp"] = send(http, session, "which MCP servers are there?")
            seen["turn against a 502"] = send(http, session, "and now?")
            chat = http.post(
                "/v1/chat/completions",
                json={"model": "x", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert chat.status_code == 502 and "bad gateway" in chat.text, chat.text
            seen["POST /v1/chat/completions"] = chat.text
            seen.update(every_get_route(http, session))
    finally:
        server.terminate()
        server.wait(timeout=20)
    seen["server log"] = server.stderr.read()
    doctor = subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", "doctor", "--verbose"],
        env=environment(tea_home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    seen["doctor"] = doctor.stdout + doctor.stderr
    seen["requests to the model"] = json.dumps(scripted_server.requests)

    shown = seen["turn with toolkit_mcp"]
    assert "--token ${MCP_TOKEN}" in shown and "api_key=****" in shown, shown
    log = seen["server log"]
    assert "MCP server local failed" in log and "embeddings request to" in log  # errors logged
    assert "bad gateway" in seen["turn against a 502"]
    for where, text in seen.items():
        assert leaks(text) == [], f"{where}: {leaks(text)}"
    for path in sorted(tea_home.rglob("*")):
        if path.is_file() and path.name != "config.yaml":
            data = path.read_bytes().decode("utf-8", "replace")
            assert leaks(data) == [], f"{path.relative_to(tea_home)}: {leaks(data)}"
    with home_store(tea_home) as store:  # chat.db was read above; a PostgreSQL store here
        if store.path is None:
            for table in store.db.tables():
                rows = repr(store.db.query(f"SELECT * FROM {table}"))
                assert leaks(rows) == [], f"table {table}: {leaks(rows)}"
        else:
            assert store.path == tea_home / "chat.db" and store.path.is_file()


def wait_for_mcp_failures(http: httpx.Client, timeout: float = 30) -> None:
    """Until both servers have failed (their errors are what a leak would show in)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        answer = http.post("/v1/tools/toolkit_mcp/run", json={"arguments": {"action": "list"}})
        text = answer.json().get("output") or ""
        if text.count("[failed]") == 2:
            return
        time.sleep(0.2)
    raise AssertionError(f"the MCP servers did not fail: {text}")


def send(http: httpx.Client, session: str, content: str) -> str:
    with http.stream("POST", f"/v1/sessions/{session}/messages", json={"content": content}) as r:
        lines = list(r.iter_lines())
    assert list(parse_sse(iter(lines))), "no events"
    return "\n".join(lines)


def every_get_route(http: httpx.Client, session: str) -> dict[str, str]:
    """Each GET route of the API document, called with the session's id for path parameters."""
    paths = http.get("/openapi.json").json()["paths"]
    answers = {"GET /openapi.json": json.dumps(paths)}
    ok = []
    for path, methods in paths.items():
        if "get" not in methods:
            continue
        concrete = re.sub(r"\{(id|session_id|session)\}", session, path)
        concrete = re.sub(r"\{path(:path)?\}", "js/app.js", concrete)
        concrete = re.sub(r"\{[^}]+\}", "1", concrete)
        query = {"q": "mcp", "schedule": "every 5m"}
        with http.stream("GET", concrete, params=query) as response:
            answers[f"GET {concrete}"] = response.read().decode("utf-8", "replace")
            ok += [concrete] if response.status_code == 200 else []
    assert len(answers) > 15 and len(ok) > 12, (sorted(answers), ok)
    assert "X-Upstream-Key" in answers["GET /v1/config"]  # the config itself was shown
    return answers
