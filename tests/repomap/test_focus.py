"""What the focus extractor reads out of reports: frames of every runtime, paths, messages, code and imports."""

from __future__ import annotations

import time

from repomap.focus import Focus, code_blocks, module_candidates
from repomap.frames import PathMatcher, normalize_frame_path, parse_frames, resolve_frames, strip_frames

PY_TRACE = """Traceback (most recent call last):
  File "/home/u/proj/manage.py", line 22, in <module>
    main()
  File "/usr/lib/python3.11/site-packages/django/db/models/query.py", line 1205, in filter
    return self._filter_or_exclude(False, args, kwargs)
ValueError: Field 'id' expected a number but got 'abc'.
"""

NODE_TRACE = """TypeError: Cannot read properties of undefined (reading 'length')
    at parseHeader (/srv/app/src/lib/header.js:42:17)
    at Object.handle [as run] (/srv/app/src/server.js:10:5)
    at node:internal/process/task_queues:95:5
    at /srv/app/node_modules/express/lib/router.js:284:7
"""

JAVA_TRACE = """Exception in thread "main" java.lang.NullPointerException: name is null
\tat com.example.shop.OrderService.total(OrderService.java:57)
\tat com.example.shop.Main.main(Main.java:12)
"""

GO_PANIC = """panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
github.com/acme/tool/internal/queue.(*Ring).Pop(0xc000010018)
\t/home/ci/go/src/github.com/acme/tool/internal/queue/ring.go:31 +0x1d
main.main()
\t/home/ci/go/src/github.com/acme/tool/cmd/tool/main.go:9 +0x25
exit status 2
"""

RUST_PANIC = """thread 'main' panicked at src/parser/lexer.rs:88:14:
attempt to subtract with overflow
stack backtrace:
   0: rust_begin_unwind
   3: mycrate::parser::lexer::Lexer::next_token
             at ./src/parser/lexer.rs:88:14
"""

RUBY_TRACE = """app/models/order.rb:41:in 'Order#total': undefined method '+' for nil (NoMethodError)
\tfrom app/controllers/orders_controller.rb:12:in `show'
\tfrom /usr/lib/ruby/3.3.0/benchmark.rb:311:in 'realtime'
"""

PHP_TRACE = """PHP Fatal error:  Uncaught TypeError: total(): Argument #1 must be of type array in /var/www/src/Cart.php:18
Stack trace:
#0 /var/www/src/Controller/CheckoutController.php(42): App\\Cart->total(NULL)
#1 /var/www/vendor/symfony/http-kernel/HttpKernel.php(163): App\\Controller\\CheckoutController->show()
#2 {main}
  thrown in /var/www/src/Cart.php on line 18
"""

DOTNET_TRACE = """System.NullReferenceException: Object reference not set to an instance of an object.
   at Acme.Shop.OrderService.Total(Order order) in C:\\src\\Acme.Shop\\OrderService.cs:line 57
   at Acme.Shop.Program.Main(String[] args) in /build/src/Acme.Shop/Program.cs:line 12
   at System.Threading.ThreadHelper.ThreadStart()
"""


def test_ruby_frames_keep_path_line_and_method_in_both_quote_styles():
    frames = [(f.path, f.line, f.function, f.language) for f in parse_frames(RUBY_TRACE)]
    assert frames == [
        ("app/models/order.rb", 41, "Order#total", "ruby"),
        ("app/controllers/orders_controller.rb", 12, "show", "ruby"),
        ("/usr/lib/ruby/3.3.0/benchmark.rb", 311, "realtime", "ruby"),
    ]


def test_php_frames_read_the_numbered_stack_and_the_thrown_in_location():
    frames = [(f.path, f.line, f.function) for f in parse_frames(PHP_TRACE)]
    assert frames[0] == ("/var/www/src/Cart.php", 18, None)
    assert ("/var/www/src/Controller/CheckoutController.php", 42, "App\\Cart->total") in frames
    assert all(f.language == "php" for f in parse_frames(PHP_TRACE))


def test_dotnet_frames_read_the_in_file_line_form():
    frames = [(f.path, f.line, f.function, f.language) for f in parse_frames(DOTNET_TRACE)]
    assert frames == [
        ("C:\\src\\Acme.Shop\\OrderService.cs", 57, "OrderService.Total", "dotnet"),
        ("/build/src/Acme.Shop/Program.cs", 12, "Program.Main", "dotnet"),
    ]
    assert normalize_frame_path(frames[0][0]) == "src/Acme.Shop/OrderService.cs"


