"""Ranking-only evaluation of the offline investigator (no agent loop), for fast tuning.

    .venv/bin/python bench/tune_offline.py --split tune          # even-numbered instances
    .venv/bin/python bench/tune_offline.py --split check         # odd-numbered instances (held out)
    .venv/bin/python bench/tune_offline.py --set w_frame=1.2 --set test_factor=0.2

Gold fields are read ONLY to score; the ranker sees the problem statement and the tree, nothing else.
Results go to /work/bench-out/tune_offline-<split>.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import ensure_tree  # noqa: E402
from funnel.localize.corpus import Corpus  # noqa: E402
from funnel.localize.term_cache import default_cache_dir  # noqa: E402
from funnel.localize.citations import affected_entries  # noqa: E402
from funnel.localize.rank import RankConfig, rank  # noqa: E402
from funnel.localize.file_kinds import is_doc as _is_doc, is_test as _is_test  # noqa: E402
from app.evaluation.metrics import function_acc_at_k, gold_entities  # noqa: E402
from repomap import build_repo_map  # noqa: E402
from repomap.focus import Focus  # noqa: E402

_CODE_EXT = (".py", ".pyi", ".js", ".jsx", ".mjs", ".ts", ".tsx", ".go", ".java", ".kt", ".rs", ".c", ".h", ".cc",
             ".cpp", ".cxx", ".hpp", ".hh", ".rb")
_SKIP_DIRS = {"node_modules", "vendor", "third_party", ".venv", "venv", "site-packages", "__pycache__", "build",
              "dist", "target", ".tox", ".git"}


def walk(root: Path) -> list[str]:
    """Code files of a tree, by extension (`--no-map`: pattern definitions instead of the repo map's)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(_CODE_EXT):
                out.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return out


def _map(root: Path, text: str, cache: Path, use_map: bool):
    if not use_map:
        return None
    return build_repo_map(root, focus=text, cache_dir=cache / "repomap" if cache else None)


def _raw(parts: dict[str, float], config: RankConfig) -> dict[str, float]:
    """Signal values before weighting, so fusion weights can be refitted without re-ranking."""
    return {k: round(v / (getattr(config, f"w_{k}") or 1.0), 5) for k, v in parts.items()}


def _config(settings: list[str]) -> RankConfig:
    """The default RankConfig with `--set name=value` overrides, each value read as its knob's type."""
    config = RankConfig()
    overrides = {}
    for item in settings:
        key, value = item.split("=", 1)
        current = getattr(config, key)
        overrides[key] = (value.lower() in ("1", "true", "yes")) if isinstance(current, bool) else type(current)(value)
    return dataclasses.replace(config, **overrides)


def _rows(args: argparse.Namespace) -> list[dict]:
    """The instances of the split, filtered by `--grep`, thinned by `--every` and cut at `--limit`."""
    rows = [json.loads(line) for line in open(args.data)]
    rows = {"tune": rows[0::2], "check": rows[1::2], "all": rows}[args.split]
    if args.grep:
        rows = [r for r in rows if args.grep in r["problem_statement"]]
    if args.every:
        rows = rows[:: args.every]
    if args.limit:
        rows = rows[: args.limit]
    return rows


def _instance(row: dict, config: RankConfig, cache: Path | None, use_map: bool) -> dict:
    """One instance ranked: its figures, timings, the best files and definitions, and the best 300 files' raw
    signals (gold fields are read only to score)."""
    root = ensure_tree(row["repo"], row["base_commit"])
    text = row["problem_statement"]
    t0 = time.perf_counter()
    repo_map = _map(root, text, cache, use_map)
    t1 = time.perf_counter()
    cache_dir = cache / "offline" if cache else default_cache_dir()
    if repo_map is not None:
        paths = [f.path for f in repo_map.files]
        corpus = Corpus.build(root, paths, definitions=repo_map.definitions, cache_dir=cache_dir)
        pagerank = {f.path: f.score for f in repo_map.files}
    else:
        corpus = Corpus.build(root, walk(root), cache_dir=cache_dir)
        pagerank = None
    ranking = rank(corpus, text, Focus.from_text(text), pagerank=pagerank, config=config)
    t2 = time.perf_counter()
    files = [c.path for c in ranking.candidates[:5]]
    syms = list(dict.fromkeys(f"{p}:{s}" for p, s in affected_entries(ranking) if s))[:5]
    gold_file = row["gold_files"]
    gold_funcs = gold_entities(row["gold_functions"])
    return {
        "id": row["instance_id"],
        "acc1": all(g in files[:1] for g in gold_file),
        "acc3": all(g in files[:3] for g in gold_file),
        "acc5": all(g in files[:5] for g in gold_file),
        "fn5": function_acc_at_k(syms, gold_funcs) if gold_funcs else None,
        "rank": next((k + 1 for k, c in enumerate(ranking.candidates) if c.path in gold_file), None),
        "confidence": ranking.confidence,
        "map_s": round(t1 - t0, 2),
        "rank_s": round(t2 - t1, 2),
        "top": files,
        "syms": syms,
        "gold": gold_file,
        "gold_fn": sorted(gold_funcs),
        "features": [
            {"path": c.path, "raw": _raw(c.parts, config), "test": _is_test(c.path), "doc": _is_doc(c.path),
             "syms": [s.span.qualname for s in c.symbols[:5]]}
            for c in ranking.candidates[:300] if c.score > 0
        ],
    }


def _summary(results: list[dict], split: str, config: RankConfig, seconds: float) -> dict:
    """The split's figures: strict file Acc@1 / @3 / @5, function Acc@5, MRR and median timings."""
    n = len(results) or 1
    with_fn = [r["fn5"] for r in results if r["fn5"] is not None]
    return {
        "split": split,
        "n": len(results),
        "file_acc1": round(sum(r["acc1"] for r in results) / n, 3),
        "file_acc3": round(sum(r["acc3"] for r in results) / n, 3),
        "file_acc5": round(sum(r["acc5"] for r in results) / n, 3),
        "fn_acc5": round(sum(with_fn) / (len(with_fn) or 1), 3),
        "mrr": round(sum(1 / r["rank"] for r in results if r["rank"]) / n, 3),
        "median_rank_s": sorted(r["rank_s"] for r in results)[len(results) // 2] if results else 0,
        "median_map_s": sorted(r["map_s"] for r in results)[len(results) // 2] if results else 0,
        "seconds": round(seconds, 1),
        "config": dataclasses.asdict(config),
    }


def main() -> None:
    """Rank a split with one RankConfig, print its figures and write every instance's to `--out`."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="/work/shared/bench/swebench_lite.jsonl")
    parser.add_argument("--split", choices=["tune", "check", "all"], default="tune")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], help="override a RankConfig knob: name=value")
    parser.add_argument("--no-map", action="store_true", help="regex definitions, no PageRank")
    parser.add_argument("--cache", default="", help="term/map cache directory (default: bugsleuth's own cache)")
    parser.add_argument("--grep", default="", help="only instances whose problem statement contains this text")
    parser.add_argument("--every", type=int, default=0, help="take every n-th instance of the split")
    parser.add_argument("--out", default="")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    config = _config(args.set)
    cache = Path(args.cache) if args.cache else None
    results = []
    t_all = time.perf_counter()
    for row in _rows(args):
        r = _instance(row, config, cache, not args.no_map)
        results.append(r)
        if args.verbose:
            print(r["id"], r["rank"], r["fn5"], r["top"][:2], r["syms"][:2], r["gold_fn"][:3], flush=True)
    summary = _summary(results, args.split, config, time.perf_counter() - t_all)
    out = Path(args.out or f"/work/bench-out/tune_offline-{args.split}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "results": results}, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "config"}))


if __name__ == "__main__":
    main()
