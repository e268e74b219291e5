"""The evidence signals of the offline ranking: one small function per signal, combined by `SIGNALS`.

Each signal reads the report (`Report`) and writes what it found into the shared `Evidence`: a file's part for
the signal (`bump` keeps the strongest value), the reasons people read, the lines the evidence points at, and
bonuses for the definitions it points into. `SIGNALS` is the one table of signals, in the order they run (the
order matters: a file's parts are summed in the order they were first set), each with the `RankConfig` weight
it scales.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from funnel.inline import code_span
from funnel.localize.candidates import RankConfig
from funnel.localize.corpus import Corpus, FileDoc, SymbolSpan
from funnel.localize.evidence import literal_keys
from funnel.localize.file_kinds import is_code
from funnel.localize.names import is_plain_mention, plain_mention_reason, prose_form
from repomap.focus import Focus, module_candidates
from repomap.frames import Frame, PathMatcher, innermost_first, resolve_frames
from repomap.pointers import fold

__all__ = ("SIGNALS", "Evidence", "Report", "frame_line", "moved_frame_reason")

_MIN_MENTION_LEN = 4


def _module_file(pieces: list[str], matcher: PathMatcher) -> str | None:
    """The file of the module a qualified name `a.b.c.func` (or `a.b.C.method`) is written under: `a/b/c.py`, matched
    by whole path suffix (`src/a/b/c.py`, `src/main/java/a/b/C.java`)."""
    for cut in (len(pieces) - 1, len(pieces) - 2):
        for cand in module_candidates(".".join(pieces[:cut])):
            hit = matcher.match(cand)
            if hit is not None and (hit == cand or hit.endswith("/" + cand)):
                return hit
    return None


@dataclass(frozen=True)
class Report:
    """The report as the signals read it."""

    text: str
    """Title and body."""
    focus: Focus
    """What the report points at (frames, paths, imports, options, identifiers, messages)."""
    pagerank: Mapping[str, float] | None = None
    """The repo map's PageRank per path, when known."""
    history: Mapping[str, float] | None = None
    """History scores per path (files past commits resembling the report changed), when known."""


