"""Run instances through the real pipeline, in parallel processes, resumably, one results line per instance.

The worker receives a `Task` built from the problem statement alone: scoring fields stay in the parent
process, so they cannot reach the investigation. An instance that crashes records its error; the run goes on.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import re
import subprocess
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.evaluation.baseline import bm25_rank, bm25_rank_functions
from app.evaluation.data import Instance, RepoTable, report_from_statement
from app.evaluation.errors import EvalInputError
from app.evaluation.records import (
    RANKED_FILES,
    RANKED_FUNCTIONS,
    RESULTS_FILE,
    describe_result,
    read_results,
    score_record,
)
from app.evaluation.trees import TreeCache

DEFAULT_INVESTIGATE = "funnel:investigate_sync"
"""The real pipeline, as `module:function`."""

CRASHED = "crashed"
"""Termination recorded when the investigation raised instead of returning."""


@dataclass(frozen=True)
class Task:
    """Everything a worker needs for one instance: the problem statement and where to find the code, no gold."""

    instance_id: str
    """Instance id (for the record only; never given to the investigation)."""
    repo: str
    """`owner/name`, to find the tree (never given to the investigation)."""
    base_commit: str
    """Commit to investigate."""
    git_dir: str
    """Git directory holding the commit."""
    problem_statement: str
    """The issue text."""
    cache_dir: str
    """Tree cache directory."""
    explorer: str = "offline"
    """Explorer name passed to the pipeline."""
    investigate: str = DEFAULT_INVESTIGATE
    """The investigate callable, as `module:function` (importable in a spawned process)."""
    baseline: bool = True
    """Also rank files with plain BM25."""
    trace_dir: str | None = None
    """Directory for one trace JSONL per instance (`<instance_id>.jsonl`); None keeps no trace."""


@dataclass
class RunOptions:
    """How a run goes."""

    out_dir: Path
    """Where results.jsonl, summary.json, summary.md and the plot go."""
    cache_dir: Path
    """Tree cache."""
    explorer: str = "offline"
    """Explorer name passed to the pipeline."""
    jobs: int = 1
    """Instances run at once (separate processes when more than 1)."""
    investigate: str = DEFAULT_INVESTIGATE
    """The investigate callable, as `module:function`."""
    baseline: bool = True
    """Compute the BM25 baseline ranking alongside."""
    retry_errors: bool = False
    """Run again the instances whose earlier record holds an error."""
    traces: bool = True
    """Keep each investigation's trace in `out_dir/traces/<instance_id>.jsonl`."""
    on_record: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False)
    """Called in the parent after each record is written (progress display)."""


def code_commit() -> str | None:
    """The commit of the checkout this code runs from (`+dirty` with uncommitted changes to tracked files), to
    label the figures; None outside a git checkout."""
    here = str(Path(__file__).resolve().parent)
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0 or not head.stdout.strip():
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def resolve_callable(spec: str) -> Callable[..., Any]:
    """Import `module:function`; a clear EvalInputError when it is not there (yet)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise EvalInputError(f"investigate callable {spec!r} must look like module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EvalInputError(f"cannot import {module_name} for {spec!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise EvalInputError(f"{module_name} has no {attr!r} (from {spec!r})") from None


def make_task(instance: Instance, table: RepoTable, options: RunOptions) -> Task:
    """The worker's view of an instance."""
    return Task(
        instance_id=instance.instance_id,
        repo=instance.repo,
        base_commit=instance.base_commit,
        git_dir=str(table.git_dir(instance.repo)),
        problem_statement=instance.problem_statement,
        cache_dir=str(options.cache_dir),
        explorer=options.explorer,
        investigate=options.investigate,
        baseline=options.baseline,
        trace_dir=str(options.out_dir / "traces") if options.traces else None,
    )


