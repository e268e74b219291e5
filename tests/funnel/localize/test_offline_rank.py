"""The offline ranker finds the right file in small fixture repositories of several languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.localize.corpus import Corpus, FileDoc
from funnel.localize.rank import RankConfig, rank, rank_report
from repomap.focus import Focus

GO_REPO = {
    "go.mod": "module github.com/acme/tool\n",
    "cmd/tool/main.go": 'package main\n\nimport "github.com/acme/tool/internal/queue"\n\nfunc main() {\n\tr := queue.New(3)\n\tr.Pop()\n}\n',
    "internal/queue/ring.go": (
        "package queue\n\n// Ring is a fixed-size ring buffer.\ntype Ring struct {\n\titems []int\n\thead int\n}\n\n"
        "func New(n int) *Ring { return &Ring{items: make([]int, n)} }\n\n"
        "// Pop removes the oldest item.\nfunc (r *Ring) Pop() int {\n\tv := r.items[r.head]\n\tr.head++\n\treturn v\n}\n"
    ),
    "internal/queue/ring_test.go": "package queue\n\nfunc TestPop(t *testing.T) { New(1).Pop() }\n",
    "internal/log/log.go": "package log\n\nfunc Info(msg string) { println(msg) }\n",
}
GO_REPORT = """Pop panics after wrapping around

```
panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
github.com/acme/tool/internal/queue.(*Ring).Pop(0xc000010018)
\t/home/ci/go/src/github.com/acme/tool/internal/queue/ring.go:14 +0x1d
main.main()
\t/home/ci/go/src/github.com/acme/tool/cmd/tool/main.go:7 +0x25
```
"""

RUST_REPO = {
    "Cargo.toml": '[package]\nname = "lexy"\n',
    "src/main.rs": "mod parser;\nfn main() { parser::lexer::run(\"x\"); }\n",
    "src/parser/mod.rs": "pub mod lexer;\n",
    "src/parser/lexer.rs": (
        "pub struct Lexer { pos: usize }\n\nimpl Lexer {\n    pub fn next_token(&mut self) -> usize {\n"
        "        self.pos - 1\n    }\n}\n\npub fn run(s: &str) { let mut l = Lexer { pos: 0 }; l.next_token(); }\n"
    ),
    "src/util.rs": "pub fn clamp(x: i32) -> i32 { x.max(0) }\n",
}
RUST_REPORT = """Lexer overflows on empty input

thread 'main' panicked at src/parser/lexer.rs:5:9:
attempt to subtract with overflow
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""

NODE_REPO = {
    "package.json": '{"name": "srv"}',
    "src/server.js": "const { parseHeader } = require('./lib/header');\nfunction handle(req) {\n  return parseHeader(req.headers);\n}\nmodule.exports = { handle };\n",
    "src/lib/header.js": "function parseHeader(headers) {\n  const raw = headers['x-token'];\n  return raw.length > 0;\n}\nmodule.exports = { parseHeader };\n",
    "src/lib/format.js": "function format(x) { return String(x); }\nmodule.exports = { format };\n",
    "test/header.test.js": "const { parseHeader } = require('../src/lib/header');\ntest('x', () => parseHeader({}));\n",
}
NODE_REPORT = """Crash when the token header is missing

TypeError: Cannot read properties of undefined (reading 'length')
    at parseHeader (/srv/app/src/lib/header.js:3:14)
    at handle (/srv/app/src/server.js:3:10)
    at /srv/app/node_modules/express/lib/router.js:284:7
"""

ESM_REPORT = """Crash when the token header is missing

TypeError: Cannot read properties of undefined (reading 'length')
    at parseHeader (file:///srv/app/node_modules/srv/src/lib/header.js:3:14)
    at handle (file:///srv/app/node_modules/srv/src/server.js:3:10)
    at file:///srv/app/node_modules/srv/src/server.js:5:1
"""

C_REPO = {
    "Makefile": "all:\n\tcc -o jq src/*.c\n",
    "src/main.c": "int main(int argc, char **argv) {\n    return process(argv[1]);\n}\n",
    "src/execute.c": "int process(const char *text) {\n    return implode(parse(text));\n}\n",
    "src/jv.c": "int implode(struct value *v) {\n    int n = v->count;\n    return v->items[n - 1];\n}\n\n"
                "int explode(struct value *v) {\n    return v->count;\n}\n",
}
GDB_REPORT = """implode aborts on a number

#0  0x00007ffff729da28 in __GI_raise (sig=sig@entry=6) at ../sysdeps/unix/sysv/linux/raise.c:55
#1  0x00007ffff729f62a in __GI_abort () at abort.c:89
#2  0x00007ffff7babe46 in implode (v=...) at jv.c:3
#3  0x00007ffff7ba73dd in process (text=...) at execute.c:2
#4  0x0000555555555fe1 in main (argc=..., argv=...) at main.c:2
"""

