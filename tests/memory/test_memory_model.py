"""The memory vocabulary: priorities by name or number, categories, importance, tags."""

from __future__ import annotations

import pytest

from tea_agent_mini.memory.model import Priority, clamp_importance, clean_tags, parse_category


@pytest.mark.parametrize(
    ("value", "expected"),
    [("CRITICAL", Priority.CRITICAL), ("high", Priority.HIGH), (" Medium ", Priority.MEDIUM),
     (3, Priority.LOW), ("0", Priority.CRITICAL), (1.0, Priority.HIGH),
     (Priority.LOW, Priority.LOW)],
)  # fmt: skip
def test_priority_parse(value, expected):
    assert Priority.parse(value) is expected


@pytest.mark.parametrize("value", ["urgent", 4, -1, "", None, True, 1.5])
def test_priority_parse_refuses(value):
    with pytest.raises(ValueError, match="CRITICAL, HIGH, MEDIUM, LOW or 0-3"):
        Priority.parse(value)


def test_priority_steps_stay_in_range():
    assert Priority.CRITICAL.stronger() is Priority.CRITICAL
    assert Priority.LOW.weaker() is Priority.LOW
    assert Priority.MEDIUM.stronger() is Priority.HIGH and Priority.MEDIUM.weaker() is Priority.LOW


@pytest.mark.parametrize(
    ("value", "expected"),
    [("fact", "fact"), ("Preferences", "preference"), ("rule", "instruction"),
     ("other", "general"), ("hobby", "general"), (None, "general")],
)  # fmt: skip
def test_parse_category(value, expected):
    assert parse_category(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"), [(3, 3), (0, 1), (9, 5), ("4", 4), (2.6, 3), ("x", 3), (None, 3)]
)
def test_clamp_importance(value, expected):
    assert clamp_importance(value) == expected


def test_clean_tags():
    assert clean_tags(["UI", " ui ", "", "Editor"]) == ("ui", "editor")
    assert clean_tags("a, b,a") == ("a", "b")
    assert clean_tags(None) == ()
    assert len(clean_tags([f"t{i}" for i in range(40)])) == 16
