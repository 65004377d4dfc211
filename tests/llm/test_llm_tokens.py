from __future__ import annotations

import pytest

from tea_agent_mini.llm.tokens import (
    IMAGE_TOKENS,
    TokenCalibrator,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_text_tokens,
    estimate_tools_tokens,
)

ENGLISH = (
    "The quick brown fox jumps over the lazy dog. Tea is an aromatic beverage prepared by "
    "pouring hot or boiling water over cured or fresh leaves of Camellia sinensis."
)  # 33 words: real tokenizers give about 35-40 tokens
CHINESE = (
    "茶是一种用茶树的叶子制成的饮料，起源于中国，已有数千年的历史。"  # 31 chars: ~20-35 tokens
)


def test_empty_text_is_zero():
    assert estimate_text_tokens("") == 0
    assert estimate_messages_tokens([]) == 0


def test_english_is_about_four_characters_per_token():
    estimate = estimate_text_tokens(ENGLISH)
    assert estimate == -(-len(ENGLISH) // 4)
    assert 30 <= estimate <= 50


def test_chinese_is_about_one_and_a_half_characters_per_token():
    estimate = estimate_text_tokens(CHINESE)
    assert estimate == 21  # ceil(31 / 1.5), the full-width punctuation counted as CJK
    assert estimate > 2 * estimate_text_tokens("x" * len(CHINESE))


def test_other_scripts_and_mixed_text():
    assert estimate_text_tokens("Привет, как дела?") == pytest.approx(17 / 2 + 0.5, abs=2)
    mixed = ENGLISH + CHINESE
    assert estimate_text_tokens(mixed) == pytest.approx(
        estimate_text_tokens(ENGLISH) + estimate_text_tokens(CHINESE), abs=2
    )
    assert estimate_text_tokens("日本語のテキスト") >= 5
    assert estimate_text_tokens("한국어 텍스트") >= 4


def test_message_overhead_and_content():
    assert estimate_message_tokens({"role": "user", "content": ""}) == 4
    assert estimate_message_tokens({"role": "user", "content": None}) == 4
    assert estimate_message_tokens({"role": "user", "content": "abcdefgh"}) == 6


def test_images_count_about_85_each():
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "abcd"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 90000}},
            {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
        ],
    }
    assert estimate_message_tokens(message) == 4 + 1 + 2 * IMAGE_TOKENS


def test_tool_calls_count_names_and_arguments():
    arguments = '{"path": "' + "a" * 400 + '"}'
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {"name": "toolkit_file", "arguments": arguments},
            }
        ],
    }
    plain = estimate_message_tokens({"role": "assistant", "content": None})
    assert estimate_message_tokens(message) - plain >= len(arguments) // 4


def test_tool_result_and_reasoning_are_counted():
    base = {"role": "tool", "content": "x" * 40}
    assert estimate_message_tokens(
        {**base, "tool_call_id": "call_abcdefgh"}
    ) > estimate_message_tokens(base)
    assert (
        estimate_message_tokens({"role": "assistant", "content": "", "reasoning_content": "y" * 80})
        == 24
    )


def test_messages_total_and_tools():
    messages = [{"role": "system", "content": "s" * 40}, {"role": "user", "content": "u" * 40}]
    assert estimate_messages_tokens(messages) == 2 * (4 + 10) + 3
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]
    assert 10 <= estimate_tools_tokens(tools) <= 30
    assert estimate_tools_tokens(None) == 0


def test_calibrator_learns_and_is_bounded():
    calibrator = TokenCalibrator(smoothing=0.5)
    assert calibrator.apply(100) == 100
    calibrator.observe(100, 150)
    assert calibrator.ratio == 1.5
    calibrator.observe(100, 110)
    assert calibrator.ratio == pytest.approx(1.3)
    assert calibrator.apply(100) == 130
    for _ in range(30):
        calibrator.observe(100, 10_000)
    assert calibrator.ratio == pytest.approx(2.0)
    for _ in range(30):
        calibrator.observe(100, 1)
    assert calibrator.ratio == pytest.approx(0.5, abs=1e-6)


def test_calibrator_ignores_useless_samples():
    calibrator = TokenCalibrator()
    calibrator.observe(0, 100)
    calibrator.observe(100, 0)
    assert calibrator.samples == 0 and calibrator.ratio == 1.0
    assert calibrator.apply(0) == 0
    messages = [{"role": "user", "content": "x" * 400}]
    calibrator.observe(estimate_messages_tokens(messages), 2 * estimate_messages_tokens(messages))
    assert calibrator.estimate_messages(messages) == 2 * estimate_messages_tokens(messages)
