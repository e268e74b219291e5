"""Materialize benchmark trees into the shared cache (temp dir + rename, so a half-written tree is never seen)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.trees import TreeCache  # noqa: E402

TREES = Path(os.environ.get("BUGSLEUTH_BENCH_TREES", "/work/bench-cache/trees"))
MIRRORS = Path("/work/.mirror")
FORKS = {
    "django/django": "apprent1c3/django",
    "scikit-learn/scikit-learn": "DSYemen/scikit-learn",
    "matplotlib/matplotlib": "williamlus/matplotlib",
}


def tree_path(repo: str, commit: str) -> Path:
    """Where the tree of `repo` at `commit` lives in the shared cache."""
    return _cache().path_for(repo, commit)


def _cache() -> TreeCache:
    # writable files, as before: bench_repomap copies a tree and edits one of its files
    return TreeCache(TREES, read_only=False)


def mirror_git_dir(repo: str) -> Path:
    """The bare mirror (git directory) of `repo`; data sets spell some owners in lower case (`fasterxml`), so a
    mirror whose name differs only in case is found too."""
    folder = FORKS.get(repo, repo).replace("/", "+")
    if not (MIRRORS / folder).is_dir() and MIRRORS.is_dir():
        folder = next((p.name for p in MIRRORS.iterdir() if p.name.lower() == folder.lower()), folder)
    return MIRRORS / folder / "repo"


def show_blob(git_dir: str | Path, commit: str, path: str) -> bytes:
    """The bytes of `path` at `commit` in a git directory (empty when the commit has no such file)."""
    res = subprocess.run(["git", "-C", str(git_dir), "show", f"{commit}:{path}"], capture_output=True)
    return res.stdout if res.returncode == 0 else b""


def ensure_tree(repo: str, commit: str) -> Path:
    """Return the cached tree, materializing it from the bare mirror when missing (the eval's own `TreeCache`, so
    blobs a snapshot left out are skipped the same way)."""
    return _cache().materialize(repo, mirror_git_dir(repo), commit).path


if __name__ == "__main__":
    rows = [json.loads(line) for line in open(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/bench/swebench_lite.jsonl")]
    for row in rows:
        try:
            ensure_tree(row["repo"], row["base_commit"])
        except Exception as exc:  # keep going: one bad tree must not stop the rest
            print("FAILED", row["instance_id"], exc, file=sys.stderr)
    print("done")