def test_python_frames_keep_path_line_and_function():
    frames = parse_frames(PY_TRACE)
    assert [(f.path, f.line, f.function, f.language) for f in frames] == [
        ("/home/u/proj/manage.py", 22, "<module>", "python"),
        ("/usr/lib/python3.11/site-packages/django/db/models/query.py", 1205, "filter", "python"),
    ]


def test_node_frames_skip_runtime_internals():
    frames = parse_frames(NODE_TRACE)
    paths = [(f.path, f.line, f.function) for f in frames if f.language == "javascript"]
    assert paths[0] == ("/srv/app/src/lib/header.js", 42, "parseHeader")
    assert ("/srv/app/src/server.js", 10, "Object.handle") in paths
    assert not any(p.startswith("node:") for p, _, _ in paths)


def test_java_frames_turn_packages_into_paths():
    frames = parse_frames(JAVA_TRACE)
    assert frames[0].path == "com/example/shop/OrderService.java"
    assert frames[0].line == 57 and frames[0].function == "OrderService.total" and frames[0].language == "java"


def test_go_panic_frames_pair_function_and_file():
    frames = [f for f in parse_frames(GO_PANIC) if f.language == "go"]
    assert frames[0].path.endswith("internal/queue/ring.go") and frames[0].line == 31
    assert frames[0].function == "queue.(*Ring).Pop"


def test_rust_panic_location_and_backtrace_frames():
    frames = [f for f in parse_frames(RUST_PANIC) if f.language == "rust"]
    assert ("src/parser/lexer.rs", 88) in {(normalize_frame_path(f.path), f.line) for f in frames}
    assert any(f.function == "next_token" for f in frames)


def test_generic_path_line_form_is_read_for_c_sources():
    frames = parse_frames("src/buf.c:120:9: runtime error: index 7 out of bounds for type 'char [4]'\n")
    assert [(f.path, f.line, f.language) for f in frames] == [("src/buf.c", 120, "generic")]


def test_sanitizer_and_gdb_backtraces_are_native_frames_innermost_first():
    asan = parse_frames("==1==ERROR: AddressSanitizer: heap-buffer-overflow\n    #0 0x4 in copy src/buf.c:120:9\n"
                        "    #1 0x5 in main src/main.c:7\n")
    assert [(f.path, f.line, f.function, f.language) for f in asan] == [
        ("src/buf.c", 120, "copy", "native"), ("src/main.c", 7, "main", "native")]
    gdb = parse_frames("#4  0x00007ffff7babe46 in jv_string_implode (j=...) at jv.c:717\n"
                       "#5  0x00007ffff7ba73dd in f_string_implode (jq=<optimized out>, a=...) at builtin.c:969\n")
    assert [(f.path, f.function, f.language) for f in gdb] == [
        ("jv.c", "jv_string_implode", "native"), ("builtin.c", "f_string_implode", "native")]


def test_apple_crash_report_and_swift_backtracer_frames_keep_the_function():
    report = parse_frames("0   MyApp  0x0000000100f3c8a4 Cart.total() + 120 (Cart.swift:42)\n"
                          "1   MyApp  0x0000000100f3b123 closure #1 in CartViewController.viewDidLoad() + 80 "
                          "(CartViewController.swift:17)\n2   UIKitCore  0x00000001a2b3c4d5 -[UIViewController loadView] + 12\n")
    assert [(f.path, f.line, f.function) for f in report] == [
        ("Cart.swift", 42, "Cart.total"), ("CartViewController.swift", 17, "CartViewController.viewDidLoad")]
    backtracer = parse_frames("0  0x0000000100f3c8a4 specialized Cart.total(_:) + 120 in MyApp at /src/Shop/Cart.swift:42:5")
    assert [(f.path, f.line, f.function) for f in backtracer] == [("/src/Shop/Cart.swift", 42, "Cart.total")]


def test_a_node_frame_printed_as_a_file_url_is_read_once():
    frames = parse_frames("Error: too long\n    at Object.isFormData (file:///app/node_modules/axios/lib/utils.js:195:42)\n"
                          "    at transform (file:///app/node_modules/axios/lib/core/transformData.js:22:15)\n")
    assert [(f.path, f.line, f.language) for f in frames] == [
        ("/app/node_modules/axios/lib/utils.js", 195, "javascript"),
        ("/app/node_modules/axios/lib/core/transformData.js", 22, "javascript")]


