"""Which function bodies of a tree the repo map does not know as definitions, per language and syntax shape.

    .venv/bin/python bench/body_coverage.py /work/.mirror/fmtlib+fmt/repo [--ref HEAD] [--examples 10]

A function the tags queries miss is invisible to the map, the symbol tool and every citation: the 44th round
found that C++ functions returning a pointer or a reference (`const Char* parse(...)`, `T& get()`) were none,
because the grammar wraps their declarator in a pointer or reference declarator. This script reads every parsed
file of a git directory at REF, walks the syntax tree for the nodes that hold a function body in that language
(`_BODIES`), and counts those with no map definition starting on the same line, grouped by the shape of the
declarator (C and C++) or by the node type (the others). What is left after a fix is the shapes still missed:
conversion operators, code a macro hides from the parser.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.build_monorepo import read_blobs, tracked_files  # noqa: E402
from repomap.languages import grammar, language_for  # noqa: E402
from repomap.tags import extract_tags  # noqa: E402

_BODIES = {
    "c": {"function_definition"},
    "cpp": {"function_definition"},
    "go": {"function_declaration", "method_declaration"},
    "java": {"method_declaration", "constructor_declaration"},
    "javascript": {"function_declaration", "generator_function_declaration", "method_definition"},
    "typescript": {"function_declaration", "generator_function_declaration", "method_definition"},
    "python": {"function_definition", "class_definition"},
    "rust": {"function_item"},
    "ruby": {"method", "singleton_method"},
}
"""The syntax nodes that hold a function body (and Python's classes), per language."""


def _shape(node, language: str) -> str:
    """How a missed body is written: its declarator's node type in C and C++, else its own type."""
    if language in ("c", "cpp"):
        declarator = node.child_by_field_name("declarator")
        return f"{node.type} / {declarator.type if declarator else '-'}"
    return node.type


def coverage(git_dir: Path, ref: str, examples: int) -> tuple[Counter, Counter, list[str]]:
    """Bodies per language, missed bodies per (language, shape), and the first `examples` missed, as text."""
    bodies: Counter = Counter()
    missed: Counter = Counter()
    shown: list[str] = []
    files = [(blob, path) for blob, path in tracked_files(git_dir, ref) if language_for(path) is not None]
    for path, data in read_blobs(git_dir, files):
        spec = language_for(path, data)
        if spec is None or spec.name not in _BODIES:
            continue
        kinds = _BODIES[spec.name]
        starts = {d.start_line for d in extract_tags(data, spec.name).definitions(path)}
        stack = [grammar(spec.name).parser.parse(data).root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.type not in kinds:
                continue
            bodies[spec.name] += 1
            if node.start_point[0] + 1 in starts:
                continue
            missed[spec.name, _shape(node, spec.name)] += 1
            if len(shown) < examples:
                first = data[node.start_byte:node.start_byte + 80].decode(errors="replace").split("\n")[0]
                shown.append(f"{path}:{node.start_point[0] + 1}  {first}")
    return bodies, missed, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", type=Path, help="a git directory (a bare mirror or a checkout's .git)")
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--examples", type=int, default=10, help="missed bodies to list")
    args = parser.parse_args()
    bodies, missed, shown = coverage(args.git_dir, args.ref, args.examples)
    print("| language | function bodies | not a definition | shapes missed most |\n|---|---:|---:|---|")
    for language, n in sorted(bodies.items()):
        shapes = sorted(((c, s) for (lang, s), c in missed.items() if lang == language), reverse=True)
        print(f"| {language} | {n} | {sum(c for c, _ in shapes)} | {', '.join(f'{s} {c}' for c, s in shapes[:4])} |")
    for line in shown:
        print(line)


if __name__ == "__main__":
    main()
