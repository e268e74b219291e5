"""Ingest benchmark: open-loop load on `POST /api/reports` against the embedded default (SQLite WAL).

The server runs in its own process (`bugsleuth serve`, investigations off by default so ingest alone is
measured); an async httpx generator sends requests on a fixed schedule (open loop: latency is measured from the
moment a request was due, so a stalled server cannot hide its backlog). At the end, the rows are counted.

    .venv/bin/python bench/bench_ingest.py --rate 200 --duration 30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """An unused TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, port: int, jobs: str) -> subprocess.Popen[bytes]:
    """`bugsleuth serve` in a child process with a private data dir."""
    env = {
        **os.environ,
        "BUGSLEUTH_DATA_DIR": str(data_dir),
        "BUGSLEUTH_PORT": str(port),
        "BUGSLEUTH_JOB_BACKEND": jobs,
        "BUGSLEUTH_LOG_LEVEL": "WARNING",
    }
    env.pop("BUGSLEUTH_DATABASE_URL", None)
    return subprocess.Popen(
        [str(ROOT / ".venv/bin/bugsleuth"), "serve"], env=env, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=open(data_dir / "server.log", "wb"),
    )


async def wait_ready(base: str, timeout: float = 60.0) -> None:
    """Poll /ready until the server answers."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            try:
                if (await client.get(f"{base}/ready")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise SystemExit("server did not become ready")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


async def load(
    base: str, repo: str, rate: float, duration: float, start_at: float, part: int, parts: int, connections: int
) -> dict:
    """Send this part's share of `rate` requests per second for `duration` seconds on a fixed schedule
    (request i is due at start_at + i / rate; part p sends i = p, p + parts, ...); return latencies."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors: list[str] = []
    total = int(rate * duration)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        for i in range(5):  # warm-up: open connections before the clock starts
            await client.get("/health")

        async def sender(queue: asyncio.Queue[tuple[int, float] | None]) -> None:
            while (job := await queue.get()) is not None:
                i, due = job
                payload = {
                    "repo": repo,
                    "title": f"crash #{i}: ZeroDivisionError in average()",
                    "body": "Traceback (most recent call last):\n  File \"app.py\", line 6, in average\nZeroDivisionError",
                    "labels": ["bug"],
                }
                try:
                    r = await client.post("/api/reports", json=payload)
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                except httpx.HTTPError as exc:
                    errors.append(repr(exc))
                    continue
                latencies.append((time.perf_counter() - due) * 1000)

        # Open loop (as wrk2 does it): request i is due at a fixed time whatever happened to the earlier
        # ones, and its latency counts from that due time, so any queueing (client or server) is measured.
        # A fixed set of connections sends them; more in-flight requests than connections wait in a cheap
        # queue here instead of in httpx's pool, whose cost grows with the number of waiters.
        queue: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()
        senders = [asyncio.create_task(sender(queue)) for _ in range(connections)]
        start = start_at - time.time() + time.perf_counter()
        for i in range(part, total, parts):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait((i, due))
        for _ in senders:
            queue.put_nowait(None)
        await asyncio.gather(*senders)
    return {"latencies": latencies, "statuses": statuses, "errors": errors}


def _load_process(args: tuple) -> dict:
    return asyncio.run(load(*args))


def summarize(parts: list[dict], rate: float, duration: float, rows: int) -> dict[str, object]:
    """Merge the generators' results."""
    latencies = [x for p in parts for x in p["latencies"]]
    statuses: dict[str, int] = {}
    for p in parts:
        for code, n in p["statuses"].items():
            statuses[str(code)] = statuses.get(str(code), 0) + n
    accepted = statuses.get("202", 0)
    return {
        "rate_target": rate,
        "duration_s": duration,
        "sent": int(rate * duration),
        "accepted": accepted,
        "statuses": statuses,
        "errors": sum(len(p["errors"]) for p in parts),
        "rows_after": rows,
        "lost": accepted - rows,
        "p50_ms": round(percentile(latencies, 50), 2),
        "p90_ms": round(percentile(latencies, 90), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
        "mean_ms": round(statistics.fmean(latencies), 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0, help="requests per second")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of sustained load")
    parser.add_argument("--jobs", default="none", choices=["none", "local"], help="job backend of the server")
    parser.add_argument("--generators", type=int, default=2, help="load-generator processes (open loop each)")
    parser.add_argument("--connections", type=int, default=32, help="HTTP connections per generator")
    parser.add_argument("--out", default="/work/bench-out/ingest.json")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(data_dir, port, args.jobs)
    try:
        await wait_ready(base)
        async with httpx.AsyncClient(base_url=base) as client:
            repo = (await client.get("/api/repos")).json()[0]["name"]
            load_before = os.getloadavg()[0]
            cpu_before = process_cpu_s(server.pid)
            start_at = time.time() + 2.0
            with ProcessPoolExecutor(args.generators, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = [
                    pool.submit(
                        _load_process,
                        (base, repo, args.rate, args.duration, start_at, p, args.generators, args.connections),
                    )
                    for p in range(args.generators)
                ]
                parts = [f.result() for f in futures]
            server_cpu = process_cpu_s(server.pid) - cpu_before
            rows = (await client.get("/api/investigations", params={"limit": 1})).json()["total"]
            metrics = (await client.get("/metrics")).text
        result = summarize(parts, args.rate, args.duration, rows)
        result["server_cpu_ms_per_request"] = round(server_cpu * 1000 / max(1, result["accepted"]), 3)
        result["machine_load_1m"] = {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)}
        result["server_batches"] = {
            line.split()[0]: float(line.split()[1])
            for line in metrics.splitlines()
            if line.startswith("bugsleuth_intake_batch_size_") and ("_sum" in line or "_count" in line)
        }
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    result["server"] = {"database": "sqlite (WAL)", "jobs": args.jobs, "data_dir": str(data_dir)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    ok = result["p99_ms"] <= 25 and result["lost"] == 0 and result["errors"] == 0
    print("PASS" if ok else "FAIL", "(target: p99 <= 25 ms, nothing lost)", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
