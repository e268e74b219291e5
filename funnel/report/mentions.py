"""The file citations a diagnosis' prose makes (the summary, the root cause's explanation and evidence bullets, the
proposed changes' descriptions), checked against the repository: a cited file that does not exist, or a line past a
file's end, is never passed on as a fact.

An evidence bullet that cites such a location is dropped into `rejected` (kind `citation`) with the reason; a
summary, explanation or description keeps its text (a sentence cannot be cut cleanly) and gains a closing note
naming what the repository does not bear out, each such citation recorded in `rejected` too.
A path outside the repository (an absolute path, an installed library's frame) is not a claim about the repository
and is not checked, nor is text in quotation marks (what the report or a log says), nor a bare file name
without a line (`settings.py` named in passing), nor words with a slash (`and/or`: only a name with a known
extension is a file). A short name (`core.h:2892`, no folder) means the diagnosis' cited file of that name, when it
cites one (several: not judged); a path that does not resolve may still name a file: under a prefix (a patch's
`a/`, a checkout folder), or the one file of the tree whose path ends with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from funnel.report._locations import Location, known_ext, prose_locations
from funnel.report.repo_files import RepoFiles
from funnel.report.template import format_location
from schemas.diagnosis import RejectedClaim

__all__ = ("ProseCheck",)

_OUTSIDE = ("/", "~", "\\")
_QUOTED = re.compile(r"“[^”\n]*”|\"[^\"\n]*\"|\b(?:stack frame|report mentions) `?\S+")
"""Text quoted from the report or a log (an error naming a data file, a frame of its trace, a path it mentions, as
the ranking's reasons quote them): what someone else wrote, not a claim."""
_LIBRARY_DIRS = ("site-packages/", "dist-packages/", "node_modules/", "<frozen", "<string>")


class ProseCheck:
    """Checks the citations of a diagnosis' prose against one repository, collecting what does not hold."""

    def __init__(self, repo: RepoFiles, cited: Sequence[str] = ()) -> None:
        self.repo = repo
        self.cited = list(cited)
        """The diagnosis' cited files: what a short name in its prose (`core.h:2892`) most likely means."""
        self.rejected: list[RejectedClaim] = []
        """Each dropped bullet and each citation of an annotated text that does not hold, with why."""
        self.checked = 0
        """Citations of repository files examined."""

    def annotate(self, text: str, where: str, *, lines_only: bool = False) -> str:
        """`text` (the summary, the explanation, a proposed change's description: `where`), closed with a note
        naming what the repository does not bear out when it cites such a location; with `lines_only`, a path
        without a line is no claim (a change may name the new file it creates)."""
        problems = self._problems(text, lines_only=lines_only)
        for cited, _, why in problems:
            self.rejected.append(RejectedClaim(kind="citation", claim={**cited, "text": where}, reason=why))
        if not problems:
            return text
        listed = "; ".join(f"`{_written(cited)}` ({short})" for cited, short, _ in problems)
        return f"{text.rstrip()}\n\n(Not borne out by the repository: {listed}.)"

    def keep(self, bullets: list[str]) -> list[str]:
        """The evidence bullets whose citations all hold; the others are dropped into `rejected`."""
        kept = []
        for bullet in bullets:
            if problems := self._problems(bullet):
                cited, _, why = problems[0]
                self.rejected.append(RejectedClaim(kind="citation", claim={**cited, "text": bullet}, reason=why))
            else:
                kept.append(bullet)
        return kept

    def _problems(self, text: str, *, lines_only: bool = False) -> list[tuple[dict[str, str | int | None], str, str]]:
        """(the citation as `path`, `line_start`, `line_end`; why in brief; why in full) for each citation of a
        repository file in `text` that does not hold."""
        found: list[tuple[dict[str, str | int | None], str, str]] = []
        for path, start, end in dict.fromkeys(prose_locations(_QUOTED.sub(" ", text))):
            if path.startswith(_OUTSIDE) or any(d in path for d in _LIBRARY_DIRS) or ":" in path:
                continue
            if not known_ext(path.rsplit("/", 1)[-1]) or (start is None and ("/" not in path or lines_only)):
                continue  # words with a slash (`and/or`), a file named in passing (`settings.py`): no location
            self.checked += 1
            if why := _problem(self.repo, (path, start, end), self.cited):
                found.append(({"path": path, "line_start": start, "line_end": end}, *why))
        return found


def _problem(repo: RepoFiles, location: Location, cited: Sequence[str]) -> tuple[str, str] | None:
    """Why a cited location does not hold (no such file, a line past its end), in brief and in full; None when it
    holds or cannot be judged (a withheld or binary file, a name several files could be). A short name is first read
    as the diagnosis' cited file it ends (`Types.java`, cut by the token scan from `$Gson$Types.java`)."""
    path, start, end = location
    spelled = repo.spell(path)
    tail = re.compile(rf"(?:^|[^\w.-]){re.escape(spelled.strip('/'))}$")
    ours = sorted({c for c in cited if tail.search(c)}) if "/" not in spelled else []
    if len(ours) > 1:
        return None
    rel, why = (ours[0], None) if ours else repo.resolve(spelled)
    if rel is None:
        if not why or not why.startswith("Not found"):
            return None
        found = _named(repo, spelled, tail)
        if found is None:
            return "no such file", why.removeprefix("Not found: ")
        if not found:
            return None
        rel = found
    last = max(start or 0, end or 0)
    lines = repo.lines(rel) if last else None
    if lines is not None and last > len(lines):
        size = f"{len(lines)} line" + ("" if len(lines) == 1 else "s")
        return f"the file has {size}", f"line {last} is past the end of `{rel}` ({size})."
    return None


def _named(repo: RepoFiles, spelled: str, tail: re.Pattern[str]) -> str | None:
    """The file a path that does not resolve names all the same: a path under a prefix (a patch's `a/`, a
    checkout's folder: `go-zero/rest/engine.go`), else the one file of the tree whose path ends with it (`config.py`
    for `src/app/config.py`); "" when several could be, None when none is."""
    parts = spelled.strip("/").split("/")
    for k in range(1, len(parts)):
        if (rel := repo.resolve("/".join(parts[k:]))[0]) is not None:
            return rel
    same = [p for p in repo.same_name(spelled) if tail.search(p)]
    return same[0] if len(same) == 1 else ("" if same else None)


def _written(cited: dict[str, str | int | None]) -> str:
    """A citation as `path:start-end`."""
    return format_location(str(cited["path"]), cited["line_start"], cited["line_end"])
