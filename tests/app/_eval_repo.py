"""A tiny synthetic benchmark for eval tests: a git repository with three commits and a JSONL with gold fields."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

CORE_V1 = '''"""Core arithmetic."""


class Calculator:
    """Adds and divides."""

    def add(self, a, b):
        return a + b

    def divide(self, a, b):
        return a / b
'''

CORE_V2 = CORE_V1.replace("return a / b", "if b == 0:\n            raise ZeroDivisionError\n        return a / b")

UTIL = '''"""Helpers."""


def parse_number(text):
    return float(text.strip())


def format_number(value):
    return f"{value:.2f}"
'''

TEST = '''from pkg.core import Calculator


def test_add():
    assert Calculator().add(1, 2) == 3
'''

SECRET = "GOLD-ONLY-7f3a"
"""A marker that only scoring fields carry: it must never reach the investigation."""


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` with a fixed identity; return stdout."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def make_repo(base: Path) -> tuple[Path, list[str]]:
    """A work-tree repository `owner/name` with three commits; returns (repo dir, commit ids oldest first)."""
    repo = base / "calc"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text(CORE_V1)
    (repo / "tests" / "test_core.py").write_text(TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    (repo / "pkg" / "util.py").write_text(UTIL)
    (repo / "data.txt").write_text("a large data file\n" * 10)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    (repo / "pkg" / "core.py").write_text(CORE_V2)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "three")
    commits = git(repo, "rev-list", "--reverse", "HEAD").split()
    return repo, commits


def instance(iid: str, commit: str, statement: str, *, gold_files=("pkg/core.py",),
             gold_functions=None, gold_lines=None, repo: str = "acme/calc") -> dict:
    """One JSONL row; every scoring field carries the SECRET marker somewhere."""
    return {
        "instance_id": iid,
        "repo": repo,
        "base_commit": commit,
        "problem_statement": statement,
        "hints_text": f"hint {SECRET}",
        "patch": f"--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ {SECRET}",
        "gold_files": list(gold_files),
        "gold_functions": gold_functions if gold_functions is not None else {"pkg/core.py": ["Calculator.divide"]},
        "gold_line_ranges": gold_lines if gold_lines is not None else {"pkg/core.py": [[11, 11]]},
        "gold_entities": {"pkg/core.py": [SECRET]},
        "created_at": "2024-01-01",
        "version": "1.0",
    }


def write_dataset(base: Path, commits: list[str]) -> list[dict]:
    """Three instances with known stub rankings; returns the rows (also written to base/data.jsonl)."""
    rows = [
        # file@1 hit, function hit via the class-qualified name, line hit
        instance("acme__calc-1", commits[1], "Division by zero is not caught\nCalling divide(1, 0) crashes.\n"
                 "STUB-RANK: pkg/core.py:Calculator.divide:10-11, pkg/util.py"),
        # gold is second: file@1 miss, file@3 hit, MRR 0.5; plain method name counts; line miss
        instance("acme__calc-2", commits[2], "Numbers print badly\nformat is wrong.\n"
                 "STUB-RANK: pkg/util.py:format_number:8-9, pkg/core.py:add:7-8",
                 gold_functions={"pkg/core.py": ["Calculator.add", "<module>"]},
                 gold_lines={"pkg/core.py": [[20, 22]]}),
        # nothing relevant ranked
        instance("acme__calc-3", commits[2], "Parsing fails on spaces\nparse_number(' 1') fails.\n"
                 "STUB-RANK: pkg/util.py:parse_number:4-5"),
    ]
    (base / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def write_repos_toml(base: Path, repo_dir: Path, name: str = "acme/calc") -> Path:
    """A REPOS.toml mapping `name` to `repo_dir`."""
    path = base / "repos.toml"
    path.write_text(f'[repos]\n"{name}" = "{repo_dir}"\n')
    return path
