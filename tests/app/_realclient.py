"""Where the real webhook payloads live: `../shared/realclient` beside the repository root (in CI a read-only copy
beside the clone; for a git worktree, beside the main checkout)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""


def realclient_dir() -> Path | None:
    """`../shared/realclient` beside the repository root (for a git worktree: beside the main checkout)."""
    candidates = [ROOT.parent / "shared" / "realclient"]
    try:
        common = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--path-format=absolute", "--git-common-dir"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        candidates.append(Path(common).parent.parent / "shared" / "realclient")
    except (OSError, subprocess.SubprocessError):
        pass
    return next((c for c in candidates if (c / "README.md").is_file()), None)


REALCLIENT = realclient_dir()
"""The payload directory, or None when absent (the tests that need it skip, saying so)."""
