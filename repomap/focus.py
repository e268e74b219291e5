"""What a bug report points at: identifiers, dotted names, paths and stack-trace frames.

Shared by the repo map (to personalize ranking) and the offline investigator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\b")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,5})\b")
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in (\S+))?')


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
    """Which runtime printed the trace."""


@dataclass(frozen=True)
class Focus:
    """The parts of a report that steer ranking; empty means no personalization."""

    identifiers: tuple[str, ...] = ()
    """Identifiers and dotted names in order of first mention."""
    paths: tuple[str, ...] = ()
    """File paths mentioned."""
    frames: tuple[Frame, ...] = field(default_factory=tuple)
    """Stack-trace frames, innermost last as printed."""

    @property
    def is_empty(self) -> bool:
        """True when the report mentions nothing to steer by."""
        return not (self.identifiers or self.paths or self.frames)

    @classmethod
    def from_text(cls, text: str) -> Focus:
        """Extract a focus from free report text."""
        frames = tuple(
            Frame(path=m.group(1), line=int(m.group(2)), function=m.group(3)) for m in _PY_FRAME.finditer(text)
        )
        paths = _unique(m.group(1) for m in _PATH.finditer(text) if "/" in m.group(1) or "." in m.group(1))
        idents = _unique(m.group(0) for m in _IDENT.finditer(text) if len(m.group(0)) > 2)
        return cls(identifiers=idents, paths=paths, frames=frames)


def _unique(items) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
