"""The reasoning layer on small hand-made code: the error in the report selects the shape, the shape the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.explorers.offline import OfflineExplorer
from funnel.localize.reasoning import named_items, reason, selected_kinds
from funnel.report.verify import verify_report
from funnel.run.loop import investigate
from schemas.report import BugReport

TIMESINCE = """import datetime


def timesince(d, now=None):
    if not isinstance(d, datetime.datetime):
        d = datetime.datetime(d.year, d.month, d.day)
    now = now or datetime.datetime.now(d.tzinfo)
    months = (now.year - d.year) * 12 + (now.month - d.month)
    if months:
        pivot = datetime.datetime(
            d.year, d.month, d.day, d.hour, d.minute, d.second,
        )
    else:
        pivot = d
    return (now - pivot).total_seconds()
"""

CASES = [
    ("python", "utils/timesince.py", TIMESINCE,
     "timesince() raises TypeError with USE_TZ=True: can't subtract offset-naive and offset-aware datetimes",
     10, "python.naive_aware", "tzinfo=d.tzinfo"),
    ("python", "stats.py", "def mean(values):\n    total = sum(values)\n    return total / len(values)\n",
     "mean() of an empty list: ZeroDivisionError: division by zero", 3, "python.zero_division", ""),
    ("python", "conf.py", "def load(data, name):\n    section = data['section']\n    return section[name]\n",
     "KeyError: 'section' when the file is empty", 2, "python.key_error", "data.get('section')"),
    ("python", "art3d.py",
     "class Poly:\n    def get_facecolor(self):\n        colors = self._facecolors\n        return self._facecolors2d\n",
     "AttributeError: 'Poly' object has no attribute '_facecolors2d'", 4, "python.missing_attribute",
     'getattr(self, "_facecolors2d", None)'),
    ("javascript", "src/header.js",
     "function parse(req) {\n  const h = req.headers;\n  const n = h.length;\n  return req.headers.host;\n}\n",
     "TypeError: Cannot read properties of undefined (reading 'host')", 4, "js.undefined_property", "?.host"),
    ("java", "src/Order.java",
     "class Order {\n  int total(Cart cart) {\n    int n = 0;\n    return cart.getItems().size() + n;\n  }\n}\n",
     "java.lang.NullPointerException: Cannot invoke \"Cart.getItems()\" because \"cart\" is null", 4, "java.npe", ""),
    ("go", "ring.go",
     "package ring\n\nimport \"fmt\"\n\nfunc Peek(r *Ring) int {\n\tfmt.Println(\"peek\")\n\treturn r.head\n}\n",
     "panic: runtime error: invalid memory address or nil pointer dereference", 7, "go.nil_dereference", "r == nil"),
    ("rust", "src/lexer.rs",
     "fn next(s: &str) -> char {\n    let n = s.len();\n    s.chars().next().unwrap()\n}\n",
     "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value'", 3, "rust.unwrap", ""),
    ("python", "price.py",
     "def price_label(amount, unit):\n    label = 'Price: %d' % amount\n    return label / unit\n",
     "price_label raises TypeError: unsupported operand type(s) for /: 'str' and 'int'", 3, "python.operand_types", ""),
    ("python", "rewrite.py",
     "def is_rewrite_disabled(docstring):\n    marker = 'PYTEST_DONT_REWRITE'\n    return marker in docstring\n",
     "TypeError: argument of type 'int' is not iterable", 3, "python.not_container", ""),
    ("python", "backend_ps.py",
     "def draw_text(stream):\n    out = []\n    for ps_name, xs_names in stream:\n        out.append(ps_name)\n",
     "TypeError: cannot unpack non-iterable NoneType object", 3, "python.not_iterable", ""),
    ("python", "grid.py",
     "def tick_only(ax, bottom):\n    axis = ax.axis\n    axis['bottom'].toggle(bottom)\n",
     "TypeError: 'method' object is not subscriptable", 3, "python.not_subscriptable", ""),
    ("c", "src/list.c",
     "int head(struct list *l) {\n    int x = 0;\n    return l->first->value + x;\n}\n",
     "Segmentation fault (core dumped) when the list is empty", 3, "c.segfault", ""),
    ("kotlin", "src/Cart.kt", "class Cart {\n  fun total(): Int {\n    val n = 0\n    return items!!.size + n\n  }\n}\n",
     "Exception in thread \"main\" java.lang.NullPointerException", 4, "java.npe", "items?."),
    ("csharp", "src/Cart.cs", "class Cart {\n  int Total(Order order) {\n    int n = 0;\n    return order.Items.Count + n;\n  }\n}\n",
     "System.NullReferenceException: Object reference not set to an instance of an object.", 4,
     "csharp.null_reference", "order?.Items"),
    ("csharp", "src/Cart.cs", "class Cart {\n  int Total(object o) {\n    int n = 0;\n    return ((Order)o).Count + n;\n  }\n}\n",
     "System.InvalidCastException: Unable to cast object of type 'Item' to type 'Order'.", 4, "csharp.invalid_cast",
     "o is Order"),
    ("swift", "Sources/Cart.swift", "struct Cart {\n  func total() -> Int {\n    let n = 0\n    return items!.count + n\n  }\n}\n",
     "Fatal error: Unexpectedly found nil while unwrapping an Optional value", 4, "swift.force_unwrap", "guard let"),
    ("swift", "Sources/Cart.swift", "struct Cart {\n  func first() -> Int {\n    let n = 0\n    return items[0] + n\n  }\n}\n",
     "Fatal error: Index out of range", 4, "swift.index_range", ""),
    ("php", "src/Cart.php", "<?php\nclass Cart {\n  function total($order) {\n    $n = 0;\n    return $this->tax() + $order->items() + $n;\n  }\n}\n",
     "PHP Fatal error: Uncaught Error: Call to a member function items() on null", 5, "php.null_method", "$order?->items"),
    ("php", "src/Cart.php", "<?php\nfunction first($items) {\n  $n = 0;\n  return $items['first'] + $n;\n}\n",
     "Warning: Undefined array key \"first\"", 4, "php.undefined_key", "??"),
]


@pytest.mark.parametrize(("language", "path", "source", "report", "line", "rule", "suggestion"), CASES,
                         ids=[f"{c[0]}-{c[5]}" for c in CASES])
def test_the_error_in_the_report_selects_the_line_of_its_shape(language, path, source, report, line, rule, suggestion):
    end = source.count("\n")
    found = reason(report, path, source, [(1, end, "f")], named={}, terms={})
    assert found, f"no finding for {rule}"
    assert (found[0].line, found[0].rule) == (line, rule)
    assert f"{Path(path).name}:{line}" in found[0].mechanism and found[0].change
    assert suggestion in found[0].suggestion


def test_datetime_rule_explains_the_naive_pivot_in_words():
    found = reason("can't compare offset-naive and offset-aware datetimes", "timesince.py", TIMESINCE,
                   [(4, 15, "timesince")], named={}, terms={})[0]
    assert found.mechanism.startswith("`pivot` is built with `datetime.datetime(...)` from `d`'s fields")
    assert "(timesince.py:10)" in found.mechanism


def test_a_behaviour_report_selects_the_branch_reading_the_named_option():
    source = ("def render(rows, options):\n    out = []\n    for r in rows:\n        out.append(str(r))\n"
              "    if options.get('header_rows'):\n        out.insert(0, 'header')\n    return out\n")
    report = "render ignores the `header_rows` option: returns the rows without a header"
    named = named_items(["header_rows"], [], {"render"})
    found = reason(report, "table.py", source, [(1, 7, "render")], named=named, terms={})
    assert found[0].rule == "behaviour" and found[0].line == 5
    assert "`header_rows`" in found[0].mechanism and "condition" in found[0].change


def test_a_named_value_in_a_docstring_or_a_comment_is_not_the_line():
    source = ('def render(rows, options):\n    """Render the rows.\n\n    >>> render(rows, {"header_rows": 1})\n'
              '    """\n    # header_rows is read below\n    out = list(rows)  # header_rows\n'
              "    if options.get('header_rows'):\n        out.insert(0, 'header')\n    return out\n")
    report = "render ignores the `header_rows` option: returns the rows without a header"
    named = named_items(["header_rows"], [], {"render"})
    found = reason(report, "table.py", source, [(1, 10, "render")], named=named, terms={})
    assert [f.line for f in found] == [8]  # the branch; line 7 names it in a trailing comment only

