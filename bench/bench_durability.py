"""Durability under load: reports posted over HTTP at a steady rate while the server (and, on PostgreSQL, the
procrastinate workers) are SIGKILLed at random moments and restarted; at the end every report the client saw
accepted (202) must be `done`, `failed` with a reason, or `cancelled` — none lost, none stuck.

Loopback only, bounded (reports, kills and a timeout). The client retries a report until it gets an answer,
as a tracker's webhook sender would; a report committed but unanswered because the server died in between is
counted as `unacknowledged` (stored, investigated, but the client never learnt its id).

    .venv/bin/python bench/bench_durability.py --backend sqlite --reports 60 --server-kills 3
    .venv/bin/python bench/bench_durability.py --backend postgres --pg-database bugsleuth_net \\
        --reports 60 --server-kills 2 --worker-kills 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import free_port  # noqa: E402
from bench_kill_worker import TITLES, make_repo  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TERMINAL = ("done", "failed", "cancelled")
BODY = ('Traceback (most recent call last):\n  File "orders.py", line 16, in summary\n'
        '  File "orders.py", line 6, in average\nZeroDivisionError: division by zero')


def bugsleuth(*args: str) -> list[str]:
    """The CLI of this checkout, run by this interpreter."""
    return [sys.executable, "-c", "import sys; from app.cli import cli; sys.argv[0] = 'bugsleuth'; cli()", *args]


@dataclass
class Cluster:
    """The server and worker processes of one run, restartable."""

    env: dict[str, str]
    work: Path
    port: int
    n_workers: int
    server: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    starts: int = 0

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        self.starts += 1
        log = open(self.work / f"{args[0]}-{self.starts}.log", "wb")
        return subprocess.Popen(bugsleuth(*args), env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)

    def start_server(self) -> None:
        self.server = self._spawn("serve", "--port", str(self.port))

    def start_worker(self, slot: int) -> None:
        proc = self._spawn("worker")
        if slot < len(self.workers):
            self.workers[slot] = proc
        else:
            self.workers.append(proc)

    def stop(self) -> None:
        for proc in [self.server, *self.workers]:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()


async def wait_ready(base: str, timeout: float = 120.0) -> float:
    """Seconds until /ready answers 200."""
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=5) as client:
        while time.monotonic() - started < timeout:
            try:
                if (await client.get(f"{base}/ready")).status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise SystemExit(f"server at {base} did not become ready in {timeout} s")


async def post_until_answered(client: httpx.AsyncClient, i: int, counters: dict[str, int]) -> int:
    """Post report i, retrying through server deaths; the accepted investigation id."""
    payload = {"repo": "acme/shop", "title": f"{TITLES[i % len(TITLES)]} (#{i})", "body": BODY}
    backoff = 0.1
    while True:
        try:
            r = await client.post("/api/reports", json=payload)
        except httpx.TransportError:
            counters["retries"] += 1
            await asyncio.sleep(backoff)
            backoff = min(1.0, backoff * 2)  # as a webhook sender backs off, without hammering a restarting server
            continue
        if r.status_code == 202:
            return r.json()["id"]
        if r.status_code >= 500:
            counters["server_errors"] += 1
            await asyncio.sleep(backoff)
            continue
        raise SystemExit(f"report {i} refused: {r.status_code} {r.text[:200]}")


async def load(base: str, reports: int, rate: float, accepted: list[int], counters: dict[str, int]) -> None:
    """Post `reports` reports at `rate` per second (each retried until answered)."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        async def one(i: int) -> None:
            await asyncio.sleep(i / rate)
            accepted.append(await post_until_answered(client, i, counters))

        await asyncio.gather(*(one(i) for i in range(reports)))


def statuses(dsn: str, sqlite: Path | None) -> list[tuple[int, str, str | None, str | None, int]]:
    """(id, status, error, worker, runs) of every investigation, read straight from the database."""
    query = "SELECT id, status, error, worker, runs FROM investigations"
    if sqlite is not None:
        with sqlite3.connect(f"file:{sqlite}?mode=ro", uri=True, timeout=30) as conn:
            return list(conn.execute(query))
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        return list(conn.execute(query))


