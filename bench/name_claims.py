"""Count the diagnoses of an eval run that claim the report names a definition whose name it never writes.

    .venv/bin/python bench/name_claims.py /work/bench-out/lite-A /work/bench-out/lite-B --data ../shared/bench/swebench_lite.jsonl

Two claims of the offline root cause are checked against the report's text (`funnel.localize.names.report_names`:
a name written as code, qualified, or not a plain English word): the lead "The report names `X`" and each piece of
evidence "defines `X` named in the report". A claim is false when the report writes neither X's own name nor that
of a definition enclosing it; a lead is a member's (`member_leads`) when the report writes only the enclosing
definition's name (`Form` of "The report names `Form.clean`"). And the evidence "defines `X`, whose name the report
uses as the plain word “x”", false when the report writes x only called or as a member (`delete()`,
`QuerySet.defer()`), never as a word of its prose. And "report names `x`, this file's name", false when the report
never writes x as it is quoted (`jsonfactory` of a report writing `JsonFactory`). Per run: the claims and the false
ones.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.data import EvalInputError, load_repo_table  # noqa: E402
from funnel.localize.names import prose_form, report_names  # noqa: E402
from repomap.focus import Focus  # noqa: E402

_LEAD = re.compile(r"^The report names `([^`]+)`")
_EVIDENCE = re.compile(r"defines `([^`]+)` named in the report")
_PLAIN = re.compile(r"whose name the report uses as the plain word “([^”]+)”")
_STEM = re.compile(r"report names `([^`]+)`, this file's name")



def audit(results: Path, reports: dict[str, str]) -> dict[str, int]:
    """The counts of one run's `results.jsonl` (records without a diagnosis or a report are skipped)."""
    counts = {"diagnoses": 0, "leads": 0, "false_leads": 0, "member_leads": 0, "evidence": 0, "false_evidence": 0,
              "plain_words": 0, "false_plain_words": 0, "file_names": 0, "false_file_names": 0}
    for line in results.joinpath("results.jsonl").read_text().splitlines():
        record = json.loads(line)
        text = reports.get(record["instance_id"])
        root = ((record.get("diagnosis") or {}).get("root_cause") or {}).get("explanation")
        if text is None or root is None:
            continue
        focus = Focus.from_text(text)
        counts["diagnoses"] += 1
        lead = _LEAD.match(root)
        if lead:
            named = report_names(lead.group(1), focus)
            counts["leads"] += 1
            counts["false_leads"] += named is None
            counts["member_leads"] += named is not None and named != lead.group(1)
        for named in _EVIDENCE.findall(root):
            counts["evidence"] += 1
            counts["false_evidence"] += report_names(named, focus) is None
        for word in _PLAIN.findall(root):
            counts["plain_words"] += 1
            counts["false_plain_words"] += prose_form(word, text) is not None
        for word in _STEM.findall(root):
            counts["file_names"] += 1
            counts["false_file_names"] += re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is None
    return counts


def count_runs(description: str, audit_run: Callable[..., dict[str, int]], *, repos: bool = False,
               flags: Mapping[str, str] | None = None) -> None:
    """Read `RUN... --data DATA` from the command line and print one JSON line of `audit_run`'s counts per run
    (given the reports' texts by instance id; with `repos`, also `--repos REPOS.toml`'s git directories by
    repository name, as a third argument; each of `flags` (keyword: help) a switch, `--list-claims` for
    `list_claims`, passed by keyword)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("runs", type=Path, nargs="+", help="eval output directories (results.jsonl)")
    ap.add_argument("--data", type=Path, required=True, help="the JSONL the eval ran (problem_statement)")
    if repos:
        ap.add_argument("--repos", type=Path, required=True, help="the eval's repositories TOML (git directories)")
    for keyword, text in (flags or {}).items():
        ap.add_argument("--" + keyword.replace("_", "-"), dest=keyword, action="store_true", help=text)
    args = ap.parse_args()
    try:
        reports = {r["instance_id"]: r["problem_statement"]
                   for r in (json.loads(x) for x in args.data.read_text().splitlines() if x.strip())}
        extra = (load_repo_table(args.repos).repos,) if repos else ()
    except (OSError, EvalInputError) as exc:
        ap.error(str(exc))
    switches = {keyword: getattr(args, keyword) for keyword in flags or {}}
    for run in args.runs:
        print(json.dumps({"run": str(run), **audit_run(run, reports, *extra, **switches)}))


def main() -> None:
    """Print one JSON line of counts per run."""
    count_runs(__doc__.split("\n")[0], audit)


if __name__ == "__main__":
    main()
