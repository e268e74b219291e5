"""How well does `funnel.verify` keep good citations, fix provably misplaced ones and refuse bad ones?

Citations are made from real code of cached benchmark trees (random `def` lines, seeded), then damaged the
way models damage them: lines shifted, a leading directory dropped, snippets re-indented or copied with line
numbers, paths invented, lines past the end, snippets altered. Each kind has one right outcome. No gold answers
are used. Writes /work/bench-out/verify_bench.json and prints a table.

    .venv/bin/python bench/verify_bench.py --repos 4 --per-repo 12
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

from funnel.report.template import DraftAffectedFile, ReportDraft
from funnel.report.verify import check_claims

TREES = Path("/work/bench-cache/trees")
OUT = Path("/work/bench-out/verify_bench.json")
_DEF = re.compile(r"^\s*def \w+\(")


def _sample(tree: Path, rng: random.Random, n: int) -> list[tuple[str, int, list[str]]]:
    files = sorted(p for p in tree.rglob("*.py") if "/tests/" not in p.as_posix() and p.stat().st_size < 400_000)
    rng.shuffle(files)
    picked = []
    for path in files:
        lines = path.read_text(errors="replace").splitlines()
        defs = [i for i, line in enumerate(lines, 1) if _DEF.match(line) and i + 4 <= len(lines)]
        rel = path.relative_to(tree).as_posix()
        if defs and rel.count("/") >= 1:
            picked.append((rel, rng.choice(defs), lines))
        if len(picked) == n:
            break
    return picked


def _cases(rel: str, line: int, lines: list[str]) -> list[tuple[str, DraftAffectedFile, str, tuple[str, int] | None]]:
    """(kind, claim, expected outcome `keep|fix|reject`, expected (path, line_start) when kept)."""
    snippet = "\n".join(lines[line - 1 : line + 3])
    dedented = "\n".join(s.strip() for s in lines[line - 1 : line + 3])
    numbered = "\n".join(f"{n:>5}| {s}" for n, s in zip(range(line, line + 4), lines[line - 1 : line + 3]))
    end = line + 3
    shift = 60 if line + 60 + 3 <= len(lines) else -60
    altered = snippet.replace("(", "( __bugsleuth_altered__ ", 1)
    short = rel.split("/", 1)[1]

    def loc(path: str, start: int, stop: int, ev: str = "") -> DraftAffectedFile:
        return DraftAffectedFile(path=path, line_start=start, line_end=stop, evidence=ev)

    want = (rel, line)
    cases = [
        ("exact citation", loc(rel, line, end, snippet), "keep", want),
        ("snippet re-indented", loc(rel, line, end, dedented), "keep", want),
        ("snippet with read_range numbers", loc(rel, line, end, numbered), "keep", want),
        ("lines off by 2", loc(rel, line + 2, end + 2, snippet), "keep", (rel, line + 2)),
        ("no snippet, lines in range", loc(rel, line, end), "keep", want),
        ("lines far off, snippet right", loc(rel, max(1, line + shift), max(1, end + shift), snippet), "fix", want),
        ("leading directory dropped", loc(short, line, end, snippet), "fix", want),
        ("invented path", loc(f"{rel.rsplit('/', 1)[0]}/nonexistent_module.py", line, end), "reject", None),
        ("invented path with snippet of nothing", loc("lib/made_up.py", 3, 5, "x = totally_made_up()"), "reject", None),
        ("lines past the end", loc(rel, len(lines) + 50, len(lines) + 60), "reject", None),
        ("snippet altered", loc(rel, line, end, altered), "reject", None),
        ("escape attempt", loc("../" + rel, line, end), "reject", None),
    ]
    return cases


def main() -> None:
    """Run the benchmark and print a table of outcomes per damage kind."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=int, default=4)
    parser.add_argument("--per-repo", type=int, default=12)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    trees = []
    for repo_dir in sorted(TREES.iterdir()):
        commits = sorted(p for p in repo_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
        if commits:
            trees.append(commits[0])
    trees = trees[: args.repos]
    stats: dict[str, dict[str, float]] = {}
    failures = []
    for tree in trees:
        for rel, line, lines in _sample(tree, rng, args.per_repo):
            for kind, claim, expected, where in _cases(rel, line, lines):
                started = time.perf_counter()
                out = check_claims(ReportDraft(affected_files=[claim]), tree)
                ms = (time.perf_counter() - started) * 1000
                kept = out.affected_files[0] if out.affected_files else None
                if expected == "reject":
                    ok = kept is None
                else:
                    ok = kept is not None and (kept.path, kept.line_start) == where
                    ok = ok and (bool(out.corrections) == (expected == "fix") or expected == "keep")
                row = stats.setdefault(kind, {"n": 0, "ok": 0, "ms": 0.0, "expected": expected})  # type: ignore[dict-item]
                row["n"] += 1
                row["ok"] += int(ok)
                row["ms"] += ms
                if not ok and len(failures) < 40:
                    failures.append({"tree": tree.name[:12], "kind": kind, "claim": claim.model_dump(),
                                     "kept": kept.model_dump() if kept else None,
                                     "rejected": [r.reason for r in out.rejected], "corrections": out.corrections})  # fmt: skip
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"trees": [str(t) for t in trees], "stats": stats, "failures": failures}, indent=2))
    print(f"| damage | expected | claims | right | mean ms per claim |\n|---|---|---|---|---|")
    total = right = 0
    for kind, row in stats.items():
        total += int(row["n"])
        right += int(row["ok"])
        print(f"| {kind} | {row['expected']} | {int(row['n'])} | {row['ok'] / row['n']:.2f} | {row['ms'] / row['n']:.1f} |")
    print(f"| **all** | | {total} | {right / max(total, 1):.3f} | |")


if __name__ == "__main__":
    main()
