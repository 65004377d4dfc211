"""Per-task traffic numbers, the summary arithmetic and the report's shapes."""

from __future__ import annotations

import json

from teaeval.metrics import TaskResult, Traffic, summarize, summary_line, traffic
from teaeval.proxy import Exchange
from teaeval.report import json_report, table, text_report
from teaeval.usage import TokenCounts

CHAT = "/chat/completions"


def exchange(lane="main", prompt=None, cached=None, messages=("hi",), path=CHAT, status=200):
    body = {"messages": [{"role": "user", "content": m} for m in messages]}
    return Exchange(
        index=0,
        tag="t.1",
        lane=lane,
        method="POST" if path == CHAT else "GET",
        path=path,
        body=body,
        started=0.0,
        status=status,
        tokens=TokenCounts(prompt=prompt, completion=5 if prompt else None, cached=cached),
        seconds=0.5,
    )


def test_reuse_counts_turn_requests_two_to_n_only():
    session = [
        exchange(prompt=1000, cached=0, messages=["a"]),
        exchange(lane="cheap", prompt=300, cached=0),
        exchange(prompt=1100, cached=990, messages=["a", "b"]),
        exchange(prompt=1200, cached=1090, messages=["a", "b", "c"]),
        exchange(path="/models"),
    ]
    result = traffic([session])
    assert (result.requests, result.background) == (3, 1)
    assert result.first_prompt_tokens == 1000 and not result.first_prompt_estimated
    assert (result.reuse_cached, result.reuse_prompt) == (2080, 2300)
    assert abs(result.cache_reuse - 2080 / 2300) < 1e-9
    assert result.prefix_kept == 2 and len(result.prefix) == 2
    assert [d.lane for d in result.details] == ["main", "cheap", "main", "main"]


def test_requests_without_usage_are_left_out_and_the_first_is_estimated():
    result = traffic([[exchange(messages=["x" * 400]), exchange(prompt=50)]])
    assert result.first_prompt_estimated and result.first_prompt_tokens >= 100
    assert result.cache_reuse is None  # request 2 reported no cached count


def test_the_prefix_is_checked_within_a_session_not_across_sessions():
    first = [exchange(prompt=10, cached=0, messages=["remember teal"])]
    second = [
        exchange(prompt=10, cached=8, messages=["what colour?"]),
        exchange(prompt=12, cached=10, messages=["what colour?", "teal"]),
    ]
    result = traffic([first, second])
    assert len(result.prefix) == 1 and result.prefix_kept == 1
    assert result.requests == 3
    assert (result.reuse_cached, result.reuse_prompt) == (18, 22)
    assert [d.session for d in result.details] == [1, 2, 2]


def test_failed_requests_are_counted():
    result = traffic([[exchange(status=500), exchange(prompt=5)]])
    assert result.failed_requests == 1


def task(name, passed, first, cached, prompt, seconds, estimated=False):
    t = Traffic(
        requests=3,
        first_prompt_tokens=first,
        first_prompt_estimated=estimated,
        reuse_cached=cached,
        reuse_prompt=prompt,
    )
    return TaskResult(name, passed, "why", seconds, t)


def test_the_summary_takes_medians_and_pools_the_cache_numbers():
    results = [
        task("a", True, 2000, 900, 1000, 10.0),
        task("b", False, 2500, 0, 0, 50.0),
        task("c", True, 1000, 1900, 2000, 30.0),
        task("d", True, None, 0, 0, 20.0),
    ]
    summary = summarize(results)
    assert (summary.tasks, summary.passed, summary.failed) == (4, 3, 1)
    assert summary.median_first_prompt == 2000  # of the three known
    assert summary.cache_reuse == 2800 / 3000  # pooled, not a mean of ratios
    assert summary.median_seconds == 25.0 and summary.total_seconds == 110.0
    line = summary_line(summary)
    assert line.startswith("4 tasks: 3 passed, 1 failed; median first request 2,000 tokens;")
    assert "cache reuse 93 %;" in line and "25 s median (110 s in all)" in line


def test_the_summary_of_nothing_says_not_available():
    line = summary_line(summarize([task("a", False, None, 0, 0, 1.0)]))
    assert "median first request n/a; cache reuse n/a" in line
    assert summary_line(summarize([])).startswith("0 tasks: 0 passed, 0 failed")


def test_an_estimated_first_request_is_marked():
    summary = summarize([task("a", True, 1234, 0, 0, 1.0, estimated=True)])
    assert "median first request ~1,234 tokens" in summary_line(summary)


def test_the_table_and_json_carry_every_column():
    session = [
        exchange(prompt=2130, cached=0, messages=["hello"]),
        exchange(prompt=2200, cached=2100, messages=["bye"]),
    ]
    result = TaskResult("write_word", True, "word.txt holds pineapple", 4.2, traffic([session]))
    result.exit_codes, result.answers = [0], ["Done."]
    lines = table([result]).splitlines()
    assert lines[0].split() == [
        "task",
        "result",
        "reqs",
        "bg",
        "first",
        "reuse",
        "prefix",
        "secs",
        "reason",
    ]
    assert lines[1].split()[:8] == ["write_word", "pass", "2", "0", "2,130", "95", "%", "0/1"]
    assert "(min " in lines[1] and lines[1].endswith("word.txt holds pineapple")
    assert "1 passed, 0 failed" in text_report([result])
    data = json.loads(json.dumps(json_report([result], {"model": "m"})))
    entry = data["tasks"][0]
    assert entry["first_prompt_tokens"] == 2130 and entry["cache_reuse"] == 2100 / 2200
    assert entry["prefix"]["steps"] == 1 and entry["prefix"]["detail"][0]["extends"] is False
    assert len(entry["request_detail"]) == 2 and data["summary"]["passed"] == 1
    assert data["run"] == {"model": "m"} and data["summary"]["line"].startswith("1 tasks")
