"""Sentry stack traces: every trace an event carries reaches the report, printed the way its runtime prints it,
and the focus extractor reads the frames back as it reads a trace pasted by a developer."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from app.webhooks import parse_delivery
from app.webhooks._stacktraces import MAX_THREADS, format_event_traces
from repomap.focus import Focus


def frame(function: str, filename: str, lineno: int, **extra) -> dict:
    return {"function": function, "filename": filename, "abs_path": extra.pop("abs_path", filename), "lineno": lineno,
            "in_app": True, **extra}  # fmt: skip


def event(platform: str, frames: list[dict], *, kind: str = "Error", value: str = "boom", **extra) -> dict:
    """A Sentry event with one exception; frames oldest call first, as Sentry stores them."""
    exc = {"type": kind, "value": value, "stacktrace": {"frames": frames}, **extra}
    return {"platform": platform, "exception": {"values": [exc]}}


# (platform, event, lines the runtime prints, innermost frame the focus must read: path, line, function, language)
CASES = {
    "go": (
        event("go", [frame("main", "cmd/tool/main.go", 9, module="main", abs_path="/src/cmd/tool/main.go"),
                     frame("(*Ring).Pop", "queue/ring.go", 31, module="github.com/acme/tool/queue",
                           abs_path="/src/queue/ring.go")], kind="*errors.errorString", value="empty ring"),
        ["*errors.errorString: empty ring", "goroutine 1 [running]:", "github.com/acme/tool/queue.(*Ring).Pop()",
         "\t/src/queue/ring.go:31", "main.main()", "\t/src/cmd/tool/main.go:9"],
        ("/src/queue/ring.go", 31, "queue.(*Ring).Pop", "go"),
    ),
    "java": (
        event("java", [frame("main", "Main.java", 12, module="com.acme.shop.Main"),
                       frame("total", "OrderService.java", 57, module="com.acme.shop.OrderService")],
              kind="NullPointerException", value="name is null", module="java.lang"),
        ["java.lang.NullPointerException: name is null", "\tat com.acme.shop.OrderService.total(OrderService.java:57)",
         "\tat com.acme.shop.Main.main(Main.java:12)"],
        ("com/acme/shop/OrderService.java", 57, "OrderService.total", "java"),
    ),
    "node": (
        event("node", [frame("handle", "src/server.js", 10, colno=5), frame("parseHeader", "src/lib/header.js", 42, colno=17)],
              kind="TypeError", value="x is undefined"),
        ["TypeError: x is undefined", "    at parseHeader (src/lib/header.js:42:17)", "    at handle (src/server.js:10:5)"],
        ("src/lib/header.js", 42, "parseHeader", "javascript"),
    ),
    "python": (
        event("python", [frame("checkout", "shop/views.py", 88, context_line="total = cart.total()"),
                         frame("total", "shop/cart.py", 41)], kind="ZeroDivisionError", value="division by zero"),
        ["Traceback (most recent call last):", '  File "shop/views.py", line 88, in checkout', "    total = cart.total()",
         '  File "shop/cart.py", line 41, in total', "ZeroDivisionError: division by zero"],
        ("shop/cart.py", 41, "total", "python"),
    ),
    "ruby": (
        event("ruby", [frame("show", "app/controllers/orders_controller.rb", 12), frame("total", "app/models/order.rb", 41)],
              kind="NoMethodError", value="undefined method '+' for nil"),
        ["app/models/order.rb:41:in 'total': undefined method '+' for nil (NoMethodError)",
         "\tfrom app/controllers/orders_controller.rb:12:in 'show'"],
        ("app/models/order.rb", 41, "total", "ruby"),
    ),
    "php": (
        event("php", [frame("show", "src/Controller.php", 42, abs_path="/var/www/src/Controller.php"),
                      frame("total", "src/Cart.php", 18, abs_path="/var/www/src/Cart.php", module="App\\Cart")],
              kind="TypeError", value="bad argument"),
        ["TypeError: bad argument in /var/www/src/Cart.php:18", "Stack trace:", "#0 /var/www/src/Cart.php(18): App\\Cart->total()",
         "#1 /var/www/src/Controller.php(42): show()", "#2 {main}"],
        ("/var/www/src/Cart.php", 18, "App\\Cart->total", "php"),
    ),
    "csharp": (
        event("csharp", [frame("Main", "Program.cs", 12, module="Acme.Shop.Program", abs_path="C:\\src\\Program.cs"),
                         frame("Total", "OrderService.cs", 57, module="Acme.Shop.OrderService",
                               abs_path="C:\\src\\OrderService.cs")],
              kind="System.NullReferenceException", value="Object reference not set to an instance of an object."),
        ["System.NullReferenceException: Object reference not set to an instance of an object.",
         "   at Acme.Shop.OrderService.Total() in C:\\src\\OrderService.cs:line 57",
         "   at Acme.Shop.Program.Main() in C:\\src\\Program.cs:line 12"],
        ("C:\\src\\OrderService.cs", 57, "OrderService.Total", "dotnet"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("platform", sorted(CASES))
def test_each_platform_is_printed_as_its_runtime_prints_it_and_the_focus_reads_it(platform):
    ev, expected_lines, innermost = CASES[platform]
    printed = format_event_traces(ev)
    lines = printed.splitlines()
    positions = [lines.index(line) for line in expected_lines]  # every line there, verbatim...
    assert positions == sorted(positions), printed  # ...in the runtime's order
    if platform != "python":
        assert "Traceback (most recent call last)" not in printed
    frames = [(f.path, f.line, f.function, f.language) for f in Focus.from_text(printed).frames]
    assert innermost in frames, frames


def test_a_top_level_stacktrace_without_an_exception_reaches_the_report():
    ev = {"platform": "python", "message": "disk almost full", "stacktrace": {"frames": [frame("check", "ops/disk.py", 7)]}}
    printed = format_event_traces(ev)
    assert printed.splitlines() == ["Traceback (most recent call last):", '  File "ops/disk.py", line 7, in check', "disk almost full"]


def test_thread_stacks_are_printed_under_their_runtime_header_and_a_repeat_of_the_exception_is_not():
    crashed = [frame("Pop", "queue/ring.go", 31, module="queue")]
    ev = event("go", crashed)
    ev["threads"] = {"values": [
        {"id": 1, "crashed": True, "stacktrace": {"frames": crashed}},
        {"id": 7, "stacktrace": {"frames": [frame("serve", "net/server.go", 120, module="net")]}},
    ]}  # fmt: skip
    printed = format_event_traces(ev)
    assert printed.count("queue.Pop()") == 1
    assert "goroutine 7 [running]:\nnet.serve()\n\tnet/server.go:120" in printed
    java = event("java", [frame("run", "Worker.java", 3, module="a.Worker")])
    java["threads"] = {"values": [{"id": 2, "name": "pool-1", "stacktrace": {"frames": [frame("poll", "Q.java", 9, module="a.Q")]}}]}
    assert '"pool-1"\n\tat a.Q.poll(Q.java:9)' in format_event_traces(java)


def test_many_threads_are_capped_with_the_count_left_out_stated():
    ev = {"platform": "python", "threads": {"values": [
        {"id": i, "stacktrace": {"frames": [frame("loop", f"w{i}.py", i + 1)]}} for i in range(MAX_THREADS + 3)
    ]}}  # fmt: skip
    printed = format_event_traces(ev)
    assert printed.count("(most recent call last)") == MAX_THREADS
    assert printed.endswith("... 3 more threads not shown")


def test_java_causes_and_dotnet_inner_exceptions_follow_the_runtime_convention():
    main = frame("main", "Main.java", 1, module="a.Main")
    cause = {"type": "IOException", "module": "java.io", "value": "disk",
             "stacktrace": {"frames": [main, frame("read", "F.java", 3, module="a.F")]}}
    outer = {"type": "IllegalStateException", "module": "java.lang", "value": "no config",
             "stacktrace": {"frames": [main, frame("load", "C.java", 9, module="a.C")]}}  # fmt: skip
    printed = format_event_traces({"platform": "java", "exception": {"values": [cause, outer]}})
    assert printed.splitlines() == [
        "java.lang.IllegalStateException: no config", "\tat a.C.load(C.java:9)", "\tat a.Main.main(Main.java:1)",
        "Caused by: java.io.IOException: disk", "\tat a.F.read(F.java:3)", "\t... 1 more",
    ]  # fmt: skip
    inner = {"type": "System.IO.IOException", "value": "disk", "stacktrace": {"frames": [frame("Read", "F.cs", 3, module="A.F")]}}
    printed = format_event_traces({"platform": "csharp", "exception": {"values": [inner, {"type": "System.Exception", "value": "outer"}]}})
    assert printed.splitlines()[:2] == ["System.Exception: outer", " ---> System.IO.IOException: disk"]


def test_a_legacy_webhooks_plugin_event_authenticated_by_the_url_secret_is_accepted():
    body = json.dumps({"id": "1", "url": "https://sentry.io/o/x/issues/1/?referrer=webhooks_plugin", "level": "error",
                       "triggering_rules": ["rule"], "event": event("python", [frame("f", "a.py", 1)], kind="KeyError")}).encode()  # fmt: skip
    out = parse_delivery("sentry", {}, body, "k", query={"secret": "k", "repo": "acme/shop"})
    assert out.kind == "accepted" and 'File "a.py", line 1, in f' in out.report.body
    assert out.report.url.startswith("https://sentry.io/o/x/issues/1/")
    assert parse_delivery("sentry", {}, body, "k", query={"secret": "nope"}).kind == "unauthorized"
    signature = hmac.new(b"k", body, hashlib.sha256).hexdigest()
    assert parse_delivery("sentry", {"Sentry-Hook-Signature": signature}, body, "k").kind == "accepted"


def test_frames_sentry_holds_without_line_numbers_are_read_back_by_their_class():
    java = event("java", [{"function": "total", "module": "com.acme.shop.OrderService", "in_app": True}],
                 kind="NullPointerException", module="java.lang")
    dotnet = event("csharp", [{"function": "Total", "module": "Acme.Shop.OrderService", "in_app": True}],
                   kind="NullReferenceException", module="System")
    read = [(f.path, f.line, f.function) for ev in (java, dotnet) for f in Focus.from_text(format_event_traces(ev)).frames]
    assert read == [("com/acme/shop/OrderService.java", None, "OrderService.total"),
                    ("OrderService.cs", None, "OrderService.Total")]
