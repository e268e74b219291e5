"""Stack-trace frames: read from a report's text (Python, JavaScript/Node, Java/Kotlin, Go, Rust, Ruby, PHP and .NET
output, native backtraces: gdb, lldb and the sanitizers' numbered `#N ... file.c:L` frames, Apple crash reports and
Swift's backtracer, plus the generic `path:line` form that compilers and most tools print) and resolved into the
repository's files by their longest path suffix."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from repomap.pointers import NAME_CHARS

__all__ = ("Frame", "PathMatcher", "innermost_first", "is_library_path", "match_path", "normalize_frame_path",
           "parse_frames", "resolve_frames", "strip_frames")

_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([^\s\n]+))?')
_JS_FRAME = re.compile(
    r"^[^\S\n]*at\s+(?:(?:async\s+)?([^\s(]+(?:\s\[as [^\]]+\])?)\s+\()?(?:file://)?([^\s()]+?):(\d+)(?::\d+)?\)?\s*$",
    re.M,
)
_JAVA_FRAME = re.compile(
    r"^[^\S\n]*at\s+([\w$.<>/]+)\.([\w$<>]+)\((?:([\w$.-]+\.(?:java|kt|scala|groovy))|Unknown Source|SourceFile)(?::(\d+))?\)",
    re.M,
)
"""`at pkg.Cls.method(Cls.java:45)`; also with no line or file name (`(Unknown Source)`, R8's `(SourceFile:12)`)."""
_DOTNET_BARE = re.compile(r"^[^\S\n]*at\s+((?:[A-Za-z_][\w+]*\.)+)([A-Za-z_]\w*)\((?!Native Method\))[^()\n]*\)\s*$", re.M)
"""A .NET frame with no file and line (a release build without its symbols): `   at Shop.OrderService.Total(Order o)`."""
_GO_FRAME = re.compile(r"^([^\s(]+(?:\(\*?\w+\)[^\s(]*)?)\([^\n]*\)\n\s+(\S+\.go):(\d+)", re.M)
_RUBY_FRAME = re.compile(r"^[^\S\n]*(?:from\s+)?((?:[A-Za-z]:)?[^\s:'\"`]+\.(?:rb|rake|erb)):(\d+):in [`']([^'`\n]+)'", re.M)
_PHP_FRAME = re.compile(r"^[^\S\n]*#\d+\s+((?:[A-Za-z]:)?[^\s(]+\.(?:php|phtml|inc))\((\d+)\):\s+([^\s(]+)\(", re.M)
_PHP_ERROR = re.compile(r"\bin ((?:[A-Za-z]:)?[^\s:]+\.(?:php|phtml|inc))(?: on line |:)(\d+)\b")
_DOTNET_FRAME = re.compile(r"^[^\S\n]*at\s+([^\s(]+)\([^\n]*?\)\s+in\s+(.+?\.(?:cs|vb|fs)):line (\d+)", re.M)
_RUST_PANIC = re.compile(r"panicked at (?:'[^'\n]*', |\"[^\"\n]*\", )?([^\s:'\"]+\.rs):(\d+)(?::\d+)?")
_RUST_FRAME = re.compile(r"^[^\S\n]*\d+:\s+(?:0x[0-9a-f]+ - )?([\w:<>$.{}\s]+?)\n\s+at\s+(\S+\.rs):(\d+)", re.M)
_NATIVE_FRAME = re.compile(
    r"^[^\S\n]*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?([^\n]*?)\s+(?:at\s+)?"
    r"((?:[A-Za-z]:)?[\w./\\+-]*[\w-]\.(?:c|h|cc|cpp|cxx|hpp|hh|hxx|m|mm|rs|go|swift|zig)):(\d+)(?::\d+)?\b",
    re.M,
)
"""A numbered backtrace frame, innermost first: gdb's `#4  0x… in jv_string_implode (j=...) at jv.c:717`, lldb's,
and a sanitizer's `#0 0x… in decUnitCompare src/decNumber/decNumber.c:6257`."""
_APPLE_FRAME = re.compile(
    r"^[^\S\n]*\d+\s+(?:\S+\s+)?0x[0-9a-fA-F]+\s+([^\n]+?)\s+\+\s+\d+\s+"
    r"(?:\(([^\s():]+\.(?:swift|m|mm|c|cc|cpp|h)):(\d+)\)|in\s+\S+\s+at\s+(\S+\.(?:swift|m|mm|c|cc|cpp|h)):(\d+))",
    re.M,
)
"""A frame of an Apple crash report (`0  MyApp  0x… Cart.total() + 120 (Cart.swift:42)`) or of Swift's backtracer
(`0 0x… Cart.total() + 120 in MyApp at /src/Cart.swift:42:5`): innermost first, the symbol before the offset."""
_SWIFT_NAME = re.compile(r"([A-Za-z_][\w.]*)\(")
_GENERIC_FRAME = re.compile(
    rf"(?<![{NAME_CHARS}/.\\\"'-])((?:[A-Za-z]:)?[{NAME_CHARS}./\\-]*[{NAME_CHARS}-]\."
    r"(?:c|h|cc|cpp|cxx|hpp|hh|rb|php|cs|swift|m|mm|lua|go|rs|py|js|ts|tsx|jsx|java|kt)):(\d+)(?::\d+)?"
    rf"(?![{NAME_CHARS}])"
)

_LIB_MARKERS = ("site-packages/", "dist-packages/", "node_modules/", "/pkg/mod/", "/.cargo/registry/", "/rustc/")


@dataclass(frozen=True)
class Frame:
    """One stack-trace frame as the report shows it."""

    path: str
    """File path as printed (may be absolute or a library path)."""
    line: int | None = None
    """Line number, when printed."""
    function: str | None = None
    """Function name, when printed."""
    language: str = "python"
    """Which runtime printed the trace (`python`, `javascript`, `java`, `go`, `rust`, `ruby`, `php`, `dotnet`,
    `native` for gdb, lldb and sanitizer backtraces, `generic`)."""

    @property
    def name(self) -> str:
        """The function's own name, without its class, module or namespace (`a::Cart::total` → `total`); "" if none."""
        return re.split(r"[.:]", self.function)[-1] if self.function else ""

    @property
    def innermost_last(self) -> bool:
        """Whether this frame's trace prints its innermost frame last: Python's tracebacks (and pytest's
        `path.py:12:` lines) do; compilers, sanitizers, loggers and the other runtimes print the primary location
        first."""
        return self.language == "python" or (self.language == "generic" and self.path.endswith((".py", ".pyx")))


def innermost_first(frames: Sequence[Frame]) -> list[Frame]:
    """The frames of a report, innermost first: each trace's own printed order read by `Frame.innermost_last`."""
    return [f for f in reversed(frames) if f.innermost_last] + [f for f in frames if not f.innermost_last]


def parse_frames(text: str) -> tuple[Frame, ...]:
    """Stack-trace frames of every runtime found in `text`, in printed order (per trace)."""
    text = text.replace("\r\n", "\n")
    found: list[tuple[int, Frame]] = []
    taken: set[tuple[str, int | str | None]] = set()

    def add(pos: int, frame: Frame) -> None:
        key = (frame.path, frame.line or frame.function)
        if key not in taken:
            taken.add(key)
            found.append((pos, frame))

    for m in _PY_FRAME.finditer(text):
        add(m.start(), Frame(m.group(1), int(m.group(2)), m.group(3), "python"))
    for m in _JAVA_FRAME.finditer(text):
        owner, method, file, line = m.groups()
        package = owner.rsplit(".", 1)[0] if "." in owner else ""
        cls_name = owner.rsplit(".", 1)[-1].split("$")[0]
        file = file or (f"{cls_name[:-2]}.kt" if cls_name.endswith("Kt") else f"{cls_name}.java")  # the class's file
        path = "/".join([*package.split(".")] + [file]) if package else file
        add(m.start(), Frame(path, int(line) if line else None, f"{cls_name}.{method}", "java"))
    for m in _DOTNET_FRAME.finditer(text):
        add(m.start(), Frame(m.group(2), int(m.group(3)), ".".join(m.group(1).split(".")[-2:]), "dotnet"))
    java = {pos for pos, f in found if f.language == "java"}
    for m in _DOTNET_BARE.finditer(text):
        owner = m.group(1)  # `Namespace.Class.`: a bare `at x.y()` is prose, `System.` the runtime's own frame
        if m.start() not in java and owner.count(".") > 1 and not owner.startswith(("System.", "Microsoft.")):
            cls_name = owner.split(".")[-2].split("+")[0]
            add(m.start(), Frame(f"{cls_name}.cs", None, f"{cls_name}.{m.group(2)}", "dotnet"))
    for m in _RUBY_FRAME.finditer(text):
        add(m.start(), Frame(m.group(1), int(m.group(2)), m.group(3).rsplit(" ", 1)[-1], "ruby"))
    for m in _PHP_FRAME.finditer(text):
        add(m.start(), Frame(m.group(1), int(m.group(2)), m.group(3), "php"))
    for m in _PHP_ERROR.finditer(text):
        add(m.start(), Frame(m.group(1), int(m.group(2)), None, "php"))
    for m in _GO_FRAME.finditer(text):
        add(m.start(), Frame(m.group(2), int(m.group(3)), m.group(1).rsplit("/", 1)[-1], "go"))
    for m in _RUST_FRAME.finditer(text):
        add(m.start(), Frame(m.group(2), int(m.group(3)), m.group(1).strip().split("::")[-1] or None, "rust"))
    for m in _RUST_PANIC.finditer(text):
        add(m.start(), Frame(m.group(1), int(m.group(2)), None, "rust"))
    for m in _JS_FRAME.finditer(text):
        path = m.group(2)
        if re.search(r"\.(?:java|kt|scala|groovy)$", path) or path.startswith("node:") or path.startswith("internal/"):
            continue
        fn = m.group(1)
        add(m.start(), Frame(path, int(m.group(3)), fn.split(" [as ")[0] if fn else None, "javascript"))
    for m in _APPLE_FRAME.finditer(text):
        name = _SWIFT_NAME.findall(m.group(1))  # `closure #1 in Cart.total()`, `specialized Cart.total(_:)`
        path, line = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
        add(m.start(), Frame(path, int(line), name[-1] if name else None, "native"))
    for m in _NATIVE_FRAME.finditer(text):
        function = re.split(r"\s*\(", m.group(1), maxsplit=1)[0].strip()
        add(m.start(), Frame(m.group(2), int(m.group(3)), function or None, "native"))
    for m in _GENERIC_FRAME.finditer(text):
        # `file:///app/lib/x.js:3` leaves `///app/lib/x.js` here, the JavaScript frame `/app/lib/x.js`: one frame
        path = re.sub(r"^/{2,}", "/", m.group(1).replace("\\", "/"))
        if (path, int(m.group(2))) not in taken and not any(f.path.endswith(path) for _, f in found):
            add(m.start(), Frame(path, int(m.group(2)), None, "generic"))
    found.sort(key=lambda item: item[0])
    return tuple(frame for _, frame in found)


def strip_frames(text: str) -> str:
    """The text without its stack-frame lines (the code lines a Python traceback quotes are kept)."""
    text = text.replace("\r\n", "\n")
    for pattern in (_PY_FRAME, _JAVA_FRAME, _DOTNET_FRAME, _DOTNET_BARE, _RUBY_FRAME, _PHP_FRAME, _GO_FRAME, _RUST_FRAME,
                    _JS_FRAME):
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return text


def normalize_frame_path(path: str) -> str:
    """A printed frame path reduced to its most repository-like suffix (library prefixes stripped)."""
    path = path.replace("\\", "/")
    if path.startswith("file://"):
        path = path[len("file://"):]
    for marker in _LIB_MARKERS:
        if marker in path:
            path = path.split(marker, 1)[1]
    path = re.sub(r"^[A-Za-z]:/", "", path)
    path = re.sub(r"^(?:\./)+", "", path)
    return path.lstrip("/")


def is_library_path(path: str) -> bool:
    """True when a printed path lies inside an installed dependency or the language runtime."""
    p = path.replace("\\", "/")
    return any(marker in p for marker in _LIB_MARKERS) or "/lib/python" in p and "site-packages" not in p


def match_path(printed: str, repo_files: Sequence[str] | PathMatcher) -> str | None:
    """The repository file a printed path refers to, by longest path-suffix match; None when none does."""
    matcher = repo_files if isinstance(repo_files, PathMatcher) else PathMatcher(repo_files)
    return matcher.match(printed)


class PathMatcher:
    """Maps printed paths (absolute, library, relative, package-qualified) to repository files."""

    def __init__(self, repo_files: Iterable[str]) -> None:
        self._by_name: dict[str, list[str]] = {}
        for path in repo_files:
            self._by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)

    def match(self, printed: str) -> str | None:
        """The repository file sharing the longest path suffix with a printed path; None when none or several do."""
        norm = normalize_frame_path(printed)
        parts = [p for p in norm.split("/") if p and p != "."]
        if not parts:
            return None
        candidates = self._by_name.get(parts[-1])
        if not candidates:
            return None
        best, best_len, ties = None, 0, 0
        for cand in candidates:
            cparts = cand.split("/")
            n = 0
            while n < len(parts) and n < len(cparts) and parts[-1 - n] == cparts[-1 - n]:
                n += 1
            if n > best_len:
                best, best_len, ties = cand, n, 1
            elif n == best_len:
                ties += 1
        # Several files ending the same way (`utils.py`, `migrations/0001_initial.py`): the printed path is none
        # of them in particular.
        return None if ties > 1 else best


def resolve_frames(frames: Sequence[Frame], repo_files: Sequence[str] | PathMatcher) -> list[tuple[Frame, str]]:
    """Frames that land inside the repository, paired with their file, in printed order."""
    matcher = repo_files if isinstance(repo_files, PathMatcher) else PathMatcher(repo_files)
    out = []
    for frame in frames:
        hit = matcher.match(frame.path)
        if hit is None and frame.language == "java" and frame.path.endswith(".java"):  # a Kotlin or Scala class's
            hit = next(filter(None, (matcher.match(frame.path[:-5] + ext) for ext in (".kt", ".scala"))), None)
        if hit is not None:
            out.append((frame, hit))
    return out
