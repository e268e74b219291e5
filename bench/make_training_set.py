"""Build the learned reranker's training set: real fix commits of public repositories that are not in the eval data.

Each instance is one fix commit: the cleaned commit message is the report, the non-test source files it modifies
(one to three) are the answer. Commits are taken newest first along the first-parent chain, in windows of
`--window` fixes; a window's instances are all investigated on one tree, the first parent of the window's oldest
fix (so the tree holds none of the window's fixes, and one repo map serves them all). An instance whose answer is
missing from its window's tree is left out. Merges, reverts, typo/docs fixes and commits touching more than 20
files are left out (see `make_commit_set.py`, whose rules this shares).

    .venv/bin/python bench/make_training_set.py [owner/name ...] [--window 60] [--windows 3]
                                                [--out /work/bench-out/train/instances.jsonl]
    .venv/bin/python bench/rank_features.py /work/bench-out/train/instances.jsonl \
        --out /work/bench-out/features/train.jsonl --jobs 2

The output is derived from the fixes: it is written outside the repository and never committed. The mirrors come
from the library's `fetch` (`/work/.mirror/<owner>+<name>/repo`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import mirror_git_dir
from bench.make_commit_set import (
    FIX_WORD,
    MAX_FILES,
    Commit,
    exists,
    git,
    is_test_path,
    line_ranges,
    report_of,
    walk,
)
from funnel.localize.citations import outer_entity
from funnel.localize.corpus import spans_of
from repomap.languages import language_for
from repomap.tags import extract_tags

TRAINING_REPOS = (
    # Python
    "pallets/click", "fastapi/fastapi", "pallets/werkzeug", "pallets/jinja", "encode/httpx", "python-attrs/attrs",
    "psf/black", "marshmallow-code/marshmallow", "tornadoweb/tornado", "scrapy/scrapy",
    # Go, Java, JavaScript/TypeScript, Rust, C/C++
    "gin-gonic/gin", "spf13/cobra", "prometheus/prometheus", "square/okhttp", "apache/commons-lang",
    "mockito/mockito", "vuejs/core", "lodash/lodash", "serde-rs/serde", "clap-rs/clap", "redis/redis",
    "nlohmann/json",
)
"""Repositories of the training set: none of them is in SWE-bench Lite or the multilang sets."""
SOURCE = re.compile(r"\.(?:py|go|rs|java|kt|js|jsx|mjs|cjs|ts|tsx|c|h|cc|cpp|cxx|hpp|hh|rb)$")
MAX_GOLD = 3
ENTITY_KINDS = frozenset({"function", "method", "class"})
REVERT = re.compile(r"^\s*revert\b", re.IGNORECASE)


def answer(commit: Commit) -> list[str] | None:
    """The modified non-test source files (one to `MAX_GOLD`) when the commit is a fix that qualifies, else None."""
    if not FIX_WORD.search(commit.subject) or REVERT.match(commit.subject) or len(commit.changes) > MAX_FILES:
        return None
    sources = [(s, p) for s, p in commit.changes if SOURCE.search(p) and not is_test_path(p)]
    if any(status != "M" for status, _ in sources) or not 1 <= len(sources) <= MAX_GOLD:
        return None
    return [path for _, path in sources]


def fixes(git_dir: Path, limit: int, rev: str = "HEAD") -> list[tuple[Commit, list[str], str]]:
    """Up to `limit` qualifying fixes of the first-parent chain of `rev`, newest first, with their answers and
    reports."""
    found = []
    for commit in walk(git_dir, first_parent=True, rev=rev):
        gold = answer(commit)
        statement = report_of(git_dir, commit, gold) if gold is not None else None
        if statement is not None:
            found.append((commit, gold, statement))
            if len(found) >= limit:
                break
    return found


def changed_functions(git_dir: Path, commit: Commit, path: str) -> list[str]:
    """The definitions of the fix's parent version of `path` that hold a line the fix changes, as their outer
    function or method (the granularity of function-level gold); empty for a language the map does not parse."""
    source = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", f"{commit.parent}:{path}"],
                            capture_output=True, check=True).stdout
    language = language_for(path, source)
    if language is None:
        return []
    spans = spans_of(extract_tags(source, language.name).definitions(path))
    changed = line_ranges(git_dir, commit.parent, commit.sha, path)
    names = {outer_entity(spans, k) for k, span in enumerate(spans) if span.kind in ENTITY_KINDS
             and any(a <= span.end_line and span.start_line <= b for a, b in changed)}
    # a class holding a changed method is not itself the answer, as in the function-level gold of the literature
    return sorted(n for n in names if not any(o.startswith(n + ".") for o in names))


def tracked(git_dir: Path, commit: str) -> set[str]:
    """Every file path of a commit's tree."""
    return set(git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines())


def instances(repo: str, window: int, windows: int, rev: str = "HEAD") -> list[dict]:
    """The instances of one repository: `windows` windows of `window` fixes (ancestors of `rev`), each on its own
    tree."""
    git_dir = mirror_git_dir(repo)
    found = fixes(git_dir, window * windows, rev)
    rows = []
    for start in range(0, len(found), window):
        chunk = found[start:start + window]
        base = chunk[-1][0].parent
        if not exists(git_dir, f"{base}^{{commit}}"):
            continue
        files = tracked(git_dir, base)
        for commit, gold, statement in chunk:
            if not all(p in files for p in gold):
                continue
            rows.append({"instance_id": f"{repo.replace('/', '__')}-{commit.sha[:12]}", "repo": repo,
                         "base_commit": base, "problem_statement": statement, "gold_files": gold,
                         "gold_functions": {p: changed_functions(git_dir, commit, p) for p in gold},
                         "fix_commit": commit.sha, "created_at": commit.date})
    return rows


def main() -> int:
    """Write the training instances of every repository and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", help="owner/name (default: TRAINING_REPOS)")
    parser.add_argument("--window", type=int, default=60, help="fixes investigated on one tree")
    parser.add_argument("--windows", type=int, default=3, help="windows per repository")
    parser.add_argument("--out", type=Path, default=Path("/work/bench-out/train/instances.jsonl"))
    parser.add_argument("--before", type=Path, help="an eval data set: for each of its repositories, only fixes that "
                        "are ancestors of its oldest instance's base commit (per-repository learning, no leak)")
    args = parser.parse_args()
    starts: dict[str, str] = {}
    if args.before:
        eval_rows = [json.loads(line) for line in args.before.open(encoding="utf-8") if line.strip()]
        for row in sorted(eval_rows, key=lambda r: r.get("created_at", ""), reverse=True):
            starts[row["repo"]] = row["base_commit"]
    repos = args.repos or (sorted(starts) if starts else list(TRAINING_REPOS))
    missing = [r for r in repos if not exists(mirror_git_dir(r), "HEAD^{commit}")]
    if missing:
        print(f"no mirror with a HEAD commit for: {', '.join(missing)} (fetch them first)", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    total = 0
    with args.out.open("w", encoding="utf-8") as out:
        for repo in repos:
            try:
                rows = instances(repo, args.window, args.windows, starts.get(repo, "HEAD"))
            except subprocess.CalledProcessError as exc:
                print(f"{repo}: git failed ({exc.stderr.strip()[:200]})", file=sys.stderr)
                continue
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            total += len(rows)
            print(f"{repo:<32} {len(rows):>5} instances on {len({r['base_commit'] for r in rows})} trees", flush=True)
    print(f"{total} instances -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