def _server_env(args: argparse.Namespace, work: Path) -> dict[str, str]:
    """The server's and workers' environment: this checkout, the offline explorer, fast heartbeats and sweeps,
    and none of the caller's token, host, backend or database settings."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BUGSLEUTH_DATA_DIR": str(work / "data"),
           "BUGSLEUTH_REGISTER_SELF": "false", "BUGSLEUTH_LOG_LEVEL": "WARNING", "BUGSLEUTH_EXPLORER": "offline",
           "BUGSLEUTH_WORKERS": str(args.concurrency), "BUGSLEUTH_PER_REPO_CONCURRENCY": str(args.concurrency),
           "BUGSLEUTH_HEARTBEAT_S": "1", "BUGSLEUTH_STALLED_AFTER_S": "4", "BUGSLEUTH_SWEEP_INTERVAL_S": "1"}
    for name in ("BUGSLEUTH_API_TOKEN", "BUGSLEUTH_HOST", "BUGSLEUTH_JOB_BACKEND", "BUGSLEUTH_DATABASE_URL"):
        env.pop(name, None)
    return env


def _kill_plan(args: argparse.Namespace, rng: random.Random, backend: str) -> list[tuple[str, float]]:
    """What to kill and when (seconds after the load starts), spread over the load and the drain after it."""
    load_s = args.reports / args.rate
    plan = [("server", rng.uniform(0.5, load_s + 5)) for _ in range(args.server_kills)]
    if backend == "postgres":
        plan += [("worker", rng.uniform(0.5, load_s + 8)) for _ in range(args.worker_kills)]
    return sorted(plan, key=lambda p: p[1])


async def _drain(accepted: list[int], dsn: str, sqlite: Path | None, timeout: float) -> dict[int, tuple]:
    """Every stored investigation by id, once each accepted one has ended (or at the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        by_id = {r[0]: r for r in statuses(dsn, sqlite)}
        pending = [i for i in accepted if i not in by_id or by_id[i][1] not in TERMINAL]
        if not pending or time.monotonic() > deadline:
            return by_id
        await asyncio.sleep(0.5)


def _figures(args: argparse.Namespace, backend: str, accepted: list[int], by_id: dict[int, tuple],
             kills: list[dict[str, object]], counters: dict[str, int], timings: dict[str, float]) -> dict[str, object]:
    """The run's figures: what became of every accepted report, the kills and the recoveries."""
    final = {i: by_id.get(i) for i in accepted}
    server_recoveries = [k["recovered_s"] for k in kills if k["what"] == "server"]
    # a worker killed while idle has nothing to recover: only kills with runs in flight are timed
    worker_recoveries = [k["recovered_s"] for k in kills if k["what"] == "worker" and k["in_flight"] and k["recovered_s"]]
    return {
        "backend": backend,
        "reports_sent": args.reports,
        "rate_per_s": args.rate,
        "accepted": len(accepted),
        "unacknowledged": len(set(by_id) - set(accepted)),
        "done": sum(1 for r in final.values() if r and r[1] == "done"),
        "failed": sum(1 for r in final.values() if r and r[1] == "failed"),
        "failed_without_reason": sum(1 for r in final.values() if r and r[1] == "failed" and not r[2]),
        "cancelled": sum(1 for r in final.values() if r and r[1] == "cancelled"),
        "lost": sum(1 for r in final.values() if r is None),
        "stuck": sum(1 for r in final.values() if r and r[1] not in TERMINAL),
        "ran_more_than_once": sum(1 for r in final.values() if r and r[4] > 1),
        "server_kills": sum(1 for k in kills if k["what"] == "server"),
        "worker_kills": sum(1 for k in kills if k["what"] == "worker"),
        "in_flight_at_kills": sum(int(k["in_flight"]) for k in kills),
        "first_start_s": round(timings["first_start_s"], 2),
        "server_recovery_s_max": round(max(server_recoveries), 2) if server_recoveries else None,
        "worker_recovery_s_max": round(max(worker_recoveries), 2) if worker_recoveries else None,
        "client_retries": counters["retries"],
        "server_errors_seen": counters["server_errors"],
        "load_s": round(timings["load_s"], 1),
        "drain_s": round(timings["drain_s"], 1),
        "kills": kills,
    }


async def run(args: argparse.Namespace, backend: str) -> dict[str, object]:
    """One load-and-kill run on one backend; the figures."""
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix=f"bench-durability-{backend}-"))
    make_repo(work / "shop")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = _server_env(args, work)
    schema = f"bench_durability_{os.getpid()}"
    dsn = f"postgresql://postgres@127.0.0.1:5432/{args.pg_database}"
    sqlite_path: Path | None = None
    if backend == "postgres":
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
        env["BUGSLEUTH_DATABASE_URL"] = f"postgresql+psycopg://postgres@127.0.0.1:5432/{args.pg_database}?options=-csearch_path%3D{schema}"
        dsn_read = f"{dsn}?options=-csearch_path%3D{schema}"
    else:
        sqlite_path = work / "data" / "bugsleuth.db"
        dsn_read = ""
    cluster = Cluster(env=env, work=work, port=port, n_workers=args.workers if backend == "postgres" else 0)
    accepted: list[int] = []
    counters = {"retries": 0, "server_errors": 0}
    kills: list[dict[str, object]] = []
    try:
        cluster.start_server()
        first_start_s = await wait_ready(base)
        async with httpx.AsyncClient(base_url=base) as c:
            assert (await c.post("/api/repos", json={"name": "acme/shop", "location": str(work / "shop")})).status_code == 201
        for slot in range(cluster.n_workers):
            cluster.start_worker(slot)
        started = time.monotonic()
        loader = asyncio.create_task(load(base, args.reports, args.rate, accepted, counters))
        for what, at in _kill_plan(args, rng, backend):
            await asyncio.sleep(max(0.0, at - (time.monotonic() - started)))
            kills.append(await kill_and_restart(cluster, what, rng, base, backend, dsn_read, sqlite_path, args))
        await loader
        load_done = time.monotonic() - started
        by_id = await _drain(accepted, dsn_read, sqlite_path, args.timeout)
        drain_s = time.monotonic() - started - load_done
    finally:
        cluster.stop()
        if backend == "postgres":
            with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as admin:
                admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    timings = {"first_start_s": first_start_s, "load_s": load_done, "drain_s": drain_s}
    return _figures(args, backend, accepted, by_id, kills, counters, timings)


