"""`bugsleuth repo add|list` and `bugsleuth worker` guard rails, through the real CLI."""

from __future__ import annotations

from typer.testing import CliRunner

from app.cli import cli
from app.config import get_settings
from tests.app._service_fixtures import fixture_repo  # noqa: F401


def test_repo_add_then_list_shows_the_repository(fixture_repo, monkeypatch, tmp_path):
    path, _ = fixture_repo
    monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(tmp_path / "cli-data"))
    get_settings.cache_clear()
    runner = CliRunner()
    added = runner.invoke(cli, ["repo", "add", "acme/tiny", str(path)])
    assert added.exit_code == 0, added.output
    assert "registered acme/tiny" in added.output
    again = runner.invoke(cli, ["repo", "add", "acme/tiny", str(path)])
    assert again.exit_code == 1 and "already registered" in again.output
    listed = runner.invoke(cli, ["repo", "list"])
    assert listed.exit_code == 0
    assert f"acme/tiny\tpath\t{path.resolve()}" in listed.output
    get_settings.cache_clear()


def test_worker_refuses_to_run_on_sqlite(monkeypatch, tmp_path):
    monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(tmp_path / "cli-data"))
    monkeypatch.delenv("BUGSLEUTH_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    result = CliRunner().invoke(cli, ["worker"])
    assert result.exit_code == 2
    assert "postgresql" in result.output
    get_settings.cache_clear()


def test_serve_refuses_a_public_address_without_a_token(monkeypatch, tmp_path):
    monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(tmp_path / "cli-data"))
    monkeypatch.delenv("BUGSLEUTH_API_TOKEN", raising=False)
    monkeypatch.setenv("BUGSLEUTH_HOST", "127.0.0.1")  # `serve --host` sets it; monkeypatch restores it after
    get_settings.cache_clear()
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "BUGSLEUTH_API_TOKEN" in result.output
    get_settings.cache_clear()
