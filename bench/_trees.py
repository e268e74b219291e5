"""Materialize benchmark trees into the shared cache (temp dir + rename, so a half-written tree is never seen)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

TREES = Path(os.environ.get("BUGSLEUTH_BENCH_TREES", "/work/bench-cache/trees"))
MIRRORS = Path("/work/.mirror")
FORKS = {
    "django/django": "apprent1c3/django",
    "scikit-learn/scikit-learn": "DSYemen/scikit-learn",
    "matplotlib/matplotlib": "williamlus/matplotlib",
}


def tree_path(repo: str, commit: str) -> Path:
    """Where the tree of `repo` at `commit` lives in the shared cache."""
    return TREES / repo.replace("/", "__") / commit


def mirror_git_dir(repo: str) -> Path:
    """The bare mirror (git directory) of `repo`; data sets spell some owners in lower case (`fasterxml`), so a
    mirror whose name differs only in case is found too."""
    folder = FORKS.get(repo, repo).replace("/", "+")
    if not (MIRRORS / folder).is_dir() and MIRRORS.is_dir():
        folder = next((p.name for p in MIRRORS.iterdir() if p.name.lower() == folder.lower()), folder)
    return MIRRORS / folder / "repo"


def ensure_tree(repo: str, commit: str) -> Path:
    """Return the cached tree, materializing it from the bare mirror when missing."""
    dest = tree_path(repo, commit)
    if dest.is_dir():
        return dest
    git_dir = mirror_git_dir(repo)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}.", dir=dest.parent))
    try:
        listing = subprocess.run(
            ["git", "--git-dir", str(git_dir), "ls-tree", "-r", commit],
            capture_output=True, text=True, check=True,
        ).stdout
        shas = [line.split()[2] for line in listing.splitlines() if line.split()[1] == "blob"]
        check = subprocess.run(
            ["git", "--git-dir", str(git_dir), "cat-file", "--batch-check"],
            input="\n".join(shas) + "\n", capture_output=True, text=True, check=True,
        ).stdout
        missing = {line.split()[0] for line in check.splitlines() if line.endswith("missing")}
        excludes = [
            f":(exclude){line.split(chr(9), 1)[1]}"
            for line in listing.splitlines()
            if line.split()[2] in missing
        ]
        archive = subprocess.Popen(
            ["git", "--git-dir", str(git_dir), "archive", commit, "--", ".", *excludes],
            stdout=subprocess.PIPE,
        )
        subprocess.run(["tar", "-x", "-C", str(tmp)], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise RuntimeError(f"git archive failed for {repo}@{commit}")
        try:
            tmp.rename(dest)
        except OSError:
            if not dest.is_dir():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


if __name__ == "__main__":
    import json
    import sys

    rows = [json.loads(line) for line in open(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/bench/swebench_lite.jsonl")]
    for row in rows:
        try:
            ensure_tree(row["repo"], row["base_commit"])
        except Exception as exc:  # keep going: one bad tree must not stop the rest
            print("FAILED", row["instance_id"], exc, file=sys.stderr)
    print("done")
