"""The dashboard's pure parts: highlighter, charts, links, timeline grouping, session and CSRF tokens."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from app import cookies, security, store
from app.dashboard import charts as _charts, queries, timeline, view
from app.dashboard.highlight import highlight_lines, language_for
from app.db import Database
from schemas import BugReport, Classification, ClassificationResult
from schemas.diagnosis import AffectedFile


def test_highlighter_escapes_markup_in_code_and_strings():
    lines = highlight_lines('x = "<script>alert(1)</script>"  # <b>bold</b>', "a.py")
    html = str(lines[0])
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html
    assert '<span class="tok-string">' in html and '<span class="tok-comment">' in html


def test_highlighter_marks_keywords_numbers_and_keeps_one_fragment_per_line():
    code = "def f(x):\n    return x + 42\n"
    lines = highlight_lines(code, "m.py")
    assert len(lines) == 3
    assert '<span class="tok-keyword">def</span>' in lines[0]
    assert '<span class="tok-keyword">return</span>' in lines[1]
    assert '<span class="tok-number">42</span>' in lines[1]


def test_highlighter_carries_block_comments_and_docstrings_across_lines():
    c_lines = highlight_lines("/* start\nstill comment */ int x; return x;", "a.c")
    assert str(c_lines[1]).startswith('<span class="tok-comment">still comment */</span>')
    assert '<span class="tok-type">int</span>' in c_lines[1]
    assert '<span class="tok-keyword">return</span>' in c_lines[1]
    py_lines = highlight_lines('"""doc\nmore doc with def\n"""\ndef g(): pass', "a.py")
    assert "tok-keyword" not in py_lines[1]
    assert '<span class="tok-keyword">def</span>' in py_lines[3]


def test_highlighter_does_not_open_a_string_at_a_rust_lifetime():
    code = "fn longest<'a>(x: &'a str, y: &'a str) -> &'a str {\n    let n = 1;\n    x\n}"
    lines = highlight_lines(code, "src/lib.rs")
    assert "tok-string" not in lines[0]
    assert '<span class="tok-keyword">fn</span>' in lines[0]
    assert '<span class="tok-keyword">let</span>' in lines[1]


def test_highlighter_reads_a_javascript_regex_literal_as_one_token():
    lines = highlight_lines('const re = /"[^"]*"/g; return re.test(s);', "web/check.js")
    assert '<span class="tok-keyword">return</span>' in lines[0]
    assert "&#34;[^&#34;]*&#34;/g</span>" in lines[0]  # the whole literal in one span, quotes escaped


def test_highlighter_knows_kotlin_scala_and_csharp_keywords():
    kotlin = highlight_lines("fun main() { val x = listOf(1); when (x) { else -> null } }", "Main.kt")[0]
    assert '<span class="tok-keyword">fun</span>' in kotlin and '<span class="tok-keyword">val</span>' in kotlin
    assert '<span class="tok-keyword">when</span>' in kotlin
    scala = highlight_lines("object Main { def run(): Unit = { lazy val y = 2 } }", "Main.scala")[0]
    assert '<span class="tok-keyword">object</span>' in scala and '<span class="tok-keyword">lazy</span>' in scala
    csharp = highlight_lines("foreach (var item in items) { await item.RunAsync(); }", "Program.cs")[0]
    assert '<span class="tok-keyword">foreach</span>' in csharp and '<span class="tok-keyword">await</span>' in csharp


def test_a_citation_that_starts_inside_a_docstring_is_coloured_as_the_docstring():
    source = ('def f(values):\n    """Mean of the values.\n\n    if the list is empty, return None\n'
              '    for the caller\n    while it waits.\n    """\n    return sum(values) / len(values)\n')
    item = AffectedFile(path="calc.py", line_start=8, line_end=8, evidence="return sum(values) / len(values)")
    cite = view.citation_of(item, source, None)
    assert cite.lines[0].number == 5  # the excerpt opens inside the docstring
    inside = [str(line.html) for line in cite.lines if line.number in (5, 6)]
    assert all("tok-keyword" not in html and "tok-string" in html for html in inside), inside
    cited = next(line for line in cite.lines if line.cited)
    assert '<span class="tok-keyword">return</span>' in cited.html


