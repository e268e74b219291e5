"""Render a ranked map as text that fits a token budget exactly (binary search over how much to include)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from repomap.tokens import count_tokens

MODULE_TREE_VERSION = 1
"""Bump when `module_tree` changes: callers keep its text keyed by it."""
_MAX_TOP_DIRS = 15
_MAX_SUBDIRS = 8


@dataclass(frozen=True)
class RenderInput:
    """What the renderer needs, already ranked."""

    paths: list[str]
    """File paths in rank order (best first)."""
    scores: list[float]
    """File score per entry of `paths`."""
    defs: list[list[tuple[str, str, str, int, int, str]]]
    """Definition tuples per entry of `paths`, in line order."""
    symbol_scores: list[list[float]]
    """Score per definition, aligned with `defs`."""
    languages: dict[str, int]
    """Indexed files per language."""
    all_paths: list[str]
    """Every indexed path (for the module tree)."""
    tree: str | None = None
    """`module_tree(all_paths, languages)` when the caller has it already."""


def module_tree(paths: list[str], languages: dict[str, int]) -> str:
    """A short tree: total, languages, then top-level directories with file counts and their biggest subdirectories."""
    langs = ", ".join(f"{name} {count}" for name, count in sorted(languages.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [f"# Repository map: {len(paths)} files indexed" + (f" ({langs})" if langs else "")]
    top: Counter[str] = Counter()
    sub: dict[str, Counter[str]] = {}
    root_files = 0
    for p in paths:
        parts = p.split("/")
        if len(parts) == 1:
            root_files += 1
            continue
        top[parts[0]] += 1
        if len(parts) > 2:
            sub.setdefault(parts[0], Counter())[parts[1]] += 1
    dirs = sorted(top, key=lambda d: (-top[d], d))
    for d in sorted(dirs[:_MAX_TOP_DIRS]):
        subs = sub.get(d, Counter())
        biggest = sorted(subs, key=lambda s: (-subs[s], s))[:_MAX_SUBDIRS]
        detail = ", ".join(f"{s}/ {subs[s]}" for s in sorted(biggest))
        more = len(subs) - len(biggest)
        if more > 0:
            detail += f", +{more} more"
        lines.append(f"{d}/ {top[d]}" + (f": {detail}" if detail else ""))
    if len(dirs) > _MAX_TOP_DIRS:
        lines.append(f"+{len(dirs) - _MAX_TOP_DIRS} more directories")
    if root_files:
        lines.append(f"(top level) {root_files} files")
    return "\n".join(lines) + "\n"


def _structure(defs: list[tuple[str, str, str, int, int, str]]) -> tuple[list[int], list[int]]:
    """Nesting depth (capped) and the enclosing definition (-1 for none) of each definition, by line spans."""
    depths: list[int] = []
    parents: list[int] = []
    stack: list[int] = []
    for i, d in enumerate(defs):
        while stack and defs[stack[-1]][4] < d[3]:
            stack.pop()
        depths.append(min(len(stack), 4))
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return depths, parents


def _entries(inp: RenderInput, max_files: int) -> list[tuple[int, int]]:
    """(file position, def position or -1 for the file itself), best first."""
    scored: list[tuple[float, int, int, int]] = []
    for fi in range(min(len(inp.paths), max_files)):
        fs = inp.scores[fi]
        sym = inp.symbol_scores[fi]
        if not sym:
            scored.append((-fs * 0.5, fi, -1, 0))
            continue
        top = max(sym)
        # a file's best symbol comes with the file; its weaker ones compete with the next files' best
        by_score = sorted(range(len(sym)), key=lambda k: (-sym[k], k))
        for j, di in enumerate(by_score):
            rel = sym[di] / top if top > 0 else 0.0
            scored.append((-fs * (0.5 + 0.5 * rel) / (1.0 + 0.1 * j), fi, di, inp.defs[fi][di][3]))
    scored.sort()
    return [(fi, di) for _, fi, di, _line in scored]


def _render(
    inp: RenderInput, entries: list[tuple[int, int]], n: int, shapes: dict[int, tuple[list[int], list[int]]]
) -> list[str]:
    chosen: dict[int, set[int]] = {}
    for fi, di in entries[:n]:
        bucket = chosen.setdefault(fi, set())
        if di >= 0:
            bucket.add(di)
    out: list[str] = []
    for fi in sorted(chosen):
        out.append(f"\n{inp.paths[fi]}:")
        defs = inp.defs[fi]
        if fi not in shapes:
            shapes[fi] = _structure(defs)
        depths, parents = shapes[fi]
        shown = set(chosen[fi])
        for di in chosen[fi]:  # a method is shown inside its class: the enclosing headers come along
            parent = parents[di]
            while parent >= 0 and parent not in shown:
                shown.add(parent)
                parent = parents[parent]
        for di in sorted(shown):
            d = defs[di]
            lines = f"{d[3]}-{d[4]}" if d[4] != d[3] else f"{d[3]}"
            out.append(f"{'  ' * (depths[di] + 1)}{lines} {d[5]}")
    return out


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + ("\n" if lines else "")


def render_map(inp: RenderInput, token_budget: int) -> tuple[str, int, bool]:
    """The map text within `token_budget` tokens, how many files it shows, and whether it shows all of `inp`."""
    if token_budget <= 0:
        return "", 0, False
    tree = inp.tree if inp.tree is not None else module_tree(inp.all_paths, inp.languages)
    tree_tokens = count_tokens(tree)
    if tree_tokens > token_budget:
        tree = tree.splitlines()[0] + "\n"
        tree_tokens = count_tokens(tree)
        if tree_tokens > token_budget:
            return "", 0, False
    remaining = token_budget - tree_tokens
    entries = _entries(inp, max_files=len(inp.paths))
    shapes: dict[int, tuple[list[int], list[int]]] = {}
    line_tokens: dict[str, int] = {}

    def tokens(lines: list[str]) -> int:
        # counting is additive over lines (no token spans a newline): count each distinct line once
        total = len(lines)
        for line in lines:
            c = line_tokens.get(line)
            if c is None:
                c = line_tokens[line] = count_tokens(line)
            total += c
        return total

    lo, hi = 0, min(len(entries), remaining)
    best = ""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lines = _render(inp, entries, mid, shapes)
        if tokens(lines) <= remaining:
            lo, best = mid, _join(lines)
        else:
            hi = mid - 1
    if lo and not best:
        best = _join(_render(inp, entries, lo, shapes))
    shown = len({fi for fi, _ in entries[:lo]})
    return tree + best, shown, lo == len(entries)
