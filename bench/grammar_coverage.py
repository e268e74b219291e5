"""How well a language's grammar reads a real tree, beside the pattern reader it replaced.

    .venv/bin/python bench/grammar_coverage.py GIT_DIR_OR_TREE [GIT_DIR_OR_TREE ...] [--json OUT]

For each tree (a directory, or a git directory read at its HEAD into a temporary directory by the eval's own
`TreeCache`, which leaves out a blob a partial snapshot lacks and keeps the rest), per language with a
grammar among its files: how many files parse with no error node, and how many definitions (and of them functions
and methods) the grammar's tags find, against the definitions the keyword/brace pattern reader finds in the same
files (`funnel.localize.corpus.regex_definitions`, what the ranking used for a language with no grammar). A file
with syntax errors still yields what parses.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.trees import TreeCache  # noqa: E402
from funnel.localize.corpus import regex_definitions  # noqa: E402
from repomap.encoding import to_utf8  # noqa: E402
from repomap.languages import grammar, language_for  # noqa: E402
from repomap.tags import extract_tags  # noqa: E402

_CALLABLE = frozenset({"function", "method"})


def _files(tree: Path) -> list[Path]:
    return [Path(d) / f for d, _, names in os.walk(tree) if "/.git" not in d for f in names]


def coverage(tree: Path) -> dict[str, dict[str, float | int]]:
    """Per language: files, files parsed cleanly, definitions (callable ones) by grammar and by pattern."""
    counts: dict[str, Counter] = {}
    for path in _files(tree):
        rel = path.relative_to(tree).as_posix()
        data = to_utf8(path.read_bytes())
        spec = language_for(rel, data)
        if spec is None or spec.name == "python":
            continue
        c = counts.setdefault(spec.name, Counter())
        c["files"] += 1
        c["clean"] += not grammar(spec.name).parser.parse(data).root_node.has_error
        defs = extract_tags(data, spec.name).definitions(rel)
        c["grammar"] += len(defs)
        c["grammar_callable"] += sum(d.kind.value in _CALLABLE for d in defs)
        c["pattern"] += len(regex_definitions(rel, data.decode("utf-8", "replace")))
    return {name: {**c, "clean_share": round(c["clean"] / c["files"], 3)} for name, c in sorted(counts.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+", help="a directory, or a git directory read at HEAD")
    ap.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = ap.parse_args()
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="grammar-coverage-") as scratch:
        trees = TreeCache(Path(scratch), read_only=False)
        for n, given in enumerate(args.trees):
            tree = Path(given)
            if not (tree / ".git").exists() and (tree / "HEAD").is_file():
                tree = trees.materialize(f"tree/{n}", tree, "HEAD").path
            out[given] = coverage(tree)
    print("| tree | language | files | parsed with no error | definitions, grammar (functions and methods) | "
          "definitions, pattern reader |")
    print("|---|---|---:|---:|---:|---:|")
    for given, langs in out.items():
        for name, c in langs.items():
            print(f"| {Path(given).parent.name if given.endswith('/repo') else given} | {name} | {c['files']} | "
                  f"{c['clean']} ({c['clean_share']:.1%}) | {c['grammar']} ({c['grammar_callable']}) | {c['pattern']} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