JAVA_REPO = {
    "pom.xml": "<project/>",
    "src/main/java/com/example/shop/OrderService.java": (
        "package com.example.shop;\n\npublic class OrderService {\n    public int total(Order order) {\n"
        "        return order.getName().length() + order.getCount();\n    }\n}\n"
    ),
    "src/main/java/com/example/shop/Main.java": (
        "package com.example.shop;\n\npublic class Main {\n    public static void main(String[] args) {\n"
        "        new OrderService().total(new Order());\n    }\n}\n"
    ),
    "src/main/java/com/example/shop/Order.java": (
        "package com.example.shop;\n\npublic class Order {\n    String name;\n    public String getName() { return name; }\n"
        "    public int getCount() { return 1; }\n}\n"
    ),
}
JAVA_REPORT = """NPE when computing the total of an order without a name

Exception in thread "main" java.lang.NullPointerException
\tat com.example.shop.OrderService.total(OrderService.java:5)
\tat com.example.shop.Main.main(Main.java:5)
"""

PY_REPO = {
    "pkg/__init__.py": "",
    "pkg/settings.py": "DEFAULT_TIMEOUT = 30\n",
    "pkg/client.py": (
        "class Session:\n    def request(self, method, url, timeout=None):\n"
        "        if timeout < 0:\n            raise ValueError('Timeout value must be a non-negative number')\n"
        "        return method, url\n\n    def close(self):\n        pass\n"
    ),
    "pkg/utils.py": "def quote(url):\n    return url.replace(' ', '%20')\n",
    "tests/test_client.py": "from pkg.client import Session\n\ndef test_request():\n    Session().request('GET', 'u', timeout=1)\n",
    "docs/usage.md": "Call Session.request with a timeout.\n",
}
PY_REPORT = """Session.request fails when timeout is None

```python
from pkg.client import Session
Session().request("GET", "http://x")
```
It raises `TypeError: '<' not supported between instances of 'NoneType' and 'int'`.
"""


def _make(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "report", "expected", "symbol"),
    [
        (GO_REPO, GO_REPORT, "internal/queue/ring.go", "Pop"),
        (RUST_REPO, RUST_REPORT, "src/parser/lexer.rs", "next_token"),
        (NODE_REPO, NODE_REPORT, "src/lib/header.js", "parseHeader"),
        (NODE_REPO, ESM_REPORT, "src/lib/header.js", "parseHeader"),
        (JAVA_REPO, JAVA_REPORT, "src/main/java/com/example/shop/OrderService.java", "total"),
        (PY_REPO, PY_REPORT, "pkg/client.py", "request"),
    ],
    ids=["go-panic", "rust-panic", "node-trace", "node-esm-trace", "java-exception", "python-code-block"],
)
def test_ranker_puts_the_faulty_file_first(tmp_path, files, report, expected, symbol):
    root = _make(tmp_path, files)
    ranking, _ = rank_report(report, root, None, cache_dir=tmp_path / "cache")
    assert ranking.candidates[0].path == expected
    assert ranking.candidates[0].symbols[0].span.name == symbol


def test_a_native_backtrace_weighs_its_innermost_repository_frame_most(tmp_path):
    root = _make(tmp_path, C_REPO)
    ranking, _ = rank_report(GDB_REPORT, root, None, cache_dir=tmp_path / "cache")
    frame = {c.path: c.parts.get("frame", 0.0) for c in ranking.candidates}
    assert frame["src/jv.c"] > frame["src/execute.c"] > frame["src/main.c"] > 0


COMPILER_REPORT = """implode no longer compiles

src/jv.c:3:12: error: invalid operands to binary expression
src/execute.c:2:12: note: in instantiation requested here
src/main.c:2:12: note: in instantiation requested here
"""

PYTEST_REPORT = """implode test fails

pkg/main.py:2: in run
    process(argv)
pkg/jv.py:3: in implode
    return items[n - 1]
E   IndexError: list index out of range
"""


