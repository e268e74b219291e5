"""Side by side: one intake transaction on SQLite through aiosqlite (async session, three driver-thread round
trips per statement) versus the dedicated writer thread (`Database.run_sqlite_write`, one round trip).

    .venv/bin/python bench/bench_sqlite_writer.py --transactions 500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from app import store
from app.db import Database
from schemas import BugReport, Classification, ClassificationResult

ITEM = [(BugReport(title="crash in average()", body="ZeroDivisionError", repo="acme/shop"),
         ClassificationResult(label=Classification.crash, confidence=0.9, reason="traceback"), True)]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=500)
    parser.add_argument("--out", default="/work/bench-out/sqlite_writer.json")
    args = parser.parse_args()
    db = Database(f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}")
    await db.migrate()
    n = args.transactions
    results = {}
    for _ in range(2):  # two rounds, interleaved, to even out a noisy machine
        for name in ("aiosqlite_session", "writer_thread"):
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                if name == "aiosqlite_session":
                    async with db.session() as s:
                        await store.create_investigations(s, ITEM, explorer="offline")
                else:
                    await db.run_sqlite_write(lambda c: store.create_investigations_sync(c, ITEM, explorer="offline"))
            r = results.setdefault(name, {"wall_ms": [], "cpu_ms": []})
            r["wall_ms"].append((time.perf_counter() - wall) * 1000 / n)
            r["cpu_ms"].append((time.process_time() - cpu) * 1000 / n)
    await db.dispose()
    summary = {name: {k: round(min(v), 3) for k, v in r.items()} for name, r in results.items()}
    summary["cpu_ratio"] = round(summary["aiosqlite_session"]["cpu_ms"] / summary["writer_thread"]["cpu_ms"], 2)
    summary["wall_ratio"] = round(summary["aiosqlite_session"]["wall_ms"] / summary["writer_thread"]["wall_ms"], 2)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
