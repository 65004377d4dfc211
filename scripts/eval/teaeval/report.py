"""The results as a table for people and as one JSON object for programs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .metrics import Summary, TaskResult, Traffic, percent, summarize, summary_line

COLUMNS = ("task", "result", "reqs", "bg", "first", "reuse", "prefix", "secs", "reason")
REASON_CHARS = 90


def first_cell(traffic: Traffic) -> str:
    if traffic.first_prompt_tokens is None:
        return "-"
    approx = "~" if traffic.first_prompt_estimated else ""
    return f"{approx}{traffic.first_prompt_tokens:,}"


def prefix_cell(traffic: Traffic) -> str:
    if not traffic.prefix:
        return "-"
    cell = f"{traffic.prefix_kept}/{len(traffic.prefix)}"
    if traffic.prefix_kept < len(traffic.prefix):
        cell += f" (min {percent(traffic.prefix_min)})"
    return cell


def row(result: TaskResult) -> tuple[str, ...]:
    traffic = result.traffic
    reason = result.reason if len(result.reason) <= REASON_CHARS else result.reason[:89] + "…"
    return (
        result.name,
        "pass" if result.passed else "FAIL",
        str(traffic.requests),
        str(traffic.background),
        first_cell(traffic),
        percent(traffic.cache_reuse),
        prefix_cell(traffic),
        f"{result.seconds:.1f}",
        reason,
    )


def table(results: Sequence[TaskResult]) -> str:
    rows = [COLUMNS, *(row(result) for result in results)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS) - 1)]
    lines = []
    for cells in rows:
        padded = [cell.ljust(width) for cell, width in zip(cells[:-1], widths, strict=True)]
        lines.append("  ".join([*padded, cells[-1]]).rstrip())
    return "\n".join(lines)


def text_report(results: Sequence[TaskResult]) -> str:
    return f"{table(results)}\n\n{summary_line(summarize(results))}"


def traffic_json(traffic: Traffic) -> dict[str, Any]:
    return {
        "requests": traffic.requests,
        "background_requests": traffic.background,
        "failed_requests": traffic.failed_requests,
        "first_prompt_tokens": traffic.first_prompt_tokens,
        "first_prompt_estimated": traffic.first_prompt_estimated,
        "cache_reuse": traffic.cache_reuse,
        "reuse_cached_tokens": traffic.reuse_cached,
        "reuse_prompt_tokens": traffic.reuse_prompt,
        "prefix": {
            "kept": traffic.prefix_kept,
            "steps": len(traffic.prefix),
            "min_fraction": traffic.prefix_min,
            "detail": [
                {
                    "index": step.index,
                    "fraction": round(step.fraction, 4),
                    "tools_same": step.tools_same,
                    "extends": step.extends,
                }
                for step in traffic.prefix
            ],
        },
        "request_detail": [dataclasses.asdict(stat) for stat in traffic.details],
    }


def result_json(result: TaskResult) -> dict[str, Any]:
    return {
        "name": result.name,
        "passed": result.passed,
        "reason": result.reason,
        "seconds": round(result.seconds, 3),
        "problem": result.problem,
        "exit_codes": result.exit_codes,
        "answers": result.answers,
        **traffic_json(result.traffic),
    }


def summary_json(summary: Summary) -> dict[str, Any]:
    data = dataclasses.asdict(summary)
    data["failed"] = summary.failed
    data["line"] = summary_line(summary)
    return data


def json_report(results: Sequence[TaskResult], run: dict[str, Any]) -> dict[str, Any]:
    """``run`` describes the run itself (model, endpoint, CLI, seed)."""
    return {
        "run": run,
        "tasks": [result_json(result) for result in results],
        "summary": summary_json(summarize(results)),
    }
