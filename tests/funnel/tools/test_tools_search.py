"""`search`: real ripgrep, confined to the repository, bounded in time and output, never leaking secrets."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from funnel.errors import ToolError, UnrecoverableError
from funnel.tools.sandbox import Sandbox, ToolLimits
from funnel.tools import search
from tests.funnel.big_files import huge_repo  # noqa: F401
from tests.funnel.tools_corpus import DENY, SECRET_VALUES, all_secret_markers, corpus  # noqa: F401

# Unicode word boundaries force ripgrep off its fast engines: ~18 s on 42 MB of mixed-script words.
SLOW_PATTERN = r"(?:\b\w+\b\W*){15}\d"


@pytest.fixture
def sb(corpus: Path) -> Sandbox:  # noqa: F811
    return Sandbox(corpus, deny=DENY)


def test_search_finds_matches_with_path_and_line(sb: Sandbox):
    result = search(sb, r"def \w+")
    got = {(m.path, m.line_number, m.line) for m in result.matches}
    assert ("src/app.py", 4, "def main():") in got
    assert ("src/app.py", 8, "def parse_args():") in got
    assert "src/app.py:4: def main():" in result.render()


def test_search_returns_context_lines(sb: Sandbox):
    result = search(sb, "class Parser", context=1)
    (m,) = result.matches
    assert m.before == []
    assert [c.text for c in m.after] == ["    def parse(self, text):"]
    assert "src/pkg/parser.py-2-     def parse(self, text):" in result.render()


def test_search_refuses_secret_files(sb: Sandbox):
    for marker in all_secret_markers():
        result = search(sb, marker[:-1] + ".")  # a pattern that matches the marker without spelling it
        assert result.matches == [], marker
        assert marker not in result.render()


def test_search_output_never_names_secret_or_outside_files(sb: Sandbox):
    rendered = search(sb, "needle", max_results=200, max_per_file=50).render()
    for rel in SECRET_VALUES:
        assert f"{rel}:" not in rendered
    assert "outside" not in rendered
    assert "escape_" not in rendered


def test_include_glob_cannot_readmit_secrets(sb: Sandbox):
    for glob in [".env", ".env*", "*.pem", "**/.git/**", "*"]:
        assert search(sb, "SECRET", globs=(glob,)).matches == [], glob


def test_search_cannot_target_a_secret_or_outside_path(sb: Sandbox):
    for path in [".env", ".git", "../outside", "escape_dir", "innocent_name.txt"]:
        with pytest.raises(ToolError):
            search(sb, "SECRET", path=path)


def test_search_respects_gitignore_without_git(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "a.txt").write_text("needle\n")
    (tmp_path / "kept.txt").write_text("needle\n")
    result = search(Sandbox(tmp_path), "needle")
    assert [m.path for m in result.matches] == ["kept.txt"]


def test_search_skips_binary_files(sb: Sandbox):
    assert "image.bin" not in {m.path for m in search(sb, "needle", max_results=200).matches}
    with pytest.raises(ToolError, match="binary"):
        search(sb, "needle", path="image.bin")


def test_search_shows_invalid_utf8_visibly(sb: Sandbox):
    (m,) = search(sb, "needle", globs=("bad_utf8.txt",)).matches
    assert "\\xff" in m.line


def test_search_globs_and_excludes_narrow_the_files(sb: Sandbox):
    assert {m.path for m in search(sb, "needle", globs=("*.py",)).matches} == {"src/app.py", "src/pkg/parser.py"}
    assert "src/app.py" not in {m.path for m in search(sb, "needle", exclude=("src/app.py",)).matches}


def test_search_ignore_case_and_fixed_strings(sb: Sandbox):
    assert search(sb, "CLASS PARSER", ignore_case=True).matches
    assert search(sb, "split()", fixed_strings=True).matches[0].path == "src/pkg/parser.py"


def test_bad_regex_is_a_tool_error_with_the_regex_error(sb: Sandbox):
    with pytest.raises(ToolError) as err:
        search(sb, "def (")
    assert "regex parse error" in str(err.value)
    assert "unclosed group" in str(err.value)


def test_empty_pattern_is_a_tool_error(sb: Sandbox):
    with pytest.raises(ToolError):
        search(sb, "")


def test_max_results_reports_how_many_were_left_out(tmp_path: Path):
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("hit\n" * 3)
    result = search(Sandbox(tmp_path), "hit", max_results=4, max_per_file=10)
    assert len(result.matches) == 4
    assert result.omitted == 11
    assert "11 more matches not shown" in result.render()


def test_max_per_file_is_reported(tmp_path: Path):
    (tmp_path / "a.txt").write_text("hit\n" * 30)
    result = search(Sandbox(tmp_path), "hit", max_per_file=3)
    assert len(result.matches) == 3
    assert result.capped_files == ["a.txt"]


def test_million_matching_lines_stay_within_caps(huge_repo: Path):  # noqa: F811
    sb = Sandbox(huge_repo, limits=ToolLimits(max_output_bytes=8000))
    started = time.monotonic()
    result = search(sb, "match me", path="many.txt", max_results=50, max_per_file=10_000_000)
    assert time.monotonic() - started < 10
    assert len(result.matches) == 50
    assert result.omitted > 1000
    assert len(result.render().encode()) <= 8000


def test_five_megabyte_line_is_cut_with_a_marker(huge_repo: Path):  # noqa: F811
    result = search(Sandbox(huge_repo), "needle", path="one_line.txt")
    (m,) = result.matches
    assert m.line.endswith("...[truncated]")
    assert len(result.render().encode()) <= ToolLimits().max_output_bytes


def test_catastrophic_pattern_stops_at_the_timeout(huge_repo: Path):  # noqa: F811
    started = time.monotonic()
    result = search(Sandbox(huge_repo), SLOW_PATTERN, path="big.txt", timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 3.0
    assert not result.complete
    assert "time limit" in (result.stopped_reason or "")
    assert "time limit" in result.render()


def test_cancel_kills_ripgrep_within_a_second(huge_repo: Path):  # noqa: F811
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    started = time.monotonic()
    result = search(Sandbox(huge_repo), SLOW_PATTERN, path="big.txt", timeout_s=60, cancel=cancel)
    elapsed = time.monotonic() - started
    timer.cancel()
    assert elapsed < 1.3
    assert result.stopped_reason == "cancelled"


def test_no_ripgrep_process_outlives_a_search(huge_repo: Path):  # noqa: F811
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    search(Sandbox(huge_repo), SLOW_PATTERN, path="big.txt", timeout_s=60, cancel=cancel)
    time.sleep(0.1)
    mine = [
        p for p in os.listdir("/proc")
        if p.isdigit() and _ppid(p) == os.getpid() and _comm(p) == "rg"
    ]
    assert mine == []


def _ppid(pid: str) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _comm(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_missing_ripgrep_is_unrecoverable(sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nowhere" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UnrecoverableError, match="ripgrep"):
        search(sb, "needle")


def test_search_skips_dependency_directories_without_a_gitignore(tmp_path: Path):
    (tmp_path / "node_modules" / "lib").mkdir(parents=True)
    (tmp_path / "node_modules" / "lib" / "index.js").write_text("needle\n")
    (tmp_path / "app.js").write_text("needle\n")
    assert [m.path for m in search(Sandbox(tmp_path), "needle").matches] == ["app.js"]


def test_search_cancelled_before_it_starts_runs_nothing(sb: Sandbox):
    cancel = threading.Event()
    cancel.set()
    result = search(sb, "needle", cancel=cancel)
    assert result.matches == [] and result.stopped_reason == "cancelled"


def test_bad_glob_is_a_tool_error_naming_the_glob(sb: Sandbox):
    with pytest.raises(ToolError, match="Invalid glob"):
        search(sb, "needle", globs=("src/[a",))
