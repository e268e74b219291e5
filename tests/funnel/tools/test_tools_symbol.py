"""`find_symbol`: definitions from the real repo map index; "did you mean" when nothing matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.errors import ToolError
from funnel.tools.sandbox import Sandbox
from funnel.tools import find_symbol

repomap = pytest.importorskip("repomap")
if not hasattr(repomap, "build_repo_map"):
    pytest.skip("repomap.build_repo_map has not landed yet", allow_module_level=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "parser.py").write_text(
        "class Parser:\n"
        "    def parse(self, text: str) -> list[str]:\n"
        "        return text.split()\n"
        "\n"
        "    def reset(self):\n"
        "        pass\n"
        "\n"
        "\n"
        "def parse(text):\n"
        "    return Parser().parse(text)\n"
    )
    (root / "pkg" / "render.py").write_text("def render_page(tree):\n    return str(tree)\n")
    (root / ".env.py").write_text("def leaked_secret():\n    return 'x'\n")
    return root


@pytest.fixture
def index(repo: Path):
    return repomap.build_repo_map(repo, cache_dir=repo.parent / "cache").index


def test_find_symbol_finds_a_qualified_method(repo: Path, index):
    result = find_symbol(Sandbox(repo), index, "Parser.parse")
    (hit,) = result.hits
    assert (hit.path, hit.start_line, hit.end_line, hit.exact) == ("pkg/parser.py", 2, 3, True)
    assert "def parse(self, text: str)" in hit.signature
    assert "Parser.parse" in result.render() and "pkg/parser.py:2-3" in result.render()


def test_find_symbol_finds_every_definition_of_a_plain_name(repo: Path, index):
    result = find_symbol(Sandbox(repo), index, "parse")
    assert {(h.qualname, h.start_line) for h in result.hits} == {("Parser.parse", 2), ("parse", 9)}


def test_find_symbol_matches_fuzzily_and_says_so(repo: Path, index):
    result = find_symbol(Sandbox(repo), index, "render_pag")
    assert [h.qualname for h in result.hits] == ["render_page"]
    assert not result.hits[0].exact
    assert "Did you mean" in result.render()


def test_find_symbol_offers_near_names_for_a_misspelling(repo: Path, index):
    result = find_symbol(Sandbox(repo), index, "Parsr")
    assert "Parser" in [h.qualname for h in result.hits]
    assert not any(h.exact for h in result.hits)
    assert result.render().startswith("No definition named 'Parsr'. Did you mean one of these?")


def test_find_symbol_says_so_when_nothing_is_close(repo: Path, index):
    result = find_symbol(Sandbox(repo), index, "qqqzzzwww")
    assert result.hits == []
    assert "No definition named 'qqqzzzwww'" in result.render()


def test_cli_symbol_prints_the_definitions(repo: Path):
    from typer.testing import CliRunner

    from app.cli import cli

    res = CliRunner().invoke(cli, ["tools", "symbol", "--repo", str(repo), "Parser.parse"])
    assert res.exit_code == 0, res.output
    assert "Parser.parse (method) pkg/parser.py:2-3" in res.stdout


def test_find_symbol_never_returns_definitions_from_secret_files(repo: Path, index):
    result = find_symbol(Sandbox(repo), index, "leaked_secret")
    assert all(h.path != ".env.py" for h in result.hits)
    assert ".env.py" not in result.render()


def test_find_symbol_rejects_an_empty_name(repo: Path, index):
    with pytest.raises(ToolError):
        find_symbol(Sandbox(repo), index, "  ")


def test_find_symbol_hides_definitions_behind_a_symlink_to_a_secret(tmp_path: Path):
    import os

    root = tmp_path / "repo"
    root.mkdir()
    (root / "credentials.py").write_text("def api_token():\n    return 'sk-live-123'\n")
    os.symlink("credentials.py", root / "innocent.py")
    index = repomap.build_repo_map(root, cache_dir=tmp_path / "cache").index
    result = find_symbol(Sandbox(root), index, "api_token")
    assert result.hits == []
    assert "sk-live" not in result.render()


def test_an_escaped_identifier_is_found_by_its_name_without_the_backticks(tmp_path: Path):
    root = tmp_path / "swift"
    (root / "Source").mkdir(parents=True)
    (root / "Source" / "Session.swift").write_text(
        "open class Session {\n    public static let `default` = Session()\n}\n")
    index = repomap.build_repo_map(root, cache_dir=tmp_path / "cache").index
    for query in ("Session.default", "Session.`default`"):
        result = find_symbol(Sandbox(root), index, query)
        assert [(h.qualname, h.exact) for h in result.hits] == [("Session.`default`", True)], query
        assert not result.render().startswith("No definition named")
