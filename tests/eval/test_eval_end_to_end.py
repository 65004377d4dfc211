"""The whole chain: run.py's main -> proxy -> the agent CLI in a sandbox -> the scripted model,
then the judges. One task is done right (a tool call writes the file), one answers wrongly."""

from __future__ import annotations

import json
import shlex

from teaeval.cli import main
from teaeval.runner import find_tasks

from tests.fakes import Reply, ToolCallSpec


def test_two_tasks_against_the_scripted_model(scripted_server, agent_cli, capsys):
    word_task, count_task = find_tasks(["write_word", "count_lines"])
    word = word_task.case("e2e").facts["word"]
    lines = count_task.case("e2e").facts["lines"]
    write = {"action": "write", "filename": "word.txt", "content": word}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", write)], prompt_tokens=2130),
        Reply(text="Done: word.txt holds the word."),
        Reply(text=f"data.txt has {lines + 1} lines."),
    )
    argv = ["--base-url", scripted_server.base_url, "--model", "scripted-model"]
    argv += ["--tasks", "write_word,count_lines", "--seed", "e2e", "--json", "--timeout", "90"]
    argv += ["--max-context", "32768", "--cli", shlex.join(agent_cli)]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)

    wrote, counted = report["tasks"]
    assert wrote["passed"], wrote
    assert wrote["reason"] == f"word.txt holds {word}" and wrote["answers"] == [
        "Done: word.txt holds the word."
    ]
    assert wrote["exit_codes"] == [0] and wrote["requests"] == 2
    assert wrote["first_prompt_tokens"] == 2130 and not wrote["first_prompt_estimated"]
    assert wrote["background_requests"] >= 1  # the title, on the cheap lane
    assert wrote["prefix"]["steps"] == 1 and wrote["prefix"]["kept"] == 1
    # the scripted server reports the prefix its previous request shared, as llama.cpp does
    assert wrote["cache_reuse"] >= 0.9
    turn = [r for r in wrote["request_detail"] if r["lane"] == "main"]
    assert [r["status"] for r in turn] == [200, 200] and all(r["seconds"] > 0 for r in turn)

    assert not counted["passed"] and str(lines) in counted["reason"]
    assert counted["requests"] == 1 and counted["prefix"]["steps"] == 0

    assert scripted_server.pending == 0
    summary = report["summary"]
    assert (summary["tasks"], summary["passed"], summary["failed"]) == (2, 1, 1)
    assert summary["line"].startswith("2 tasks: 1 passed, 1 failed;")
    assert report["run"]["seed"] == "e2e" and report["run"]["cli"] == list(agent_cli)
