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


def test_an_invalid_setting_is_named_with_where_to_set_it_not_a_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(tmp_path / "cli-data"))
    monkeypatch.setenv("BUGSLEUTH_CONFIG", str(tmp_path / "absent.toml"))
    cases = {("BUGSLEUTH_PORT", "abc"): "port (BUGSLEUTH_PORT or port in ", ("BUGSLEUTH_LOG_LEVEL", "LOUD"):
             "log_level (BUGSLEUTH_LOG_LEVEL or log_level in ", ("BUGSLEUTH_JOB_BACKEND", "nope"): "'local', 'procrastinate'"}
    for (name, value), said in cases.items():
        with monkeypatch.context() as env:
            env.setenv(name, value)
            get_settings.cache_clear()
            for command in (["serve"], ["cache", "show"], ["repo", "list"]):
                result = CliRunner().invoke(cli, command)
                assert result.exit_code == 2 and said in result.output and f"not '{value}'" in result.output, result.output
                assert "Traceback" not in result.output
    monkeypatch.setenv("BUGSLEUTH_API_TOKEN", "x" * 3)
    monkeypatch.setenv("BUGSLEUTH_WORKERS", "many")
    get_settings.cache_clear()
    result = CliRunner().invoke(cli, ["serve"])
    assert result.exit_code == 2 and "workers (BUGSLEUTH_WORKERS" in result.output
    get_settings.cache_clear()


def test_a_data_dir_that_cannot_be_made_or_written_is_refused(monkeypatch, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    for data_dir, said in ((blocked / "data", "cannot be created: Not a directory"), (blocked, "cannot be created")):
        monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(data_dir))
        get_settings.cache_clear()
        result = CliRunner().invoke(cli, ["serve"])
        assert result.exit_code == 2 and f"data_dir '{data_dir}' {said}" in result.output, result.output
    get_settings.cache_clear()


def test_log_level_is_read_in_any_case():
    from app.config import Settings

    assert Settings(log_level="debug").log_level == "DEBUG"


def test_settings_come_from_the_toml_file_with_env_vars_winning(monkeypatch, tmp_path):
    from app.config import Settings

    config = tmp_path / "bugsleuth.toml"
    config.write_text('explorer = "command:cat"\nworkers = 5\nper_repo_concurrency = 3\n')
    monkeypatch.setenv("BUGSLEUTH_CONFIG", str(config))
    monkeypatch.setenv("BUGSLEUTH_WORKERS", "7")
    settings = Settings()
    assert settings.explorer == "command:cat"
    assert settings.per_repo_concurrency == 3
    assert settings.workers == 7
    assert settings.resolved_job_backend == "local"
    assert settings.resolved_database_url.startswith("sqlite+aiosqlite:///")


def test_log_lines_are_json_and_carry_the_investigation_id():
    import json
    import logging

    from app.observability import JsonFormatter, investigation_id_var

    token = investigation_id_var.set(42)
    try:
        record = logging.makeLogRecord({"name": "bugsleuth.jobs", "msg": "investigation started", "levelname": "INFO",
                                        "repo": "acme/tiny"})
        line = json.loads(JsonFormatter().format(record))
    finally:
        investigation_id_var.reset(token)
    assert line["investigation_id"] == 42
    assert line["msg"] == "investigation started" and line["repo"] == "acme/tiny" and line["level"] == "info"