def test_no_rule_fires_without_an_error_shape_or_a_named_value():
    assert selected_kinds("The page looks slightly off on Tuesdays") == []
    assert reason("The page looks slightly off", "a.py", "def f(x):\n    return x\n", [(1, 2, "f")],
                  named={}, terms={}) == []


def _make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


async def test_the_report_cites_the_selected_line_narrowly_and_proposes_the_edit(tmp_path):
    root = _make(tmp_path / "repo", {"utils/timesince.py": TIMESINCE, "utils/other.py": "def other():\n    return 1\n"})
    report = BugReport(title="timesince() raises TypeError with USE_TZ=True",
                       body="TypeError: can't subtract offset-naive and offset-aware datetimes in timesince")
    result = await investigate(report, root, explorer=OfflineExplorer())
    d = result.diagnosis
    first = d.affected_files[0]
    assert first.path == "utils/timesince.py" and first.line_start <= 10 <= first.line_end
    assert first.line_end - first.line_start + 1 <= 15
    assert "timesince.py:10" in d.root_cause.explanation and "without a `tzinfo`" in d.root_cause.explanation
    assert "tzinfo=d.tzinfo" in d.proposed_changes[0].description
    assert 0.0 <= d.confidence <= 1.0


async def test_without_a_rule_the_report_says_so_plainly(tmp_path):
    root = _make(tmp_path / "repo", {"pkg/greeting.py": "def greeting(name):\n    text = 'hello ' + name\n    return text\n"})
    report = BugReport(title="greeting looks odd", body="The greeting text looks odd to me.")
    result = await investigate(report, root, explorer=OfflineExplorer())
    assert "No rule of the reasoning layer" in result.diagnosis.root_cause.explanation
    assert "Check this definition against the reported behaviour" in result.diagnosis.proposed_changes[0].description


