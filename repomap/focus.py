"""What a bug report points at: identifiers, dotted names, paths, stack-trace frames, messages and code.

Shared by the repo map (to personalize ranking) and the offline investigator. The stack-trace frames are read by
`repomap.frames`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repomap.frames import Frame, parse_frames, strip_frames
from repomap.pointers import FILE_PATH, NAME_CHARS, CodeLink, parse_links, quoted_lines

_IDENT = re.compile(
    rf"(?<![{NAME_CHARS}])[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(?![{NAME_CHARS}])"
)
_PATH = re.compile(rf"(?<![{NAME_CHARS}/.-]){FILE_PATH}(?![{NAME_CHARS}])")
_CODE_EXT = frozenset(
    "py pyi pyx js jsx mjs cjs ts tsx go java kt kts scala rs c h cc cpp cxx hpp hh hxx rb php cs swift m mm "
    "lua pl sh cfg ini toml yaml yml json txt rst md html css scss vue".split()
)

# --- report parts ---
_RUST_PANIC_MSG = re.compile(r"panicked at [^\n]{0,500}?:\n([^\n]{8,200})")  # bounded: linear over a line of repeats
_FENCE = re.compile(r"```[^`\n]*\n(.*?)(?:```|\Z)", re.S)  # an info string holds no backtick (CommonMark)
_WIKI_BLOCK = re.compile(r"^[ \t]*\{(code|noformat)(?::[^}\n]*)?\}(.*?)(?:\{\1\}|\Z)", re.S | re.M)
"""A code block in Jira's wiki markup (`{code:java}...{code}`, `{noformat}...{noformat}`): what a description of
Jira Server or Data Center (webhook API v2) and text copied out of Jira carry instead of a fence; it opens a line."""
_INDENTED = re.compile(r"(?:^(?: {4}|\t).*\n?){2,}", re.M)
_INLINE_CODE = re.compile(r"`([^`\n]{1,200})`")
_QUOTED = re.compile(
    rf"(?<![{NAME_CHARS}\\])(?:\"([^\"\n]{{8,200}})\"|'([^'\n]{{8,200}})')"
    r"|“([^”\n]{8,200})”|‘([^’\n]{8,200})’|「([^」\n]{8,200})」|『([^』\n]{8,200})』|«([^»\n]{8,200})»"
)
"""A quoted message: in straight quotes, or in the typographic quotes of English prose, Chinese, Japanese and
French (text pasted from a chat, a word processor or a tracker that curls its quotes)."""
_ERROR_LINE = re.compile(
    r"^[^\S\n]*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Panic|Failure))\s*:\s*(.{4,300})$", re.M
)
# The imported names: a parenthesized list (may span lines) or the rest of the line, never the next statement.
_PY_IMPORT = re.compile(
    r"^[^\S\n]*(?:>>>\s*|\.\.\.\s*)?from\s+([\w.]+)\s+import\s+(?:\(([^()]*)\)|\(?([\w \t,.*]+))", re.M
)
_PY_IMPORT_PLAIN = re.compile(r"^[^\S\n]*(?:>>>\s*|\.\.\.\s*)?import\s+([\w.]+(?:\s*,\s*[\w.]+)*)", re.M)
_JS_IMPORT = re.compile(r"""(?:from\s+|require\(\s*|import\(\s*)['"]([^'"\n]+)['"]""")
_JAVA_IMPORT = re.compile(r"^[^\S\n]*import\s+(?:static\s+)?([\w.]+)(?:\.\*)?\s*;", re.M)
_GO_IMPORT = re.compile(r'^[^\S\n]*(?:import\s+)?(?:\w+\s+)?"([\w./-]+)"\s*$', re.M)
_RUST_USE = re.compile(r"^[^\S\n]*use\s+([\w:]+)", re.M)
_OPTION = re.compile(rf"(?<![{NAME_CHARS}-])(--[a-z][{NAME_CHARS}-]{{2,}})")
_CONSTANT = re.compile(rf"(?<![{NAME_CHARS}])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![{NAME_CHARS}])")



@dataclass(frozen=True)
class Focus:
    """The parts of a report that steer ranking; empty means no personalization."""

    identifiers: tuple[str, ...] = ()
    """Identifiers and dotted names in order of first mention."""
    paths: tuple[str, ...] = ()
    """File paths mentioned."""
    frames: tuple[Frame, ...] = field(default_factory=tuple)
    """Stack-trace frames, innermost last as printed."""
    code_blocks: tuple[str, ...] = ()
    """Fenced or indented code and log blocks, verbatim."""
    code_identifiers: tuple[str, ...] = ()
    """Identifiers written as code: inline backticks and names used inside code blocks."""
    messages: tuple[str, ...] = ()
    """Error messages and quoted strings worth a literal search, most specific first."""
    errors: tuple[str, ...] = ()
    """Exception or error type names raised in the report (`ValueError`, `NullPointerException`)."""
    imports: tuple[str, ...] = ()
    """Module paths imported in the report's code (`a.b.c`, `./lib/x`, `github.com/o/r/pkg`, `a::b`)."""
    imported_names: tuple[str, ...] = ()
    """Names brought in by those imports (`from a import X` gives `X`)."""
    options: tuple[str, ...] = ()
    """Command-line options and setting constants (`--verbose`, `DEFAULT_AUTO_FIELD`)."""
    quoted_code: tuple[str, ...] = ()
    """Source lines the report quotes (code blocks and inline code; stack-frame lines, prompts, comments and
    imports left out), whitespace-trimmed: where one stands verbatim in the tree, the reporter points at it."""
    links: tuple[CodeLink, ...] = ()
    """Lines of files the reporter points at outside a stack trace: permalinks, "line 77 of a/b.py"."""

    @property
    def is_empty(self) -> bool:
        """True when the report mentions nothing to steer by."""
        return not (self.identifiers or self.paths or self.frames)

    @classmethod
    def from_text(cls, text: str) -> Focus:
        """Extract a focus from free report text."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        frames = parse_frames(text)
        blocks = code_blocks(text)
        code = "\n".join(blocks)
        inline = [m.group(1).strip() for m in _INLINE_CODE.finditer(text)]
        links = parse_links(strip_frames(text))  # a frame line (`File ".../a.py", line 3`) is the frame's, not a link
        paths = _unique(
            [m.group(1)
             for m in _PATH.finditer(text)
             if m.group(1).rsplit(".", 1)[-1].lower() in _CODE_EXT and not m.group(1)[0].isdigit()]
            + [link.path for link in links]
        )
        idents = _unique(m.group(0) for m in _IDENT.finditer(text) if len(m.group(0)) > 2)
        code_idents = _unique(
            [m.group(0) for chunk in inline for m in _IDENT.finditer(chunk) if len(m.group(0)) > 2]
            + [m.group(0) for m in _IDENT.finditer(code) if len(m.group(0)) > 2]
        )
        imports, imported = _imports(code + "\n" + "\n".join(inline))
        errors = _unique(m.group(1) for m in _ERROR_LINE.finditer(text))
        messages = _messages(text)
        options = _unique([m.group(1) for m in _OPTION.finditer(text)] + [m.group(1) for m in _CONSTANT.finditer(text)])
        return cls(
            identifiers=idents,
            paths=paths,
            frames=frames,
            code_blocks=blocks,
            code_identifiers=code_idents,
            messages=messages,
            errors=errors,
            imports=imports,
            imported_names=imported,
            options=options,
            links=links,
            quoted_code=quoted_lines([strip_frames(block) for block in blocks], inline),
        )


def code_blocks(text: str) -> tuple[str, ...]:
    """The fenced code and log blocks of a report (Markdown fences, Jira's `{code}` / `{noformat}`), or, when it has
    none, its indented ones, verbatim (`Focus.code_blocks`)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fenced = [m.group(1) for m in _FENCE.finditer(text)] + [m.group(2) for m in _WIKI_BLOCK.finditer(text)]
    blocks = tuple(b for b in (block.strip("\n") for block in fenced) if b.strip())
    return blocks or tuple(m.group(0).strip("\n") for m in _INDENTED.finditer(text))


def module_candidates(module: str) -> list[str]:
    """Repository paths a dotted or slashed module name may live at (`a.b.c` → `a/b/c.py`, `a/b/c/__init__.py`...)."""
    mod = module.strip().strip("'\"")
    if not mod or mod.startswith("."):
        mod = mod.lstrip("./")
    if "::" in mod:
        parts = [p for p in mod.split("::") if p not in ("crate", "self", "super")]
        base = "/".join(parts)
        return [f"{base}.rs", f"{base}/mod.rs", f"src/{base}.rs", f"src/{base}/mod.rs"]
    if "/" in mod:
        base = mod
        return [base, f"{base}.js", f"{base}.ts", f"{base}/index.js", f"{base}/index.ts", f"{base}.go"]
    base = mod.replace(".", "/")
    return [f"{base}.py", f"{base}/__init__.py", f"{base}.java", f"{base}.kt", f"{base}.js", f"{base}.ts"]


def _imports(code: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    modules: list[str] = []
    names: list[str] = []
    for m in _PY_IMPORT.finditer(code):
        modules.append(m.group(1))
        for part in (m.group(2) if m.group(2) is not None else m.group(3)).split(","):
            words = part.split()
            name = words[0] if words else ""  # `b as c` imports b
            if name and name != "*" and name.isidentifier():
                names.append(name)
                modules.append(f"{m.group(1)}.{name}")
    for m in _PY_IMPORT_PLAIN.finditer(code):
        modules.extend(part.strip().split(" as ")[0] for part in m.group(1).split(","))
    modules.extend(m.group(1) for m in _JS_IMPORT.finditer(code))
    for m in _JAVA_IMPORT.finditer(code):
        modules.append(m.group(1))
        names.append(m.group(1).rsplit(".", 1)[-1])
    modules.extend(m.group(1) for m in _GO_IMPORT.finditer(code))
    modules.extend(m.group(1) for m in _RUST_USE.finditer(code))
    return _unique(modules), _unique(names)


def _messages(text: str) -> tuple[str, ...]:
    found = [m.group(2).strip() for m in _ERROR_LINE.finditer(text)]
    found += [m.group(1) for m in _RUST_PANIC_MSG.finditer(text)]
    for m in _QUOTED.finditer(text):
        s = next(g for g in m.groups() if g).strip()
        if " " in s and not s.startswith(("http", "/")):
            found.append(s)
    return _unique(s for s in found if len(s) >= 8)


def _unique(items) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
