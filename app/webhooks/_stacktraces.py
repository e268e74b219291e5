"""Sentry stack traces printed the way each runtime prints them.

A Sentry event carries frames in up to three places: `exception.values[].stacktrace` (one per chained
exception, oldest first), a top-level `stacktrace` (a message captured with its stack) and
`threads.values[].stacktrace` (every thread at the time of the event). All of them are printed, each in
the text its runtime writes to a terminal, so the repo map's focus extractor and a model read the report
the way the developer reads a pasted trace:

| platform | printed as |
|---|---|
| python | `Traceback (most recent call last):` / `  File "p.py", line 4, in fn`, oldest call first |
| javascript, node | `TypeError: msg` / `    at fn (file.js:10:5)`, innermost first |
| java (Kotlin, Scala, Android) | `java.lang.Error: msg` / `\\tat pkg.Class.method(File.java:45)`, `Caused by:` |
| go | `goroutine 1 [running]:` / `main.main()` / `\\t/path/file.go:45`, innermost first |
| ruby | `app.rb:10:in 'meth': msg (Type)` / `\\tfrom app.rb:20:in 'other'` |
| php | `Exception: msg in /p/f.php:12` / `Stack trace:` / `#0 /p/f.php(20): fn()` / `#1 {main}` |
| csharp (.NET) | `System.Exception: msg` / `   at NS.Class.Method() in C:\\p\\F.cs:line 45` |
| anything else | `Type: msg` / `  #0 fn at path:line` |

Sentry keeps no instruction offsets for Go frames in most events, so the `+0x1d` Go prints after the line is
left out rather than made up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from app.webhooks._common import items, mapping, text

MAX_FRAMES = 60
"""Frames kept per trace (the innermost: that is where the error is)."""
MAX_THREADS = 12
"""Thread stacks printed per event (the crashed and current ones first)."""

Runtime = Literal["python", "javascript", "java", "go", "ruby", "php", "dotnet", "native"]
_RUNTIMES: dict[str, Runtime] = {
    "python": "python",
    "javascript": "javascript", "node": "javascript", "react-native": "javascript", "cordova": "javascript",
    "electron": "javascript",
    "java": "java", "kotlin": "java", "scala": "java", "groovy": "java", "android": "java",
    "go": "go", "ruby": "ruby", "php": "php", "csharp": "dotnet", "dotnet": "dotnet", "unity": "dotnet",
}  # fmt: skip


def runtime_of(platform: str) -> Runtime:
    """The runtime whose trace format a Sentry `platform` uses (`native` for the ones without a known format)."""
    return _RUNTIMES.get((platform or "").lower(), "native")


@dataclass(frozen=True)
class Trace:
    """One stack to print: an exception, the event's own stack, or a thread's."""

    frames: tuple[dict[str, Any], ...]
    """Sentry frames, oldest call first (as Sentry stores them)."""
    kind: str = ""
    """Exception type (`ValueError`, `*url.Error`), with its module for Java (`java.lang.IllegalStateException`)."""
    message: str = ""
    """Exception value or event message."""
    thread: str | None = None
    """Thread name or id when this is a thread's stack."""

    @property
    def head(self) -> str:
        """`Type: message`, as most runtimes print an exception's first line."""
        if self.kind and self.message:
            return f"{self.kind}: {self.message}"
        return self.kind or self.message


def _interface(event: dict[str, Any], name: str) -> dict[str, Any] | None:
    """An event interface by name: top level (webhook shape), legacy key, or `entries` (API shape)."""
    found = event.get(name) or event.get(f"sentry.interfaces.{name.capitalize()}")
    if isinstance(found, dict):
        return found
    for entry in items(event.get("entries")):
        if isinstance(entry, dict) and entry.get("type") == name and isinstance(entry.get("data"), dict):
            return entry["data"]
    return None


def _frames(stacktrace: Any) -> tuple[dict[str, Any], ...]:
    frames = [f for f in items(mapping(stacktrace).get("frames")) if isinstance(f, dict)]
    return tuple(frames[-MAX_FRAMES:])


