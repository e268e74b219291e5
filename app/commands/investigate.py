"""`bugsleuth investigate` and `bugsleuth replay`: run one investigation, or replay stored traces.

Exit codes of `investigate`: 0 when the run finished its report (`done`), 3 when it stopped early with an honest
partial result (budget, needs_info, cancelled), 1 on `error`, 2 on bad input.
Exit codes of `replay`: 0 when no outcome changed, 1 when any did, 2 on bad input.
"""

from __future__ import annotations

import json
import signal
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from app.commands._files import read_text_file, read_text_source
from app.commands._terminal import say


class OutputFormat(StrEnum):
    """How `investigate` prints the diagnosis."""

    markdown = "markdown"
    json = "json"
    sarif = "sarif"


def _read_report(source: str, title: str | None) -> Any:
    """A BugReport from a file or stdin: BugReport JSON, or text whose first line is the title (a text longer than
    the intake limit clipped like a webhook's, its beginning and end kept, the cut stated)."""
    # lazy: pydantic and the schemas cost every other command 0.1 s to import
    from pydantic import ValidationError

    from schemas.enums import Source  # lazy: as above
    from schemas.report import BugReport, clip_body, clip_title  # lazy: as above

    raw = read_text_source(source, "--report")
    if not raw.strip():
        raise typer.BadParameter("the report is empty", param_hint="--report")
    stripped = raw.lstrip()
    if stripped.startswith("{"):
        try:
            report = BugReport.model_validate_json(stripped)
            return report.model_copy(update={"title": title}) if title else report
        except ValidationError as e:
            raise typer.BadParameter(f"not a valid report JSON: {e.errors()[0]['msg']}", param_hint="--report") from e
    head, _, body = raw.strip().partition("\n")
    try:
        return BugReport(title=clip_title(title or head.strip().lstrip("# ")),
                         body=clip_body(body.strip() if not title else raw.strip()), source=Source.cli)  # fmt: skip
    except ValidationError as e:
        raise typer.BadParameter(f"report rejected: {e.errors()[0]['msg']}", param_hint="--report") from e


def _render(result: Any, fmt: OutputFormat) -> str:
    diagnosis = result.diagnosis
    if fmt == OutputFormat.json:
        return diagnosis.model_dump_json(indent=2)
    try:
        from funnel.report import export  # lazy: the report package is needed only to print a diagnosis
    except ImportError:
        export = None  # type: ignore[assignment]
    if fmt == OutputFormat.sarif:
        if export is None or not hasattr(export, "to_sarif"):
            raise typer.BadParameter("SARIF export is not available in this build", param_hint="--format")
        sarif = export.to_sarif(diagnosis)
        return sarif if isinstance(sarif, str) else json.dumps(sarif, indent=2)
    if export is not None and hasattr(export, "to_markdown"):
        return export.to_markdown(diagnosis)
    from funnel.report.template import render_report  # lazy: as `export` above

    term = diagnosis.termination
    tail = f"\n\n_Termination: {term.reason.value}{' — ' + term.detail if term.detail else ''}_\n"
    return render_report(diagnosis) + tail


def _progress(event: Any) -> None:
    kind = event.kind
    if kind == "tool_call":
        line = f"{event.tool}({', '.join(f'{k}={v!r}' for k, v in event.args.items())})"
        if event.error:
            line += f"  ! {event.error.splitlines()[0][:100]}"
    elif kind == "phase_change":
        line = f"phase {event.from_phase.value} -> {event.to_phase.value}{' (forced)' if event.forced else ''}: {event.reason}"
    elif kind == "request":
        line = f"model request: {event.input_tokens} in / {event.output_tokens} out tokens, {event.latency_ms:.0f} ms"
    elif kind == "verify":
        line = "verified: ok" if event.ok else "verify failed: " + "; ".join(event.findings)[:300]
    elif kind == "stop":
        line = f"stop: {event.reason.value}{' — ' + event.detail if event.detail else ''}"
    elif kind == "prepass":
        line = f"pre-pass ({event.seconds:.1f} s): {event.detail}"
        line += "".join(f"\n    {c.path} ({c.score:.2f}) {', '.join(c.symbols[:2])}" for c in event.candidates)
    else:
        line = f"start: explorer {event.explorer}"
    say(f"[{event.attempt}.{event.iteration} {event.phase.value}] {line}", err=True)


