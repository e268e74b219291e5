"""The line a stack frame points at: a frame printed by another version of the file, or with no line at all, points
at the definition its function names."""

from __future__ import annotations

from pathlib import Path

from funnel.explorers.offline.writer import write_report
from funnel.localize.corpus import SymbolSpan
from funnel.localize.rank import rank_report
from funnel.localize.signals import frame_line
from repomap import build_repo_map
from repomap.focus import Focus
from repomap.frames import Frame

SYMBOLS = [
    SymbolSpan("number_free", "number_free", "function", 1, 8),
    SymbolSpan("implode", "implode", "function", 20, 40),
    SymbolSpan("poll", "A.poll", "method", 50, 60),
    SymbolSpan("poll", "B.poll", "method", 90, 99),
]

JV_C = (
    "#include <assert.h>\n#include \"jv.h\"\n\n"
    "static void number_free(jv j) {\n  if (j.refcnt) {\n    free(j.ptr);\n  }\n}\n\n"
    "jv string_implode(jv j) {\n  int len = jv_array_length(j);\n  for (int i = 0; i < len; i++) {\n"
    "    jv n = jv_array_get(j, i);\n    assert(jv_get_kind(n) == JV_KIND_NUMBER);\n    append(n);\n  }\n"
    "  return j;\n}\n"
)
REPORT = """Core dumped on implode

```
jq: jv.c:6: string_implode: Assertion `jv_get_kind(n) == JV_KIND_NUMBER' failed.
#4  0x00007ffff7babe46 in string_implode (j=...) at jv.c:6
#5  0x00007ffff7ba73dd in f_string_implode (jq=<optimized out>, a=...) at builtin.c:3
```
"""


def test_a_frame_line_outside_its_named_function_points_at_that_function():
    assert frame_line(SYMBOLS, Frame("jv.c", 3, "implode", "native")) == 20


def test_a_frame_line_inside_its_named_function_or_naming_nothing_known_stays():
    assert frame_line(SYMBOLS, Frame("jv.c", 25, "implode", "native")) == 25
    assert frame_line(SYMBOLS, Frame("jv.c", 3, "missing", "native")) == 3
    assert frame_line(SYMBOLS, Frame("jv.c", 3, None, "native")) == 3
    assert frame_line(SYMBOLS, Frame("jv.c", 3, "<module>", "python")) == 3
    assert frame_line(SYMBOLS, Frame("a.kt", None, "Cart.missing", "java")) == 0


def test_a_stale_frame_among_same_named_definitions_points_at_the_nearest():
    assert frame_line(SYMBOLS, Frame("a.rs", 85, "tokio::io::B::poll", "rust")) == 90
    assert frame_line(SYMBOLS, Frame("a.rs", 45, "A::poll", "rust")) == 50


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_function_a_stale_backtrace_names_is_the_prime_definition(tmp_path: Path):
    _write(tmp_path, {"src/jv.c": JV_C, "src/builtin.c": "void f_string_implode(jq_state *jq, jv a) {\n  g(a);\n}\n",
                      "src/jv.h": "typedef struct jv jv;\n"})
    ranking, _ = rank_report(REPORT, tmp_path, None, cache_dir=tmp_path / ".cache")
    top = ranking.candidates[0]
    assert top.path == "src/jv.c"
    assert top.symbols[0].span.name == "string_implode"
    assert top.lines == [top.symbols[0].span.start_line]
    assert "stack frame in string_implode (the trace's line 6 lies outside it at this commit)" in top.symbols[0].reasons


ORDER_KT = (
    "package com.acme.shop\n\nclass OrderService(private val repo: Repo) {\n    fun count(): Int = repo.size()\n\n"
    "    fun total(order: Order): Long {\n        val items = order.items!!\n        return items.sumOf { it.price }\n"
    "    }\n}\n"
)
RELEASE_REPORT = """The app crashes in release builds

```
java.lang.NullPointerException
\tat com.acme.shop.OrderService.total(SourceFile)
\tat com.acme.shop.CheckoutActivity.onClick(SourceFile)
```
"""


def test_a_frame_printed_without_file_name_or_line_points_at_the_method_it_names(tmp_path: Path):
    _write(tmp_path, {"app/src/main/kotlin/com/acme/shop/OrderService.kt": ORDER_KT,
                      "app/src/main/kotlin/com/acme/shop/Checkout.kt": "package com.acme.shop\n\nfun checkout() = 1\n",
                      "app/src/main/kotlin/com/acme/shop/Repo.kt": "package com.acme.shop\n\nclass Repo\n"})
    repo_map = build_repo_map(tmp_path, cache_dir=tmp_path / ".cache")
    ranking, _ = rank_report(RELEASE_REPORT, tmp_path, repo_map, cache_dir=tmp_path / ".cache")
    top = ranking.candidates[0]
    assert top.path.endswith("OrderService.kt") and top.parts.get("frame")
    assert top.symbols[0].span.name == "total" and top.lines == [top.symbols[0].span.start_line]


CART = "def helper(x):\n    return x + 1\n\n\ndef total(items, discount):\n    subtotal = sum(i.price for i in items)\n" \
       "    return subtotal - discount\n"
CART_REPORT = 'Checkout fails\n\n```\nTraceback (most recent call last):\n  File "shop/cart.py", line 2, in total\n' \
              "RuntimeError: boom\n```\n"


def test_the_root_cause_says_the_trace_came_from_another_version_of_the_file(tmp_path: Path):
    files = {"shop/cart.py": CART, "shop/views.py": "def view():\n    pass\n"}
    _write(tmp_path, files)
    ranking, _ = rank_report(CART_REPORT, tmp_path, None, cache_dir=tmp_path / ".cache")
    report = write_report(CART_REPORT, Focus.from_text(CART_REPORT), ranking, [], files)
    # the range widened to the file's end stops at its seventh and last line
    assert ("passes through `total` (`shop/cart.py:3-7`), though the line it printed, 2, lies outside `total` at this "
            "commit (the trace came from another version of the file)") in report