def test_the_verifier_still_refuses_a_wrong_line(tmp_path):
    root = _make(tmp_path / "repo", {"utils/timesince.py": TIMESINCE})
    markdown = ("## Summary\nNaive pivot.\n\n## Root cause\n`pivot` lacks tzinfo (timesince.py:10).\n\n"
                "## Affected files\n- `utils/timesince.py:40-45` — `timesince` (cause)\n"
                "  ```python\n        pivot = datetime.datetime(tzinfo=None)\n  ```\n")
    result = verify_report(markdown, root)
    assert not result.ok
    assert any("utils/timesince.py" in f for f in result.findings)


def test_a_keyword_the_report_writes_as_code_names_no_value():
    source = ("impl Receiver {\n    pub async fn changed(&mut self) -> Result<(), RecvError> {\n"
              "        changed_impl(&self.shared, &mut self.version).await\n    }\n\n"
              "    pub fn mark_unchanged(&mut self) {\n        let seen = self.shared.version();\n"
              "        self.version = seen;\n    }\n}\n")
    spans = [(2, 4, "Receiver.changed"), (6, 9, "Receiver.mark_unchanged")]
    named = named_items(["rx.changed().await"], [], {"changed", "mark_unchanged"})
    assert "await" in named
    assert reason("`rx.changed().await` returns at once", "watch.rs", source, spans, named=named, terms={}) == []
    named = named_items(["rx.changed().await", "self.version"], [], {"changed", "mark_unchanged"})
    found = reason("`rx.changed().await` returns at once for a seen `self.version`", "watch.rs", source, spans,
                   named=named, terms={})
    assert found and all("`version`" in f.mechanism for f in found)


@pytest.mark.parametrize("path, source, word", [
    ("fmt.cc", "int format(int value) {\n  double n = static_cast<double>(value);\n  return n;\n}\n", "double"),
    ("fmt.cc", "int format(int value) {\n  auto n = static_cast<int>(value);\n  return n;\n}\n", "auto"),
    ("a.c", "int f(uint32_t n) {\n  uint32_t k = n;\n  return k;\n}\n", "uint32_t"),
    ("A.java", "class A {\n  int f(double x) {\n    double y = x;\n    return 1;\n  }\n}\n", "double"),
])
def test_a_built_in_type_or_keyword_the_report_writes_as_code_names_no_value(path, source, word):
    lines = source.count("\n")
    named = named_items([word], [], set())
    assert word in named
    assert reason(f"`{word}` gives the wrong result", path, source, [(1, lines, "f")], named=named, terms={}) == []


def test_the_last_component_of_a_rust_path_still_names_a_value():
    source = "fn f() -> u8 {\n    let c = watch::channel();\n    0\n}\n"
    named = named_items(["watch::channel"], [], set())
    found = reason("`watch::channel` drops the value", "lib.rs", source, [(1, 4, "f")], named=named, terms={})
    assert [f.line for f in found] == [2] and "`channel`" in found[0].mechanism



