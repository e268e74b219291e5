"""`bugsleuth eval`: measure localization on real issues against a plain BM25 baseline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from app.evaluation.errors import EvalInputError, EvalSetupError
from app.evaluation.locagent import Protocol


def register(cli: typer.Typer) -> None:
    """Add `eval` to the CLI."""

    @cli.command("eval")
    def eval_command(
        data: Annotated[Path, typer.Argument(help="SWE-bench-style JSONL (instance_id, repo, base_commit, "
                                                  "problem_statement, gold_* fields for scoring).")],
        repos: Annotated[Path | None, typer.Option("--repos", help="TOML file whose \\[repos] table maps owner/name "
                                                                  "to a local git directory (required unless "
                                                                  "--report-only).")] = None,
        limit: Annotated[int | None, typer.Option(help="Run only the first N selected instances.")] = None,
        ids: Annotated[Path | None, typer.Option(help="File of instance ids to run, one per line.")] = None,
        jobs: Annotated[int, typer.Option(help="Instances investigated at once, each in its own process.")] = 1,
        explorer: Annotated[str, typer.Option(help="Explorer: offline, command:<cmd> or a model string.")] = "offline",
        out: Annotated[Path, typer.Option(help="Output directory (results.jsonl, summary.json/.md/.svg); "
                                               "an existing results.jsonl is resumed.")] = Path("bench-out/eval"),
        cache: Annotated[Path | None, typer.Option(help="Tree cache directory \\[default: $BUGSLEUTH_CACHE_DIR/trees, "
                                                        "else /work/bench-cache/trees if present, else "
                                                        "~/.cache/bugsleuth/trees].")] = None,
        baseline: Annotated[bool, typer.Option("--baseline/--no-baseline",
                                               help="Rank files with plain BM25 in the same run.")] = True,
        retry_errors: Annotated[bool, typer.Option(help="Run again instances whose record holds an error.")] = False,
        prepare_only: Annotated[bool, typer.Option(help="Only materialize the trees into the cache.")] = False,
        protocol: Annotated[Protocol | None, typer.Option(help="Also score a published protocol: locagent "
                                                               "(SWE-bench Lite, 274 instances, Acc@k of LocAgent).")]
        = None,
        report_only: Annotated[bool, typer.Option(help="Run nothing: score the records already in OUT/results.jsonl "
                                                       "and write the summaries again.")] = False,
        investigate: Annotated[str, typer.Option(hidden=True, help="Investigate callable as module:function.")]
        = "funnel:investigate_sync",
    ) -> None:
        """Run each instance through the investigation and score the ranked files, functions and lines."""
        # lazy: like every command, so that `bugsleuth --help` stays fast
        from app.evaluation.session import EvalRequest, evaluate

        request = EvalRequest(data=data, repos=repos, limit=limit, ids=ids, jobs=jobs, explorer=explorer, out=out,
                              cache=cache, baseline=baseline, retry_errors=retry_errors, prepare_only=prepare_only,
                              investigate=investigate, protocol=protocol, report_only=report_only)
        try:
            evaluate(request)
        except EvalInputError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        except EvalSetupError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            typer.echo(f"interrupted: finished instances are kept in {out}/results.jsonl; run again to resume",
                       err=True)
            sys.exit(130)
