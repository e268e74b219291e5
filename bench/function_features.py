"""Dump the definitions of the fused ranking's best files with features, for a function-level reranker.

    .venv/bin/python bench/function_features.py DATA.jsonl --out /work/bench-out/features/lite-fn.jsonl [--jobs 2]

For each instance (eval format, with `gold_functions`, else `gold_line_ranges`): the ranking's own function list
(`ranking.functions`, as the eval records it) and, for each of the best `--files` files, every definition the
symbol ranking scored, with its features and whether it is a gold function (without function gold: whether it is
the innermost definition holding a line the fix changed). Gold is read only for that label.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.data import parse_instance
from app.evaluation.metrics import entity_matches, gold_entities
from bench._trees import ensure_tree, mirror_git_dir
from bench.rank_features import dump_line
from funnel.localize.citations import entity_name, ranked_locations
from funnel.localize.corpus import Corpus
from funnel.localize.history import HistorySource
from funnel.localize.learned import definition_rows
from funnel.localize.rank import RankConfig, rank_report
from repomap import build_repo_map


def instance(row: dict, files: int) -> dict:
    """The function-level feature line of one instance."""
    root = ensure_tree(row["repo"], row["base_commit"])
    text = row["problem_statement"]
    repo_map = build_repo_map(root, focus=text)
    source = HistorySource(mirror_git_dir(row["repo"]), row["base_commit"])
    deep = dataclasses.replace(RankConfig(), symbols_kept=60)
    wide, corpus = rank_report(text, root, repo_map, config=deep, history=source)
    # each file's definitions as the default ranking keeps them: the wide ranking's first `symbols_kept`
    kept = dataclasses.replace(wide, candidates=[dataclasses.replace(c, symbols=c.symbols[: RankConfig().symbols_kept])
                                                 for c in wide.candidates], config=RankConfig())
    current = ranked_locations(kept, corpus).functions
    gold = gold_entities(row.get("gold_functions") or {}) or line_entities(corpus, row)
    defs = []
    for cand, sym, values in definition_rows(wide.candidates, text, files, corpus):
        name = entity_name(corpus, cand.path, sym.span)
        defs.append({"entity": name, "label": int(any(entity_matches(name, g) for g in gold)),
                     "x": {a: round(b, 4) for a, b in values.items() if b}})
    return {"id": row["instance_id"], "repo": row["repo"], "language": row.get("language", ""), "gold": gold,
            "current": current, "defs": defs}


def line_entities(corpus: Corpus, row: dict) -> list[str]:
    """The innermost definitions holding a changed line, as `path:name` (the function gold of a set that has only
    line gold)."""
    out: list[str] = []
    for path, ranges in parse_instance(row).gold.line_ranges.items():
        at = corpus.by_path.get(path)
        spans = corpus.docs[at].symbols if at is not None else []
        for first, *rest in ranges:
            for line in range(first, (rest[-1] if rest else first) + 1):
                inside = [s for s in spans if s.start_line <= line <= s.end_line]
                if inside:
                    out.append(entity_name(corpus, path, min(inside, key=lambda s: s.end_line - s.start_line)))
    return list(dict.fromkeys(out))


def _work(args: tuple[dict, int]) -> str:
    row, files = args
    return dump_line(row, lambda: instance(row, files))


def main() -> int:
    """Dump every instance with function gold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.open(encoding="utf-8") if line.strip()]
    split = {r["instance_id"]: ("tune" if k % 2 == 0 else "check") for k, r in enumerate(rows)}
    todo = [(r, args.files) for r in rows
            if gold_entities(r.get("gold_functions") or {}) or parse_instance(r).gold.line_ranges]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out, ProcessPoolExecutor(args.jobs) as workers:
        for line in workers.map(_work, todo):
            record = json.loads(line)
            record["split"] = split[record["id"]]
            out.write(json.dumps(record) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
