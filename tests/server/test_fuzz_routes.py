"""Every operation in ``/openapi.json`` gets bad input (see ``fuzz_cases``) over one keep-alive
connection to the real server: no answer is a 5xx, every 4xx is a JSON error, and the
connection is the same one from the first request to the last."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.fakes.background import is_background
from tests.fakes.script import Reply
from tests.server.fuzz_cases import (
    PATH_IDS,
    QUERY_VALUES,
    Case,
    Schemas,
    body_cases,
    fill,
    multipart_cases,
)
from tests.server.server_helpers import LiveServer

# Bodies whose required fields need a meaningful value to get past the first check.
BASELINES: dict[tuple[str, str], Any] = {
    ("POST", "/v1/chat/completions"): {"messages": [{"role": "user", "content": "fuzz"}]},
    ("POST", "/v1/responses"): {"input": "fuzz"},
    ("POST", "/v1/tasks"): {
        "name": "fuzz",
        "schedule": "interval:3600",
        "kind": "prompt",
        "prompt": "fuzz",
        "enabled": False,
    },
}
COLLECTIONS = {"sessions", "memory", "tasks", "uploads"}


@pytest.fixture
def target(model_config, scripted_server, live_factory) -> LiveServer:
    # a short answer: the default echo of a 1 MB message would stream it back 4 characters a time
    scripted_server.on(lambda request: not is_background(request), Reply(text="fuzzed"))
    # read-only tools: a fuzzed tool run must not write anything
    return live_factory(configure=lambda config: setattr(config.agent, "approval", "never"))


def make_resources(http: httpx.Client) -> dict[str, str]:
    """One of each thing a path can name, so bodies reach the code behind the 404 checks."""
    task = {**BASELINES[("POST", "/v1/tasks")], "name": "known"}
    upload = http.post("/v1/uploads", files={"file": ("a.txt", b"hello")})
    tools = http.get("/v1/tools").json()["data"]
    memory = http.post("/v1/memory", json={"content": "fuzz fact"}).json()["memory"]
    known = {
        "sessions": http.post("/v1/sessions", json={}).json()["id"],
        "memory": str(memory["id"]),
        "tasks": str(http.post("/v1/tasks", json=task).json()["id"]),
        "uploads": upload.json()["id"],
        "name": next(t["name"] for t in tools if not t["mutates"]),
        "path": "favicon.svg",
    }
    known["session_id"] = known["sessions"]
    return known


def known_value(known: dict[str, str], path: str, name: str) -> str:
    collection = path.split("/")[2] if path.startswith("/v1/") else ""
    if name == "id" and collection in COLLECTIONS:
        return known[collection]
    return known.get(name, "unknown")


def operation_cases(
    schemas: Schemas, known: dict[str, str], path: str, method: str, operation: dict[str, Any]
) -> Iterator[Case]:
    parameters = operation.get("parameters", [])
    names = [p["name"] for p in parameters if p["in"] == "path"]
    # a DELETE never gets the known ids: the fixtures must outlive the run
    good = {n: "unknown" if method == "DELETE" else known_value(known, path, n) for n in names}
    url = fill(path, good)
    for name in names:
        for value in PATH_IDS:
            yield Case(method, fill(path, {**good, name: value}), f"path {name}={value[:24]}")
    for param in (p for p in parameters if p["in"] == "query"):
        for value in QUERY_VALUES:
            yield Case(
                method, f"{url}?{param['name']}={value}", f"query {param['name']}={value[:24]}"
            )
    content = operation.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        schema = content["application/json"]["schema"]
        baseline = BASELINES.get((method, path), schemas.sample(schema))
        yield from body_cases(schemas, method, url, schema, baseline)
    if "multipart/form-data" in content:
        yield from multipart_cases(method, url)


def all_cases(document: dict[str, Any], known: dict[str, str]) -> list[Case]:
    schemas = Schemas(document)
    return [
        case
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        for case in operation_cases(schemas, known, path, method.upper(), operation)
    ]


def problem(response: httpx.Response) -> str | None:
    """What is wrong with an answer to bad input (None: nothing)."""
    if response.status_code >= 500:
        return f"{response.status_code} {response.text[:200]}"
    if response.status_code < 400:
        return None
    if not response.headers.get("content-type", "").startswith("application/json"):
        return f"{response.status_code} not JSON: {response.text[:200]}"
    error = response.json().get("error")
    if not isinstance(error, dict) or not error.get("message"):
        return f"{response.status_code} no error message: {response.text[:200]}"
    return None


def local_port(response: httpx.Response) -> int | None:
    """The client side port of the connection that carried ``response`` (None: closed)."""
    try:
        return response.extensions["network_stream"].get_extra_info("client_addr")[1]
    except OSError:
        return None


@pytest.mark.timeout(300)
def test_bad_input_never_gets_a_server_error_and_keeps_the_connection(target: LiveServer):
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with target.client(limits=limits, timeout=60) as http:
        document = http.get("/openapi.json").json()
        known = make_resources(http)
        port = local_port(http.get("/health"))
        cases = all_cases(document, known)
        failures: list[str] = []
        statuses: Counter[int] = Counter()
        started = time.monotonic()
        for case in cases:
            where = f"{case.method} {case.url[:80]} [{case.label}]"
            try:
                response = http.request(
                    case.method, case.url, content=case.content, headers=case.headers
                )
            except httpx.TransportError as exc:
                failures.append(f"{where}: {exc!r}")
                continue
            statuses[response.status_code] += 1
            if (wrong := problem(response)) is not None:
                failures.append(f"{where}: {wrong}")
            if (now := local_port(response)) != port:
                failures.append(f"{where}: the connection was closed or replaced")
                port = now
        elapsed = time.monotonic() - started
    print(f"{len(cases)} requests in {elapsed:.1f} s: {dict(sorted(statuses.items()))}")
    assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures[:60])
    # the fuzz reached past the checks it is meant to pass: real ids, real turns, real saves
    assert len(cases) > 1000 and statuses[404] and statuses[400]
    assert statuses[200] + statuses[201] > 20
