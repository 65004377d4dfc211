from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor, truncate_output
from tea_agent_mini.toolkit.registry import Toolkit, tool
from tea_agent_mini.types import ToolCall

OBJECT = {"type": "object", "properties": {}}


def make_toolkit(*funcs) -> Toolkit:
    toolkit = Toolkit()
    for func in funcs:
        toolkit.register(func.tool_spec)
    return toolkit


@tool(
    "echo",
    "Echo text.",
    {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "t"},
            "times": {"type": "integer", "description": "n"},
            "mode": {"type": "string", "enum": ["a", "b"], "description": "m"},
        },
        "required": ["text"],
    },
    concurrency_safe=True,
)
def echo(ctx, text, times=1, mode="a"):
    return text * times


@tool("as_json", "Return a dict.", OBJECT, concurrency_safe=True)
def as_json(ctx):
    return {"name": "茶", "items": [1, 2]}


@tool("boom", "Raise.", OBJECT)
def boom(ctx):
    raise KeyError("missing thing")


@tool("refuse", "Raise a ToolError.", OBJECT)
def refuse(ctx):
    raise ToolError("nope, because reasons")


@tool("writer", "Pretend to write.", OBJECT, mutates=True)
def writer(ctx):
    return "written"


@tool("big", "Lots of output.", OBJECT)
def big(ctx):
    return "".join(f"line {i:05d} " + "x" * 50 + "\n" for i in range(5000))


def run(coro):
    return asyncio.run(coro)


def call(name: str, arguments: object = None, call_id: str = "c1") -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCall(id=call_id, name=name, arguments=raw)


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_successful_call(ctx):
    executor = ToolExecutor(make_toolkit(echo), ctx)
    result = run(executor.run(call("echo", {"text": "ab", "times": 2})))
    assert result.ok and result.output == "abab"
    assert result.call_id == "c1" and result.name == "echo"
    assert not result.truncated


def test_duration_is_the_time_the_call_took(ctx):
    @tool("nap", "Sleep a little.", OBJECT)
    def nap(ctx):
        time.sleep(0.05)
        return "rested"

    @tool("nap_and_fail", "Sleep a little, then fail.", OBJECT)
    def nap_and_fail(ctx):
        time.sleep(0.05)
        raise ToolError("tired")

    executor = ToolExecutor(make_toolkit(nap, nap_and_fail), ctx)
    for name, ok in (("nap", True), ("nap_and_fail", False)):
        result = run(executor.run(call(name)))
        assert result.ok is ok and 0.04 <= result.duration < 30  # seconds, monotonic


def test_dict_output_is_json_with_unicode_kept(ctx):
    result = run(ToolExecutor(make_toolkit(as_json), ctx).run(call("as_json")))
    assert json.loads(result.output) == {"name": "茶", "items": [1, 2]}
    assert "茶" in result.output