def test_frames_map_to_repository_files_by_suffix():
    files = ["django/db/models/query.py", "tests/queries/test_query.py", "src/lib/header.js", "src/server.js",
             "src/main/java/com/example/shop/OrderService.java", "internal/queue/ring.go", "cmd/tool/main.go"]
    matcher = PathMatcher(files)
    assert matcher.match("/usr/lib/python3.11/site-packages/django/db/models/query.py") == "django/db/models/query.py"
    assert matcher.match("/srv/app/src/lib/header.js") == "src/lib/header.js"
    assert matcher.match("com/example/shop/OrderService.java") == "src/main/java/com/example/shop/OrderService.java"
    assert matcher.match("/home/ci/go/src/github.com/acme/tool/internal/queue/ring.go") == "internal/queue/ring.go"
    assert matcher.match("/srv/app/node_modules/express/lib/router.js") is None


def test_library_frames_are_dropped_and_repo_frames_kept_in_order():
    resolved = resolve_frames(parse_frames(NODE_TRACE), ["src/lib/header.js", "src/server.js"])
    assert [path for _, path in resolved] == ["src/lib/header.js", "src/server.js"]


def test_ambiguous_bare_file_name_does_not_match():
    assert PathMatcher(["a/utils.py", "b/utils.py"]).match("utils.py") is None
    assert PathMatcher(["a/utils.py"]).match("utils.py") == "a/utils.py"


def test_a_suffix_shared_by_several_files_does_not_match():
    files = ["django/contrib/auth/migrations/0001_initial.py", "django/contrib/sites/migrations/0001_initial.py"]
    # the user's own migration, printed in a traceback, is none of the project's migrations
    assert PathMatcher(files).match("/home/jj/example/app/migrations/0001_initial.py") is None
    assert PathMatcher(files).match("/srv/django/contrib/sites/migrations/0001_initial.py") == files[1]


def test_messages_errors_and_code_are_extracted():
    text = "Title\n\n```python\nfrom django.db.models import Q, F\nimport numpy as np\nQ(x=1) | F('y')\n```\n" + PY_TRACE
    focus = Focus.from_text(text)
    assert "ValueError" in focus.errors
    assert any("expected a number but got" in m for m in focus.messages)
    assert "django.db.models" in focus.imports and "django.db.models.Q" in focus.imports
    assert {"Q", "F"} <= set(focus.imported_names)
    assert focus.code_blocks and "numpy" in focus.imports


def test_options_and_setting_constants_are_collected():
    focus = Focus.from_text("Running with `--fail-on-warning` ignores DEFAULT_AUTO_FIELD in settings.")
    assert "--fail-on-warning" in focus.options and "DEFAULT_AUTO_FIELD" in focus.options
    assert "--fail-on-warning" in " ".join(focus.code_identifiers) or "fail" in " ".join(focus.code_identifiers)


def test_names_written_against_chinese_text_are_read_as_names():
    focus = Focus.from_text(
        "或默认加一个serviceName，discov.EtcdConf中没有user等字段。在core/logx/logs.go中设置MAX_SIZE，"
        "用--log-level参数；程序在src/jv.c:717崩溃，报错\"invalid memory address\"。"
    )
    assert {"serviceName", "discov.EtcdConf"} <= set(focus.identifiers)
    assert focus.paths == ("core/logx/logs.go", "src/jv.c")
    assert "MAX_SIZE" in focus.options and "--log-level" in focus.options
    assert [(f.path, f.line) for f in focus.frames] == [("src/jv.c", 717)]
    assert "invalid memory address" in focus.messages


def test_jira_wiki_code_blocks_are_code_blocks():
    focus = Focus.from_text(
        "Exporting fails.\n{code:java}\nJsonGenerator gen = factory.createGenerator(out);\n{code}\n"
        "The log:\n{noformat}\njava.lang.NullPointerException\n{noformat}\nThe docs say {code} is fine."
    )
    assert focus.code_blocks == ("JsonGenerator gen = factory.createGenerator(out);", "java.lang.NullPointerException")
    assert "factory.createGenerator" in focus.code_identifiers
    assert "JsonGenerator gen = factory.createGenerator(out);" in focus.quoted_code