def test_a_compiler_error_weighs_its_first_location_most_and_a_pytest_trace_its_last(tmp_path):
    compiled = _make(tmp_path / "c", C_REPO)
    ranking, _ = rank_report(COMPILER_REPORT, compiled, None, cache_dir=tmp_path / "cache")
    frame = {c.path: c.parts.get("frame", 0.0) for c in ranking.candidates}
    assert frame["src/jv.c"] > frame["src/execute.c"] > frame["src/main.c"] > 0
    python = _make(tmp_path / "py", {"pkg/__init__.py": "", "pkg/main.py": "def run(argv):\n    process(argv)\n",
                                     "pkg/jv.py": "def implode(items, n):\n    n = len(items)\n    return items[n - 1]\n"})
    ranking, _ = rank_report(PYTEST_REPORT, python, None, cache_dir=tmp_path / "cache")
    frame = {c.path: c.parts.get("frame", 0.0) for c in ranking.candidates}
    assert frame["pkg/jv.py"] > frame["pkg/main.py"] > 0


def test_ranker_uses_the_repo_map_when_given(tmp_path):
    from repomap import build_repo_map

    root = _make(tmp_path / "repo", GO_REPO)
    repo_map = build_repo_map(root, focus=GO_REPORT, cache_dir=tmp_path / "map-cache")
    ranking, corpus = rank_report(GO_REPORT, root, repo_map, cache_dir=tmp_path / "cache")
    assert ranking.candidates[0].path == "internal/queue/ring.go"
    assert any(s.qualname.endswith("Pop") for s in corpus.docs[corpus.by_path["internal/queue/ring.go"]].symbols)


def test_test_files_are_down_weighted(tmp_path):
    root = _make(tmp_path, PY_REPO)
    ranking, _ = rank_report(PY_REPORT, root, None, cache_dir=tmp_path / "cache")
    paths = [c.path for c in ranking.candidates]
    assert paths.index("pkg/client.py") < paths.index("tests/test_client.py")


def test_term_cache_gives_the_same_ranking(tmp_path):
    root = _make(tmp_path / "repo", NODE_REPO)
    first, _ = rank_report(NODE_REPORT, root, None, cache_dir=tmp_path / "cache")
    second, _ = rank_report(NODE_REPORT, root, None, cache_dir=tmp_path / "cache")
    assert [c.path for c in first.candidates] == [c.path for c in second.candidates]
    assert (tmp_path / "cache").exists()


def test_literal_message_in_code_is_evidence(tmp_path):
    root = _make(tmp_path, PY_REPO)
    corpus = Corpus.build(root, [p for p in PY_REPO if p.endswith(".py")])
    text = "Negative timeouts\n\nValueError: Timeout value must be a non-negative number"
    ranking = rank(corpus, text, Focus.from_text(text), config=RankConfig())
    top = ranking.candidates[0]
    assert top.path == "pkg/client.py" and top.parts.get("message")
    assert top.lines == [4]


def test_no_evidence_gives_low_confidence(tmp_path):
    root = _make(tmp_path, PY_REPO)
    ranking, _ = rank_report("It does not work, please help.", root, None, cache_dir=tmp_path / "cache")
    assert ranking.confidence <= 0.3


LIFT_PATHS = ["src/pkg/__init__.py", "src/pkg/api.py", "src/pkg/cse_main.py", "src/pkg/cse_opts.py", "src/pkg/util.py",
              "src/other/main.py", "tests/test_api.py"]


def test_title_terms_in_paths_count_by_rarity():
    from funnel.localize.pathterms import path_term_scores, title_path_terms

    title = "cse() has strange behaviour in util"
    corpus = Corpus(Path("."), [FileDoc(p, {}, 0) for p in LIFT_PATHS], {})
    shares = path_term_scores(corpus.path_term_counts(title_path_terms(title)), title, set(LIFT_PATHS))
    assert shares["src/pkg/util.py"] == 1.0  # `util` names one file
    assert 0 < shares["src/pkg/cse_main.py"] == shares["src/pkg/cse_opts.py"] < 1.0  # `cse` names two
    assert "src/pkg/api.py" not in shares and "src/other/main.py" not in shares


def test_siblings_of_the_leading_files_skip_package_entry_files():
    from funnel.localize.pathterms import sibling_scores

    ranked = [("src/pkg/api.py", 2.0), ("tests/test_api.py", 1.8), ("src/other/main.py", 1.0)]
    shares = sibling_scores(ranked, set(LIFT_PATHS), top=1, is_code=lambda p: not p.startswith("tests/"))
    assert shares == {"src/pkg/cse_main.py": 1.0, "src/pkg/cse_opts.py": 1.0, "src/pkg/util.py": 1.0}


