"""The redaction helpers: URLs, command lines, free text, log records, and what a config holds."""

from __future__ import annotations

import io
import logging

import pytest

from tea_agent_mini.config import config_from_dict, config_to_dict
from tea_agent_mini.mcp.servers import parse_server
from tea_agent_mini.redact import (
    guard_logs,
    header_secrets,
    mask_args,
    mask_text,
    mask_url,
    url_secrets,
)
from tea_agent_mini.runtime import config_secrets


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://example.com/v1", "https://example.com/v1"),
        ("https://u:p4ssw0rd@example.com:8443/v1", "https://****@example.com:8443/v1"),
        ("http://h/mcp?api_key=k3y-v4lue&v=2", "http://h/mcp?api_key=****&v=****"),
        ("http://h/x?justatoken", "http://h/x?****"),
        ("http://h/cb#access_token=abcdef", "http://h/cb#access_token=****"),
        ("http://h/x?empty=", "http://h/x?empty="),
    ],
)
def test_mask_url(url, shown):
    assert mask_url(url) == shown


def test_url_secrets_are_what_mask_url_hides_also_decoded():
    found = url_secrets("https://me:p%40ss-word@h/x?key=a%2Fb-token&n=12345")
    assert {"p%40ss-word", "p@ss-word", "a%2Fb-token", "a/b-token", "12345"} <= set(found)
    assert "me" not in found  # too short to mask anywhere without mangling ordinary words


def test_mask_args_keeps_templates_and_hides_secret_flags_and_urls():
    args = ["-y", "server", "--token", "${TOKEN}", "--api-key=abc123", "API_KEY=xyz789"]
    args += ["--secret", "plain-value", "--url=http://h/?key=q1w2e3", "http://u:pw1234@h/"]
    assert mask_args(args) == [
        "-y",
        "server",
        "--token",
        "${TOKEN}",
        "--api-key=****",
        "API_KEY=****",
        "--secret",
        "****",
        "--url=http://h/?key=****",
        "http://****@h/",
    ]


def test_header_secrets_include_the_bearer_token_alone():
    assert header_secrets({"Authorization": "Bearer tok-123456", "X": "ab"}) == [
        "Bearer tok-123456",
        "tok-123456",
    ]


def test_mask_text_masks_the_longest_secret_first():
    text = "Bearer tok-123456 and tok-123456-extended"
    masked = mask_text(text, ["tok-123456", "tok-123456-extended", "", "ab"])
    assert "tok-123456" not in masked and masked.count("****") == 2


def test_an_mcp_server_is_shown_from_its_template_and_knows_its_secrets():
    env = {"TOKEN": "tok-from-env-1", "KEY": "qk-from-env-2", "BEARER": "brr-from-env-3"}
    stdio = parse_server(
        "s",
        {"command": "srv", "args": ["--token", "${TOKEN}"], "env": {"GH_TOKEN": "ghp-literal"}},
        "t",
        env,
    )
    assert stdio.args == ("--token", "tok-from-env-1")
    assert stdio.target == "srv --token ${TOKEN}"
    assert {"tok-from-env-1", "ghp-literal"} <= set(stdio.secrets)
    remote = parse_server(
        "r",
        {"url": "http://h/mcp?api_key=${KEY}", "headers": {"Authorization": "Bearer ${BEARER}"}},
        "t",
        env,
    )
    assert remote.url == "http://h/mcp?api_key=qk-from-env-2"
    assert remote.target == "http://h/mcp?api_key=****"
    assert {"qk-from-env-2", "brr-from-env-3"} <= set(remote.secrets)
    for server in (stdio, remote):
        assert not any(secret in repr(server) for secret in server.secrets)


def test_a_bad_url_is_reported_without_its_query():
    with pytest.raises(Exception, match=r"ftp://h/\?key=\*\*\*\*") as info:
        parse_server("r", {"url": "ftp://h/?key=${KEY}", "type": "http"}, "t", {"KEY": "k-1234"})
    assert "k-1234" not in str(info.value)


def config_with_everything(tmp_path):
    config = config_from_dict(
        {
            "main_model": {
                "api_key": "sk-main-000111",
                "api_url": "https://u:url-pass-99@h/v1?token=url-token-77",
                "extra_headers": {"X-Key": "header-value-42"},
            },
            "server": {"api_key": "server-key-31337"},
            "mcp_servers": {"m": {"command": "x", "args": ["--token", "arg-token-55"]}},
        }
    )
    config.home = tmp_path
    return config


def test_config_secrets_collects_every_kind(tmp_path):
    found = set(config_secrets(config_with_everything(tmp_path)))
    wanted = {"sk-main-000111", "url-pass-99", "url-token-77", "header-value-42"}
    assert wanted | {"server-key-31337", "arg-token-55"} <= found


def test_the_config_view_and_reprs_hide_them(tmp_path):
    config = config_with_everything(tmp_path)
    shown = str(config_to_dict(config)) + repr(config) + repr(config.main_model)
    for secret in config_secrets(config):
        assert secret not in shown
    assert "X-Key" in shown and "'m': '****'" in shown


def test_guard_logs_masks_messages_arguments_and_tracebacks():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test_redact_guard")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        guard_logs(["tok-secret-1234"], logger)
        guard_logs(["other-secret-5678"], logger)  # adds to the same filter
        assert len(handler.filters) == 1
        logger.warning("starting %s --token %s", "srv", "tok-secret-1234")
        try:
            raise RuntimeError("failed with other-secret-5678")
        except RuntimeError:
            logger.exception("boom")
        logger.warning("bad %s %s", "one")  # a malformed call must not raise from the filter
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "starting srv --token ****1234" in text and "RuntimeError: failed with ****5678" in text
    assert "tok-secret-1234" not in text and "other-secret-5678" not in text