def test_highlighter_slices_the_asked_lines_of_the_whole_file():
    code = "x = '''\nwhile\n'''\nif x: pass"
    assert highlight_lines(code, "a.py", first=2, last=2) == [highlight_lines(code, "a.py")[1]]
    assert "tok-keyword" not in highlight_lines(code, "a.py", first=2, last=2)[0]
    assert '<span class="tok-keyword">if</span>' in highlight_lines(code, "a.py", first=4)[0]


def test_a_file_over_the_lexing_cap_is_highlighted_by_its_excerpt_alone(monkeypatch):
    code = "x = 1\n" * 50 + "def f(a):\n    return a < 2\n"
    monkeypatch.setattr(sys.modules[highlight_lines.__module__], "MAX_LEXED_CHARS", 100)
    lines = highlight_lines(code, "big.py", first=51, last=52)
    assert len(lines) == 2
    assert '<span class="tok-keyword">def</span>' in lines[0] and "&lt;" in lines[1]


def test_an_excerpt_over_the_lexing_cap_is_shown_plain_and_escaped_not_recursed(monkeypatch):
    monkeypatch.setattr(sys.modules[highlight_lines.__module__], "MAX_LEXED_CHARS", 100)
    code = "x = 1\n" + "var a='<b>'+" + "1+" * 200 + "1;\n" + "y = 2\n"  # one line longer than the cap
    shown = highlight_lines(code, "app/oneline.js", first=2, last=2)
    assert len(shown) == 1 and "<b>" not in shown[0] and "&lt;b&gt;" in shown[0]


def test_highlighter_renders_unknown_languages_plain_but_escaped():
    assert language_for("notes.txt") is None
    assert str(highlight_lines("if <x> then", "notes.txt")[0]) == "if &lt;x&gt; then"


def test_charts_escape_labels_and_are_labelled_images():
    svg = str(_charts.bar_chart("c1", "Tool <calls>", [_charts.Bar("<b>", 3), _charts.Bar("y", 1)]))
    assert svg.startswith("<svg") and 'role="img"' in svg and 'aria-labelledby="c1-title c1-desc"' in svg
    assert "<b>" not in svg and "&lt;b&gt;" in svg
    assert svg.count("<rect") == 2
    empty = str(_charts.line_chart("c2", "Accuracy", []))
    assert "No data yet" in empty


def test_histogram_counts_every_value_once():
    values = [1, 2, 2, 3, 10, 11, 30]
    bars = _charts.histogram(values, bins=5, integer=True)
    assert sum(b.value for b in bars) == len(values)
    floats = _charts.histogram([0.5, 1.5, 9.9, 10.0], bins=4)
    assert sum(b.value for b in floats) == 4


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("https://github.com/o/n", "https://github.com/o/n/blob/abc1234/src/a%20b.py#L10-L12"),
        ("git@github.com:o/n.git", "https://github.com/o/n/blob/abc1234/src/a%20b.py#L10-L12"),
        ("https://gitlab.com/g/sub/n.git", "https://gitlab.com/g/sub/n/-/blob/abc1234/src/a%20b.py#L10-12"),
        ("/srv/repos/n", None),
        ("https://example.com/o/n", None),
    ],
)
def test_web_url_links_to_lines_at_the_commit_on_known_hosts(location, expected):
    assert view.web_url(location, "abc1234", "src/a b.py", 10, 12) == expected


def test_web_url_needs_a_commit_hash():
    assert view.web_url("https://github.com/o/n", None, "a.py", 1, 1) is None
    assert view.web_url("https://github.com/o/n", "main;rm", "a.py", 1, 1) is None


def test_citation_shows_context_lines_and_marks_the_cited_range():
    source = "\n".join(f"line{i}" for i in range(1, 21))
    item = AffectedFile(path="a.py", line_start=10, line_end=11, evidence="line10")
    cite = view.citation_of(item, source, None)
    numbers = [line.number for line in cite.lines]
    assert numbers == list(range(7, 15))
    assert [line.number for line in cite.lines if line.cited] == [10, 11]
    assert cite.from_repository


def test_citation_falls_back_to_the_quoted_evidence():
    item = AffectedFile(path="a.py", line_start=5, line_end=6, evidence="a = 1\nb = 2")
    cite = view.citation_of(item, None, None)
    assert [line.number for line in cite.lines] == [5, 6]
    assert not cite.from_repository