async def kill_and_restart(cluster: Cluster, what: str, rng: random.Random, base: str, backend: str,
                           dsn: str, sqlite: Path | None, args: argparse.Namespace) -> dict[str, object]:
    """SIGKILL the server or a random worker, restart it, and time the recovery.

    Server: until `/ready` answers again. Worker: until none of the investigations it was running is still
    held by it (the sweeper noticed the dead worker and another one took them over, or they ended)."""
    running = [r for r in statuses(dsn, sqlite) if r[1] == "running"]
    if what == "server":
        victim = cluster.server
        assert victim is not None
        held = [r[0] for r in running] if backend == "sqlite" else []
    else:
        # a random worker among those running investigations now (any worker when none is)
        busy = [i for i, w in enumerate(cluster.workers) if any((r[3] or "").endswith(f":{w.pid}") for r in running)]
        slot = rng.choice(busy or list(range(len(cluster.workers))))
        victim = cluster.workers[slot]
        held = [r[0] for r in running if (r[3] or "").endswith(f":{victim.pid}")]
    killed = time.monotonic()
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    if what == "server":
        cluster.start_server()
        recovered: float | None = await wait_ready(base)
    else:
        await asyncio.sleep(args.worker_down_s)
        cluster.start_worker(slot)
        recovered = None
        while time.monotonic() - killed < args.timeout:
            now = {r[0]: r for r in statuses(dsn, sqlite)}
            if all(now[i][1] in TERMINAL or not (now[i][3] or "").endswith(f":{victim.pid}") for i in held):
                recovered = time.monotonic() - killed
                break
            await asyncio.sleep(0.1)
    return {"what": what, "pid": victim.pid, "in_flight": len(held), "recovered_s": round(recovered, 2) if recovered else recovered}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--reports", type=int, default=60)
    parser.add_argument("--rate", type=float, default=4.0, help="reports per second")
    parser.add_argument("--server-kills", type=int, default=3)
    parser.add_argument("--worker-kills", type=int, default=3, help="PostgreSQL only")
    parser.add_argument("--workers", type=int, default=2, help="procrastinate worker processes (PostgreSQL)")
    parser.add_argument("--concurrency", type=int, default=2, help="jobs at once per process")
    parser.add_argument("--worker-down-s", type=float, default=1.0, help="a killed worker restarts after this")
    parser.add_argument("--pg-database", default=os.environ.get("BUGSLEUTH_BENCH_PG_DATABASE", "test"))
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", default="/work/bench-out/durability.json")
    args = parser.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = [asyncio.run(run(args, b)) for b in backends]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    for r in results:
        print(json.dumps({k: v for k, v in r.items() if k != "kills"}))
    ok = all(r["lost"] == 0 and r["stuck"] == 0 and r["failed_without_reason"] == 0 for r in results)
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
