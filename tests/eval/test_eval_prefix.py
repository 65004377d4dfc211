"""The per-request prefix check."""

from __future__ import annotations

from teaeval.prefix import PrefixStep, prefix_steps, serialize_messages

SYSTEM = {"role": "system", "content": "You are a helpful agent."}
USER = {"role": "user", "content": "write word.txt"}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
TOOLS = [{"type": "function", "function": {"name": "toolkit_file"}}]


def body(*messages, tools=TOOLS):
    return {"messages": list(messages), "tools": tools}


def test_a_request_that_appends_to_the_previous_one_extends_it():
    [step] = prefix_steps([body(SYSTEM, USER), body(SYSTEM, USER, CALL, RESULT)])
    assert step.extends and step.fraction == 1.0 and step.tools_same
    assert step.index == 1
    assert step.previous_chars == len(serialize_messages([SYSTEM, USER]))


def test_key_order_on_the_wire_does_not_count_as_a_change():
    reordered = {"content": "You are a helpful agent.", "role": "system"}
    [step] = prefix_steps([body(SYSTEM, USER), body(reordered, USER, CALL)])
    assert step.extends


def test_a_changed_system_prompt_breaks_the_prefix_early():
    changed = {"role": "system", "content": "You are a helpful agent. It is 10:02."}
    [step] = prefix_steps([body(SYSTEM, USER), body(changed, USER, CALL)])
    assert not step.extends
    assert 0 < step.fraction < 0.7


def test_a_rewritten_last_message_keeps_most_of_the_prefix():
    cut = {"role": "user", "content": "[... cut ...]"}
    [step] = prefix_steps([body(SYSTEM, USER), body(SYSTEM, cut, CALL)])
    assert not step.extends and 0.3 < step.fraction < 1.0


def test_changed_tools_break_it_even_when_the_messages_extend():
    [step] = prefix_steps([body(SYSTEM, USER), body(SYSTEM, USER, CALL, tools=[])])
    assert not step.tools_same and not step.extends and step.fraction == 1.0


def test_one_step_per_consecutive_pair():
    steps = prefix_steps([body(SYSTEM), body(SYSTEM, USER), body(SYSTEM, USER, CALL)])
    assert [s.index for s in steps] == [1, 2]
    assert prefix_steps([body(SYSTEM)]) == [] and prefix_steps([]) == []


def test_bodies_without_messages_compare_as_empty():
    [step] = prefix_steps([None, {"messages": "not a list"}])
    assert step == PrefixStep(index=1, common_chars=0, previous_chars=0, tools_same=True)
    assert step.fraction == 1.0
