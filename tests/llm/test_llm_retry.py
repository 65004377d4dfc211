"""Retry policy, Retry-After parsing, and translation of provider errors into LLMError."""

from __future__ import annotations

import email.utils
from pathlib import Path

import httpx
import pytest

from tea_agent_mini.errors import ContextTooLong, RateLimited, UpstreamError
from tea_agent_mini.llm.http_errors import (
    describe_transport_error,
    error_from_payload,
    error_from_status,
    extract_error_message,
    is_context_error,
    redact,
)
from tea_agent_mini.llm.retry import (
    RetryPolicy,
    is_retryable_status,
    is_retryable_transport,
    parse_retry_after,
    retry_after_from_headers,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp"
KEY = "sk-live-0123456789abcdefWXYZ"


def read_http_fixture(name: str) -> tuple[int, dict[str, str], bytes]:
    raw = (FIXTURES / name).read_bytes()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(":", 1) for line in header_lines)
    return int(status_line.split()[1]), {k: v.strip() for k, v in headers.items()}, body


# -- policy --------------------------------------------------------------------------------


def test_backoff_grows_exponentially_up_to_the_cap_with_full_jitter():
    policy = RetryPolicy(max_retries=10, base_delay=0.5, max_delay=4.0)
    assert [policy.delay(n, lambda: 1.0) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert policy.delay(3, lambda: 0.25) == 1.0
    assert policy.delay(3, lambda: 0.0) == 0.0


def test_retry_after_wins_and_is_capped():
    policy = RetryPolicy(max_retry_after=60.0)
    assert policy.delay(0, lambda: 1.0, retry_after=2.0) == 2.0
    assert policy.delay(0, lambda: 1.0, retry_after=3600.0) == 60.0


def test_can_retry_counts_retries():
    policy = RetryPolicy(max_retries=2)
    assert [policy.can_retry(n) for n in range(4)] == [True, True, False, False]
    assert not RetryPolicy(max_retries=0).can_retry(0)


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(429, True), (500, True), (502, True), (503, True), (504, True), (529, True),
     (400, False), (401, False), (403, False), (404, False), (422, False), (501, False)],
)  # fmt: skip
def test_retryable_statuses(status, retryable):
    assert is_retryable_status(status) is retryable


@pytest.mark.parametrize(
    ("exc", "retryable"),
    [
        (httpx.ConnectError("refused"), True),
        (httpx.ConnectTimeout("slow"), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx.RemoteProtocolError("closed"), True),
        (httpx.ReadError("reset"), True),
        (httpx.UnsupportedProtocol("ftp"), False),
        (httpx.LocalProtocolError("bad header"), False),
    ],
)
def test_retryable_transport_errors(exc, retryable):
    assert is_retryable_transport(exc) is retryable


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("2", 2.0), ("0.5", 0.5), (" 10 ", 10.0), ("-3", 0.0), ("", None), (None, None),
     ("soon", None), ("nan", None)],
)  # fmt: skip
def test_parse_retry_after_seconds(value, seconds):
    assert parse_retry_after(value) == seconds


def test_parse_retry_after_http_date():
    now = 1_800_000_000.0
    value = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(value, now=now) == pytest.approx(30.0)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after(past, now=now) == 0.0


def test_retry_after_headers_prefer_milliseconds():
    assert retry_after_from_headers({"Retry-After": "3"}) == 3.0
    assert retry_after_from_headers({"retry-after-ms": "1500", "retry-after": "3"}) == 1.5
    assert retry_after_from_headers({}) is None


# -- provider errors -----------------------------------------------------------------------


def test_llamacpp_bad_request_fixture():
    status, headers, body = read_http_fixture("bad_request.http")
    assert status == 400
    message, code = extract_error_message(body)
    assert message == "Expected 'messages' to be an array"
    assert code == "invalid_request_error"
    error = error_from_status(status, body, headers)
    assert type(error) is UpstreamError
    assert error.status == 400
    assert str(error) == "HTTP 400: Expected 'messages' to be an array"


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (401, "check api_key"),
        (403, "check api_key"),
        (404, "check api_url and model_name"),
        (500, "try again later"),
        (503, "try again later"),
    ],
)
def test_hints(status, hint):
    error = error_from_status(status, b'{"error": {"message": "nope"}}')
    assert hint in error.hint
    assert f"HTTP {status}: nope" in str(error)


def test_429_is_rate_limited_with_retry_after():
    error = error_from_status(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "7"})
    assert isinstance(error, RateLimited)
    assert error.retry_after == 7.0
    assert error.status == 429


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, '
        'your messages resulted in 9000 tokens.", "code": "context_length_exceeded"}}',
        '{"error": {"code": 400, "message": "the request exceeds the available context size, '
        'try increasing it", "type": "exceed_context_size_error"}}',
        '{"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}}',
        '{"error": {"message": "Input is too long for requested model."}}',
        '{"detail": "too many tokens in the prompt"}',
        "Request exceeds the model's context window",
    ],
)
def test_context_errors_are_detected(body):
    error = error_from_status(400, body)
    assert isinstance(error, ContextTooLong)
    assert error.status == 400


def test_other_400s_are_not_context_errors():
    assert not is_context_error("Expected 'messages' to be an array")
    assert not is_context_error("Invalid value for 'temperature'")
    assert is_context_error("whatever", "context_length_exceeded")


def test_plain_text_and_html_bodies():
    assert extract_error_message(b"Bad Gateway\n")[0] == "Bad Gateway"
    html = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
    assert extract_error_message(html)[0] == "502 Bad Gateway nginx"
    assert extract_error_message(b"")[0] == "(empty response body)"
    assert extract_error_message('{"error": "just a string"}')[0] == "just a string"
    assert extract_error_message('[{"error": {"message": "google style"}}]')[0] == "google style"


def test_long_messages_are_truncated():
    message, _ = extract_error_message("x" * 5000, limit=100)
    assert len(message) == 100 and message.endswith("…")


def test_api_key_is_masked_in_provider_messages():
    body = f'{{"error": {{"message": "Incorrect API key provided: {KEY}."}}}}'
    error = error_from_status(401, body, secrets=[KEY])
    assert KEY not in str(error)
    assert "****WXYZ" in str(error)
    assert "check api_key" in str(error)


def test_redact_ignores_empty_and_tiny_secrets():
    assert redact("abc", ["", "a"]) == "abc"
    assert redact(f"key={KEY}!", [KEY]) == "key=****WXYZ!"


def test_error_inside_a_stream_payload():
    error = error_from_payload({"error": {"code": 503, "message": "overloaded"}})
    assert isinstance(error, UpstreamError) and error.status == 503
    error = error_from_payload({"error": {"message": "maximum context length exceeded"}})
    assert isinstance(error, ContextTooLong) and error.status is None
    error = error_from_payload({"error": {"message": "boom", "type": "server_error"}})
    assert type(error) is UpstreamError and "boom" in str(error)


def test_transport_error_descriptions():
    detail, hint = describe_transport_error(httpx.ReadTimeout("x"), 5, 30)
    assert "30s" in detail and "read_timeout" in (hint or "")
    detail, hint = describe_transport_error(httpx.ConnectError("refused"), 5, 30)
    assert "refused" in detail and "api_url" in (hint or "")
    assert describe_transport_error(httpx.UnsupportedProtocol("no scheme"), 5, 30)[1] is None
