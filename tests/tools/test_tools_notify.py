"""toolkit_notify with a fake notify-send on PATH, a failing one, and none at all."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import get_args

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.store import Store
from tea_agent_mini.toolkit import notices
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools import notify

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses shell scripts as programs")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, home=tmp_path / "home")


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory that is the whole PATH (no real notify-send or osascript)."""
    path = tmp_path / "bin"
    path.mkdir()
    monkeypatch.setenv("PATH", str(path))
    return path


def install(bin_dir: Path, name: str, script: str) -> None:
    program = bin_dir / name
    program.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)


def test_notify_send_is_called_with_the_texts(ctx, bin_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(notices.sys, "platform", "linux")
    calls = tmp_path / "calls.txt"
    install(bin_dir, "notify-send", f"printf '%s\\n' \"$@\" > '{calls}'")
    result = notify.toolkit_notify(
        ctx, title="-Build done", message='All 42 tests "passed"', urgency="critical"
    )
    assert result == "Desktop notification shown: -Build done"
    assert calls.read_text(encoding="utf-8").splitlines() == [
        "--urgency=critical",
        "--app-name=tea_agent_mini",
        "--",
        "-Build done",
        'All 42 tests "passed"',
    ]
    assert ctx.state_get("notices") is None


def test_osascript_on_macos_gets_texts_as_arguments(ctx, bin_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(notices.sys, "platform", "darwin")
    calls = tmp_path / "calls.txt"
    install(bin_dir, "osascript", f"printf '%s\\n' \"$@\" > '{calls}'")
    notify.toolkit_notify(ctx, title="Tea", message='say "hi"')
    args = calls.read_text(encoding="utf-8").splitlines()
    assert args[-2:] == ["Tea", 'say "hi"']
    assert args[0] == "-e" and "on run argv" in args


def test_no_program_stores_a_notice(ctx, bin_dir, monkeypatch):
    monkeypatch.setattr(notices.sys, "platform", "linux")
    result = notify.toolkit_notify(ctx, title="Backup", message="finished")
    assert result.startswith("No desktop notification (neither notify-send nor osascript")
    assert "saved" in result and "web UI" in result
    (notice,) = ctx.state_get("notices")
    assert notice["title"] == "Backup" and notice["message"] == "finished"
    assert notice["urgency"] == "normal" and notice["time"].endswith("+00:00")


def test_failing_program_falls_back_to_a_notice(ctx, bin_dir, monkeypatch):
    monkeypatch.setattr(notices.sys, "platform", "linux")
    install(
        bin_dir, "notify-send", "echo 'Cannot autolaunch D-Bus without X11 $DISPLAY' >&2\nexit 1"
    )
    result = notify.toolkit_notify(ctx, title="Headless", message="no display here")
    assert "notify-send failed: Cannot autolaunch D-Bus" in result
    assert ctx.state_get("notices")[0]["title"] == "Headless"


def test_notices_go_to_the_store_and_are_capped(bin_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(notices.sys, "platform", "linux")
    monkeypatch.setattr(notices, "MAX_NOTICES", 3)
    store = Store.open(tmp_path / "chat.db")
    try:
        ctx = ToolContext(workspace=tmp_path, home=tmp_path, store=store, topic_id="t1")
        for number in range(5):
            notify.toolkit_notify(ctx, title=f"n{number}", message="m")
        assert [n["title"] for n in store.state.get("topic:t1", "notices")] == ["n2", "n3", "n4"]
    finally:
        store.close()


def test_bad_arguments(ctx, bin_dir):
    with pytest.raises(ToolError, match="urgency must be one of low, normal, critical"):
        notify.toolkit_notify(ctx, title="x", message="y", urgency="loud")
    with pytest.raises(ToolError, match="both empty"):
        notify.toolkit_notify(ctx, title=" ", message="")


def test_urgency_enum_matches_notices():
    assert get_args(notify.Urgency) == notices.URGENCIES
    schema = notify.toolkit_notify.tool_spec.parameters
    assert schema["properties"]["urgency"]["enum"] == list(notices.URGENCIES)


def test_path_is_read_at_call_time(ctx, bin_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(notices.sys, "platform", "linux")
    other = tmp_path / "other-bin"
    other.mkdir()
    install(other, "notify-send", "exit 0")
    assert notify.toolkit_notify(ctx, title="a", message="b").startswith("No desktop")
    monkeypatch.setenv("PATH", str(other) + os.pathsep + str(bin_dir))
    assert notify.toolkit_notify(ctx, title="a", message="b").startswith("Desktop notification")
