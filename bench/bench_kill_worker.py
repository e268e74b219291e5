"""Kill-a-worker benchmark: 20 investigations in flight on procrastinate + PostgreSQL, two `bugsleuth worker`
processes, one SIGKILLed mid-investigation; every investigation must still end with a diagnosis.

Needs the PostgreSQL on 127.0.0.1:5432 (trust auth, database `test`, user `postgres`); works in a private schema
that is dropped at the end. Reports go through the same intake code as the API (`service.submit_report`).

    .venv/bin/python bench/bench_kill_worker.py --reports 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
from sqlalchemy import text

from app import service
from app.config import Settings
from app.db import Database, run_migrations
from app.jobs.procrastinate_app import ProcrastinateJobs
from app.runtime import Runtime
from schemas import BugReport, Source

ROOT = Path(__file__).resolve().parents[1]
PG = "postgres@127.0.0.1:5432/test"

BUGGY = '''"""Order totals."""


def average(values):
    """Mean of a list of numbers."""
    return sum(values) / len(values)


def order_total(items, discount):
    subtotal = sum(item["price"] * item["qty"] for item in items)
    return subtotal - subtotal * discount / 100


def summary(orders):
    totals = [order_total(o["items"], o.get("discount", 0)) for o in orders]
    return {"mean": average(totals), "count": len(totals)}
'''

TITLES = [
    "ZeroDivisionError in average() when there are no orders",
    "summary() crashes on an empty order list",
    "order_total ignores discount above 100",
    "KeyError 'qty' in order_total for items without quantity",
]


def make_repo(path: Path) -> None:
    """A tiny git repository with one buggy module."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    path.mkdir(parents=True)
    (path / "orders.py").write_text(BUGGY)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`bugsleuth worker` in its own process."""
    return subprocess.Popen([str(ROOT / ".venv/bin/bugsleuth"), "worker"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=open(log, "wb"))


def _worker_env(url: str, work: Path, args: argparse.Namespace) -> dict[str, str]:
    """The environment of a `bugsleuth worker`: the private schema, fast heartbeats and stall sweeps."""
    return {
        **os.environ,
        "BUGSLEUTH_DATABASE_URL": url,
        "BUGSLEUTH_DATA_DIR": str(work / "data"),
        "BUGSLEUTH_EXPLORER": args.explorer,
        "BUGSLEUTH_WORKERS": str(args.concurrency),
        "BUGSLEUTH_PER_REPO_CONCURRENCY": str(args.reports),
        "BUGSLEUTH_HEARTBEAT_S": "1",
        "BUGSLEUTH_STALLED_AFTER_S": "4",
        "BUGSLEUTH_SWEEP_INTERVAL_S": "1",
        "BUGSLEUTH_REGISTER_SELF": "false",
        "BUGSLEUTH_LOG_LEVEL": "WARNING",
    }


async def _submit(runtime: Runtime, reports: int) -> None:
    """`reports` crash reports against the tiny repository, through the API's intake."""
    for i in range(reports):
        title = TITLES[i % len(TITLES)]
        await service.submit_report(runtime, BugReport(
            title=f"{title} (#{i})", repo="acme/shop", source=Source.api,
            body="Traceback (most recent call last):\n  File \"orders.py\", line 16, in summary\n"
                 "  File \"orders.py\", line 6, in average\nZeroDivisionError: division by zero",
        ))


async def _running_on(runtime: Runtime, pid: int) -> int:
    """How many investigations the worker process `pid` is running."""
    async with runtime.db.engine.connect() as conn:
        return (await conn.execute(text(
            "SELECT count(*) FROM investigations WHERE status = 'running' AND worker LIKE :w"
        ), {"w": f"procrastinate:%:{pid}"})).scalar_one()


async def _kill_when_busy(runtime: Runtime, victim: subprocess.Popen[bytes], args: argparse.Namespace,
                          started: float) -> tuple[int, float]:
    """SIGKILL the victim with `--kill-when` runs in flight on it (or one, if it never gets more within 3 s);
    returns how many it was running and when it died."""
    first_seen: float | None = None
    while True:
        n = await _running_on(runtime, victim.pid)
        if n >= 1 and first_seen is None:
            first_seen = time.monotonic()
        if n >= args.kill_when or (n >= 1 and first_seen and time.monotonic() - first_seen > 3):
            break
        if time.monotonic() - started > args.timeout:
            raise SystemExit("the victim never started a job")
        await asyncio.sleep(0.05)
    in_flight = await _running_on(runtime, victim.pid)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    return in_flight, time.monotonic()