def test_order_only_lifts_keep_the_first_file_and_take_no_citation_slots(tmp_path):
    root = _make(tmp_path, PY_REPO)
    corpus = Corpus.build(root, [p for p in PY_REPO if p.endswith(".py")])
    base = rank(corpus, PY_REPORT, Focus.from_text(PY_REPORT), config=RankConfig(w_title_path=0.0, w_sibling=0.0, w_title_bm25=0.0))
    lifted = rank(corpus, PY_REPORT, Focus.from_text(PY_REPORT), config=RankConfig(w_title_path=5.0, w_sibling=5.0))
    assert lifted.candidates[0].path == base.candidates[0].path and lifted.candidates[0].lift == 0.0
    assert all(c.lift == 0.0 for c in base.candidates)
    assert lifted.confidence == base.confidence


TITLE_REPO = {
    "src/server.js": "function handle(req, res) {\n  const body = parseBody(req);\n  respond(res, body);\n}\n",
    "src/body.js": "function parseBody(req) {\n  return JSON.parse(req.body);\n}\nfunction respond(res, body) {\n  res.end(body);\n}\n",
    "src/log.js": "function logRequest(req) {\n  console.log(req.url, req.body);\n}\n",
    "src/units.js": "function formatUnits(value, units) {\n  return `${value} ${units}`;\n}\n",
}
TITLE_REPORT = """Units are dropped when formatting
```
handle(req, res) -> parseBody(req) -> respond(res, body)
logRequest(req) prints req.url and req.body; respond(res, body) ends res with the parsed body
handle(req, res) again: parseBody(req) body respond(res, body) logRequest(req)
```
"""


def test_title_bm25_lift_brings_up_the_file_matching_the_title_only(tmp_path):
    root = _make(tmp_path, TITLE_REPO)
    corpus = Corpus.build(root, list(TITLE_REPO))
    focus = Focus.from_text(TITLE_REPORT)
    off = RankConfig(w_title_path=0.0, w_sibling=0.0, w_title_bm25=0.0, learned_files=False)
    base = rank(corpus, TITLE_REPORT, focus, config=off)
    lifted = rank(corpus, TITLE_REPORT, focus, config=RankConfig(w_title_path=0.0, w_sibling=0.0, w_title_bm25=2.0,
                                                                 learned_files=False))
    order = [c.path for c in base.candidates]
    assert order.index("src/units.js") > 1  # the body's many request words outweigh the title
    new = [c.path for c in lifted.candidates]
    assert new[0] == order[0] and new[1] == "src/units.js"  # the first file never moves
    assert lifted.candidates[1].parts["title_bm25"] > 0 and lifted.candidates[1].lift > 0
    assert lifted.confidence == base.confidence


WIDGET_PROSE = "Widget is not visible after resize"
WIDGET_CODE = "Widget is not `visible` after resize"


def _widget_corpus(tmp_path) -> Corpus:
    repo = {"pkg/widget.py": "def visible(w):\n    return w.shown\n", "pkg/other.py": "def unrelated():\n    pass\n"}
    return Corpus.build(_make(tmp_path, repo), list(repo))


def test_a_prose_word_naming_a_definition_counts_less_than_written_code(tmp_path):
    corpus = _widget_corpus(tmp_path)
    weak = rank(corpus, WIDGET_PROSE, Focus.from_text(WIDGET_PROSE)).candidates[0]
    strong = rank(corpus, WIDGET_CODE, Focus.from_text(WIDGET_CODE)).candidates[0]
    assert weak.path == strong.path == "pkg/widget.py"
    assert 0 < weak.parts["mention"] < strong.parts["mention"]
    full = rank(corpus, WIDGET_PROSE, Focus.from_text(WIDGET_PROSE),
                config=RankConfig(prose_mention_factor=1.0)).candidates[0]
    assert full.parts["mention"] > weak.parts["mention"]


def test_a_prose_word_is_not_claimed_as_a_name_the_report_wrote(tmp_path):
    corpus = _widget_corpus(tmp_path)
    weak = rank(corpus, WIDGET_PROSE, Focus.from_text(WIDGET_PROSE)).candidates[0]
    strong = rank(corpus, WIDGET_CODE, Focus.from_text(WIDGET_CODE)).candidates[0]
    assert "defines `visible`, whose name the report uses as the plain word “visible”" in weak.reasons
    assert not any("named in the report" in r for r in weak.reasons)
    assert "defines `visible` named in the report" in strong.reasons