def investigate_command(
    path: Annotated[Path, typer.Argument(help="Repository root to investigate (read-only).")],
    report: Annotated[str, typer.Option("--report", "-r", help="Bug report file (text or BugReport JSON), or - for stdin.")],
    explorer: Annotated[str, typer.Option("--explorer", "-e", help="offline | scripted | command:<cmd> | a PydanticAI model string.")] = "offline",
    as_json: Annotated[bool, typer.Option("--json", help="Print the diagnosis as JSON (same as --format json).")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")] = OutputFormat.markdown,
    trace: Annotated[Path | None, typer.Option("--trace", help="Write the JSONL trace here (transcript and diagnosis beside it).")] = None,
    title: Annotated[str | None, typer.Option("--title", help="Report title (default: the report's first line).")] = None,
    structurer: Annotated[str | None, typer.Option("--structurer", help="Model string for structuring (default: the parser).")] = None,
    commit: Annotated[str | None, typer.Option("--commit", help="Commit being investigated, recorded in the result; history after it is never used.")] = None,
    git_dir: Annotated[Path | None, typer.Option("--git-dir", help="Git directory whose history the ranking may use (default: PATH's own, when PATH is a checkout).")] = None,
    no_history: Annotated[bool, typer.Option("--no-history", help="Do not use the repository's git history as evidence.")] = False,
    max_attempts: Annotated[int | None, typer.Option("--max-attempts", min=1, max=5)] = None,
    explore_calls: Annotated[int | None, typer.Option("--explore-calls", min=0, max=24)] = None,
    deep_dive_reads: Annotated[int | None, typer.Option("--deep-dive-reads", min=0, max=24)] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=1.0, help="Wall-clock seconds for the run.")] = None,
    memory: Annotated[Path | None, typer.Option("--memory", help="File of feedback notes shown to the model.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")] = False,
    no_prepass: Annotated[bool, typer.Option("--no-prepass", help="Do not show a model the offline ranking's candidates first.")] = False,
    no_fallback: Annotated[bool, typer.Option("--no-fallback", help="Do not rerun with the offline investigator when the model endpoint fails.")] = False,
) -> None:
    """Investigate a bug report in a repository and print the diagnosis."""
    # lazy: the harness, PydanticAI and the explorers would slow `bugsleuth --help` and every other command
    from funnel.cancel import CancelToken
    from funnel.errors import UserError
    from funnel.explorers import resolve_explorer
    # lazy: as above
    from funnel import investigate_sync
    from funnel.limits import Limits
    from schemas.enums import StopReason

    if not path.is_dir():
        raise typer.BadParameter(f"{path} is not a directory", param_hint="PATH")
    bug = _read_report(report, title)
    changes = {k: v for k, v in {"max_attempts": max_attempts, "explore_calls": explore_calls,
                                 "deep_dive_reads": deep_dive_reads, "timeout_s": timeout}.items() if v is not None}  # fmt: skip
    if no_prepass:
        changes["prepass"] = False
    if no_fallback:
        changes["fallback_to_offline"] = False
    if no_history:
        changes["history"] = False
    try:
        chosen: Any = resolve_explorer(explorer)
    except UserError as e:
        if explorer != "offline":
            say(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo("note: the offline investigator is not available; using the SCRIPTED STAND-IN "
                   "(it locates, it does not investigate).", err=True)  # fmt: skip
        chosen = resolve_explorer("scripted")
    notes = read_text_file(memory, "--memory") if memory is not None else None
    cancel = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel("interrupted (Ctrl-C)"))
    try:
        result = investigate_sync(bug, path, explorer=chosen, limits=Limits(**changes), trace_path=trace,
                                  cancel=cancel, commit=commit, git_dir=git_dir, structurer=structurer, memory=notes,
                                  on_event=None if quiet else _progress)  # fmt: skip
    except UserError as e:
        say(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    finally:
        signal.signal(signal.SIGINT, previous)
    fmt = OutputFormat.json if as_json else fmt
    (say if fmt == OutputFormat.markdown else typer.echo)(_render(result, fmt))
    reason = result.diagnosis.termination.reason
    if reason != StopReason.done:
        raise typer.Exit(1 if reason == StopReason.error else 3)


def replay_command(
    target: Annotated[Path, typer.Argument(help="A trace file (.jsonl) or a directory of traces.")],
    root: Annotated[Path | None, typer.Option("--root", help="Repository root (default: `repo/` beside the trace, else the recorded root).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Re-run stored traces through today's tools and policy; exit 1 when any outcome changed."""
    # lazy: the replay loads the harness and the tools, which would slow every other command
    from funnel.errors import UserError
    from funnel.run.replay import render_table, replay_all

    try:
        results = replay_all(target, root=root)
    except UserError as e:
        say(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    if not results:
        typer.echo(f"error: no traces under {target}", err=True)
        raise typer.Exit(2)
    if as_json:
        typer.echo(json.dumps([{"trace": str(r.trace), "changed": r.changed, "recorded": vars(r.recorded),
                                "replayed": vars(r.replayed)} for r in results], indent=2))  # fmt: skip
    else:
        say(render_table(results))
    if any(r.changed for r in results):
        raise typer.Exit(1)


def register(cli: typer.Typer) -> None:
    """Add `investigate` and `replay` to the CLI."""
    cli.command("investigate")(investigate_command)
    cli.command("replay")(replay_command)
