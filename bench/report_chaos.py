"""Random reports through the offline investigator: every run must end `done`, within seconds, without an exception.

    .venv/bin/python bench/report_chaos.py --tree /work/fz/requests --tree /work/fz/jq --seconds 600

Each report is built from random lines of the development sets' real reports, paths of the tree with absurd line
numbers and anchors, control and format characters, fence and comment openers, traceback and panic openers, and
lines with such a piece spliced in. Prints the runs, the ones that ended otherwise or took over 20 s, and writes each
such report to `--cases` for replay.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from funnel import investigate_sync  # noqa: E402
from schemas.enums import Source  # noqa: E402
from schemas.report import BugReport  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
DATA = [HERE.parent / "shared/bench/swebench_lite.jsonl", HERE.parent / "shared/bench/multilang_dev.jsonl"]
PIECES = ["\x00", "\ud800", "\u202e", "\x1b[2J", "`", "```", "~~~", "<!--", "-->", "\r", "\t", "\\", "::", "#L", ":0",
          ":-1", ":99999999999999999999", "#L5-L2", "..", "/..", "C:\\", "%s", "{", "}", "[", "]", "(", ")", 'File "',
          '", line ', ", in ", "Traceback (most recent call last):", "at ", ".java:", "panicked at ",
          "goroutine 1 [running]:", "\u00a0", "\u200b", "ǅ", "İ", "ß", "\ufeff", "\U0001F600", "    ", "\n\n\n"]
"""What a hostile or merely odd report is made of, besides real report lines and the tree's paths."""


def report_text(rng: random.Random, lines: list[str], paths: list[str]) -> str:
    """One random report body."""
    parts = []
    for _ in range(rng.randint(1, 40)):
        k = rng.random()
        if k < 0.5:
            parts.append(rng.choice(lines))
        elif k < 0.7:
            suffix = rng.choice(["", f":{rng.randint(-5, 10 ** rng.randint(1, 25))}", "#L3-L1", " line 0", "()"])
            parts.append(rng.choice(paths) + suffix)
        elif k < 0.85:
            parts.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))))
        else:
            line = rng.choice(lines)
            at = rng.randint(0, len(line))
            parts.append(line[:at] + rng.choice(PIECES) + line[at:])
    return rng.choice(["\n", " ", "\n\n", "\r\n"]).join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, action="append", required=True, help="a work tree to investigate (repeat)")
    ap.add_argument("--data", type=Path, action="append", help="JSONL sets whose problem statements give lines")
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=Path, default=Path("/tmp/report-chaos"), help="where odd reports are written")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    lines = [ln for f in (args.data or DATA) for row in f.read_text(encoding="utf-8").splitlines() if row.strip()
             for ln in json.loads(row)["problem_statement"].split("\n")]
    paths = {t: [str(p.relative_to(t)) for p in sorted(t.rglob("*")) if p.is_file() and ".git" not in p.parts][:400]
             for t in args.tree}
    runs, odd = 0, []
    until = time.time() + args.seconds
    while time.time() < until:
        tree = rng.choice(args.tree)
        text = report_text(rng, lines, paths[tree])
        report = BugReport(title=(text.split("\n")[0].strip() or "x")[:200], body=text[:200_000], source=Source.eval)
        started = time.time()
        try:
            term = investigate_sync(report, tree).diagnosis.termination
            said = "" if term.reason.value == "done" else f"{term.reason.value}: {term.detail[:200]}"
        except Exception:
            said = "raised " + traceback.format_exc(limit=3)[-400:]
        took = time.time() - started
        if said or took > 20:
            odd.append(said or f"took {took:.1f} s")
            args.cases.mkdir(parents=True, exist_ok=True)
            (args.cases / f"case-{len(odd)}.json").write_text(json.dumps({"tree": str(tree), "body": text}))
        runs += 1
    print(f"runs {runs}, odd {len(odd)}")
    for said in odd:
        print(" -", said)


if __name__ == "__main__":
    main()