def test_a_name_written_only_as_a_prose_call_is_not_claimed_as_a_plain_word(tmp_path):
    text = "Widget stays hidden after resize\n\nCalling visible() after a resize returns False."
    top = rank(_widget_corpus(tmp_path), text, Focus.from_text(text)).candidates[0]
    assert "defines `visible`, whose name the report writes unquoted in its prose (“visible()”)" in top.reasons
    assert not any("plain word" in r for r in top.reasons)


def test_a_definition_the_title_writes_as_code_lifts_its_file(tmp_path):
    repo = {
        "calc/matrix.py": (
            "class Matrix:\n    def kind(self):\n        return self.entries_kind()\n\n"
            "    def entries_kind(self):\n        return 'matrix kind of entries'\n"
        ),
        "calc/kinds.py": "class Kind:\n    '''The kind of an expression: matrix kind, number kind.'''\n\ndef kind_of(x):\n    return Kind()\n",
        "calc/calculus.py": "class Derivative:\n    def doit(self):\n        return self.expr\n",
        "calc/series.py": "def series(expr):\n    return expr\n",
    }
    text = ("Wrong Derivative kind attribute\n\nThe kind of a matrix is right, but the derivative of a matrix "
            "reports an undefined kind: `Matrix.kind` gives the matrix kind, the derivative gives a number kind.")
    root = _make(tmp_path, repo)
    corpus = Corpus.build(root, list(repo))
    focus = Focus.from_text(text)
    off = rank(corpus, text, focus, config=RankConfig(w_title_def=0.0))
    on = rank(corpus, text, focus, config=RankConfig(w_title_def=2.0))
    before, after = [c.path for c in off.candidates], [c.path for c in on.candidates]
    assert before.index("calc/calculus.py") > 1
    assert after[0] == before[0] and after[1] == "calc/calculus.py"
    assert on.candidates[1].parts["title_def"] == 2.0 and on.confidence == off.confidence
    # a plain lowercase word of the title (`kind`, `attribute`) names no definition for this lift
    assert "title_def" not in {k for c in on.candidates if c.path == "calc/kinds.py" for k in c.parts}


def test_a_fully_qualified_name_in_the_prose_points_at_its_module(tmp_path):
    repo = {
        "lib/admin/utils.py": "def display_for_field(value, field):\n    return str(value)\n",
        "lib/forms/fields.py": (
            "class JSONField:\n    '''A JSON field: its value is displayed as JSON.'''\n"
            "    def prepare_value(self, value):\n        return json_dumps(value)\n\n"
            "def display_for_field(value):\n    return value\n"
        ),
        "src/main/java/com/acme/json/Writer.java": "package com.acme.json;\nclass Writer {\n  void flush() {}\n}\n",
        "src/main/java/com/acme/io/Writer.java": "package com.acme.io;\nclass Writer {\n  void flush() {}\n}\n",
    }
    root = _make(tmp_path, repo)
    corpus = Corpus.build(root, list(repo))
    text = ("JSONField value is displayed as a dict\n\nThe JSONField value is displayed as a dict, not as JSON. "
            "The fix would go in lib.admin.utils.display_for_field, calling prepare_value.")
    focus = Focus.from_text(text)
    on = {c.path: c for c in rank(corpus, text, focus).candidates}
    off = {c.path: c for c in rank(corpus, text, focus, config=RankConfig(w_module_path=0.0)).candidates}
    assert on["lib/admin/utils.py"].parts["path"] == RankConfig().w_module_path
    assert "path" not in off["lib/admin/utils.py"].parts and "path" not in on["lib/forms/fields.py"].parts
    # a Java class under a source root, qualified by its package, picks the one of two `Writer.java` files
    java = "Output is truncated\n\nThe buffer is never written: com.acme.json.Writer.flush drops the last chunk."
    ranked = {c.path: c for c in rank(corpus, java, Focus.from_text(java)).candidates}
    assert "path" in ranked["src/main/java/com/acme/json/Writer.java"].parts
    assert "path" not in ranked["src/main/java/com/acme/io/Writer.java"].parts
    # the same name written in the report's code is usage, not a pointer at the module
    code = "Crash on delete\n\n```python\nmodels.ForeignKey(on_delete=lib.admin.utils.display_for_field)\n```\n"
    assert "path" not in {k for c in rank(corpus, code, Focus.from_text(code)).candidates for k in c.parts}
