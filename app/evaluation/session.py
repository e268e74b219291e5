"""One evaluation from start to finish: validate inputs, prepare trees, run, summarize, print the table."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from app.evaluation import data as data_mod
from app.evaluation import locagent, report, runner
from app.evaluation.errors import EvalInputError
from app.evaluation.locagent import Protocol
from app.evaluation.records import RESULTS_FILE, read_results
from app.evaluation.trees import TreeCache, default_cache_dir


@dataclass
class EvalRequest:
    """The options of `bugsleuth eval`."""

    data: Path
    """SWE-bench-style JSONL."""
    repos: Path | None
    """REPOS.toml (not needed with `report_only`)."""
    out: Path
    """Output directory."""
    limit: int | None = None
    """At most this many instances."""
    ids: Path | None = None
    """File of instance ids to run."""
    jobs: int = 1
    """Parallel processes."""
    explorer: str = "offline"
    """Explorer name."""
    cache: Path | None = None
    """Tree cache; default_cache_dir() when None."""
    baseline: bool = True
    """Compute the BM25 baseline."""
    retry_errors: bool = False
    """Rerun instances recorded with an error."""
    prepare_only: bool = False
    """Only materialize the trees."""
    investigate: str = runner.DEFAULT_INVESTIGATE
    """Investigate callable as `module:function`."""
    protocol: Protocol | None = None
    """Also score this published protocol (`locagent`: SWE-bench Lite, 274 instances)."""
    report_only: bool = False
    """Run nothing: summarize the records already in `out/results.jsonl` (scored again with today's metrics)."""


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}", markup=False),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False,
    )


def prepare_trees(instances: list[data_mod.Instance], table: data_mod.RepoTable, cache: TreeCache,
                  console: Console) -> int:
    """Materialize every instance's tree; return how many failed (each failure is printed)."""
    failures = 0
    pairs = list(dict.fromkeys((inst.repo, inst.base_commit) for inst in instances))
    with _progress(console) as progress:
        bar = progress.add_task("trees", total=len(pairs), note="")
        for repo, commit in pairs:
            try:
                tree = cache.materialize(repo, table.git_dir(repo), commit)
                if tree.missing:
                    console.print(f"{repo}@{commit[:12]}: left out {len(tree.missing)} missing blob(s)")
            except (EvalInputError, OSError, RuntimeError) as exc:
                failures += 1
                console.print(f"{repo}@{commit[:12]}: {exc}", style="red")
            progress.update(bar, advance=1, note=f"{repo}@{commit[:8]}")
    return failures


def evaluate(request: EvalRequest) -> dict[str, Any]:
    """Run the evaluation the request describes and write its outputs; return summary.json's content."""
    console = Console(stderr=True, markup=False)  # what it prints quotes paths and git's errors, `[/x]` included
    instances = data_mod.load_instances(request.data)
    if request.protocol == Protocol.locagent:
        check_locagent_data(instances, request.data)
    ids = data_mod.load_ids(request.ids) if request.ids else None
    selected = data_mod.select(instances, ids=ids, limit=request.limit)
    if request.report_only:
        records = read_results(request.out / RESULTS_FILE)
        if not records:
            raise EvalInputError(f"--report-only: no records in {request.out / RESULTS_FILE}")
        return _write_summary(request, records, selected, console)
    if request.repos is None:
        raise EvalInputError("--repos is required (only --report-only runs without it)")
    table = data_mod.load_repo_table(request.repos)
    table.check(selected)
    cache_dir = request.cache or default_cache_dir()
    if request.prepare_only:
        failures = prepare_trees(selected, table, TreeCache(cache_dir), console)
        console.print(f"trees in {cache_dir}: {len(selected)} instances, {failures} failed")
        return {}
    options = runner.RunOptions(out_dir=request.out, cache_dir=cache_dir, explorer=request.explorer,
                                jobs=request.jobs, investigate=request.investigate, baseline=request.baseline,
                                retry_errors=request.retry_errors)
    runner.validate(selected, table, options)
    done_before = read_results(request.out / RESULTS_FILE)
    todo = len(runner.pending(selected, done_before, request.retry_errors))
    if todo < len(selected):
        console.print(f"resuming: {len(selected) - todo} of {len(selected)} instances already in "
                      f"{request.out / RESULTS_FILE}")
    counts = {"hit": 0, "errors": 0, "n": 0}
    with _progress(console) as progress:
        bar = progress.add_task("eval", total=todo, note="")

        def on_record(record: dict[str, Any]) -> None:
            counts["n"] += 1
            counts["hit"] += int(bool(record["scores"]["ours"]["file_acc_at_5"]))
            counts["errors"] += int(bool(record.get("error")))
            progress.update(bar, advance=1, note=f"file@5 {counts['hit']}/{counts['n']}  errors {counts['errors']}")

        options.on_record = on_record
        records = runner.run(selected, table, options)
    return _write_summary(request, records, selected, console)


def check_locagent_data(instances: list[data_mod.Instance], data: Path) -> None:
    """Refuse `--protocol locagent` on data that is not SWE-bench Lite (none of its excluded ids is there)."""
    if not locagent.excluded_ids() & {inst.instance_id for inst in instances}:
        raise EvalInputError(f"--protocol locagent scores SWE-bench Lite, but none of the 26 ids it leaves out "
                             f"is in {data}; run it on swebench_lite.jsonl")


def _write_summary(request: EvalRequest, records: dict[str, dict[str, Any]], selected: list[data_mod.Instance],
                   console: Console) -> dict[str, Any]:
    summary = report.summarize(records, selected, protocol=request.protocol)
    explorers = Counter(str(r.get("explorer")) for r in records.values())
    summary["explorer"] = explorers.most_common(1)[0][0] if request.report_only and explorers else request.explorer
    summary["data"] = str(request.data)
    summary["code_commits"] = dict(Counter(str(records[i.instance_id].get("code_commit") or "unrecorded")
                                           for i in selected if i.instance_id in records))
    commits = set(summary["code_commits"]) - {"unrecorded"}
    summary["code_commit"] = commits.pop() if len(commits) == 1 and len(summary["code_commits"]) == 1 else None
    summary["summarized_by"] = runner.code_commit()
    paths = report.write_reports(request.out, summary)
    sys.stdout.write(report.render_markdown(summary))
    sys.stdout.flush()
    console.print("wrote " + ", ".join(str(p) for p in [request.out / RESULTS_FILE, *paths]), soft_wrap=True)
    return summary
