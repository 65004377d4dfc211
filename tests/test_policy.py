"""The one approval decision every path that changes state asks."""

from __future__ import annotations

import pytest

from tea_agent_mini.policy import decide


@pytest.mark.parametrize(
    ("policy", "changes", "can_ask", "confirmed", "verdict"),
    [
        ("auto", True, False, False, "run"),
        ("never", False, False, False, "run"),  # reading is never refused
        ("never", True, True, True, "refuse"),  # not even a confirmation lifts read-only
        ("ask", True, True, False, "ask"),
        ("ask", True, False, False, "refuse"),  # nobody to ask: refused at once, not hung
        ("ask", True, False, True, "run"),
        ("ask", False, False, False, "run"),
    ],
)
def test_the_decision_table(policy, changes, can_ask, confirmed, verdict):
    decision = decide(policy, "toolkit_exec", changes=changes, can_ask=can_ask, confirmed=confirmed)
    assert decision.verdict == verdict
    assert (decision.reason != "") == (verdict == "refuse")


def test_refusals_name_the_subject_and_the_policy():
    never = decide("never", "toolkit_exec", changes=True).reason
    assert never.startswith("toolkit_exec is not available in read-only mode (approval: never)")
    ask = decide("ask", "a shell task", changes=True).reason
    assert ask.startswith("a shell task needs the user's approval (approval: ask)")
