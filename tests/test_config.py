from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.config import (
    Config,
    config_to_dict,
    home_dir,
    list_profiles,
    load_config,
    mask_secret,
    profile_path,
)
from tea_agent_mini.errors import ConfigError

SECRET = "sk-live-abcdefghijklmnop1234"


def test_home_comes_from_env_at_call_time(tea_home: Path, monkeypatch):
    assert home_dir() == tea_home
    monkeypatch.setenv("TEA_AGENT_HOME", "/somewhere/else")
    assert home_dir() == Path("/somewhere/else")
    monkeypatch.delenv("TEA_AGENT_HOME")
    assert home_dir() == Path.home() / ".tea_agent"


def test_tea_agent_keys_load(write_config, tea_home: Path):
    path = write_config(
        {
            "main_model": {
                "api_key": SECRET,
                "api_url": "https://api.deepseek.com/v1/",
                "model_name": "deepseek-chat",
                "max_context_tokens": 65536,
            },
            "cheap_model": {"api_url": "http://127.0.0.1:11434/v1", "model_name": "qwen2.5:0.5b"},
            "embedding_model": {
                "api_url": "http://e/v1",
                "model_name": "bge-m3",
                "dimension": 1024,
            },
            "agent": {"max_iterations": 7, "approval": "ask"},
            "server": {"port": 9000},
        }
    )
    config = load_config()
    assert config.source == path
    assert config.main_model.api_url == "https://api.deepseek.com/v1"
    assert config.main_model.max_context_tokens == 65536
    assert config.cheap.model_name == "qwen2.5:0.5b"
    assert config.embedding.model == "bge-m3" and config.embedding.dimension == 1024
    assert config.agent.max_iterations == 7 and config.agent.approval == "ask"
    assert config.server.port == 9000 and config.server.host == "127.0.0.1"
    assert config.db_path == tea_home / "chat.db"


def test_cheap_model_falls_back_to_main(write_config):
    write_config({"main_model": {"api_url": "http://x/v1", "model_name": "m"}, "cheap_model": {}})
    config = load_config()
    assert config.cheap is config.main_model


def test_chat_completions_suffix_is_stripped(write_config):
    write_config({"main_model": {"api_url": "http://x/v1/chat/completions", "model_name": "m"}})
    assert load_config().main_model.api_url == "http://x/v1"


@pytest.mark.parametrize(
    "data, fragments",
    [
        ({"mian_model": {}}, ["unknown top-level key 'mian_model'", "main_model"]),
        ({"main_model": {"modelname": "x"}}, ["main_model.modelname", "model_name"]),
        ({"agent": {"max_iterations": "many"}}, ["agent.max_iterations", "an integer", "'many'"]),
        ({"server": {"port": [1]}}, ["server.port", "an integer"]),
        ({"agent": {"approval": "sometimes"}}, ["agent.approval", "auto, ask, never"]),
        ({"agent": {"sandbox": "yes"}}, ["agent.sandbox", "auto, off, required"]),
        ({"agent": {"sandbox_network": "no"}}, ["agent.sandbox_network", "true or false"]),
        ({"main_model": "gpt-4o"}, ["main_model must be a mapping"]),
        (
            {"agent": {"allow_outside_workspace": "yes"}},
            ["allow_outside_workspace", "true or false"],
        ),
    ],
)
def test_invalid_config_names_file_key_and_expectation(write_config, data, fragments):
    path = write_config(data)
    with pytest.raises(ConfigError) as info:
        load_config()
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


def test_wrong_type_for_a_secret_does_not_echo_it(write_config):
    write_config({"main_model": {"api_key": ["sk-secret-value-9999"]}})
    with pytest.raises(ConfigError) as info:
        load_config()
    assert "sk-secret" not in str(info.value) and "main_model.api_key" in str(info.value)