def test_messages_in_typographic_quotes_are_messages():
    focus = Focus.from_text(
        "Saving fails with “cannot assign to field of a frozen instance”; the log says "
        "「ファイルが 見つかりません」. It doesn’t say ‘why it was frozen’ anywhere."
    )
    assert focus.messages == (
        "cannot assign to field of a frozen instance", "ファイルが 見つかりません", "why it was frozen"
    )


def test_accented_latin_words_are_not_split_into_names():
    focus = Focus.from_text("The naïve datetime in the café example stays naïve.")
    assert not {"na", "ve", "caf"} & set(focus.identifiers)


def test_module_candidates_cover_python_packages_js_and_rust():
    assert module_candidates("a.b.c")[:2] == ["a/b/c.py", "a/b/c/__init__.py"]
    assert "lib/x.js" in module_candidates("./lib/x")
    assert "src/parser/lexer.rs" in module_candidates("crate::parser::lexer")


def test_empty_report_has_empty_focus():
    assert Focus.from_text("").is_empty


def test_python_imports_stop_at_the_end_of_their_statement():
    focus = Focus.from_text("```python\nfrom a.b import c\nfrom d import e as alias, f\nimport x\n```")
    assert set(focus.imports) == {"a.b", "a.b.c", "d", "d.e", "d.f", "x"}
    assert set(focus.imported_names) == {"c", "e", "f"}


def test_a_parenthesized_python_import_may_span_lines():
    focus = Focus.from_text("```python\nfrom pkg.mod import (\n    one,\n    two as second,\n)\nvalue = one()\n```")
    assert set(focus.imported_names) == {"one", "two"}
    assert "pkg.mod.two" in focus.imports


def test_permalinks_and_prose_line_references_are_links():
    text = (
        "The check at https://github.com/acme/tool/blob/0a1b2c3/src/pkg/parse.py#L40-L44 skips empty input.\n"
        "GitLab: https://gitlab.com/acme/tool/-/blob/main/lib/io.rb#L7 and line 77 of `django/core/templates.py`;\n"
        "it fails in utils/helpers.js, line 12 too."
    )
    links = Focus.from_text(text).links
    assert [(link.path, link.line, link.end_line) for link in links] == [
        ("src/pkg/parse.py", 40, 44),
        ("lib/io.rb", 7, None),
        ("django/core/templates.py", 77, None),
        ("utils/helpers.js", 12, None),
    ]
    assert "src/pkg/parse.py" in Focus.from_text(text).paths  # a permalink's file counts as a path the report names


def test_prose_line_references_written_against_chinese_text_are_links():
    links = Focus.from_text("问题在utils/helpers.js, line 12中。").links
    assert [(link.path, link.line) for link in links] == [("utils/helpers.js", 12)]


def test_a_path_set_off_from_its_line_by_a_dash_or_a_colon_is_a_link():
    text = "private inheritance (fmt/format.h - line 4055), see also src/jv.c: line 12 and src/a.c — line 3."
    links = Focus.from_text(text).links
    assert [(link.path, link.line) for link in links] == [("fmt/format.h", 4055), ("src/jv.c", 12), ("src/a.c", 3)]


def test_frame_lines_and_non_code_files_are_not_links():
    text = PY_TRACE + "\nSee line 3 of notes.txt and https://github.com/o/r/blob/main/README.md#L5."
    assert Focus.from_text(text).links == ()


def test_quoted_source_lines_leave_out_frames_prompts_comments_and_imports():
    text = (
        "Title\n\nThe parser does `tokens = self.lexer.split(line)` first.\n\n```python\n"
        ">>> from pkg.parse import Parser\n>>> Parser().feed('a b')\n# a comment that is long enough to count\n"
        "import collections.abc as abc_module\n    result = normalize(value, strict=True)\nok\n```\n"
        + PY_TRACE
    )
    quoted = Focus.from_text(text).quoted_code
    assert quoted == ("result = normalize(value, strict=True)", "tokens = self.lexer.split(line)")


def test_a_hostile_address_is_read_in_linear_time():
    text = "https://x/" + "a/blob/b/" * 22_000  # the report body's limit; a backtracking pattern took minutes
    started = time.perf_counter()
    assert Focus.from_text(text).links == ()
    assert time.perf_counter() - started < 10


