"""Check the prose citations of an eval run's diagnoses again, with the code of today, against the trees they came
from: what `funnel.report.mentions` would drop or flag in each run.

    .venv/bin/python bench/prose_claims.py /work/bench-out/ml-A /work/bench-out/lite-A --data ../shared/bench/multilang_dev.jsonl ../shared/bench/swebench_lite.jsonl

Reads each record's diagnosis from `results.jsonl` and its tree from the eval's tree cache (`<cache>/trees/
<owner>__<name>/<commit>-exact`, the one `bugsleuth eval` extracted; a record whose tree is not there is skipped).
Prints, per run, the citations checked and those that do not hold, then each of these with its reason: what a
false drop would look like before it reaches a diagnosis. With `--inject`, it also plants two false citations in
each diagnosis that quotes evidence (the first bullet's file renamed, `config.py` → `config_old.py`; the second
bullet's line moved 50 lines past its file's end) and counts how many the check catches.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.git_export import EXACT_TREE_SUFFIX  # noqa: E402
from funnel.limits import VerifyLimits  # noqa: E402
from funnel.report.mentions import ProseCheck  # noqa: E402
from funnel.report.repo_files import RepoFiles  # noqa: E402


_BULLET = re.compile(r"^`([^`]+?)\.(\w+):(\d+)`")


def _planted(bullets: list[str], root: Path) -> list[str]:
    """The first two evidence bullets made false: the first's file renamed, the second's line past its file's end."""
    out = list(bullets)
    if out and (m := _BULLET.match(out[0])):
        out[0] = f"`{m.group(1)}_old.{m.group(2)}:{m.group(3)}`" + out[0][m.end():]
    if len(out) > 1 and (m := _BULLET.match(out[1])):
        size = len((root / f"{m.group(1)}.{m.group(2)}").read_text(errors="replace").splitlines())
        out[1] = f"`{m.group(1)}.{m.group(2)}:{size + 50}`" + out[1][m.end():]
    return out


def audit(run: Path, commits: dict[str, tuple[str, str]], trees: Path,
          inject: bool = False) -> tuple[dict[str, int], list[str]]:
    """The counts of one run and a line per citation that does not hold."""
    counts = {"diagnoses": 0, "skipped": 0, "checked": 0, "not_borne_out": 0, "planted": 0, "caught": 0}
    found: list[str] = []
    for line in run.joinpath("results.jsonl").read_text().splitlines():
        record = json.loads(line)
        diagnosis = record.get("diagnosis") or {}
        repo, commit = commits.get(record["instance_id"], (record.get("repo", ""), record.get("base_commit", "")))
        root = trees / repo.replace("/", "__") / f"{commit}{EXACT_TREE_SUFFIX}"
        if not diagnosis or not root.is_dir():
            counts["skipped"] += 1
            continue
        counts["diagnoses"] += 1
        prose = ProseCheck(RepoFiles(root, VerifyLimits(), None), [f["path"] for f in diagnosis["affected_files"]])
        prose.annotate(diagnosis.get("summary", ""), "summary")
        prose.annotate((diagnosis.get("root_cause") or {}).get("explanation", ""), "explanation")
        prose.keep((diagnosis.get("root_cause") or {}).get("evidence", []))
        for change in diagnosis.get("proposed_changes") or []:
            prose.annotate(change.get("description", ""), "change", lines_only=True)
        counts["checked"] += prose.checked
        counts["not_borne_out"] += len(prose.rejected)
        found += [f"{record['instance_id']}: {r.claim.get('path')}:{r.claim.get('line_start')} ({r.reason[:90]})"
                  for r in prose.rejected]
        if inject:
            bullets = (diagnosis.get("root_cause") or {}).get("evidence", [])
            planted = [b for b, o in zip(_planted(bullets, root), bullets) if b != o]
            check = ProseCheck(prose.repo, prose.cited)
            counts["planted"] += len(planted)
            counts["caught"] += len(planted) - len(check.keep(planted))
    return counts, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="eval output folders (holding results.jsonl)")
    parser.add_argument("--data", nargs="*", type=Path, default=[], help="the instances' files (repo, base commit)")
    parser.add_argument("--trees", type=Path, default=Path.home() / ".cache" / "bugsleuth" / "trees")
    parser.add_argument("--inject", action="store_true", help="plant two false citations per diagnosis and count")
    args = parser.parse_args()
    commits: dict[str, tuple[str, str]] = {}
    for data in args.data:
        for line in data.read_text().splitlines():
            item = json.loads(line)
            commits[item["instance_id"]] = (item["repo"], item["base_commit"])
    for run in args.runs:
        counts, found = audit(run, commits, args.trees, args.inject)
        print(json.dumps({"run": str(run), **counts}))
        for entry in found:
            print("  " + entry)


if __name__ == "__main__":
    main()
