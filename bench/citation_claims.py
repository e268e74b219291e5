"""Count the citations and quotes of an eval run that show no code, and the claims they back that say nothing.

    .venv/bin/python bench/citation_claims.py /work/bench-out/ml-A /work/bench-out/ml-F

Read from each run's `results.jsonl` alone (what the diagnosis quotes is the file's text at the instance's commit,
checked by the verifier):
- `closing_only`: cited ranges whose quoted lines are blank or only close brackets (a definition's last `}`);
- `declarations`: cited ranges that are a one-line module declaration (Rust's `mod x;`, TypeScript's
  `declare module "x";`), which shows nothing of the code;
- `empty_evidence`: evidence bullets (`path:line` in `def`: `code`) whose quoted code is blank or only brackets;
- `header_lines`: root causes whose "Line N there shares the most terms with the report" is the cited
  definition's own header (the line writing its name with an opening parenthesis and ending the signature), which
  says which definition, not where in it;
- `citations_rejected`: citations of the prose (summary, root cause, change descriptions) the verifier dropped or
  flagged (`funnel.report.mentions`: a file the repository lacks, a line past a file's end), and `claims_total` the
  claims the diagnoses count in all (their `stats.claims_total`).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

_CLOSING = re.compile(r"[\s{}()\[\];,]*")
_DECLARATION = re.compile(r"\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+\s*;\s*|\s*declare\s+module\s+['\"][^'\"]+['\"]\s*;\s*")
_BULLET = re.compile(r"^`[^`]+:\d+`(?: in `[^`]*`)?: `(.*)`$", re.S)
_SHARED = re.compile(r"Line \d+ there shares the most terms with the report: `(.*?)`\. ")


def _is_header(code: str, symbol: str | None) -> bool:
    name = (symbol or "").rpartition(".")[2]
    return bool(name) and re.search(rf"(?<![\w$.>:]){re.escape(name)}\s*(?:<[^>]*>)?\s*\(", code) is not None and \
        code.rstrip().endswith(("{", ":", "->", "=")) and not code.lstrip().startswith(("return", "if ", "raise"))


def audit(results: Path) -> dict[str, int]:
    """The counts of one run's `results.jsonl` (records without a diagnosis are skipped)."""
    counts = {"diagnoses": 0, "citations": 0, "closing_only": 0, "declarations": 0, "evidence": 0,
              "empty_evidence": 0, "shared_lines": 0, "header_lines": 0, "citations_rejected": 0,
              "claims_total": 0}
    for line in results.joinpath("results.jsonl").read_text().splitlines():
        diagnosis = json.loads(line).get("diagnosis") or {}
        if not diagnosis:
            continue
        counts["diagnoses"] += 1
        counts["citations_rejected"] += sum(r.get("kind") == "citation" for r in diagnosis.get("rejected") or [])
        counts["claims_total"] += (diagnosis.get("stats") or {}).get("claims_total", 0)
        for item in diagnosis.get("affected_files") or []:
            quoted = item.get("evidence") or ""
            counts["citations"] += 1
            counts["closing_only"] += bool(quoted) and _CLOSING.fullmatch(quoted) is not None
            counts["declarations"] += _DECLARATION.fullmatch(quoted) is not None
        root = diagnosis.get("root_cause") or {}
        for bullet in root.get("evidence") or []:
            found = _BULLET.match(bullet)
            if found:
                counts["evidence"] += 1
                counts["empty_evidence"] += _CLOSING.fullmatch(found.group(1)) is not None
        shared = _SHARED.search(root.get("explanation") or "")
        cited = (diagnosis.get("affected_files") or [{}])[0].get("symbol")
        if shared:
            counts["shared_lines"] += 1
            counts["header_lines"] += _is_header(shared.group(1), cited)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="eval output folders (holding results.jsonl)")
    args = parser.parse_args()
    for run in args.runs:
        print(json.dumps({"run": str(run), **audit(run)}))


if __name__ == "__main__":
    main()