def run_task(task: Task) -> dict[str, Any]:
    """Investigate one instance and return its record; never raises (errors are recorded)."""
    record = {**_empty_record(task), "termination_detail": "", "baseline_seconds": 0.0, "missing_blobs": []}
    try:
        tree = TreeCache(Path(task.cache_dir)).materialize(task.repo, Path(task.git_dir), task.base_commit)
    except Exception as exc:  # noqa: BLE001 - a bad tree is one instance's problem, not the run's
        record.update(termination=CRASHED, error=f"tree: {type(exc).__name__}: {exc}")
        return record
    record["missing_blobs"] = list(tree.missing)
    if task.baseline:
        started = time.perf_counter()
        try:
            record["baseline_files"] = bm25_rank(tree.path, task.problem_statement, top=50)
            record["baseline_ranking"] = {
                "files": record["baseline_files"][:RANKED_FILES],
                "functions": bm25_rank_functions(tree.path, task.problem_statement, top=RANKED_FUNCTIONS),
            }
        except Exception as exc:  # noqa: BLE001
            record["baseline_error"] = f"{type(exc).__name__}: {exc}"
        record["baseline_seconds"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    try:
        investigate = resolve_callable(task.investigate)
        extra: dict[str, Any] = {}
        if task.trace_dir:
            trace = Path(task.trace_dir) / f"{_safe_name(task.instance_id)}.jsonl"
            trace.parent.mkdir(parents=True, exist_ok=True)
            trace.unlink(missing_ok=True)  # a rerun replaces the trace of an earlier attempt
            extra["trace_path"] = trace
        result = investigate(report_from_statement(task.problem_statement), tree.path, explorer=task.explorer,
                             commit=task.base_commit, git_dir=task.git_dir, **extra)
        record.update(describe_result(result))
    except Exception as exc:  # noqa: BLE001 - record and go on
        tail = "".join(traceback.format_exception(exc)[-3:]).strip()
        record.update(termination=CRASHED, error=f"{type(exc).__name__}: {exc}", traceback=tail[-2000:])
    record["seconds"] = round(time.perf_counter() - started, 3)
    return record


def _safe_name(instance_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", instance_id)[:200]


def check_explorer(explorer: str) -> None:
    """Refuse an explorer the pipeline cannot build (unknown name, missing piece) before any instance runs."""
    try:
        from funnel.errors import UserError  # lazy: the explorers (and PydanticAI) load only when an eval checks one
        from funnel.explorers import resolve_explorer
    except ImportError:
        return
    try:
        resolve_explorer(explorer)
    except UserError as exc:
        raise EvalInputError(f"explorer {explorer!r}: {exc}") from None


def pending(instances: list[Instance], done: dict[str, dict[str, Any]], retry_errors: bool) -> list[Instance]:
    """The instances without a record (or, with `retry_errors`, whose record holds an error)."""
    todo = []
    for inst in instances:
        old = done.get(inst.instance_id)
        if old is None or (retry_errors and old.get("error")):
            todo.append(inst)
    return todo


def validate(instances: list[Instance], table: RepoTable, options: RunOptions) -> None:
    """Fail early and clearly, before any work: bad options, unknown repositories, an unusable pipeline."""
    if options.jobs < 1:
        raise EvalInputError("--jobs must be 1 or more")
    table.check(instances)
    resolve_callable(options.investigate)
    if options.investigate == DEFAULT_INVESTIGATE:
        check_explorer(options.explorer)


def run(instances: list[Instance], table: RepoTable, options: RunOptions) -> dict[str, dict[str, Any]]:
    """Run every instance not yet in results.jsonl; return the records of all `instances` (old and new)."""
    validate(instances, table, options)
    options.out_dir.mkdir(parents=True, exist_ok=True)
    results_path = options.out_dir / RESULTS_FILE
    done = read_results(results_path)
    todo = pending(instances, done, options.retry_errors)
    by_id = {inst.instance_id: inst for inst in instances}
    tasks = [make_task(inst, table, options) for inst in todo]
    commit = code_commit() if tasks else None
    with results_path.open("a", encoding="utf-8") as out:
        for record in _execute(tasks, options.jobs):
            record["code_commit"] = commit
            record["scores"] = score_record(record, by_id[record["instance_id"]])
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            out.flush()
            done[record["instance_id"]] = record
            if options.on_record:
                options.on_record(record)
    return {inst.instance_id: done[inst.instance_id] for inst in instances if inst.instance_id in done}


def _execute(tasks: list[Task], jobs: int) -> Iterator[dict[str, Any]]:
    if not tasks:
        return
    if jobs == 1:
        for task in tasks:
            yield run_task(task)
        return
    context = multiprocessing.get_context("spawn")
    queue = list(reversed(tasks))
    while queue:
        # A worker killed outright (out of memory, signal) breaks the pool and fails every instance in flight
        # with it: those are run again one by one in a pool of their own, so only the culprit is recorded as
        # crashed; a fresh pool takes the rest.
        suspects: list[Task] = []
        broken = False
        with _pool(min(jobs, len(queue)), context) as pool:
            running: dict[Future[dict[str, Any]], Task] = {}
            while (queue and not broken) or running:
                while queue and not broken and len(running) < jobs:
                    task = queue.pop()
                    try:
                        running[pool.submit(run_task, task)] = task
                    except BrokenProcessPool:  # it broke while the last record was being written: not started
                        queue.append(task)
                        broken = True
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = running.pop(future)
                    try:
                        yield future.result()
                    except BrokenProcessPool:
                        suspects.append(task)
                        broken = True
                    except Exception as exc:  # noqa: BLE001
                        yield _crashed(task, exc)
        for task in suspects:
            yield _run_alone(task, context)


def _run_alone(task: Task, context: Any) -> dict[str, Any]:
    with _pool(1, context) as pool:
        try:
            return pool.submit(run_task, task).result()
        except Exception as exc:  # noqa: BLE001
            return _crashed(task, exc)


def _pool(workers: int, context: Any) -> ProcessPoolExecutor:
    """A pool of `workers` processes that end with this one (`_follow_parent`)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_follow_parent,
                               initargs=(os.getpid(),))


PARENT_POLL_SECONDS = 1.0
"""How often a worker checks that the eval process that started it is still there."""


def _follow_parent(parent: int) -> None:
    """Worker initializer: end the worker once the eval process that started it is gone. Killed outright (SIGKILL,
    or a CI timeout's SIGTERM, which it does not handle), the parent takes no workers with it, and each would run
    its instance to the end for nobody. With this thread running, a worker's repo-map parse pool starts by
    forkserver rather than fork (`repomap._parse._start_pool`)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="follow-parent", daemon=True).start()


def _crashed(task: Task, exc: BaseException) -> dict[str, Any]:
    return {**_empty_record(task), "termination": CRASHED, "error": f"worker: {type(exc).__name__}: {exc}"}


def _empty_record(task: Task) -> dict[str, Any]:
    return {
        "instance_id": task.instance_id, "repo": task.repo, "base_commit": task.base_commit,
        "explorer": task.explorer, "ranked_files": [], "ranked_functions": [], "line_ranges": {},
        "baseline_files": [], "diagnosis": None, "termination": None, "tool_calls": 0, "input_tokens": 0,
        "output_tokens": 0, "tokens": 0, "seconds": 0.0, "error": None,
    }