async def _wait_finished(runtime: Runtime, args: argparse.Namespace, started: float) -> list:
    """Every investigation's status, runs and whether it has a diagnosis, once all have ended (or at the timeout)."""
    while True:
        async with runtime.db.engine.connect() as conn:
            rows = (await conn.execute(text(
                "SELECT status, runs, diagnosis IS NOT NULL AS has_diagnosis FROM investigations"
            ))).all()
        finished = [r for r in rows if r.status in ("done", "failed", "cancelled")]
        if len(finished) == args.reports or time.monotonic() - started > args.timeout:
            return rows
        await asyncio.sleep(0.25)


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM the workers still alive, SIGKILL those that do not end within 30 s."""
    for w in workers:
        if w.poll() is None:
            w.send_signal(signal.SIGTERM)
            try:
                w.wait(timeout=30)
            except subprocess.TimeoutExpired:
                w.kill()


async def _run(args: argparse.Namespace, url: str, work: Path, workers: list[subprocess.Popen[bytes]]) -> dict:
    """Start two workers on `url`, submit the reports, kill one worker mid-run and wait for every investigation."""
    await asyncio.to_thread(run_migrations, url)
    repo = work / "shop"
    make_repo(repo)
    env = _worker_env(url, work, args)
    settings = Settings(database_url=url, data_dir=work / "data", explorer=args.explorer,
                        per_repo_concurrency=args.reports, register_self=False)
    runtime = Runtime(settings=settings, db=Database(url))
    jobs = ProcrastinateJobs(runtime)
    runtime.jobs = jobs
    await jobs.start()
    await service.register_repository(runtime, "acme/shop", str(repo))
    workers.extend(start_worker(env, work / f"worker{i}.log") for i in range(2))
    started = time.monotonic()
    await _submit(runtime, args.reports)
    in_flight, killed_at = await _kill_when_busy(runtime, workers[0], args, started)
    rows = await _wait_finished(runtime, args, started)
    elapsed = time.monotonic() - started
    await jobs.stop()
    await runtime.db.dispose()
    diagnoses = sum(bool(r.has_diagnosis) for r in rows)
    return {
        "reports": args.reports,
        "workers": 2,
        "jobs_per_worker": args.concurrency,
        "explorer": args.explorer,
        "in_flight_on_killed_worker": in_flight,
        "killed_after_s": round(killed_at - started, 2),
        "done": sum(r.status == "done" for r in rows),
        "diagnoses": diagnoses,
        "failed": sum(r.status == "failed" for r in rows),
        "ran_twice": sum(r.runs > 1 for r in rows),
        "total_s": round(elapsed, 2),
        "lost": args.reports - diagnoses,
    }


async def main() -> None:
    """Run the benchmark in a private schema (dropped at the end) and print and save its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=20)
    parser.add_argument("--explorer", default="offline")
    parser.add_argument("--concurrency", type=int, default=4, help="jobs per worker")
    parser.add_argument("--kill-when", type=int, default=3, help="SIGKILL once the victim runs this many")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", default="/work/bench-out/kill_worker.json")
    args = parser.parse_args()

    schema = f"bench_kill_{os.getpid()}"
    admin = psycopg.connect(f"postgresql://{PG}", autocommit=True, connect_timeout=5)
    admin.execute(f"CREATE SCHEMA {schema}")
    url = f"postgresql+psycopg://{PG}?options=-csearch_path%3D{schema}"
    work = Path(tempfile.mkdtemp(prefix="bench-kill-"))
    workers: list[subprocess.Popen[bytes]] = []
    try:
        result = await _run(args, url, work, workers)
    finally:
        _stop(workers)
        admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print("PASS" if result["lost"] == 0 and result["ran_twice"] >= 1 else "FAIL")


if __name__ == "__main__":
    asyncio.run(main())