def test_invalid_yaml_is_one_clear_error(tea_home: Path):
    (tea_home / "config.yaml").write_text("main_model: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config.yaml: invalid YAML at line"):
        load_config()


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "agent:\n  approval: ask\n   workspace: x\n",
            "invalid YAML at line 3, column 13: mapping values are not allowed here",
        ),
        (
            'main_model:\n  model_name: "qwen\n',
            "invalid YAML at line 3, column 1: found unexpected end of stream "
            "(while scanning a quoted scalar, from line 2, column 15)",
        ),
    ],
)
def test_yaml_errors_give_line_column_and_reason(tea_home: Path, text, expected):
    (tea_home / "config.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert str(info.value) == f"{tea_home / 'config.yaml'}: {expected}"


def test_every_problem_is_reported_at_once(write_config):
    path = write_config(
        {
            "main_model": {"model_name": "m", "max_retries": "three", "temprature": 0.2},
            "agent": {"approval": "sometimes", "max_iterations": 0},
            "server": {"port": 70000},
            "extra": {},
        }
    )
    with pytest.raises(ConfigError) as info:
        load_config()
    lines = str(info.value).splitlines()
    assert lines[0] == f"{path}: 6 problems:"
    assert lines[1:] == [  # in the file's order (safe_dump sorts the keys), then the values
        "  unknown top-level key 'extra'; expected one of "
        "main_model, cheap_model, embedding, agent, server, tools, store, mcp_servers",
        "  main_model.max_retries: expected an integer, got str 'three'",
        "  unknown key main_model.temprature; expected one of " + MODEL_KEYS,
        "  agent.approval: expected one of auto, ask, never, got 'sometimes'",
        "  agent.max_iterations: expected a positive integer, got 0",
        "  server.port: expected 1-65535, got 70000",
    ]


MODEL_KEYS = (
    "api_key, api_url, connect_timeout, extra_headers, max_context_tokens, max_retries, "
    "max_tokens, model_name, read_timeout, temperature"
)


def test_missing_model_says_how_to_fix(tea_home: Path):
    config = load_config()
    assert config.source is None
    with pytest.raises(ConfigError, match="main_model.model_name is not set.*TEA_AGENT_MODEL"):
        config.require_model()


def test_environment_fills_what_the_file_leaves_empty(write_config, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env-host/v1")
    monkeypatch.setenv("TEA_AGENT_MODEL", "env-model")
    write_config({"main_model": {"model_name": "file-model"}})
    config = load_config()
    assert config.main_model.model_name == "file-model"
    assert config.main_model.api_url == "http://env-host/v1"
    assert config.main_model.api_key == SECRET


def test_server_access_token_from_the_environment(write_config, monkeypatch):
    monkeypatch.setenv("TEA_AGENT_API_KEY", "env-token-1234")
    assert load_config().server.api_key == "env-token-1234"
    write_config({"server": {"api_key": "file-token-5678"}})
    assert load_config().server.api_key == "file-token-5678"
    assert "env-token" not in repr(load_config())


def test_tool_endpoints_from_the_file_else_the_environment(write_config, monkeypatch):
    monkeypatch.setenv("TEA_AGENT_SEARCH_URL", "http://env-search/html/")
    monkeypatch.setenv("TEA_AGENT_GEOCODING_URL", "http://env-geo/v1/search")
    write_config({"tools": {"search_url": "http://file-search/html/?key=k3y-in-the-url"}})
    tools = load_config().tools
    assert tools.search_url == "http://file-search/html/?key=k3y-in-the-url"
    assert tools.geocoding_url == "http://env-geo/v1/search"
    assert tools.open_meteo_url == ""  # the public service
    for text in (repr(tools), str(config_to_dict(load_config()))):
        assert "k3y-in-the-url" not in text and "file-search" in text
    write_config({"tools": {"weather_url": "http://x"}})
    with pytest.raises(ConfigError, match="unknown key tools.weather_url"):
        load_config()


@pytest.mark.sqlite_only
def test_the_store_is_the_sqlite_file_unless_a_postgresql_url_is_set(
    write_config, monkeypatch, tea_home: Path
):
    from tea_agent_mini.runtime import config_secrets

    assert load_config().store_target == tea_home / "chat.db"
    url = "postgresql://tea:pg-pass-9876@db.internal:5432/agents"
    write_config({"store": {"url": url}})
    config = load_config()
    assert config.store_target == url
    for text in (repr(config), repr(config.store), str(config_to_dict(config))):
        assert "pg-pass-9876" not in text and "db.internal:5432/agents" in text
    assert "pg-pass-9876" in config_secrets(config)  # masked in log lines too
    assert config_to_dict(config, mask=False)["store"]["url"] == url
    write_config({})
    monkeypatch.setenv("TEA_AGENT_STORE_URL", url)
    assert load_config().store_target == url  # the environment fills what the file leaves empty
    monkeypatch.delenv("TEA_AGENT_STORE_URL")
    write_config({"store": {"url": "mysql://tea:pg-pass-9876@db/agents"}})
    with pytest.raises(ConfigError, match="store.url: expected empty") as info:
        load_config()
    assert "pg-pass-9876" not in str(info.value)


def test_environment_alone_is_enough(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("TEA_AGENT_MODEL", "gpt-4o-mini")
    model = load_config().require_model()
    assert model.api_url == "https://api.openai.com/v1"


def test_profiles_are_selected_by_name_never_by_path(write_config, tea_home: Path):
    write_config({"main_model": {"api_url": "http://a/v1", "model_name": "default-m"}})
    write_config({"main_model": {"api_url": "http://b/v1", "model_name": "prod-m"}}, name="prod")
    assert list_profiles() == ["default", "prod"]
    config = load_config("prod")
    assert config.profile == "prod" and config.main_model.model_name == "prod-m"
    for bad in ("../etc/passwd", "/tmp/x", "prod.yaml", "a/b", ""):
        with pytest.raises(ConfigError):
            profile_path(bad or "..", tea_home)
    with pytest.raises(ConfigError, match="profile 'staging' not found.*default, prod"):
        load_config("staging")


def test_secrets_masked_in_repr_and_dict(write_config):
    write_config(
        {
            "main_model": {"api_key": SECRET, "api_url": "http://a/v1", "model_name": "m"},
            "server": {"api_key": "server-token-5678"},
        }
    )
    config = load_config()
    for text in (repr(config), repr(config.main_model), str(config_to_dict(config))):
        assert SECRET not in text and "server-token" not in text
    assert "****1234" in repr(config.main_model)
    assert config_to_dict(config)["server"]["api_key"] == "****5678"
    assert config_to_dict(config, mask=False)["main_model"]["api_key"] == SECRET


@pytest.mark.parametrize(
    "value, shown", [("", ""), ("short", "****"), ("sk-1234567890", "****7890")]
)
def test_mask_secret(value, shown):
    assert mask_secret(value) == shown


def test_defaults():
    config = Config()
    assert config.agent.max_iterations == 50
    assert config.agent.approval == "auto"
    assert config.agent.sandbox == "auto" and config.agent.sandbox_network is True
    assert config.server.host == "127.0.0.1" and config.server.port == 8080


def test_api_url_must_be_http(write_config):
    write_config({"main_model": {"api_url": "ftp://host/v1", "model_name": "m"}})
    with pytest.raises(ConfigError, match="main_model.api_url: expected an http"):
        load_config().require_model()
