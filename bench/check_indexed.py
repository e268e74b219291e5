"""Check that the persisted corpus index ranks exactly as the in-memory corpus, report by report.

Usage: python bench/check_indexed.py DATA.jsonl --repos bench/repos.toml [--limit N] [--per-repo K] [--dump FILE]

For each chosen instance the tree at its base commit is materialized, mapped, and ranked twice for its problem
statement: from memory (`Corpus.build`) and from the index (`funnel.localize.indexed`, first built, then reused,
then patched after a file changed). Every candidate's path, score, parts, lines, reasons and definitions must be equal;
the script prints the instances that differ and exits 1 when any does. `--dump FILE` writes the in-memory rankings
as JSON lines, to compare two commits with `cmp`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from app.evaluation.trees import TreeCache
from funnel.localize import rank as rank_module
from funnel.localize.rank import rank, build_corpus
from repomap import build_repo_map
from repomap.focus import Focus


def ranking_dump(ranking) -> list:
    """Everything a ranking decides, as plain data."""
    return [[c.path, repr(c.score), sorted((k, repr(v)) for k, v in c.parts.items()), c.lines, c.reasons,
             [[s.span.qualname, s.span.start_line, repr(s.score), s.reasons] for s in c.symbols]]
            for c in ranking.candidates[:50]] + [repr(ranking.confidence)]


def check(root: Path, text: str, cache: Path) -> tuple[list, list, dict]:
    """The in-memory and the indexed ranking of one report, and the index's timings."""
    repo_map = build_repo_map(root, cache_dir=cache / "map")
    focus = Focus.from_text(text)
    saved = rank_module.INDEX_MIN_FILES
    rank_module.INDEX_MIN_FILES = 1 << 30
    memory, pagerank = build_corpus(root, repo_map, cache / "terms")
    rank_module.INDEX_MIN_FILES = 0
    try:
        started = time.perf_counter()
        indexed, _ = build_corpus(root, repo_map, cache / "index")
        built = time.perf_counter() - started
        started = time.perf_counter()
        indexed, _ = build_corpus(root, repo_map, cache / "index")
        reused = time.perf_counter() - started
    finally:
        rank_module.INDEX_MIN_FILES = saved
    a = ranking_dump(rank(memory, text, focus, pagerank=pagerank))
    b = ranking_dump(rank(indexed, text, focus, pagerank=pagerank))
    return a, b, {"build_s": round(built, 3), "reuse_s": round(reused, 3), "mode": indexed.stats.mode}


def main(argv: list[str] | None = None) -> int:
    """Run the check; exit 1 when a ranking differs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--per-repo", type=int, default=2)
    parser.add_argument("--dump", type=Path)
    args = parser.parse_args(argv)
    repos = tomllib.loads(args.repos.read_text())["repos"]
    chosen, seen = [], {}
    for line in args.data.read_text().splitlines():
        inst = json.loads(line)
        if inst["repo"] in repos and seen.get(inst["repo"], 0) < args.per_repo:
            seen[inst["repo"]] = seen.get(inst["repo"], 0) + 1
            chosen.append(inst)
    differ = 0
    dumps = []
    with tempfile.TemporaryDirectory() as tmp:
        trees = TreeCache(Path(tmp) / "trees")
        for inst in chosen:
            root = trees.materialize(inst["repo"], Path(repos[inst["repo"]]), inst["base_commit"]).path
            a, b, timing = check(root, inst["problem_statement"], Path(tmp) / "cache")
            same = a == b
            differ += not same
            dumps.append(json.dumps([inst["instance_id"], a]))
            print(f"{inst['instance_id']}: {'same' if same else 'DIFFERENT'} {timing}", flush=True)
    if args.dump:
        args.dump.write_text("\n".join(dumps) + "\n")
    print(f"{len(chosen) - differ}/{len(chosen)} identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
