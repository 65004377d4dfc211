"""Benchmark the web server: cold start, idle memory, 50 concurrent streaming chats, per-chunk cost.

    python scripts/bench/bench_server.py             # human-readable
    python scripts/bench/bench_server.py --json      # the same numbers as one JSON object

Runs ``python -m tea_agent_mini.server`` as a subprocess in a throw-away home whose model is the
scripted server (tests/fakes), running in this process. Measures:

* cold start: from spawning the process to the first 200 on ``/health`` (median of a few runs);
* idle RSS of the server process (VmRSS from /proc, Linux only);
* 50 concurrent streaming ``/v1/chat/completions``: wall time, time to first token, peak RSS,
  and event-loop responsiveness seen from outside (``/health`` round trips during the load);
* added latency per streamed chunk: when the scripted model writes a chunk vs when the client
  receives that token through the server, minus the same measured straight from the model.

Numbers only; no thresholds are asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: an installed tea_agent_mini (run.py's venv) comes first

import httpx  # noqa: E402
import yaml  # noqa: E402
from timing import fresh_env, package_dir  # noqa: E402 - beside this script

from tests.fakes import handler as fake_handler  # noqa: E402
from tests.fakes.scripted_server import Reply, ScriptedServer  # noqa: E402

CHUNK_GAP = 0.02


class ChunkClock:
    """Records when the scripted model writes each content chunk (keyed by its text)."""

    def __init__(self) -> None:
        self.sent: dict[str, float] = {}
        self._lock = threading.Lock()

    def install(self) -> None:
        original = fake_handler.ScriptedHandler._write_chunk
        clock = self

        def write_chunk(handler: Any, data: bytes) -> None:
            original(handler, data)
            now = time.perf_counter()
            for text in _content_of(data):
                with clock._lock:
                    clock.sent.setdefault(text, now)

        fake_handler.ScriptedHandler._write_chunk = write_chunk


def _content_of(frame: bytes) -> list[str]:
    texts = []
    for line in frame.decode("utf-8", "ignore").splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                content = (choice.get("delta") or {}).get("content")
                if content:
                    texts.append(content)
    return texts


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def write_home(home: Path, model_url: str) -> None:
    config = {
        "main_model": {"api_url": model_url, "model_name": "scripted-model", "max_retries": 0},
        "agent": {"workspace": str(home)},
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


class ServerProcess:
    """``python -m tea_agent_mini.server``; with ``lag_file``, the same app started by this
    script with an event-loop lag monitor that keeps writing its samples to that file."""

    def __init__(self, home: Path, lag_file: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = fresh_env(TEA_AGENT_HOME=str(home))
        command = [sys.executable, "-m", "tea_agent_mini.server", "--port", str(self.port)]
        if lag_file is not None:
            command = [sys.executable, __file__, "--serve", str(self.port), str(lag_file)]
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            env=env,
            cwd=home,  # ``-m`` imports from the working directory first
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.ready_after = self._wait_ready()

    def _wait_ready(self) -> float:
        with httpx.Client(timeout=1) as client:
            while self.process.poll() is None:
                try:
                    if client.get(self.url + "/health").status_code == 200:
                        return time.perf_counter() - self.started
                except httpx.TransportError:
                    time.sleep(0.002)
        raise RuntimeError("the server exited during startup")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def serve_with_lag_monitor(port: int, lag_file: Path) -> None:
    """Run the server as ``serve()`` does, plus a task that measures how late a 10 ms sleep
    wakes up (the event loop's latency) and writes ``[wall time, lag]`` pairs to ``lag_file``."""
    from tea_agent_mini.config import load_config
    from tea_agent_mini.runtime import Runtime
    from tea_agent_mini.server.app import build_server, create_app

    runtime = Runtime(load_config())
    runtime.store  # noqa: B018 - opened before serving, as serve() does
    server = build_server(create_app(runtime), "127.0.0.1", port)
    samples: list[tuple[float, float]] = []

    async def monitor() -> None:
        while not server.should_exit:
            started = time.perf_counter()
            await asyncio.sleep(0.01)
            samples.append((time.time(), time.perf_counter() - started - 0.01))
            if len(samples) % 20 == 0:
                lag_file.write_text(json.dumps(samples))

    async def run() -> None:
        watcher = asyncio.create_task(monitor())
        await server.serve()
        watcher.cancel()

    asyncio.run(run())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def bench_cold_start(home: Path, runs: int) -> dict[str, Any]:
    times, idle = [], []
    for _ in range(runs):
        server = ServerProcess(home)
        times.append(server.ready_after)
        time.sleep(1.0)
        idle.append(rss_mb(server.process.pid))
        server.stop()
    rss = [r for r in idle if r is not None]
    return {
        "cold_start_s_median": statistics.median(times),
        "cold_start_s_min": min(times),
        "idle_rss_mb": statistics.median(rss) if rss else None,
    }


async def _stream_chat(client: httpx.AsyncClient, text: str) -> tuple[float, float, int]:
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "stream": True}
    started = time.perf_counter()
    first, chunks = 0.0, 0
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: {"):
                chunks += 1
                if not first:
                    first = time.perf_counter() - started
    return first, time.perf_counter() - started, chunks


async def _probe(client: httpx.AsyncClient, stop: asyncio.Event, samples: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await client.get("/health")
        samples.append(time.perf_counter() - started)
        await asyncio.sleep(0.01)


async def _load(url: str, pid: int, streams: int, lag_file: Path) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        stop, probes, peak = asyncio.Event(), [], [rss_mb(pid) or 0.0]

        async def watch_rss() -> None:
            while not stop.is_set():
                peak.append(rss_mb(pid) or 0.0)
                await asyncio.sleep(0.05)

        side = [asyncio.create_task(_probe(client, stop, probes)), asyncio.create_task(watch_rss())]
        window = time.time()
        started = time.perf_counter()
        results = await asyncio.gather(*(_stream_chat(client, f"chat {i}") for i in range(streams)))
        wall = time.perf_counter() - started
        window = (window, time.time())
        stop.set()
        await asyncio.gather(*side)
        await asyncio.sleep(0.5)  # the monitor writes its samples every 0.2 s
    lags = [lag for at, lag in json.loads(lag_file.read_text()) if window[0] <= at <= window[1]]
    firsts = [r[0] for r in results]
    return {
        "concurrent_streams": streams,
        "concurrent_wall_s": wall,
        "chunks_per_stream": statistics.median(r[2] for r in results),
        "first_token_s_p50": percentile(firsts, 0.5),
        "first_token_s_p95": percentile(firsts, 0.95),
        "peak_rss_mb": max(peak) if any(peak) else None,
        "loop_lag_ms_p50": percentile(lags, 0.5) * 1000,
        "loop_lag_ms_p95": percentile(lags, 0.95) * 1000,
        "loop_lag_ms_max": max(lags, default=0.0) * 1000,
        "health_rtt_ms_p50": percentile(probes, 0.5) * 1000,
        "health_rtt_ms_p95": percentile(probes, 0.95) * 1000,
        "health_rtt_ms_max": max(probes, default=0.0) * 1000,
    }


def first_chat(url: str) -> dict[str, Any]:
    """The first chat after start (imports and tool loading may still be under way)."""
    body = {"model": "m", "messages": [{"role": "user", "content": "first"}], "stream": False}
    started = time.perf_counter()
    httpx.post(url + "/v1/chat/completions", json=body, timeout=60).raise_for_status()
    return {"first_chat_s": time.perf_counter() - started}


def _arrivals(url: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> dict:
    """Token text -> arrival time, for one streamed chat."""
    arrived: dict[str, float] = {}
    client = httpx.Client(timeout=60)
    with client, client.stream("POST", url + path, json=body, headers=headers) as response:
        for line in response.iter_lines():
            now = time.perf_counter()
            for text in _content_of((line + "\n").encode()):
                arrived.setdefault(text, now)
    return arrived


def bench_chunk_latency(url: str, model: ScriptedServer, clock: ChunkClock) -> dict[str, Any]:
    text = "".join(f"{i:03d}|" for i in range(150))
    model.reset()
    model.on(lambda request: True, Reply(text=text, delay=CHUNK_GAP, chunk_chars=4))
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}

    def lags(base: str, path: str) -> list[float]:
        clock.sent.clear()
        arrived = _arrivals(base, path, body, {"Authorization": "Bearer x"})
        return [arrived[t] - clock.sent[t] for t in arrived if t in clock.sent]

    direct = lags(model.base_url, "/chat/completions")
    through = lags(url, "/v1/chat/completions")
    baseline = statistics.median(direct)
    added = [lag - baseline for lag in through]
    model.reset()
    return {
        "chunks_measured": len(added),
        "direct_chunk_latency_ms_p50": baseline * 1000,
        "added_chunk_latency_ms_p50": percentile(added, 0.5) * 1000,
        "added_chunk_latency_ms_p95": percentile(added, 0.95) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--streams", type=int, default=50, help="concurrent chats (default 50)")
    parser.add_argument("--runs", type=int, default=5, help="cold-start runs (default 5)")
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "LAG_FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve_with_lag_monitor(int(args.serve[0]), Path(args.serve[1]))
        return 0

    clock = ChunkClock()
    clock.install()
    long_text = "streamed words " * 20
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as model:
        model.on(lambda request: True, Reply(text=long_text, delay=0.005, chunk_chars=8))
        home = Path(tmp)
        write_home(home, model.base_url)
        results: dict[str, Any] = {
            "python": platform.python_version(),
            "package": str(package_dir()),
            "machine": platform.machine(),
        }
        results.update(bench_cold_start(home, args.runs))
        lag_file = home / "lag.json"
        server = ServerProcess(home, lag_file)
        try:
            results.update(first_chat(server.url))
            load = _load(server.url, server.process.pid, args.streams, lag_file)
            results.update(asyncio.run(load))
            results.update(bench_chunk_latency(server.url, model, clock))
        finally:
            server.stop()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            shown = f"{value:.3f}" if isinstance(value, float) else value
            print(f"{key:32} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
