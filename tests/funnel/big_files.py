"""Huge files for the tool tests, built once per module: a 50 MB text file, a 5 MB single line, a million matches."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

BIG_LINES = 1_000_000
"""Lines in `big.txt` (about 50 MB)."""


def _word_block(n_lines: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "délta", "épsilon", "zeta", "ηta", "theta", "iota"]
    return "".join(" ".join(rng.choice(words) for _ in range(7)) + "\n" for _ in range(n_lines))


@pytest.fixture(scope="module")
def huge_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository holding `big.txt` (1M lines, ~50 MB), `one_line.txt` (5 MB, no newline) and `many.txt`."""
    root = tmp_path_factory.mktemp("huge") / "repo"
    root.mkdir()
    block = _word_block(1000)
    with open(root / "big.txt", "w", encoding="utf-8") as f:
        for i in range(BIG_LINES // 1000):
            f.write(block)
    (root / "one_line.txt").write_text("x" * 2_500_000 + "needle" + "y" * 2_500_000)
    with open(root / "many.txt", "w") as f:
        f.write("match me\n" * 1_000_000)
    return root