def test_read_source_refuses_paths_outside_the_tree(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "secret.txt").write_text("no")
    assert view.read_source(None, None, "../secret.txt", [tmp_path / "tree"]) is None
    (tmp_path / "tree" / "ok.py").write_text("yes")
    assert view.read_source(None, None, "ok.py", [tmp_path / "tree"]) == "yes"


def test_read_source_shows_utf16_and_bom_text_and_no_binary_from_a_tree(tmp_path):
    (tmp_path / "w.ps1").write_bytes("\ufeffWrite-Host 'hi'\r\nexit 1\r\n".encode("utf-16-le"))
    (tmp_path / "b.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    (tmp_path / "blob.bin").write_bytes(b"\x89PNG\0\0\x01")
    assert view.read_source(None, None, "w.ps1", [tmp_path]).split("\r\n")[:2] == ["Write-Host 'hi'", "exit 1"]
    assert view.read_source(None, None, "b.py", [tmp_path]) == "x = 1\n"
    assert view.read_source(None, None, "blob.bin", [tmp_path]) is None


def test_read_source_from_git_shows_the_same_text_as_from_a_tree(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "w.ps1").write_bytes("\ufeffWrite-Host 'hi'\nexit 1\n".encode("utf-16-le"))
    (repo / "b.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    (repo / "blob.bin").write_bytes(b"\x89PNG\0\0\x01")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    for rel in ("w.ps1", "b.py", "blob.bin"):
        assert view.read_source(str(repo), head, rel) == view.read_source(None, None, rel, [repo])
    assert view.read_source(str(repo), head, "w.ps1").startswith("Write-Host")


def test_timeline_groups_steps_by_phase_and_attempt_and_counts_tools():
    events = [
        {"kind": "status", "status": "running"},
        {"kind": "start", "explorer": "offline", "phase": "explore"},
        {"kind": "tool_call", "tool": "search", "args": {"pattern": "foo"}, "phase": "explore", "latency_ms": 3.2},
        {"kind": "request", "input_tokens": 100, "output_tokens": 20, "phase": "explore"},
        {"kind": "phase_change", "from_phase": "explore", "to_phase": "deep_dive", "phase": "explore"},
        {"kind": "tool_call", "tool": "read_range", "args": {"path": "a.py"}, "phase": "deep_dive", "error": "no such file"},
        {"kind": "verify", "ok": False, "findings": ["bad line"], "phase": "output"},
        {"kind": "tool_call", "tool": "read_range", "args": {}, "phase": "deep_dive", "attempt": 2},
        {"kind": "stop", "reason": "done", "phase": "output", "attempt": 2},
        {"kind": "status", "status": "done"},
    ]
    tl = timeline.timeline_of(events)
    assert [(g.phase, g.attempt) for g in tl.groups] == [
        ("explore", 1), ("deep_dive", 1), ("output", 1), ("deep_dive", 2), ("output", 2),
    ]
    assert tl.tool_calls == 3 and tl.input_tokens == 100 and tl.output_tokens == 20
    assert tl.stop is not None and tl.stop.title == "stopped: done"
    assert tl.groups[1].steps[1].error == "no such file"
    assert tl.groups[0].steps[2].args == "pattern='foo'"


# ---------------------------------------------------------------------------------------------- security


class _Settings:
    def __init__(self, host="127.0.0.1", token=None, data_dir=None):
        self.host, self.api_token, self.data_dir = host, token, data_dir


def test_policy_requires_auth_only_beyond_loopback(tmp_path):
    assert not security.access_policy(_Settings("127.0.0.1", data_dir=tmp_path)).require_auth
    assert not security.access_policy(_Settings("::1", data_dir=tmp_path)).require_auth
    assert not security.access_policy(_Settings("localhost", data_dir=tmp_path)).require_auth
    assert security.access_policy(_Settings("0.0.0.0", "t", tmp_path)).require_auth
    assert security.access_policy(_Settings("10.1.2.3", "t", tmp_path)).require_auth


def test_session_cookie_round_trips_and_rejects_tampering_and_expiry(tmp_path):
    policy = security.access_policy(_Settings("0.0.0.0", "s3cret", tmp_path))
    session = cookies.new_session(policy, authenticated=True)
    value = cookies.encode_session(policy, session)
    assert cookies.decode_session(policy, value) == session
    anonymous = cookies.encode_session(policy, cookies.new_session(policy, authenticated=False))
    payload, _, signature = anonymous.rpartition(".")
    assert cookies.decode_session(policy, f"{payload[:-1]}1.{signature}") is None  # flipped to logged-in
    assert cookies.decode_session(policy, "garbage") is None
    assert cookies.decode_session(policy, value, now=time.time() + policy.session_ttl_s + 10) is None
    other = security.access_policy(_Settings("0.0.0.0", "other-token", tmp_path))
    assert cookies.decode_session(other, value) is None


def test_csrf_token_is_bound_to_the_session(tmp_path):
    policy = security.access_policy(_Settings(data_dir=tmp_path))
    a, b = cookies.new_session(policy), cookies.new_session(policy)
    assert cookies.csrf_token_for(policy, a) != cookies.csrf_token_for(policy, b)
    assert cookies.csrf_token_for(policy, a) == cookies.csrf_token_for(policy, a)


def test_local_signing_key_is_shared_through_the_data_dir(tmp_path):
    first = security.access_policy(_Settings(data_dir=tmp_path))
    second = security.access_policy(_Settings(data_dir=tmp_path))
    assert first.secret == second.secret and len(first.secret) == 32
    assert (tmp_path / "session.key").stat().st_mode & 0o077 == 0


def test_session_cookie_is_http_only_strict_and_secure(tmp_path):
    policy = security.access_policy(_Settings(data_dir=tmp_path))
    cookie = cookies.session_cookie(policy, cookies.new_session(policy))
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" in cookie and "Path=/" in cookie


@pytest.mark.parametrize(
    ("target", "expected"),
    [("/investigations/3?x=1", "/investigations/3?x=1"), ("//evil.com", "/"), ("https://evil.com", "/"), ("/\\evil", "/"), (None, "/")],
)
def test_login_redirects_only_to_local_paths(target, expected):
    assert security.safe_next(target) == expected


def test_backticks_in_diagnosis_text_become_code_and_nothing_else_is_markup():
    from app.dashboard.routes import _inline_code

    html = str(_inline_code("call `f(<x>)` then <script>alert(1)</script>"))
    assert html == "call <code>f(&lt;x&gt;)</code> then &lt;script&gt;alert(1)&lt;/script&gt;"


def test_small_counts_get_whole_number_ticks():
    svg = str(_charts.bar_chart("c", "t", [_charts.Bar("a", 1), _charts.Bar("b", 2)]))
    assert ">0.25<" not in svg and ">0.50<" not in svg


def test_a_late_event_of_the_phase_just_left_does_not_reopen_it():
    events = [
        {"kind": "tool_call", "tool": "search", "phase": "explore"},
        {"kind": "phase_change", "from_phase": "explore", "to_phase": "deep_dive", "phase": "explore"},
        {"kind": "tool_call", "tool": "begin_deep_dive", "phase": "explore"},
        {"kind": "tool_call", "tool": "read_range", "phase": "deep_dive"},
    ]
    tl = timeline.timeline_of(events)
    assert [g.phase for g in tl.groups] == ["explore", "deep_dive"]
    assert [s.title for s in tl.groups[1].steps] == ["explore → deep_dive", "begin_deep_dive", "read_range"]


async def test_search_treats_like_wildcards_in_the_text_as_literal_characters(tmp_path):
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'search.db'}")
    await db.migrate()
    bug = ClassificationResult(label=Classification.bug, confidence=0.9, reason="traceback")
    try:
        async with db.session() as s:
            for title in ("load at 50% fails", "load at 500 fails", "a_b breaks", "axb breaks", r"path c:\tmp is wrong"):
                await store.create_investigation(s, BugReport(title=title), bug, investigate=False, explorer="offline")
        async with db.read_session() as s:
            found = {q: [i.title for i in (await queries.search_investigations(s, text=q)).items]
                     for q in ("50%", "a_b", "%", "_", "\\tmp")}
    finally:
        await db.dispose()
    assert found == {"50%": ["load at 50% fails"], "a_b": ["a_b breaks"], "%": ["load at 50% fails"],
                     "_": ["a_b breaks"], "\\tmp": [r"path c:\tmp is wrong"]}
