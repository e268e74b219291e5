"""Shared pieces of the MCP tests: a small buggy git repository, the report about it, and checks on what an MCP
client received (progress per phase, the diagnosis)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.app.dashboard.test_dashboard_pages import CRASH_BODY, make_fixture_repo

TITLE = "mean() crashes with ZeroDivisionError on an empty list"
"""Title of the report every MCP investigation test files."""
BODY = CRASH_BODY
"""Its body: a traceback through `mean`."""
SECRET = "API_KEY = 'do-not-leak-0f9e'\n"


def make_repo(tmp: Path) -> tuple[Path, str]:
    """The dashboard tests' calc repository plus a committed `.env` (a secret the tools must withhold)."""
    repo, _ = make_fixture_repo(tmp)
    (repo / ".env").write_text(SECRET)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["add", "-f", ".env"], ["commit", "-q", "-m", "add env"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return repo, commit.stdout.strip()


class ProgressLog:
    """Collects an MCP progress callback's notifications."""

    def __init__(self) -> None:
        self.steps: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.steps.append((progress, total, message))

    def assert_per_phase(self) -> None:
        """Strictly increasing, ends at its total, and tells explore, deep_dive and output in that order."""
        values = [p for p, _, _ in self.steps]
        assert values == sorted(values) and len(set(values)) == len(values), self.steps
        assert self.steps[-1][0] == self.steps[-1][1], self.steps
        assert self.steps[0][2] is not None and "queued" in self.steps[0][2]
        messages = [m or "" for _, _, m in self.steps]
        firsts = [next(i for i, m in enumerate(messages) if m.startswith(phase)) for phase in
                  ("explore", "deep_dive", "output")]  # fmt: skip
        assert firsts == sorted(firsts), messages
        assert messages[-1].startswith("done"), messages


def assert_diagnosis(result: Any) -> dict[str, Any]:
    """The investigate result is the finished investigation of the calc bug; returns its JSON."""
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["status"] == "done", data.get("error")
    assert data["report"]["source"] == "mcp"
    assert data["diagnosis"]["affected_files"][0]["path"] == "calc/stats.py"
    text = result.content[0].text
    assert text.startswith(f"Investigation {data['id']}: done")
    first = data["diagnosis"]["affected_files"][0]
    assert first["line_start"] <= 9 and first["line_end"] >= 12, first  # `mean`, with the lines around it
    assert f"calc/stats.py:{first['line_start']}-{first['line_end']}" in text and "`mean`" in text
    return data
