"""How much of what fixes change lies inside a definition the repo map knows, per language.

    .venv/bin/python bench/definition_coverage.py ../shared/bench/multilang_dev.jsonl --repos bench/repos-multilang.toml
    .venv/bin/python bench/definition_coverage.py DATA --repos REPOS --outside     # list the ranges outside, with
                                                                                  # the syntax around them

A line a fix changes can only be cited inside the definition the diagnosis names; a change in code the map knows
no definition for (a function inside a Rust `cfg_rt! { ... }`, an anonymous `export default` handler) is out of
reach of every in-file rule. For each gold changed-line range (`gold_line_ranges`) of a file in a parsed language,
read at the instance's base commit from the git directory REPOS.toml names, the range counts as *inside* when it
overlaps a definition's lines, as *blank or comment* when it changes only blank or comment lines (a new definition
inserted between two, a doc comment), else as *code outside*. Gold data is read only to score.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.data import load_repo_table  # noqa: E402
from bench._trees import show_blob  # noqa: E402
from repomap.languages import grammar, language_for  # noqa: E402
from repomap.tags import extract_tags  # noqa: E402

_COMMENT = ("//", "/*", "*", "#", "--")
"""How a comment line starts in the parsed languages (a C preprocessor line counts as one: it defines nothing here)."""


def _syntax(root: Any, row: int, line: str) -> str:
    """The node types from the changed line's innermost node outwards (four levels), in the tree under `root`."""
    col = len(line) - len(line.lstrip())
    node = root.named_descendant_for_point_range((row, col), (row, len(line.rstrip())))
    chain = []
    while node is not None and len(chain) < 4:
        chain.append(node.type)
        node = node.parent
    return " < ".join(chain)


def classify(source: bytes, language: str, ranges: list[list[int]]) -> list[tuple[str, int, str]]:
    """(inside | blank or comment | code outside, first changed code line, its syntax) of each range."""
    spans = [(d[3], d[4]) for d in extract_tags(source, language).defs]
    lines = source.decode("utf-8", "replace").split("\n")
    root = None  # parsed once, for the first range outside every definition
    out = []
    for a, b in ranges:
        if any(s <= b and a <= e for s, e in spans):
            out.append(("inside", a, ""))
            continue
        code = [n for n in range(a, min(b, len(lines)) + 1)
                if n >= 1 and lines[n - 1].strip() and not lines[n - 1].strip().startswith(_COMMENT)]
        if not code:
            out.append(("blank or comment", a, ""))
            continue
        root = root or grammar(language).parser.parse(source).root_node
        out.append(("code outside", code[0], _syntax(root, code[0] - 1, lines[code[0] - 1])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="instances with gold_line_ranges (JSON lines)")
    parser.add_argument("--repos", type=Path, required=True, help="REPOS.toml: owner/name = git directory")
    parser.add_argument("--outside", action="store_true", help="list every range in code outside definitions")
    args = parser.parse_args()
    table = load_repo_table(args.repos)
    counts: dict[str, Counter] = {}
    for line in args.data.read_text().splitlines():
        inst = json.loads(line)
        git_dir = table.repos.get(inst["repo"])
        if git_dir is None:
            continue
        for path, ranges in (inst.get("gold_line_ranges") or {}).items():
            source = show_blob(git_dir, inst["base_commit"], path)
            spec = language_for(path, source) if source else None
            if spec is None:
                continue
            for where, at, syntax in classify(source, spec.name, ranges):
                counts.setdefault(spec.name, Counter())[where] += 1
                if args.outside and where == "code outside":
                    print(f"{inst['instance_id']}  {path}:{at}  {syntax}")
    print("| language | ranges | inside a definition | blank or comment | code outside |")
    print("|---|---:|---:|---:|---:|")
    for language, c in sorted(counts.items()):
        total = sum(c.values())
        print(f"| {language} | {total} | {c['inside']} | {c['blank or comment']} | {c['code outside']} |")


if __name__ == "__main__":
    main()