def exceptions(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The event's exception values, oldest first (the last one is what was raised last)."""
    return [v for v in items(mapping(_interface(event, "exception")).get("values")) if isinstance(v, dict)]


def event_traces(event: dict[str, Any]) -> tuple[list[Trace], list[Trace], list[Trace]]:
    """(chained exceptions oldest first, the event's own stack, thread stacks) of a Sentry event; a thread
    stack that repeats one already listed is left out."""
    platform = runtime_of(text(event.get("platform")))
    main: list[Trace] = []
    for value in exceptions(event):
        kind = text(value.get("type"))
        module = text(value.get("module"))
        if platform == "java" and module and kind and "." not in kind:
            kind = f"{module}.{kind}"
        main.append(Trace(_frames(value.get("stacktrace")), kind or "Error", text(value.get("value"))))
    own: list[Trace] = []
    frames = _frames(_interface(event, "stacktrace"))
    if frames:
        message = text(mapping(event.get("logentry")).get("formatted")) or text(event.get("message")) or text(event.get("title"))
        own.append(Trace(frames, "", message))
    seen = {_key(t.frames) for t in [*main, *own] if t.frames}
    threads = [t for t in items(mapping(_interface(event, "threads")).get("values")) if isinstance(t, dict)]
    threads.sort(key=lambda t: (not t.get("crashed"), not t.get("current")))
    stacks: list[Trace] = []
    for thread in threads:
        frames = _frames(thread.get("stacktrace"))
        if frames and _key(frames) not in seen:
            seen.add(_key(frames))
            name = text(thread.get("name")) or str(thread.get("id") if thread.get("id") is not None else len(stacks) + 1)
            stacks.append(Trace(frames, thread=name))
    return main, own, stacks


def _key(frames: tuple[dict[str, Any], ...]) -> tuple[tuple[str, int, str], ...]:
    return tuple((_path(f), _line(f), _fn(f)) for f in frames)


def format_event_traces(event: dict[str, Any]) -> str:
    """Every stack trace of a Sentry event, printed the way its runtime prints it ("" when it has none)."""
    runtime = runtime_of(text(event.get("platform")))
    chain, own, threads = event_traces(event)
    parts = [format_chain(chain, runtime), format_chain(own, runtime)]
    for thread in threads[:MAX_THREADS]:
        parts.append(format_thread(thread, runtime))
    if len(threads) > MAX_THREADS:
        parts.append(f"... {len(threads) - MAX_THREADS} more threads not shown")
    return "\n\n".join(p for p in parts if p)


def format_chain(traces: list[Trace], runtime: Runtime) -> str:
    """Chained exceptions (oldest first, as Sentry stores them) in the runtime's own words."""
    traces = [t for t in traces if t.frames or t.kind]
    if not traces:
        return ""
    if runtime == "python":
        sep = "\n\nDuring handling of the above exception, another exception occurred:\n\n"
        return sep.join(_python(t) for t in traces)
    if runtime == "php":  # PHP prints the previous exception first, then `Next ...`
        return "\n\nNext ".join(_php(t) for t in traces)
    newest_first = list(reversed(traces))
    if runtime == "go":  # a Go error's message already holds its wrapped errors: one goroutine stack
        stack = next((t for t in newest_first if t.frames), newest_first[0])
        return f"{newest_first[0].head}\n\n{_go(stack)}"
    out = [_exception(newest_first[0], runtime)]
    for enclosing, older in zip(newest_first, newest_first[1:]):
        out.append(_java_cause(older, enclosing) if runtime == "java" else _cause(older, runtime))
    return "\n".join(out)


def format_thread(thread: Trace, runtime: Runtime) -> str:
    """One thread's stack under the header its runtime prints for it."""
    name = thread.thread or "?"
    if runtime == "go":
        return _go(thread, goroutine=name)
    header = {"java": f'"{name}"', "python": f"Thread {name} (most recent call last):"}.get(runtime, f"Thread {name}:")
    return "\n".join([header, *_FRAMES[runtime](thread)])


def _path(frame: dict[str, Any]) -> str:
    """In-app frames by their project-relative name; library frames by their absolute path, so readers (and
    the focus) can tell site-packages and node_modules from the repository."""
    filename, abs_path = text(frame.get("filename")), text(frame.get("abs_path"))
    if frame.get("in_app") is False and abs_path:
        return abs_path
    return filename or abs_path or "<unknown>"


def _line(frame: dict[str, Any]) -> int:
    line = frame.get("lineno")
    return line if isinstance(line, int) else 0


def _fn(frame: dict[str, Any], default: str = "<unknown>") -> str:
    return text(frame.get("function")) or default


def _innermost(trace: Trace) -> list[dict[str, Any]]:
    return list(reversed(trace.frames))


# ---------------------------------------------------------------- python


def _python_frames(trace: Trace) -> list[str]:
    lines = []
    for f in trace.frames:
        lines.append(f'  File "{_path(f)}", line {_line(f)}, in {_fn(f, "<module>")}')
        if text(f.get("context_line")).strip():
            lines.append(f"    {text(f.get('context_line')).strip()}")
    return lines


def _python(trace: Trace) -> str:
    lines = ["Traceback (most recent call last):", *_python_frames(trace)] if trace.frames else []
    return "\n".join([*lines, trace.head or "Error"])


# ---------------------------------------------------------------- javascript


def _js_frames(trace: Trace) -> list[str]:
    lines = []
    for f in _innermost(trace):
        where = f"{_path(f)}:{_line(f)}" + (f":{f['colno']}" if isinstance(f.get("colno"), int) else "")
        fn = text(f.get("function"))
        lines.append(f"    at {fn} ({where})" if fn else f"    at {where}")
    return lines


# ---------------------------------------------------------------- java


def _java_frames(trace: Trace) -> list[str]:
    lines = []
    for f in _innermost(trace):
        owner = text(f.get("module"))
        method = f"{owner}.{_fn(f)}" if owner else _fn(f)
        file = text(f.get("filename")) or "Unknown Source"
        lines.append(f"\tat {method}({file}:{_line(f)})" if _line(f) else f"\tat {method}({file})")
    return lines


# ---------------------------------------------------------------- go


def _go_frames(trace: Trace) -> list[str]:
    lines = []
    for f in _innermost(trace):
        module, fn = text(f.get("module")) or text(f.get("package")), _fn(f)
        lines.append(f"{module}.{fn}()" if module and not fn.startswith(module + ".") else f"{fn}()")
        addr = text(f.get("instruction_addr"))
        path = text(f.get("abs_path")) or text(f.get("filename")) or "<unknown>"
        lines.append(f"\t{path}:{_line(f)}" + (f" +{addr}" if addr else ""))
    return lines


def _go(trace: Trace, goroutine: str | None = None) -> str:
    gid = goroutine if goroutine and goroutine.isdigit() else "1"
    return "\n".join([f"goroutine {gid} [running]:", *_go_frames(trace)])


# ---------------------------------------------------------------- ruby


def _ruby_frames(trace: Trace) -> list[str]:
    return [f"\tfrom {_path(f)}:{_line(f)}:in '{_fn(f)}'" for f in _innermost(trace)]


def _ruby(trace: Trace) -> str:
    kind, lines = trace.kind or "RuntimeError", _ruby_frames(trace)
    if not lines:
        return f"{trace.message} ({kind})"
    return "\n".join([f"{lines[0].removeprefix(chr(9) + 'from ')}: {trace.message} ({kind})", *lines[1:]])


# ---------------------------------------------------------------- php


def _php_file(f: dict[str, Any]) -> str:
    return text(f.get("abs_path")) or _path(f)


def _php_frames(trace: Trace) -> list[str]:
    lines = []
    for i, f in enumerate(_innermost(trace)):
        owner, fn = text(f.get("module")), _fn(f)
        call = f"{owner}->{fn}()" if owner and "::" not in fn and "->" not in fn else f"{fn}()"
        lines.append(f"#{i} {_php_file(f)}({_line(f)}): {call}")
    return [*lines, f"#{len(lines)} {{main}}"]


def _php(trace: Trace) -> str:
    top = trace.frames[-1] if trace.frames else None
    where = f" in {_php_file(top)}:{_line(top)}" if top else ""
    return "\n".join([f"{trace.kind or 'Exception'}: {trace.message}{where}", "Stack trace:", *_php_frames(trace)])


# ---------------------------------------------------------------- .NET


def _dotnet_frames(trace: Trace) -> list[str]:
    lines = []
    for f in _innermost(trace):
        owner, fn = text(f.get("module")), _fn(f)
        method = f"{owner}.{fn}" if owner and not fn.startswith(owner) else fn
        path = text(f.get("abs_path")) or text(f.get("filename"))
        lines.append(f"   at {method}()" + (f" in {path}:line {_line(f)}" if path and _line(f) else ""))
    return lines


def _dotnet_inner(trace: Trace) -> str:
    return "\n".join([f" ---> {trace.head}", *_dotnet_frames(trace), "   --- End of inner exception stack trace ---"])


# ---------------------------------------------------------------- anything else (native, cocoa, elixir...)


def _native_frames(trace: Trace) -> list[str]:
    return [f"  #{i} {_fn(f)} at {_path(f)}:{_line(f)}" for i, f in enumerate(_innermost(trace))]


_FRAMES: dict[Runtime, Callable[[Trace], list[str]]] = {
    "python": _python_frames, "javascript": _js_frames, "java": _java_frames, "go": _go_frames,
    "ruby": _ruby_frames, "php": _php_frames, "dotnet": _dotnet_frames, "native": _native_frames,
}  # fmt: skip
"""The frame lines of each runtime, in the order it prints them."""

_DEFAULT_KIND = {"javascript": "Error", "java": "java.lang.Throwable", "dotnet": "System.Exception", "native": "Error"}
_CAUSE = {"javascript": "  [cause]: ", "java": "Caused by: ", "native": "Caused by: "}


def _exception(trace: Trace, runtime: Runtime) -> str:
    """An exception printed newest-first style: `Type: message`, then its frames innermost first."""
    if runtime == "ruby":
        return _ruby(trace)
    return "\n".join([trace.head or _DEFAULT_KIND[runtime], *_FRAMES[runtime](trace)])


def _java_cause(trace: Trace, enclosing: Trace) -> str:
    """`Caused by: ...` with the outermost frames it shares with the exception it caused as `... N more`."""
    lines, outer = _java_frames(trace), _java_frames(enclosing)
    shared = 0
    while shared < min(len(lines), len(outer)) - 1 and lines[-1 - shared] == outer[-1 - shared]:
        shared += 1
    kept = lines[: len(lines) - shared] + ([f"\t... {shared} more"] if shared else [])
    return "\n".join([f"Caused by: {trace.head or 'java.lang.Throwable'}", *kept])


def _cause(trace: Trace, runtime: Runtime) -> str:
    """An older exception of the chain, introduced the way the runtime introduces a cause."""
    if runtime == "dotnet":
        return _dotnet_inner(trace)
    if runtime == "ruby":
        return _ruby(trace)
    return _CAUSE[runtime] + _exception(trace, runtime)
