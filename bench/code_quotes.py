"""Count how an eval run's diagnoses render: code quotes cut short and stray backticks, read as CommonMark reads
code spans (the dashboard's `inline_code`, which GitHub's comments and the markdown export agree with).

    .venv/bin/python bench/code_quotes.py /work/bench-out/ml-A /work/bench-out/ml-B

Per run: the diagnoses, the evidence bullets quoting a code line (`` `path:line` in `name`: `code` ``), those whose
code does not render as the one code span it was written as (a backtick inside closed it early), and the texts
(summary, explanation, evidence, change descriptions) that leave a backtick outside any code span (a quoted title's
`doesn`t` pairing with a path written after it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.dashboard._pages import inline_code  # noqa: E402

_QUOTE = re.compile(r"^`[^`]+:\d+`(?: in `[^`]+`)?: (`+.*`+)(?: \(the existing .*\))?$")
_CODE = re.compile(r"<code>(?:(?!</code>).)*</code>")


def _texts(diagnosis: dict) -> list[str]:
    root = diagnosis.get("root_cause") or {}
    return [diagnosis.get("summary", ""), root.get("explanation", ""), *root.get("evidence", []),
            *(c.get("description", "") for c in diagnosis.get("proposed_changes", []))]


def audit(run: Path) -> dict[str, int]:
    """The counts of one run."""
    counts = {"diagnoses": 0, "code_quotes": 0, "cut_short": 0, "texts": 0, "stray_backtick": 0}
    for line in run.joinpath("results.jsonl").read_text().splitlines():
        diagnosis = json.loads(line).get("diagnosis") or {}
        counts["diagnoses"] += 1
        for text in _texts(diagnosis):
            counts["texts"] += 1
            html = str(inline_code(text))
            counts["stray_backtick"] += "`" in _CODE.sub("", html)
        for bullet in (diagnosis.get("root_cause") or {}).get("evidence", []):
            if m := _QUOTE.match(bullet):
                counts["code_quotes"] += 1
                counts["cut_short"] += _CODE.fullmatch(str(inline_code(m.group(1)))) is None
    return counts


def main() -> None:
    """Print one JSON line of counts per run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    for run in parser.parse_args().runs:
        print(json.dumps({"run": str(run), **audit(run)}))


if __name__ == "__main__":
    main()
