"""Every reader of repository content over one hostile tree: refusals or recorded skips, never a leak, never a failure.

Issue 21, item 1 (a secret's value leaked through `app/settings.py -> ../.env`) and item 4 (a 1,200-level deep
directory made every investigation fail with RecursionError).
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from app.cli import cli
from funnel.errors import ToolError
from funnel.localize.corpus import Corpus
from funnel.run.loop import investigate_sync
from funnel.limits import Limits
from funnel.run.prompts import load_memory
from funnel.tools.sandbox import Sandbox
from funnel.tools import find_symbol, list_dir, read_range, search
from funnel.report.verify import verify_report
from repomap import MapConfig, build_repo_map, walk_files
from repomap.gate import Gate, Refused
from schemas.report import BugReport
from tests.hostile import BAD_NAMES, LINKS_TO_SECRETS, ODD_FILES, SECRET, build_hostile, leaks, remove_hostile

ISSUE_REPORT = BugReport(title="load() crashes", body="KeyError: DATABASE_PASSWORD\n\nloader.py load settings.py")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    yield build_hostile(base)
    remove_hostile(base)


@pytest.fixture(scope="module")
def repo_map(hostile, tmp_path_factory):
    return build_repo_map(hostile.root, focus="load settings DATABASE_PASSWORD", token_budget=8192,
                          cache_dir=tmp_path_factory.mktemp("cache"))


def test_the_map_never_shows_a_secret_and_records_why_each_file_was_skipped(repo_map, hostile):
    assert leaks(repo_map.text) == []
    indexed = {f.path for f in repo_map.files}
    assert "app/loader.py" in indexed and "app/sub/ok.py" in indexed
    assert indexed.isdisjoint(LINKS_TO_SECRETS) and indexed.isdisjoint(ODD_FILES)
    skipped = repo_map.stats.skipped
    for reason in ("denied", "symlink_escape", "symlink_loop", "not_regular", "too_large", "too_deep"):
        assert skipped.get(reason, 0) >= 1, (reason, skipped)
    assert skipped.get("bad_name") == len(BAD_NAMES)
    assert all(leaks(repr(d)) == [] for p in indexed for d in repo_map.definitions(p))
    assert find_symbol(Sandbox(hostile.root), repo_map.index, "DATABASE_PASSWORD").hits == []


def test_the_walker_keeps_no_link_to_a_secret_and_caps_depth(hostile):
    walked = walk_files(hostile.root, sniff=True)
    paths = {f.path for f in walked.files}
    assert paths.isdisjoint(LINKS_TO_SECRETS)
    assert hostile.deep_file not in paths and walked.skipped["too_deep"] == 1
    deeper = walk_files(hostile.root, MapConfig(max_depth=2000))
    assert hostile.deep_file in {f.path for f in deeper.files}  # iterative: no RecursionError at 1,200 levels


@pytest.mark.parametrize("rel", LINKS_TO_SECRETS)
def test_the_gate_refuses_every_link_to_a_secret(hostile, rel):
    with pytest.raises(Refused) as refused:
        Gate(hostile.root).read_bytes(rel)
    assert refused.value.reason.value in ("denied", "symlink_escape")


def test_the_offline_corpus_never_reads_a_secret(hostile):
    every = [*LINKS_TO_SECRETS, *ODD_FILES, ".env", ".ssh/config", ".git/config", "app/loader.py"]
    corpus = Corpus.build(hostile.root, every)
    assert set(corpus.texts) == {"app/loader.py"}
    assert all(leaks(text) == [] for text in corpus.texts.values())


@pytest.mark.parametrize("rel", [*LINKS_TO_SECRETS, *ODD_FILES, ".env", ".ssh/config", ".git/config"])
def test_read_range_refuses_every_secret_and_odd_file(hostile, rel):
    sb = Sandbox(hostile.root)
    try:
        shown = read_range(sb, rel).render()
    except ToolError as e:
        shown = str(e)
        assert shown.startswith(("Refused", "Not found")), shown
    assert leaks(shown) == []


def test_search_never_shows_a_secret_whatever_the_path(hostile):
    sb = Sandbox(hostile.root)
    for path in (".", "app", *LINKS_TO_SECRETS):
        try:
            shown = search(sb, "SECRET", path=path, fixed_strings=True, context=3).render()
        except ToolError as e:
            shown = str(e)
        assert leaks(shown) == [], (path, shown)


def test_list_dir_shows_links_to_secrets_as_withheld_never_their_content(hostile):
    shown = list_dir(Sandbox(hostile.root), ".", depth=3).render()
    assert leaks(shown) == []
    assert "settings.py -> (withheld)" in shown and "outside.py -> (outside the repository)" in shown
    assert "hard.py  [withheld: secret file]" in shown


def test_the_verifier_refuses_a_citation_of_a_linked_secret(hostile, repo_map):
    markdown = (f"# Diagnosis\n\n## Root cause\nThe password is read from `app/settings.py:1`.\n\n"
                f"## Evidence\n- `app/settings.py:1`\n  ```\n  DATABASE_PASSWORD={SECRET}\n  ```\n")
    result = verify_report(markdown, hostile.root, repo_map.index)
    assert not result.ok
    assert any("withheld" in f for f in result.findings)


def test_the_memory_file_linking_to_a_secret_is_not_read(hostile):
    assert load_memory(hostile.root, Limits()) is None


def test_an_offline_investigation_of_the_hostile_tree_succeeds_and_quotes_no_secret(hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "cache"))
    trace = tmp_path / "run.jsonl"
    result = investigate_sync(ISSUE_REPORT, hostile.root, limits=Limits(history=False), trace_path=trace)
    assert result.diagnosis.termination.reason.value not in ("error",)
    assert any(f.path == "app/loader.py" for f in result.diagnosis.affected_files)
    dumped = [result.diagnosis.model_dump_json(), result.report_markdown,
              json.dumps([e.model_dump(mode="json") for e in result.events])]
    dumped += [p.read_text() for p in tmp_path.glob("run*") if p.is_file()]
    assert all(leaks(text) == [] for text in dumped)


@pytest.mark.skipif(os.geteuid() == 0, reason="running as root: chmod 000 does not stop root from reading; "
                                            "the unreadable path is covered by the gate's OSError mapping")
def test_an_unreadable_file_is_a_recorded_skip(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    pass\n")
    (root / "b.py").write_text("def b():\n    pass\n")
    os.chmod(root / "b.py", 0)
    repo_map = build_repo_map(root, cache_dir=tmp_path / "c")
    assert [f.path for f in repo_map.files] == ["a.py"] and repo_map.stats.skipped == {"unreadable": 1}


def test_the_issue_reproduction_bugsleuth_investigate_and_map_quote_no_secret(tmp_path, monkeypatch):
    """Issue 21 item 1, step by step as filed: before the gate the report quoted `hunter2-SECRET`."""
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "cache"))
    r = tmp_path / "r"
    (r / "app").mkdir(parents=True)
    (r / ".env").write_text("DATABASE_PASSWORD=hunter2-SECRET\n")
    os.symlink("../.env", r / "app" / "settings.py")
    (r / "app" / "loader.py").write_text('def load():\n    return open(".env").read()\n')
    (tmp_path / "rep.txt").write_text("load() crashes\n\nKeyError: DATABASE_PASSWORD\n")
    report = str(tmp_path / "rep.txt")
    out = CliRunner().invoke(cli, ["investigate", str(r), "--report", report, "--format", "markdown"])
    assert out.exit_code == 0, out.output
    assert "load" in out.stdout and "hunter2-SECRET" not in out.output
    mapped = CliRunner().invoke(cli, ["map", str(r)])
    assert mapped.exit_code == 0 and "loader.py" in mapped.stdout and "hunter2-SECRET" not in mapped.output


def test_a_secret_value_written_by_the_explorer_itself_is_redacted_from_the_result(hostile, tmp_path, monkeypatch):
    """An external agent reads the tree with its own tools: whatever it quotes from a withheld file is redacted."""
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "cache"))
    report = ("## Summary\nload() fails: the password is hunter2-SECRET and the remote "
              "https://git-SECRET-token-91@example.com/r.git\n\n## Root cause\n`app/loader.py:4` reads .env\n")
    script = tmp_path / "agent.sh"
    script.write_text(f"cat > /dev/null\ncat <<'EOF'\n{report}EOF\n")
    result = investigate_sync(ISSUE_REPORT, hostile.root, explorer=f"command:sh {script}",
                              limits=Limits(history=False, max_attempts=1))
    texts = [result.diagnosis.model_dump_json(), result.report_markdown]
    assert all(leaks(t) == [] for t in texts)
    assert "[withheld]" in result.report_markdown


def test_withheld_values_are_the_values_of_secret_files_only(hostile):
    from funnel.report.redact import withheld_values

    values = withheld_values(hostile.root)
    assert SECRET in values and "ssh-SECRET-7f3a" in values
    assert any("git-SECRET-token-91" in v for v in values)
    assert not any("def load" in v for v in values)


def test_search_finds_the_fifo_named_gitignore_by_its_own_scan_without_walking_the_tree(hostile):
    sb = Sandbox(hostile.root)
    assert sb.unreadable_ignore_files() == ["app/sub/.gitignore"]
    assert sb._walk_cache is None
    result = search(sb, "def ")
    assert result.note and "app/sub/.gitignore" in result.note


def test_files_whose_names_no_report_can_cite_are_left_out_of_the_map_the_listing_and_the_search(hostile, repo_map):
    assert {f.path for f in repo_map.files if f.path.startswith("app/load")} == {"app/loader.py"}
    sb = Sandbox(hostile.root)
    listed = list_dir(sb, "app").render()
    assert "load\\x0asettings" not in listed and "\ufffd" not in listed and "load\\xff" not in listed
    assert f"[{len(BAD_NAMES)} entries left out: their names hold" in listed
    found = {m.path for m in search(sb, "DATABASE_PASSWORD", path="app").matches}
    assert found == {"app/loader.py"}