DIFF_REPORT = """It compiles only after this change:

```diff
--- a/include/fmt/std.h
+++ b/include/fmt/std.h
@@ -184,7 +184,7 @@ FMT_END_NAMESPACE
 FMT_BEGIN_NAMESPACE
 FMT_EXPORT
 template <std::size_t N, typename Char>
-struct formatter<std::bitset<N>, Char> : nested_formatter<string_view> {
+struct formatter<std::bitset<N>, Char> : nested_formatter<basic_string_view<Char>, Char> {
  private:
   // Functor
   struct writer {
@@ -204,4 +204,5 @@ struct formatter<std::bitset<N>, Char> {
   auto format(const std::bitset<N>& bs, FormatContext& ctx) const
-      -> decltype(ctx.out()) {
-    return write_padded(ctx, writer{bs});
+      -> decltype(ctx.out()) const {
+    return this->write_padded(ctx, writer{bs});
   }
+  // added
--- /dev/null
+++ b/src/new.cc
@@ -0,0 +1,2 @@
+int x;
+int y;
```
"""


def test_the_lines_a_diff_in_the_report_removes_are_links_with_their_text():
    links = Focus.from_text(DIFF_REPORT).links
    assert [(link.path, link.line, link.end_line) for link in links] == [
        ("include/fmt/std.h", 187, None), ("include/fmt/std.h", 205, 206), ("include/fmt/std.h", 207, None)]
    assert links[0].text == "struct formatter<std::bitset<N>, Char> : nested_formatter<string_view> {"
    assert links[0].added == ("struct formatter<std::bitset<N>, Char> : nested_formatter<basic_string_view<Char>, Char> {",)
    assert links[2].text == "}" and links[2].inserts and links[2].added == ("// added",)  # the line it follows


def test_a_diff_link_finds_its_line_when_the_file_has_moved():
    link = Focus.from_text(DIFF_REPORT).links[0]
    source = "// a\n// b\n" + "\n" * 186 + "struct formatter<std::bitset<N>, Char> : nested_formatter<string_view> {\n"
    assert link.line_in(source) == 189
    assert link.line_in("nothing here\n") == 187


LINELESS_TRACE = """java.lang.IllegalStateException: boom
\tat com.acme.shop.OrderService.total(Unknown Source)
\tat com.acme.shop.CartKt.sum(SourceFile:12)
\tat com.acme.shop.Api.run(Api.java)
\tat java.lang.Thread.run(Native Method)
System.NullReferenceException: Object reference not set to an instance of an object.
   at Acme.Shop.OrderService.Total(Order order)
   at Acme.Shop.OrderService+Line.Sum()
   at System.Threading.ThreadHelper.ThreadStart()
   at x.y()
"""


def test_frames_a_build_printed_without_file_name_or_line_are_read_by_their_class():
    frames = [(f.path, f.line, f.function, f.language) for f in parse_frames(LINELESS_TRACE)]
    assert frames == [
        ("com/acme/shop/OrderService.java", None, "OrderService.total", "java"),
        ("com/acme/shop/Cart.kt", 12, "CartKt.sum", "java"),
        ("com/acme/shop/Api.java", None, "Api.run", "java"),
        ("OrderService.cs", None, "OrderService.Total", "dotnet"),
        ("OrderService.cs", None, "OrderService.Sum", "dotnet"),
    ]
    assert "OrderService" not in strip_frames(LINELESS_TRACE)


def test_a_jvm_frame_without_its_file_name_finds_the_kotlin_or_scala_file_of_its_class():
    files = ["app/src/main/kotlin/com/acme/shop/OrderService.kt", "app/src/main/java/com/acme/shop/Api.java"]
    resolved = resolve_frames(parse_frames(LINELESS_TRACE), files)
    assert [path for _, path in resolved] == files



def test_the_code_blocks_alone_are_those_the_whole_focus_finds():
    fenced = "Crash\n\n```python\nf(1)\n```\nthen\n{code:java}\ng();\n{code}\n"
    for text in (fenced, "Crash\r\n\r\n    x = f()\r\n    y = g(x)\r\n\r\nwords\n", "Only `inline` words."):
        assert code_blocks(text) == Focus.from_text(text).code_blocks
    assert code_blocks(fenced) == ("f(1)", "g();")
