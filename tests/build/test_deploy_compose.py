"""The two-instance compose file (scripts/deploy/compose.postgres.yaml) without a Docker engine:
its shape, and the environment it gives each instance, read by the real config loader."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tea_agent_mini.config import load_config

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "scripts" / "deploy"
INSTANCES = ("tea-a", "tea-b")


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.postgres.yaml").read_text(encoding="utf-8"))


def example_env() -> dict[str, str]:
    pairs = {}
    for line in (DEPLOY / "tea.env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value.strip()
    return pairs


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error}."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2) or "", match.group(3) or ""
        found = env.get(name, "")
        if op == ":?" and not found:
            raise AssertionError(f"{name} is required: {arg}")
        return found or (arg if op == ":-" else "")

    return re.sub(r"\$\{(\w+)(:[-?])?([^}]*)\}", one, value)


def test_two_instances_share_the_database_and_token_but_not_their_homes():
    services = compose()["services"]
    envs = [services[name]["environment"] for name in INSTANCES]
    assert envs[0] == envs[1]
    assert envs[0]["TEA_AGENT_STORE_URL"].startswith("postgresql://tea:")
    assert "@db:5432/tea_agent" in envs[0]["TEA_AGENT_STORE_URL"]
    homes = [services[name]["volumes"] for name in INSTANCES]
    assert homes[0] != homes[1] and all(v[0].endswith(":/data") for v in homes)
    for name in INSTANCES:
        assert services[name]["build"]["args"]["EXTRAS"] == "postgres"
        assert services[name]["depends_on"]["db"]["condition"] == "service_healthy"
    balancer = services["balancer"]["command"]
    assert [balancer[i + 1] for i, word in enumerate(balancer) if word == "--to"] == [
        "tea-a:8080",
        "tea-b:8080",
    ]
    assert services["balancer"]["ports"] == ["127.0.0.1:8080:8080"]


def test_the_dockerfile_installs_the_extra_it_is_built_with():
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'ARG EXTRAS=""' in text and '"${wheels}${EXTRAS:+[$EXTRAS]}"' in text


def test_the_example_env_fills_every_required_variable_and_the_loader_takes_it(
    tea_home, monkeypatch
):
    env = example_env()
    instance = {
        name: interpolate(str(value), env)
        for name, value in compose()["services"]["tea-a"]["environment"].items()
    }
    for name, value in instance.items():
        monkeypatch.setenv(name, value)
    config = load_config()
    assert config.store_target == f"postgresql://tea:{env['POSTGRES_PASSWORD']}@db:5432/tea_agent"
    assert config.server.api_key == env["TEA_AGENT_API_KEY"] and len(config.server.api_key) >= 16
    assert config.main_model.model_name == env["TEA_AGENT_MODEL"]
    assert config.main_model.api_url == env["OPENAI_BASE_URL"]
    assert env["POSTGRES_PASSWORD"] not in repr(config)  # masked wherever the config is shown