@dataclass
class Evidence:
    """What the signals found, per file (by index in `corpus.docs`) and per definition (file index, symbol index)."""

    corpus: Corpus
    parts: list[dict[str, float]]
    """Each file's contribution per signal, in the order the signals first set them."""
    reasons: list[list[str]] = field(default_factory=list)
    lines: list[list[int]] = field(default_factory=list)
    sym_bonus: dict[tuple[int, int], float] = field(default_factory=dict)
    sym_reasons: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    quoted_lines: dict[int, int] = field(default_factory=dict)
    """File index → the line holding the first message fragment the report quotes (`messages`)."""
    matcher: PathMatcher | None = None
    names: Mapping[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Every definition name of the corpus -> (file index, symbol index) of its definitions."""

    def __post_init__(self) -> None:
        docs = self.corpus.docs
        self.reasons = self.reasons or [[] for _ in docs]
        self.lines = self.lines or [[] for _ in docs]
        self.matcher = self.matcher or PathMatcher([d.path for d in docs])
        if not self.names:
            self.names = self.corpus.names

    @property
    def docs(self) -> list[FileDoc]:
        """The corpus' files."""
        return self.corpus.docs

    def bump(self, i: int, key: str, value: float, why: str) -> None:
        """Raise file `i`'s part `key` to `value` (the strongest evidence counts) and note why."""
        if value > self.parts[i].get(key, 0.0):
            self.parts[i][key] = value
        if why not in self.reasons[i]:
            self.reasons[i].append(why)

    def enclosing(self, i: int, line: int) -> int | None:
        """The innermost definition of file `i` around a line."""
        best = None
        symbols = self.docs[i].symbols
        for j, s in enumerate(symbols):
            if s.start_line <= line <= s.end_line and (best is None or s.start_line >= symbols[best].start_line):
                best = j
        return best

    def point_at(self, i: int, line: int, bonus: float, why: str) -> None:
        """Evidence at a line of file `i`: noted as a line, and a bonus for the definition around it."""
        self.lines[i].append(line)
        j = self.enclosing(i, line)
        if j is not None:
            self.sym_bonus[(i, j)] = self.sym_bonus.get((i, j), 0.0) + bonus
            self.sym_reasons.setdefault((i, j), []).append(why)


def frames(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Stack frames resolved into the repository: the innermost in-repository frame strongest."""
    for depth, (frame, path) in enumerate(resolve_frames(innermost_first(report.focus.frames), ev.matcher)):
        i = ev.corpus.by_path[path]
        value = weight if depth == 0 else weight * config.frame_decay / depth
        printed = frame.path + (f":{frame.line}" if frame.line else "")
        ev.bump(i, "frame", value, f"stack frame {printed}" + (f" in {frame.function}" if frame.function else ""))
        line = frame_line(ev.docs[i].symbols, frame)
        if line:
            why = f"stack frame line {frame.line}" if line == frame.line else (
                moved_frame_reason(frame) if frame.line else f"stack frame in {frame.function}")
            ev.point_at(i, line, value, why)


def moved_frame_reason(frame: Frame) -> str:
    """The reason a frame gives the definition its function names when the line it printed lies outside it."""
    return f"stack frame in {frame.function} (the trace's line {frame.line} lies outside it at this commit)"


def frame_line(symbols: list[SymbolSpan], frame: Frame) -> int:
    """The line of a file a stack frame points at: its printed line, or the first line of the definition its function
    names when that line lies in no definition of the name (the reporter ran another version of the file, where the
    code sat elsewhere) or none was printed. Among several definitions of the name, the one nearest the printed line;
    0 when the frame points at no line."""
    named = [s for s in symbols if s.name == frame.name] if frame.name else []
    line = frame.line or 0
    if not named or any(s.start_line <= line <= s.end_line for s in named):
        return line
    return min(named, key=lambda s: (min(abs(s.start_line - line), abs(s.end_line - line)), s.start_line)).start_line


def paths(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Paths mentioned in the report."""
    credited: set[str] = set()
    for p in report.focus.paths:
        hit = ev.matcher.match(p)
        if hit is not None and hit not in credited:  # `a/x.h`, `b/x.h` and `x.h` of a diff name one file
            credited.add(hit)
            ev.bump(ev.corpus.by_path[hit], "path", weight, f"report mentions {p}")


def links(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Lines the report points at outside a stack trace (a permalink, "line 77 of a/b.py"): the line, and a bonus
    for the definition around it (the file itself counts through `paths`)."""
    for link in report.focus.links:
        hit = ev.matcher.match(link.path)
        if hit is not None:
            line = link.line_in(ev.corpus.texts[hit]) if link.text else link.line
            ev.point_at(ev.corpus.by_path[hit], line, weight, f"the report points at line {line}")


def quotes(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Source lines the report quotes, where one stands as a whole line in at most three code files: the line, and
    a bonus for the definition around it, once per definition (a reporter pastes a caller's lines as context, so
    the more lines quoted from a definition, the likelier they are the context, not the fault)."""
    texts, by_path = ev.corpus.texts, ev.corpus.by_path
    pointed: set[tuple[int, int]] = set()
    credited: set[tuple[int, int | None]] = set()
    holding = ev.corpus.find_literals(report.focus.quoted_code) if report.focus.quoted_code else {}
    lines: dict[str, list[str]] = {}  # each file split once, whatever the number of quotes it holds
    for quote, paths in holding.items():
        code = [p for p in paths if is_code(p)]
        for p in code:
            if p not in lines:
                lines[p] = [fold(line) for line in texts[p].split("\n")]
        found = [(by_path[p], n) for p in code for n, line in enumerate(lines[p], 1) if line == quote]
        files = {i for i, _ in found}
        if not 0 < len(files) <= 3:
            continue
        for i, n in found:
            if (i, n) in pointed:
                continue
            pointed.add((i, n))
            owner = (i, ev.enclosing(i, n))
            if owner in credited:
                ev.lines[i].append(n)
            else:
                credited.add(owner)
                ev.point_at(i, n, weight / len(files), f"the report quotes line {n}")


def imports(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Modules imported in the report's code."""
    by_path = ev.corpus.by_path
    for k, module in enumerate(report.focus.imports):
        for cand in module_candidates(module):
            if cand in by_path:
                ev.bump(by_path[cand], "import", weight / (1 + 0.1 * k), f"report imports {module}")
                break


def stems(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """File names written in the report (`sqlmigrate`, `autodetector`): rarer stems count more."""
    found: dict[str, list[int]] = {}
    for i, d in enumerate(ev.docs):
        stem = d.path.rsplit("/", 1)[-1].split(".")[0]
        if len(stem) >= 5 and not stem.startswith("__"):
            found.setdefault(stem.lower(), []).append(i)
    written: dict[str, str] = {}  # the word as the report first writes it (`JsonFactory`, not `jsonfactory`)
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]{4,}", report.text):
        written.setdefault(word.lower(), word)
    for stem, idxs in found.items():
        if stem in written and len(idxs) <= 3:
            for i in idxs:
                ev.bump(i, "stem", weight / len(idxs), f"report names `{written[stem]}`, this file's name")


def constants(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Settings and constants the report names, where they are assigned at top level."""
    texts, by_path = ev.corpus.texts, ev.corpus.by_path
    for const in [o for o in report.focus.options if not o.startswith("-")][:10]:
        pattern = re.compile(rf"^{re.escape(const)}\s*[:=]", re.M)
        found = [p for p in ev.corpus.find_literal(const) if pattern.search(texts[p])]
        if 0 < len(found) <= 3:
            for p in found:
                i = by_path[p]
                m = pattern.search(texts[p])
                line = texts[p].count("\n", 0, m.start()) + 1 if m else 1
                ev.bump(i, "constant", weight / len(found), f"assigns `{const}` named in the report (line {line})")
                ev.lines[i].append(line)


def mentions(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Definitions named in the report (rarer and qualified names count more); a fully qualified name of the prose
    also points at the module file it is written under (`w_module_path`)."""
    focus, docs, names = report.focus, ev.docs, ev.names
    code_idents = set(focus.code_identifiers)
    # Names printed in stack frames are scored by the frames themselves.
    frame_names = {f.name for f in focus.frames if f.function}
    for ident in focus.identifiers:
        if re.split(r"\.|::", ident)[-1] in frame_names:
            continue
        pieces = re.split(r"\.|::", ident)
        name = pieces[-1]
        if len(name) < _MIN_MENTION_LEN or name not in names:
            continue
        hits = names[name]
        qualifier = pieces[-2] if len(pieces) > 1 else None
        if qualifier:
            qualified = [(i, j) for i, j in hits if docs[i].symbols[j].qualname.split(".")[-2:-1] == [qualifier]
                         or docs[i].path.rsplit("/", 1)[-1].split(".")[0] == qualifier]
            if qualified:
                hits = qualified
        rarity = 1.0 / (1.0 + math.log(len(hits)))
        strength = weight * rarity * (1.5 if ident in code_idents else 1.0) * (1.3 if qualifier else 1.0)
        plain = is_plain_mention(ident, code_idents)
        if plain:
            strength *= config.prose_mention_factor
        form = prose_form(name, report.text) if plain else None  # once per name, not per definition it names
        if config.w_module_path > 0 and len(pieces) >= 3 and ident not in code_idents:
            module_file = _module_file(pieces, ev.matcher)
            if module_file is not None and any(docs[i].path == module_file for i, _ in hits):
                ev.bump(ev.corpus.by_path[module_file], "path", config.w_module_path, f"report names `{ident}`, defined here")
        for i, j in hits[:25]:
            qualname = docs[i].symbols[j].qualname
            ev.bump(i, "mention", min(strength, weight * 1.5),
                    plain_mention_reason(qualname, name, form) if plain
                    else f"defines {code_span(qualname)} named in the report")
            ev.sym_bonus[(i, j)] = max(ev.sym_bonus.get((i, j), 0.0), strength)
            ev.sym_reasons.setdefault((i, j), []).append("named in the report")


def messages(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Literal messages quoted in the report, in at most five files."""
    texts, by_path = ev.corpus.texts, ev.corpus.by_path
    for message in report.focus.messages[:8]:
        for key in literal_keys(message):
            found = ev.corpus.find_literal(key)
            if 0 < len(found) <= 5:
                for p in found:
                    i = by_path[p]
                    line = texts[p].count("\n", 0, texts[p].index(key)) + 1
                    ev.bump(i, "message", weight / len(found), f"contains the message “{key[:60]}” (line {line})")
                    ev.point_at(i, line, weight, f"contains the quoted message (line {line})")
                    ev.quoted_lines.setdefault(i, line)
                break


def pagerank(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """The repo map's PageRank (normalized to the best file): where the project's work happens."""
    if not report.pagerank:
        return
    top_pr = max(report.pagerank.values()) or 1.0
    for i, d in enumerate(ev.docs):
        pr = report.pagerank.get(d.path)
        if pr:
            ev.parts[i]["pagerank"] = weight * math.sqrt(pr / top_pr)


def history(ev: Evidence, report: Report, weight: float, config: RankConfig) -> None:
    """Files that past commits resembling the report changed (normalized to the best file)."""
    if not report.history or weight <= 0:
        return
    by_path = ev.corpus.by_path
    known = {by_path[path]: h for path, h in report.history.items() if path in by_path and h > 0}
    top_h = max(known.values(), default=0.0)
    for i, h in known.items():
        ev.parts[i]["history"] = weight * h / top_h
        if h >= top_h / 2:
            ev.reasons[i].append("changed by past commits whose messages resemble the report")


Signal = Callable[[Evidence, Report, float, RankConfig], None]
"""A signal: reads the report, writes evidence, scaled by its weight."""

SIGNALS: tuple[tuple[Signal, str], ...] = (
    (frames, "w_frame"),
    (paths, "w_path"),
    (links, "w_link"),
    (quotes, "w_quote"),
    (imports, "w_import"),
    (stems, "w_stem"),
    (constants, "w_constant"),
    (mentions, "w_mention"),
    (messages, "w_message"),
    (pagerank, "w_pagerank"),
    (history, "w_history"),
)
"""Every evidence signal with the `RankConfig` field holding its weight, in the order they run. File and
definition BM25 (`w_file`, `w_symbol`) and the order-only lifts are applied by `funnel.localize.rank.rank`."""