def test_the_standard_librarys_root_and_rusts_prelude_types_name_nothing_of_the_project():
    named = named_items(["std::string", "std::sync::Mutex", "Option<String>", "base::set_debug_format",
                         "$crate::select!", "let mut count"], [], set())
    assert {"std", "string", "Option", "String", "crate", "mut"}.isdisjoint(named)
    assert {"Mutex", "base", "set_debug_format"} <= set(named)


@pytest.mark.parametrize("path, source, line", [
    ("main.rs", 'fn run(cfg: &Config) -> bool {\n    let x = 1;\n    println!("bat has no paging feature");\n'
                '    let p = cfg.get("paging");\n    x > 0\n}\n', 4),
    ("lib.rs", 'fn new(n: usize) -> u8 {\n    let y = 1;\n    debug!("{} paging rules", n);\n'
               '    if paging { return 0; }\n    y\n}\n', 4),
    ("a.py", 'def f(paging, other):\n    x = 1\n    log("paging is off")\n    raise ValueError(f"bad {paging}")\n', 4),
    ("a.js", 'function f(paging) {\n  let x = 1;\n  log("paging is off");\n  return `bad ${paging}`;\n}\n', 4),
    ("b.py", 'def f(paging, other):\n    x = 1\n    log("https://example.org/paging")\n    return paging\n', 4),
])
def test_a_word_inside_a_message_string_is_no_value_the_line_reads(path, source, line):
    lines = source.count("\n")
    named = named_items(["paging"], [], {"f", "run", "new"})
    found = {f.line: f for f in reason("`paging` is ignored", path, source, [(1, lines, "f")], named=named, terms={})}
    assert "appears in the message at" in found[3].mechanism and "is read" not in found[3].mechanism
    assert "message it gives" in found[3].change
    # a key string ("paging") and interpolated code are read
    assert "appears in the message" not in found[line].mechanism and f":{line} (" in found[line].mechanism


@pytest.mark.parametrize("receiver", ["super()", "self", "signing", "Path", "', '", "[1, 2]"])
def test_an_attribute_of_a_receiver_that_is_never_none_is_not_the_none_attribute_line(receiver):
    source = ("from django.core import signing\nfrom pathlib import Path\n\n\nclass Store:\n"
              "    def load(self, data):\n        value = data.get('x')\n"
              f"        out = {receiver}.loads(data)\n        return value.strip()\n")
    found = reason("AttributeError in load", "store.py", source, [(6, 9, "Store.load")], named={}, terms={})
    assert [f.line for f in found] == [7, 9]  # `data.get`, `value.strip`; never `{receiver}.loads`


@pytest.mark.parametrize("report, name", [
    ("AttributeError: 'NoneType' object has no attribute 'strip'", "strip"),
    ('java.lang.NullPointerException: Cannot invoke "String.length()" because "s" is null', "String.length"),
])
def test_the_name_in_the_error_message_is_read_even_after_the_error_type(report, name):
    assert [n for _, n in selected_kinds(report)] == [name]


def test_a_line_holding_an_undecodable_byte_is_read_without_error():
    source = 'def f(paging):\n    x = "caf\udce9"\n    if paging:\n        return x\n'
    named = named_items(["paging"], [], {"f"})
    found = reason("`paging` is ignored", "a.py", source, [(1, 4, "f")], named=named, terms={})
    assert [f.line for f in found] == [3]


@pytest.mark.parametrize("report, kinds", [
    ("TypeError: unsupported operand type(s) for /: 'str' and 'int'", ["python.operand_types"]),
    ("TypeError: unsupported operand type(s) for |: 'int' and 'NoneType'", ["python.none_operand"]),
    ("TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'", ["python.none_operand"]),
])
def test_an_unsupported_operand_is_a_none_error_only_when_the_message_names_nonetype(report, kinds):
    assert [k.name for k, _ in selected_kinds(report)] == kinds


def test_a_literal_operand_is_never_the_value_that_can_be_none():
    source = "def label(amount):\n    text = 'Price: %d' % amount\n    return text + amount\n"
    report = "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"
    found = reason(report, "a.py", source, [(1, 3, "label")], named={}, terms={})
    assert [f.line for f in found] == [3]  # `text + amount`, never the string literal's `%`
