"""Build a held-out localization set of real bug fixes from non-Python projects, for `bugsleuth eval`.

Each instance is one bug-fix commit found in a repository's history: the investigation gets the cleaned commit
message as the problem statement and the fix's first parent as base commit; the non-test source files the fix
modifies are the gold files, the base lines its diff changes the gold line ranges. The output is derived from
the fix answers: write it outside the repository and never commit it.

Typo/docs fixes (such a subject, or only comment lines changed) are left out unless --keep-trivial.

Usage: python bench/make_commit_set.py [owner/name=GITDIR ...] [-n 20] [--first-parent] [--keep-trivial]
                                       [--out /work/bench-out/commit-set.jsonl]
                                       [--repos-out /work/bench-out/commit-set-repos.toml]
Then: bugsleuth eval OUT --repos REPOS_OUT --jobs 1 --out /work/bench-out/commit-eval
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

DEFAULT_REPOS = [
    "spf13/cobra=/work/.mirror/spf13+cobra/repo",
    "BurntSushi/ripgrep=/work/.mirror/BurntSushi+ripgrep/repo",
    "google/gson=/work/.mirror/google+gson/repo",
    "expressjs/express=/work/.mirror/expressjs+express/repo",
    "jqlang/jq=/work/.mirror/jqlang+jq/repo",
]
SOURCE_EXTENSIONS = frozenset({".go", ".rs", ".java", ".kt", ".js", ".mjs", ".cjs", ".ts", ".c", ".h", ".cc", ".cpp", ".cs",
                               ".php", ".swift", ".scala"})
TEST_DIRS = frozenset({"test", "tests", "testing", "testdata", "spec", "specs", "__tests__", "__mocks__"})
TEST_FILE = re.compile(r"^(test_.*|Test[A-Z].*|.*_tests?\.[A-Za-z]+|.*(Tests?|Spec|Suite)\.(java|kt|cs|php|swift|scala)"
                       r"|.*\.(test|spec)\.[A-Za-z]+)$")
FIX_WORD = re.compile(
    r"\b(fix|fixes|fixed|fixing|bugfix|bug|bugs|crash|crashes|panic|panics|wrong|incorrect|regression|segfault|leak|leaks)\b",
    re.IGNORECASE,
)
CONVENTIONAL_PREFIX = re.compile(
    r"^\s*(?:[A-Za-z]+\([^)]*\)|feat|fix|fixes|bug|bugfix|hotfix|chore|docs?|refactor|perf|tests?|build|ci|style"
    r"|revert|deps|security)!?:\s*",
    re.IGNORECASE,
)
TRAILER = re.compile(
    r"^\s*(?:(?:signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by"
    r"|change-id|pr-url|reviewed-on|cc)\s*:"
    r"|(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?)\s*:?\s*(?:#\d+|gh-\d+|https?://|[\w.-]+/[\w.-]+#\d+)"
    r"|\(cherry picked from commit)",
    re.IGNORECASE,
)
TRIVIAL_SUBJECT = re.compile(r"^\s*docs?(\([^)]*\))?!?:|\b(typos?|spelling)\b", re.IGNORECASE)
COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*)")
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)
MAX_FILES = 20
MAX_GOLD = 2
MIN_STATEMENT = 20
T = TypeVar("T")


@dataclass
class Commit:
    """One non-merge commit of the walk, with its changed paths."""

    sha: str
    parent: str
    date: str
    subject: str
    body: str
    changes: list[tuple[str, str]]
    """`(status letter, path)` against the first parent, renames reported as delete + add."""


def git(git_dir: Path, *args: str) -> str:
    """Stdout of one git command run against a (bare) git directory; raises on failure."""
    cmd = ["git", "-c", "core.quotePath=false", "--git-dir", str(git_dir), *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, errors="replace").stdout


def is_test_path(path: str) -> bool:
    """Whether a repository path is a test file, by directory or file name."""
    parts = path.split("/")
    return any(part in TEST_DIRS for part in parts[:-1]) or bool(TEST_FILE.match(parts[-1]))


def is_source(path: str) -> bool:
    """Whether a path is a non-test source file of one of the benchmarked languages."""
    return Path(path).suffix in SOURCE_EXTENSIONS and not is_test_path(path)


def walk(git_dir: Path, first_parent: bool = False, rev: str = "HEAD") -> list[Commit]:
    """Non-merge commits reachable from `rev`, newest first, each with its name-status against its first parent."""
    args = ["log", "--no-merges", "--no-renames", "--name-status", "--format=%x1e%H%x1f%P%x1f%cI%x1f%s%x1f%b%x1f"]
    out = git(git_dir, *args, *(["--first-parent"] if first_parent else []), rev)
    commits = []
    for record in out.split("\x1e")[1:]:
        fields = record.split("\x1f")
        if len(fields) != 6:
            continue  # a message holding the separator itself: left out rather than misread
        sha, parents, date, subject, body, status = fields
        if not parents.split():
            continue  # root commit: no base to investigate
        changes = []
        for line in status.strip().splitlines():
            fields = line.split("\t")
            if len(fields) >= 2:
                changes.append((fields[0][:1], fields[-1]))
        commits.append(Commit(sha, parents.split()[0], date, subject.strip(), body, changes))
    return commits


def gold_of(commit: Commit) -> list[str] | None:
    """The modified non-test source files when the commit qualifies by its files, else None."""
    if not FIX_WORD.search(commit.subject) or len(commit.changes) > MAX_FILES:
        return None
    sources = [(status, path) for status, path in commit.changes if is_source(path)]
    if any(status != "M" for status, _ in sources) or not 1 <= len(sources) <= MAX_GOLD:
        return None
    return [path for _, path in sources]


def is_trivial(subject: str, diff: str) -> bool:
    """Whether a fix is a typo/docs change: such a subject, or every changed source line is a comment line."""
    changed = [line[1:] for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    code = [line for line in changed if line.strip() and not COMMENT_LINE.match(line)]
    return bool(TRIVIAL_SUBJECT.search(subject)) or not code


def clean_statement(subject: str, body: str, gold: list[str]) -> str:
    """Subject (conventional prefix dropped), blank line, body; trailers and lines naming a gold file removed."""
    names = {name for path in gold for name in (path, path.rsplit("/", 1)[-1])}
    mention = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?!\w)" for n in sorted(names, key=len, reverse=True)))
    subject = CONVENTIONAL_PREFIX.sub("", subject, count=1).strip()
    lines = [subject, ""] + body.replace("\r\n", "\n").split("\n")
    kept = [line.rstrip() for line in lines if not TRAILER.match(line) and not mention.search(line)]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text


def line_ranges(git_dir: Path, parent: str, sha: str, path: str) -> list[list[int]]:
    """Base-file line ranges `[start, end]` that the diff of `path` changes (pure insertions give `[a, a]`)."""
    diff = git(git_dir, "diff", "--no-ext-diff", "--no-color", "-U0", parent, sha, "--", path)
    ranges = []
    for match in HUNK.finditer(diff):
        start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
        ranges.append([max(start, 1), max(start, 1)] if count == 0 else [start, start + count - 1])
    return ranges


def spread(items: list[T], n: int) -> list[T]:
    """At most `n` items evenly spaced over the list (all of them when there are `n` or fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def exists(git_dir: Path, spec: str) -> bool:
    """Whether `git cat-file -e spec` succeeds."""
    cmd = ["git", "--git-dir", str(git_dir), "cat-file", "-e", spec]
    return subprocess.run(cmd, capture_output=True).returncode == 0


def report_of(git_dir: Path, commit: Commit, gold: list[str], keep_trivial: bool = False) -> str | None:
    """The cleaned report of a fix whose answer is `gold`, or None when the fix is trivial (unless kept) or its
    message too short."""
    if not keep_trivial:
        diff = git(git_dir, "diff", "--no-ext-diff", "--no-color", "-U0", commit.parent, commit.sha, "--", *gold)
        if is_trivial(commit.subject, diff):
            return None
    statement = clean_statement(commit.subject, commit.body, gold)
    return statement if len(statement) >= MIN_STATEMENT else None


def instances_for(
    repo: str, git_dir: Path, per_repo: int, first_parent: bool = False, keep_trivial: bool = False
) -> tuple[int, list[dict]]:
    """The number of qualifying commits of one repository and the instances built from the kept ones."""
    qualifying: list[tuple[Commit, list[str], str]] = []
    for commit in walk(git_dir, first_parent):
        gold = gold_of(commit)
        statement = report_of(git_dir, commit, gold, keep_trivial) if gold is not None else None
        if statement is not None:
            qualifying.append((commit, gold, statement))
    owner, name = repo.split("/", 1)
    rows = []
    for commit, gold, statement in spread(qualifying, per_repo):
        base = commit.parent
        if not exists(git_dir, f"{base}^{{commit}}") or not all(exists(git_dir, f"{base}:{p}") for p in gold):
            print(f"  skip {commit.sha[:12]}: base commit or gold file missing", file=sys.stderr)
            continue
        rows.append({
            "instance_id": f"{owner}__{name}-{commit.sha[:12]}",
            "repo": repo,
            "base_commit": base,
            "problem_statement": statement,
            "hints_text": "",
            "patch": git(git_dir, "diff", "--no-ext-diff", "--no-color", base, commit.sha, "--", *gold),
            "gold_files": gold,
            "gold_line_ranges": {p: line_ranges(git_dir, base, commit.sha, p) for p in gold},
            "gold_functions": {},
            "gold_entities": {},
            "created_at": commit.date,
            "version": "",
        })
    return len(qualifying), rows


def parse_repo(text: str) -> tuple[str, Path]:
    """`owner/name=GITDIR` as a pair; raises argparse.ArgumentTypeError when malformed."""
    repo, sep, git_dir = text.partition("=")
    owner, _, name = repo.partition("/")
    if not sep or not owner or not name or "/" in name or not git_dir:
        raise argparse.ArgumentTypeError(f"expected owner/name=GITDIR, got {text!r}")
    return repo, Path(git_dir).expanduser().resolve()


def main() -> int:
    """Walk every repository, write the JSONL and the repos TOML, print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=parse_repo, help="owner/name=GITDIR (default: the five mirrors)")
    parser.add_argument("-n", "--per-repo", type=int, default=20, help="at most this many instances per repository")
    parser.add_argument("--first-parent", action="store_true", help="walk only the first-parent chain of HEAD")
    parser.add_argument("--keep-trivial", action="store_true", help="keep typo/docs and comment-only fixes")
    parser.add_argument("--out", type=Path, default=Path("/work/bench-out/commit-set.jsonl"))
    parser.add_argument("--repos-out", type=Path, default=Path("/work/bench-out/commit-set-repos.toml"))
    args = parser.parse_args()
    repos = args.repos or [parse_repo(text) for text in DEFAULT_REPOS]
    rows: list[dict] = []
    print(f"{'repository':<24} {'qualifying':>10} {'kept':>5}")
    for repo, git_dir in repos:
        if not exists(git_dir, "HEAD^{commit}"):
            print(f"{repo}: {git_dir} is not a git directory with a HEAD commit", file=sys.stderr)
            return 2
        count, kept = instances_for(repo, git_dir, args.per_repo, args.first_parent, args.keep_trivial)
        print(f"{repo:<24} {count:>10} {len(kept):>5}")
        rows.extend(kept)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    toml = ["# Written by bench/make_commit_set.py: repository in the data = local git directory", "[repos]"]
    toml += [f"{json.dumps(repo)} = {json.dumps(str(git_dir))}" for repo, git_dir in repos]
    args.repos_out.parent.mkdir(parents=True, exist_ok=True)
    args.repos_out.write_text("\n".join(toml) + "\n", encoding="utf-8")
    print(f"{len(rows)} instances -> {args.out}; repos -> {args.repos_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
