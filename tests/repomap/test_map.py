"""The built map: golden rendering, token budget, personalization, re-focusing, the symbol index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repomap import Focus, Frame, MapConfig, build_repo_map, count_tokens
from tests.repomap.conftest import POLYGLOT, write_tree

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    base = tmp_path_factory.mktemp("map")
    return write_tree(base / "repo", POLYGLOT), base / "cache"


@pytest.fixture(scope="module")
def plain_map(shared):
    root, cache = shared
    return build_repo_map(root, cache_dir=cache, token_budget=1024)


def _golden(name: str, text: str) -> str:
    path = GOLDEN / name
    if os.environ.get("BUGSLEUTH_REGEN_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


def test_map_matches_the_golden_rendering(plain_map):
    assert plain_map.text == _golden("polyglot.map", plain_map.text)


def test_focused_map_matches_the_golden_rendering(shared):
    root, cache = shared
    text = build_repo_map(root, cache_dir=cache, token_budget=400, focus="Admin.promote crashes in app/service.py").text
    assert text == _golden("polyglot-focused.map", text)


def test_every_indexed_file_is_ranked_best_first(plain_map):
    scores = [f.score for f in plain_map.files]
    assert len(plain_map.files) == plain_map.stats.files_indexed == 16
    assert scores == sorted(scores, reverse=True)
    assert plain_map.files[0].path == "app/models.py"


@pytest.mark.parametrize("budget", [40, 120, 300, 700, 2000])
def test_rendered_map_fits_the_token_budget(shared, budget):
    root, cache = shared
    repo_map = build_repo_map(root, cache_dir=cache, token_budget=budget)
    assert count_tokens(repo_map.text) <= budget


def test_a_bigger_budget_shows_more(shared):
    root, cache = shared
    small = build_repo_map(root, cache_dir=cache, token_budget=150).text
    large = build_repo_map(root, cache_dir=cache, token_budget=1500).text
    assert len(small) < len(large)
    assert "12-14 fn area(&self) -> i32" in large


def test_zero_budget_renders_nothing(shared):
    root, cache = shared
    assert build_repo_map(root, cache_dir=cache, token_budget=0).text == ""


def test_signatures_with_line_numbers_and_no_bodies(plain_map):
    assert "  16-17 def greet(self, other: \"User\") -> str\n" in plain_map.text
    assert "return" not in plain_map.text


@pytest.mark.parametrize(
    "focus,expected",
    [
        ("Crash in lib/greeter.rb when greeting", "lib/greeter.rb"),
        ('Traceback:\n  File "/srv/app/cmd/main.go", line 14, in Area\n', "cmd/main.go"),
        ("`vec_len` returns garbage for empty vectors", "native/vec.c"),
        ("Greeter.hello formats the name twice", "lib/greeter.rb"),
    ],
)
def test_personalization_moves_the_mentioned_file_to_the_top(shared, focus, expected):
    root, cache = shared
    assert build_repo_map(root, cache_dir=cache).files[0].path != expected
    assert build_repo_map(root, cache_dir=cache, focus=focus).files[0].path == expected


def test_focus_objects_and_stack_frames_are_accepted(shared):
    root, cache = shared
    focus = Focus(frames=(Frame(path="/home/me/project/src/lib.rs", line=13, function="area"),))
    repo_map = build_repo_map(root, cache_dir=cache, focus=focus)
    assert repo_map.files[0].path == "src/lib.rs"
    top_symbols = [s.definition.qualname for s in repo_map.symbols[:2]]
    assert "Point.area" in top_symbols


def test_refocus_equals_a_fresh_build_with_that_focus(plain_map, shared):
    root, cache = shared
    focus = "make_user fails for Admin"
    again = plain_map.refocus(focus, 600)
    fresh = build_repo_map(root, cache_dir=cache, focus=focus, token_budget=600)
    assert again.text == fresh.text
    assert [(f.path, f.score) for f in again.files] == [(f.path, f.score) for f in fresh.files]


def test_symbols_cover_every_definition_best_first(plain_map):
    symbols = plain_map.symbols
    assert len(symbols) == plain_map.stats.definitions
    assert [s.score for s in symbols] == sorted((s.score for s in symbols), reverse=True)


def test_index_looks_up_plain_qualified_dotted_and_fuzzy_names(plain_map):
    index = plain_map.index
    assert sorted(d.qualname for d in index.lookup("greet")) == ["Greeter.greet", "User.greet"]
    assert [(d.path, d.start_line) for d in index.lookup("User.greet")] == [("app/models.py", 16)]
    assert [d.path for d in index.lookup("Shape.Area")] == ["cmd/main.go"]
    assert [d.qualname for d in index.lookup("app.models.User.greet")] == ["User.greet"]
    assert [d.qualname for d in index.lookup("geo::Shape::area")] == ["geo.Shape.area", "geo.Shape.area"]
    assert [d.qualname for d in index.lookup("makeuser")] == ["make_user"]
    assert [d.qualname for d in index.lookup("MAKE_USER")] == ["make_user"]
    assert index.lookup("makeuser", fuzzy=False) == []
    assert [d.qualname for d in index.lookup("fetchUsr")] == ["ApiClient.fetchUser"]


def test_index_suggests_close_names(plain_map):
    assert "make_user" in plain_map.index.suggest("make_usr")
    assert plain_map.index.suggest("zzzzzz") == []


def test_index_finds_the_innermost_enclosing_definition(plain_map):
    index = plain_map.index
    assert index.enclosing("app/models.py", 21).qualname == "User.Meta.label"
    assert index.enclosing("app/models.py", 14).qualname == "User"
    assert index.enclosing("app/models.py", 2) is None
    assert index.enclosing("nope.py", 1) is None
    assert [d.qualname for d in index.definitions("web/base.js")] == ["BaseClient", "BaseClient.get"]


def test_empty_repository_gives_an_empty_map(tmp_path):
    (tmp_path / "empty").mkdir()
    repo_map = build_repo_map(tmp_path / "empty", cache_dir=tmp_path / "cache")
    assert repo_map.files == [] and repo_map.stats.files_indexed == 0
    assert repo_map.text == "# Repository map: 0 files indexed\n"


def test_repository_without_supported_languages_gives_an_empty_map(tmp_path):
    root = write_tree(tmp_path / "r", {"README.md": "hi", "data.csv": "a,b", "Makefile": "all:"})
    repo_map = build_repo_map(root, cache_dir=tmp_path / "cache")
    assert repo_map.files == [] and repo_map.stats.skipped == {"unsupported": 3}


def test_the_process_pool_gives_the_same_map_as_serial_parsing(shared, tmp_path):
    root, _ = shared
    serial = build_repo_map(root, cache_dir=tmp_path / "a", config=MapConfig(parallel_threshold=10_000))
    config = MapConfig(parallel_threshold=2, workers=2, adaptive_workers=False)
    pooled = build_repo_map(root, cache_dir=tmp_path / "b", config=config)
    assert pooled.stats.cache_misses == serial.stats.cache_misses == 16
    assert pooled.text == serial.text


def test_parse_processes_are_limited_to_idle_cores(monkeypatch):
    from repomap._parse import usable_workers

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (0.2, 0.2, 0.2))
    assert usable_workers(2) == 2
    monkeypatch.setattr("os.getloadavg", lambda: (5.0, 5.0, 5.0))
    assert usable_workers(2) == 1
    assert usable_workers(2, adaptive=False) == 2
    assert usable_workers(8, adaptive=False) == 2


def test_parse_processes_follow_the_sampled_idle_cores_over_the_load_average(monkeypatch):
    from repomap._parse import busy_cores, usable_workers

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (5.0, 5.0, 5.0))
    assert usable_workers(2, busy=0.1) == 2  # the load average still counts jobs that have ended
    assert usable_workers(2, busy=1.9) == 1
    busy = busy_cores(0.02)
    assert busy is None or 0.0 <= busy <= 2.0
