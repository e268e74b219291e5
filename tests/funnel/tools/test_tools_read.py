"""`read_range`: numbered lines, every cut stated, huge files streamed, binaries and secrets refused."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from funnel.errors import ToolError
from funnel.tools.sandbox import Sandbox, ToolLimits
from funnel.tools import read_range, search
from tests.funnel.big_files import BIG_LINES, huge_repo  # noqa: F401
from tests.funnel.tools_corpus import DENY, SECRET_VALUES, corpus  # noqa: F401


@pytest.fixture
def sb(corpus: Path) -> Sandbox:  # noqa: F811
    return Sandbox(corpus, deny=DENY)


def test_read_range_returns_numbered_lines_and_the_file_length(sb: Sandbox):
    result = read_range(sb, "src/app.py", 4, 5)
    assert [(ln.number, ln.text) for ln in result.lines] == [(4, "def main():"), (5, "    return parse_args()")]
    assert result.total_lines == 9
    assert result.render().splitlines()[:3] == ["src/app.py lines 4-5 of 9", "4| def main():", "5|     return parse_args()"]


def test_read_range_without_end_reads_to_the_end(sb: Sandbox):
    result = read_range(sb, "src/app.py", 8)
    assert [ln.number for ln in result.lines] == [8, 9]
    assert result.notes == []


def test_end_past_the_end_is_clamped_and_said(sb: Sandbox):
    result = read_range(sb, "src/app.py", 1, 500)
    assert result.end == 9
    assert "the file has 9 lines" in result.render()


def test_start_past_the_end_is_a_tool_error_with_the_length(sb: Sandbox):
    with pytest.raises(ToolError, match="has only 9 lines"):
        read_range(sb, "src/app.py", 50, 60)


@pytest.mark.parametrize(("start", "end"), [(0, 5), (-3, 2), (5, 2)])
def test_bad_line_numbers_are_tool_errors(sb: Sandbox, start: int, end: int):
    with pytest.raises(ToolError):
        read_range(sb, "src/app.py", start, end)


def test_last_line_without_newline_is_counted(sb: Sandbox):
    result = read_range(sb, "no_newline.txt")
    assert result.total_lines == 2
    assert [ln.text for ln in result.lines] == ["one", "two"]


def test_empty_file_says_it_is_empty(sb: Sandbox):
    (sb.root / "empty.txt").write_text("")
    assert read_range(sb, "empty.txt").render() == "empty.txt is empty (0 lines)."


def test_read_range_refuses_binary_files(sb: Sandbox):
    with pytest.raises(ToolError, match="binary"):
        read_range(sb, "image.bin")


@pytest.mark.parametrize("rel", sorted(SECRET_VALUES))
def test_read_range_refuses_secret_files(sb: Sandbox, rel: str):
    with pytest.raises(ToolError) as err:
        read_range(sb, rel)
    assert SECRET_VALUES[rel] not in str(err.value)


@pytest.mark.parametrize("rel", ["escape_file", "escape_dir/secret.txt", "../outside/secret.txt", "pipe", "src"])
def test_read_range_refuses_escapes_and_special_files(sb: Sandbox, rel: str):
    with pytest.raises(ToolError):
        read_range(sb, rel)


def test_invalid_utf8_is_shown_visibly(sb: Sandbox):
    (line,) = read_range(sb, "bad_utf8.txt").lines
    assert line.text == "caf\\xe9 needle \\xff\\xfe end"


def test_line_cap_per_call_is_stated_with_the_next_start(tmp_path: Path):
    (tmp_path / "long.py").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    result = read_range(Sandbox(tmp_path, limits=ToolLimits(read_max_lines=200)), "long.py", 1, 1000)
    assert len(result.lines) == 200
    assert result.end == 200
    assert "call again with start=201" in result.render()


def test_long_lines_are_cut_with_a_marker(tmp_path: Path):
    (tmp_path / "wide.txt").write_text("a" * 2000 + "\n")
    result = read_range(Sandbox(tmp_path, limits=ToolLimits(max_line_chars=100)), "wide.txt")
    (line,) = result.lines
    assert line.text == "a" * 100
    assert line.cut_chars == 1900
    assert "...[truncated 1,900 more chars]" in result.render()
    assert "1 lines longer than 100 chars were cut" in result.render()


def test_output_stays_within_the_byte_cap(tmp_path: Path):
    (tmp_path / "dense.txt").write_text(("é" * 400 + "\n") * 300)
    limits = ToolLimits(max_output_bytes=5000)
    rendered = read_range(Sandbox(tmp_path, limits=limits), "dense.txt").render()
    assert len(rendered.encode()) <= 5000
    assert "output truncated" in rendered


def test_fifty_megabyte_file_is_read_near_its_end_quickly(huge_repo: Path):  # noqa: F811
    started = time.monotonic()
    result = read_range(Sandbox(huge_repo), "big.txt", BIG_LINES - 2, BIG_LINES + 10)
    assert time.monotonic() - started < 3.0
    assert result.total_lines == BIG_LINES
    assert [ln.number for ln in result.lines] == [BIG_LINES - 2, BIG_LINES - 1, BIG_LINES]


def test_five_megabyte_single_line_is_cut_and_counted(huge_repo: Path):  # noqa: F811
    started = time.monotonic()
    result = read_range(Sandbox(huge_repo), "one_line.txt")
    assert time.monotonic() - started < 2.0
    assert result.total_lines == 1
    (line,) = result.lines
    assert len(line.text) == ToolLimits().max_line_chars
    assert line.cut_chars == 5_000_006 - ToolLimits().max_line_chars
    assert len(result.render().encode()) <= ToolLimits().max_output_bytes


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf16_file_reads_as_its_text_with_the_lines_ripgrep_numbers(tmp_path: Path, codec: str):
    (tmp_path / "Build.ps1").write_bytes("\ufeffparam($Target)\r\n# café\r\nWrite-Host $Target\r\n".encode(codec))
    sb = Sandbox(tmp_path)
    result = read_range(sb, "Build.ps1", 2, 3)
    assert [(ln.number, ln.text) for ln in result.lines] == [(2, "# café"), (3, "Write-Host $Target")]
    assert result.total_lines == 3
    assert [(m.line_number, m.line) for m in search(sb, "Write-Host").matches] == [(3, "Write-Host $Target")]


def test_utf32_and_other_nul_bearing_files_stay_binary(tmp_path: Path):
    (tmp_path / "a.txt").write_bytes("\ufeffhello\n".encode("utf-32-le"))
    with pytest.raises(ToolError, match="binary file"):
        read_range(Sandbox(tmp_path), "a.txt")
