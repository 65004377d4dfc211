"""Safe by default, over real HTTP: API key, Host (DNS rebinding), Origin, content types, limits."""

from __future__ import annotations

import logging
import socket

import httpx
import openai
import pytest

KEY = "s3cret-server-key-123"


@pytest.fixture
def keyed(model_config, live_factory):
    return live_factory(api_key=KEY)


def test_api_key_guards_v1_routes_only(keyed, caplog):
    caplog.set_level(logging.DEBUG)
    with keyed.client() as http:
        assert http.get("/health").status_code == 200
        assert http.get("/openapi.json").status_code == 200
        assert http.get("/docs").status_code == 200
        assert http.get("/").status_code == 200
        missing = http.get("/v1/sessions")
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert missing.json()["error"]["type"] == "authentication_error"
        wrong = http.get("/v1/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and KEY not in wrong.text
        bearer = http.get("/v1/sessions", headers={"Authorization": f"Bearer {KEY}"})
        assert bearer.status_code == 200
        header = http.get("/v1/sessions", headers={"X-API-Key": KEY})
        assert header.status_code == 200
        config = http.get("/v1/config", headers={"X-API-Key": KEY})
        assert KEY not in config.text and "sk-test-key-0000" not in config.text
        assert config.json()["auth_required"] is True
    assert KEY not in caplog.text


def test_openai_client_with_and_without_the_key(keyed):
    with openai.OpenAI(base_url=keyed.url + "/v1", api_key=KEY, max_retries=0) as client:
        answer = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert answer.choices[0].message.content == "echo: hi"
    wrong = openai.OpenAI(base_url=keyed.url + "/v1", api_key="wrong", max_retries=0)
    with wrong, pytest.raises(openai.AuthenticationError):
        wrong.models.list()


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("[::1]", True),
        ("app.localhost", True),
        ("10.1.2.3", True),  # an IP literal cannot be a rebinding name
        ("evil.example", False),
        ("localhost.evil.example", False),
        ("", False),
    ],
)
def test_host_header_is_checked(live, host, allowed):
    with live.client() as http:
        response = http.get("/health", headers={"Host": f"{host}:{live.port}" if host else ""})
    assert (response.status_code == 200) is allowed
    if not allowed:
        assert response.status_code == 421
        assert response.json()["error"]["type"] == "invalid_host"


def test_allowed_hosts_extend_the_list(model_config, live_factory):
    def configure(config):
        config.server.allowed_hosts = ["agent.lan"]

    live = live_factory(configure=configure)
    with live.client() as http:
        assert http.get("/health", headers={"Host": "agent.lan:8080"}).status_code == 200
        assert http.get("/health", headers={"Host": "other.lan"}).status_code == 421


def test_request_without_host_is_refused(live):
    with socket.create_connection(("127.0.0.1", live.port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        head = sock.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 421")


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": "http://localhost:1"}, 403),  # same site, other port: another origin
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Sec-Fetch-Site": "same-origin"}, 201),
        ({}, 201),
    ],
)
def test_cross_origin_state_changes_are_refused(live, headers, status):
    with live.client() as http:
        response = http.post("/v1/sessions", json={}, headers=headers)
        assert response.status_code == status
        if status == 403:  # the refusal says how to allow an origin
            refused = response.json()["error"]["message"]
            assert "server.cors_origins" in refused
            assert headers.get("Origin", "").lower() in refused
        same = http.post(
            "/v1/sessions", json={}, headers={"Origin": f"http://127.0.0.1:{live.port}"}
        )
        assert same.status_code == 201
        # reading is not a state change; without CORS headers the browser hides the answer
        read = http.get("/v1/sessions", headers={"Origin": "http://evil.example"})
        assert read.status_code == 200 and "access-control-allow-origin" not in read.headers


def test_cors_origins_when_configured(model_config, live_factory):
    def configure(config):
        config.server.cors_origins = ["http://ui.example:3000"]

    live = live_factory(configure=configure)
    origin = {"Origin": "http://ui.example:3000"}
    with live.client() as http:
        preflight = http.options(
            "/v1/sessions",
            headers={**origin, "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "http://ui.example:3000"
        created = http.post("/v1/sessions", json={}, headers=origin)
        assert created.status_code == 201
        assert created.headers["access-control-allow-origin"] == "http://ui.example:3000"
        other = http.post("/v1/sessions", json={}, headers={"Origin": "http://evil.example"})
        assert other.status_code == 403


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"{}", "text/plain"),
        (b"title=x", "application/x-www-form-urlencoded"),
        (b"{}", None),
    ],
)
def test_json_routes_require_json(http, content, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = http.post("/v1/sessions", content=content, headers=headers)
    assert response.status_code == 415
    assert response.json()["error"]["type"] == "unsupported_media_type"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"{not json", "malformed JSON"),
        (b"[1, 2]", "must be an object"),
        (b'"text"', "must be an object"),
        (b"\xff\xfe", "malformed JSON"),
    ],
)
def test_malformed_json_is_a_400(http, content, fragment):
    response = http.post(
        "/v1/sessions", content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert fragment in response.json()["error"]["message"]


def test_oversized_bodies_are_refused(http):
    big = b'{"title": "' + b"x" * (9 * 1024 * 1024) + b'"}'
    declared = http.post("/v1/sessions", content=big, headers={"Content-Type": "application/json"})
    assert declared.status_code == 413

    def chunks():
        for _ in range(9):
            yield b"x" * (1024 * 1024)

    streamed = http.post(
        "/v1/sessions", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert streamed.json()["error"]["type"] == "request_too_large"


def test_unknown_routes_and_methods_are_json(http):
    missing = http.get("/v1/nothing-here")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    wrong = http.put("/v1/sessions", json={})
    assert wrong.status_code == 405 and "error" in wrong.json()


def test_security_headers_on_every_response(http):
    for path in ("/health", "/", "/v1/sessions", "/docs"):
        response = http.get(path)
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"


def test_internal_errors_are_json_without_details(live, http):
    live.runtime.store.close()  # every store call now raises StoreError
    response = http.get("/v1/sessions")
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "message": "internal server error",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    assert "Traceback" not in response.text and "chat.db" not in response.text


def test_static_files_are_confined(http):
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/nope.js"):
        response = http.get(path)
        assert response.status_code == 404, path
    page = http.get("/")
    assert page.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-cache"
    again = http.get("/", headers={"If-None-Match": page.headers["etag"]})
    assert again.status_code == 304


def test_api_key_in_query_string_is_not_accepted(keyed):
    with httpx.Client(base_url=keyed.url) as http:
        assert http.get("/v1/sessions", params={"api_key": KEY}).status_code == 401
