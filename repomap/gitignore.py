"""Gitignore patterns compiled to regexes: one `.gitignore`'s lines as groups of rules matched "last match wins"."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ("RuleGroup", "compile_patterns")


@dataclass(frozen=True)
class RuleGroup:
    """A run of gitignore rules of one polarity from one `.gitignore`, as (at most) four regexes.

    Only negation changes the outcome of "last match wins", so a run without a change of polarity can be
    tested as one alternation. Rules without a `/` that cannot match one (no `[...]`, no `**`) are also
    compiled without their `(?:.*/)?` lead, matched against the last path component only: the same verdict
    (the lead can only skip whole leading components), without scanning the path once per rule.
    """

    base: str
    any_re: re.Pattern[str] | None
    dir_re: re.Pattern[str] | None
    negate: bool
    name_any_re: re.Pattern[str] | None = None
    """The basename rules of `any_re`, without their lead."""
    name_dir_re: re.Pattern[str] | None = None
    """The basename rules of `dir_re`, without their lead."""
    path_any_re: re.Pattern[str] | None = None
    """The other rules of `any_re`."""
    path_dir_re: re.Pattern[str] | None = None
    """The other rules of `dir_re`."""

    def matches(self, sub: str, is_dir: bool) -> bool:
        """True when the path `sub` (relative to `base`) matches a rule of the run."""
        if "\n" in sub:  # `.` of the lead does not cross a newline: only the full rules say it right
            if self.any_re is not None and self.any_re.match(sub):
                return True
            return is_dir and self.dir_re is not None and self.dir_re.match(sub) is not None
        name = sub[sub.rfind("/") + 1 :]
        if self.name_any_re is not None and self.name_any_re.match(name):
            return True
        if self.path_any_re is not None and self.path_any_re.match(sub):
            return True
        if not is_dir:
            return False
        if self.name_dir_re is not None and self.name_dir_re.match(name):
            return True
        return self.path_dir_re is not None and self.path_dir_re.match(sub) is not None


_LEAD = "(?:.*/)?"
"""What an unanchored rule's regex starts with (any leading directories)."""


def _alternation(bodies: list[str]) -> re.Pattern[str] | None:
    return re.compile("(?:" + "|".join(bodies) + r")\Z") if bodies else None


def _name_body(line_body: str, raw: str) -> str | None:
    """The lead-less regex of an unanchored rule that cannot match a `/`, else None."""
    glob = raw.lstrip("!").strip()
    if not line_body.startswith(_LEAD) or "[" in glob or "**" in glob or "/" in glob.rstrip("/"):
        return None
    return line_body[len(_LEAD) :]


def _translate(pattern: str) -> str:
    """Translate the glob part of one gitignore pattern (already stripped of `!`, anchors and `/`) to a regex."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before_ok = i == 0 or pattern[i - 1] == "/"
                after = pattern[i + 2 : i + 3]
                if before_ok and after == "/":
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before_ok and i + 2 == n:
                    out.append(".*")
                    i += 2
                    continue
                out.append("[^/]*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _parse_line(line: str) -> tuple[str, bool, bool] | None:
    """One gitignore line to (regex body, negate, dir_only), or None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    stripped = line.rstrip(" ")
    if stripped != line and stripped.endswith("\\"):
        stripped += " "
    line = stripped
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _translate(line)
    if not anchored:
        body = "(?:.*/)?" + body
    return body, negate, dir_only


def compile_patterns(lines: list[str] | tuple[str, ...], base: str = "") -> tuple[RuleGroup, ...]:
    """Compile gitignore lines found in directory `base` (repository-relative, "" for the root)."""
    groups: list[RuleGroup] = []
    runs: dict[str, list[str]] = {"any": [], "dir": [], "name_any": [], "name_dir": [], "path_any": [], "path_dir": []}
    polarity: bool | None = None

    def flush() -> None:
        if polarity is None or not (runs["any"] or runs["dir"]):
            return
        res = {k: _alternation(v) for k, v in runs.items()}
        groups.append(RuleGroup(base, res["any"], res["dir"], polarity, res["name_any"], res["name_dir"],
                             res["path_any"], res["path_dir"]))

    for raw in lines:
        parsed = _parse_line(raw)
        if parsed is None:
            continue
        body, negate, dir_only = parsed
        if polarity is not None and negate != polarity:
            flush()
            runs = {k: [] for k in runs}
        polarity = negate
        kind = "dir" if dir_only else "any"
        runs[kind].append(body)
        name = _name_body(body, raw)
        if name is not None:
            runs["name_" + kind].append(name)
        else:
            runs["path_" + kind].append(body)
    flush()
    return tuple(groups)
