"""Keyword terms (words and CJK bigrams), Jaccard similarity and content hashes."""

from __future__ import annotations

import pytest

from tea_agent_mini.terms import content_hash, fact_markers, jaccard, keyword_terms, lost_facts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Deploy to the Raspberry Pi", {"deploy", "raspberry", "pi"}),
        ("editors", {"editor"}),
        ("process status", {"process", "status"}),
        ("用户喜欢绿茶", {"用户", "户喜", "喜欢", "欢绿", "绿茶"}),
        ("茶", {"茶"}),
        ("用Python写脚本", {"用", "python", "写脚", "脚本"}),
        ("ＡＢＣ１２３", {"abc123"}),
        ("the and of", set()),
        ("", set()),
    ],
)
def test_keyword_terms(text, expected):
    assert keyword_terms(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ({"a", "b"}, {"a", "b"}, 1.0),
        ({"a", "b"}, {"b", "c"}, 1 / 3),
        ({"a"}, {"b"}, 0.0),
        (set(), {"a"}, 0.0),
        (set(), set(), 0.0),
    ],
)
def test_jaccard(a, b, expected):
    assert jaccard(a, b) == pytest.approx(expected)
    assert jaccard(b, a) == pytest.approx(expected)


def test_cjk_jaccard_of_near_duplicate_sentences():
    a = keyword_terms("用户喜欢喝绿茶")
    b = keyword_terms("用户很喜欢喝绿茶")
    # 用户 喜欢 欢喝 喝绿 绿茶 shared; 户喜 only in a; 户很 很喜 only in b
    assert jaccard(a, b) == pytest.approx(5 / 8)


def test_content_hash_ignores_case_width_and_spacing():
    assert content_hash("Use  Python\n3.11 ") == content_hash("use python 3.11")
    assert content_hash("ＡＢＣ") == content_hash("abc")
    assert content_hash("use python 3.11") != content_hash("use python 3.12")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Apollo uses PostgreSQL 15 on db.example.com",
            {"apollo", "postgresql", "15", "db.example.com"},
        ),
        ("The user likes tea, e.g. green tea", set()),
        ("用Python写脚本", {"python"}),
        ("server at 10.0.0.5:8080", {"10.0.0.5:8080"}),
    ],
)
def test_fact_markers(text, expected):
    assert fact_markers(text) == expected


def test_lost_facts_are_the_markers_the_kept_text_lacks():
    assert lost_facts("staging IP is 10.0.0.5", "production IP is 10.0.0.9") == {"10.0.0.5"}
    assert lost_facts("Deploys go to staging", "deploys go to staging, then production") == set()