def test_unknown_tool_lists_close_names(ctx):
    executor = ToolExecutor(make_toolkit(echo, as_json), ctx)
    result = run(executor.run(call("ecko", {"text": "x"})))
    assert not result.ok
    assert "unknown tool 'ecko'" in result.error
    assert "Did you mean: echo" in result.error


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "missing required parameter(s) 'text'"),
        ({"text": 5}, "parameter 'text' must be a string"),
        ({"text": "x", "times": "many"}, "parameter 'times' must be an integer"),
        ({"text": "x", "mode": "c"}, "parameter 'mode' must be one of"),
        ({"text": "x", "colour": "red"}, "unexpected parameter(s) 'colour'"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_arguments_are_reported_with_the_parameter(ctx, arguments, fragment):
    result = run(ToolExecutor(make_toolkit(echo), ctx).run(call("echo", arguments)))
    assert not result.ok
    assert fragment in result.error


def test_harmless_argument_slips_are_corrected(ctx):
    executor = ToolExecutor(make_toolkit(echo), ctx)
    result = run(executor.run(call("echo", {"text": "a", "times": "3", "mode": None})))
    assert result.ok and result.output == "aaa"


def test_exceptions_become_results(ctx):
    executor = ToolExecutor(make_toolkit(boom, refuse), ctx)
    crashed = run(executor.run(call("boom")))
    assert not crashed.ok and crashed.error == "KeyError: 'missing thing'"
    refused = run(executor.run(call("refuse")))
    assert not refused.ok and refused.error == "nope, because reasons"
    assert refused.content_for_model == "Error: nope, because reasons"


def test_output_is_truncated_with_a_marker(ctx):
    executor = ToolExecutor(make_toolkit(big), ctx, max_output_bytes=4096)
    result = run(executor.run(call("big")))
    assert result.ok and result.truncated
    assert len(result.output.encode()) <= 4096
    assert "... [truncated" in result.output and "lines)] ..." in result.output
    assert result.output.startswith("line 00000 ")
    assert result.output.rstrip("\n").endswith("line 04999 " + "x" * 50)


def test_truncate_output_keeps_short_text_and_cuts_on_lines():
    assert truncate_output("short", 100) == ("short", False)
    text = "\n".join(f"row {i}" for i in range(1000))
    cut, truncated = truncate_output(text, 500)
    assert truncated and len(cut.encode()) <= 500
    head, tail = cut.split("\n... [truncated ")
    assert all(line.startswith("row ") for line in head.split("\n"))
    assert tail.split("] ...\n", 1)[1].startswith("row ")
    omitted_lines = int(tail.split("(")[1].split(" lines")[0].replace(",", ""))
    assert omitted_lines == 1000 - len(head.split("\n")) - len(tail.split("\n")) + 1


def test_truncate_output_never_splits_a_multibyte_character():
    cut, truncated = truncate_output("茶" * 10000, 1000)
    assert truncated and "\ufffd" not in cut and len(cut.encode()) <= 1000


def test_approval_never_refuses_mutating_tools_only(workspace, tea_home):
    ctx = ToolContext(workspace=workspace, home=tea_home, approval="never")
    executor = ToolExecutor(make_toolkit(writer, echo), ctx)
    refused = run(executor.run(call("writer")))
    assert not refused.ok and "read-only mode" in refused.error
    assert run(executor.run(call("echo", {"text": "x"}))).ok


def test_approval_never_still_allows_reading_files(workspace, tea_home):
    (workspace / "a.txt").write_text("hello\n")
    ctx = ToolContext(workspace=workspace, home=tea_home, approval="never")
    executor = ToolExecutor(Toolkit.load(["files.files"]), ctx)
    read = run(executor.run(call("toolkit_file", {"action": "read", "filename": "a.txt"})))
    assert read.ok and read.output == "hello\n"
    write = {"action": "write", "filename": "a.txt", "content": "x"}
    assert not run(executor.run(call("toolkit_file", write))).ok
    assert (workspace / "a.txt").read_text() == "hello\n"


@pytest.mark.parametrize("answer", [True, False])
def test_approval_ask_calls_the_callback(workspace, tea_home, answer):
    asked = []

    def approve(name, arguments_json):
        asked.append((name, json.loads(arguments_json)))
        return answer

    ctx = ToolContext(workspace=workspace, home=tea_home, approval="ask", approve=approve)
    result = run(ToolExecutor(make_toolkit(writer), ctx).run(call("writer")))
    assert asked == [("writer", {})]
    assert result.ok is answer
    if not answer:
        assert "declined" in result.error


def test_approval_ask_without_a_callback_refuses(workspace, tea_home):
    ctx = ToolContext(workspace=workspace, home=tea_home, approval="ask")
    result = run(ToolExecutor(make_toolkit(writer), ctx).run(call("writer")))
    assert not result.ok and "approval" in result.error


def test_safe_calls_run_in_parallel_and_keep_their_order(ctx):
    barrier = threading.Barrier(3, timeout=10)

    @tool(
        "meet",
        "Wait for the others.",
        {"type": "object", "properties": {"n": {"type": "integer", "description": "n"}}},
        concurrency_safe=True,
    )
    def meet(ctx, n):
        barrier.wait()  # only passes when all three calls run at the same time
        return f"done {n}"

    executor = ToolExecutor(make_toolkit(meet), ctx, max_parallel=4)
    calls = [call("meet", {"n": i}, call_id=f"id{i}") for i in range(3)]
    results = run(executor.run_many(calls))
    assert [r.output for r in results] == ["done 0", "done 1", "done 2"]
    assert [r.call_id for r in results] == ["id0", "id1", "id2"]


class WatchedPool(ThreadPoolExecutor):
    """An event loop's default executor (``asyncio.to_thread`` runs tools there) that counts
    the jobs handed to it and not finished yet."""

    def __init__(self) -> None:
        super().__init__(max_workers=8)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.loop.set_default_executor(self)

    def submit(self, fn, /, *args, **kwargs):
        with self.lock:
            self.in_flight += 1
        future = super().submit(fn, *args, **kwargs)
        # runs in the worker as the job ends, before the event loop hears of it
        future.add_done_callback(lambda _: self._done())
        return future

    def _done(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def settle(self) -> None:
        """From a worker: let the event loop run everything it has ready."""

        async def spin() -> None:
            for _ in range(20):
                await asyncio.sleep(0)

        assert self.loop is not None
        asyncio.run_coroutine_threadsafe(spin(), self.loop).result(timeout=10)


def test_unsafe_calls_run_one_at_a_time_in_order(ctx):
    # Each unsafe call, while it runs, lets the event loop run all it has ready, then counts
    # the jobs handed to worker threads and not finished. An executor that ran these calls
    # together would have handed over the next one by then, however slow the machine: nothing
    # here waits for time to pass.
    pool = WatchedPool()
    log = []

    def body(name):
        pool.settle()
        with pool.lock:
            overlap = pool.in_flight
            log.append(name)
        return f"{name} saw {overlap}"

    @tool("first", "d", OBJECT, mutates=True)
    def first(ctx):
        return body("first")

    @tool("second", "d", OBJECT)
    def second(ctx):
        return body("second")

    executor = ToolExecutor(make_toolkit(first, second, echo), ctx)
    calls = [call("first"), call("echo", {"text": "e"}), call("second"), call("first")]

    async def scenario():
        pool.install()
        return await executor.run_many(calls)

    results = run(scenario())
    assert [r.output for r in results] == ["first saw 1", "e", "second saw 1", "first saw 1"]
    assert log == ["first", "second", "first"]


def test_parallelism_is_bounded_by_max_parallel(ctx):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    release = threading.Event()

    @tool(
        "hold",
        "d",
        {"type": "object", "properties": {"n": {"type": "integer", "description": "n"}}},
        concurrency_safe=True,
    )
    def hold(ctx, n):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            if state["peak"] >= 2:
                release.set()
        release.wait(timeout=10)
        with lock:
            state["now"] -= 1
        return str(n)

    executor = ToolExecutor(make_toolkit(hold), ctx, max_parallel=2)
    results = run(executor.run_many([call("hold", {"n": i}) for i in range(6)]))
    assert [r.output for r in results] == [str(i) for i in range(6)]
    assert state["peak"] == 2


def test_cancellation_propagates(ctx):
    started = threading.Event()
    release = threading.Event()

    @tool("block", "d", OBJECT)
    def block(ctx):
        started.set()
        release.wait(timeout=10)
        return "late"

    executor = ToolExecutor(make_toolkit(block), ctx)

    async def scenario():
        task = asyncio.create_task(executor.run(call("block")))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        try:
            await task
        finally:
            release.set()

    with pytest.raises(asyncio.CancelledError):
        run(scenario())


def test_one_executor_works_across_event_loops(ctx):
    executor = ToolExecutor(make_toolkit(echo), ctx, max_parallel=1)
    for _ in range(2):
        results = run(executor.run_many([call("echo", {"text": str(i)}) for i in range(3)]))
        assert [r.output for r in results] == ["0", "1", "2"]


def test_async_tools_are_awaited_on_the_turns_event_loop(ctx):
    seen = {}

    @tool("fetchish", "d", OBJECT, concurrency_safe=True)
    async def fetchish(ctx):
        seen["loop"] = asyncio.get_running_loop()
        seen["thread"] = threading.current_thread()
        await asyncio.sleep(0)
        return {"ok": True}

    executor = ToolExecutor(make_toolkit(fetchish), ctx)

    async def scenario():
        result = await executor.run(call("fetchish"))
        return result, asyncio.get_running_loop()

    result, loop = run(scenario())
    assert result.ok and json.loads(result.output) == {"ok": True}
    assert seen["loop"] is loop
    assert seen["thread"] is threading.main_thread()


def test_a_cancelled_turn_cancels_an_async_tool_and_signals_running_commands(ctx):
    state = {"cancelled": False}

    @tool("waiter", "d", OBJECT)
    async def waiter(ctx):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "late"

    executor = ToolExecutor(make_toolkit(waiter), ctx)

    async def scenario():
        task = asyncio.create_task(executor.run(call("waiter")))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        run(scenario())
    assert state["cancelled"] and ctx.cancel_event.is_set()


def test_an_async_tools_failure_becomes_a_result(ctx):
    @tool("sour", "d", OBJECT)
    async def sour(ctx):
        raise ToolError("no luck")

    result = run(ToolExecutor(make_toolkit(sour), ctx).run(call("sour")))
    assert not result.ok and result.error == "no luck"
