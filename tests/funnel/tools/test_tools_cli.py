"""`bugsleuth tools ...`: prints exactly what the agent sees; exit 0 on a result, 2 on a refusal, 1 when broken."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from funnel.tools.sandbox import Sandbox
from funnel.tools import list_dir, read_range, search
from tests.funnel.tools_corpus import corpus  # noqa: F401

runner = CliRunner()


def test_cli_read_prints_what_the_agent_sees(corpus: Path):  # noqa: F811
    res = runner.invoke(cli, ["tools", "read", "--repo", str(corpus), "src/app.py", "--start", "4", "--end", "5"])
    assert res.exit_code == 0, res.output
    assert res.stdout == read_range(Sandbox(corpus), "src/app.py", 4, 5).render() + "\n"


def test_cli_search_prints_what_the_agent_sees(corpus: Path):  # noqa: F811
    res = runner.invoke(cli, ["tools", "search", "--repo", str(corpus), "def main", "--glob", "*.py"])
    assert res.exit_code == 0, res.output
    assert res.stdout == search(Sandbox(corpus), "def main", globs=("*.py",)).render() + "\n"


def test_cli_ls_prints_what_the_agent_sees(corpus: Path):  # noqa: F811
    res = runner.invoke(cli, ["tools", "ls", "--repo", str(corpus), "src", "--depth", "2"])
    assert res.exit_code == 0, res.output
    assert res.stdout == list_dir(Sandbox(corpus), "src", 2).render() + "\n"


@pytest.mark.parametrize(
    "args",
    [
        ["read", "../outside/secret.txt"],
        ["read", ".env"],
        ["read", "src/app.py", "--start", "100"],
        ["search", "def ("],
        ["ls", "escape_dir"],
        ["search", "x", "--path", "/etc"],
    ],
)
def test_cli_refusals_exit_2_with_the_reason_on_stderr(corpus: Path, args: list[str]):  # noqa: F811
    res = runner.invoke(cli, ["tools", args[0], "--repo", str(corpus), *args[1:]])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.strip()


def test_cli_deny_option_withholds_more_files(corpus: Path):  # noqa: F811
    res = runner.invoke(cli, ["tools", "read", "--repo", str(corpus), "README.md", "--deny", "*.md"])
    assert res.exit_code == 2
    assert "withheld" in res.stderr


def test_cli_missing_repository_exits_1(tmp_path: Path):
    res = runner.invoke(cli, ["tools", "ls", "--repo", str(tmp_path / "gone")])
    assert res.exit_code == 1
    assert "does not exist" in res.stderr
