"""`read_range`: numbered lines of one text file, streamed so huge files cost one pass."""

from __future__ import annotations

from dataclasses import dataclass, field

from funnel.errors import ToolError
from funnel.tools.sandbox import Sandbox, cap_bytes, printable
from repomap.encoding import open_utf8

__all__ = ("NumberedLine", "ReadResult", "read_range")

_CHUNK = 1 << 20


@dataclass
class NumberedLine:
    """One line of a file as shown to the agent."""

    number: int
    """1-based line number."""
    text: str
    """The line without its newline; invalid UTF-8 shown as `\\xNN` escapes; cut when over the cap."""
    cut_chars: int = 0
    """How many characters (bytes, for lines too long to decode) were cut from the end; 0 when whole."""


@dataclass
class ReadResult:
    """A range of numbered lines from one file, with the file's length and every cut stated."""

    path: str
    """Repository-relative POSIX path."""
    start: int
    """First line shown."""
    end: int
    """Last line shown (0 when the file is empty)."""
    total_lines: int
    """Lines in the whole file."""
    lines: list[NumberedLine]
    """The lines shown, in order."""
    requested_end: int | None = None
    """The end the caller asked for (None = to the end of the file)."""
    notes: list[str] = field(default_factory=list)
    """What was cut or adjusted, in words the agent can act on."""
    max_output_bytes: int = 24_000
    """Byte cap applied by `render`."""

    def render(self) -> str:
        """The text the agent sees: a header with the file length, numbered lines, then every cut stated."""
        if self.total_lines == 0:
            return f"{printable(self.path)} is empty (0 lines)."
        width = len(str(self.end))
        head = f"{printable(self.path)} lines {self.start}-{self.end} of {self.total_lines}"
        body = []
        for ln in self.lines:
            text = ln.text
            if ln.cut_chars:
                text += f"...[truncated {ln.cut_chars:,} more chars]"
            body.append(f"{ln.number:>{width}}| {text}")
        tail = [f"[{n}]" for n in self.notes]
        text = "\n".join([head, *body, *tail])
        return cap_bytes(text, self.max_output_bytes, hint="read a smaller range")


def read_range(sb: Sandbox, path: str, start: int = 1, end: int | None = None) -> ReadResult:
    """Numbered lines `start`..`end` (1-based, inclusive) of a text file in the repository.

    At most `limits.read_max_lines` lines per call and `limits.max_line_chars` characters per line; the
    result states the file's total line count and exactly what was cut. Raises `ToolError` for a binary
    file, a missing or refused path, or a range that starts past the end of the file.
    """
    lim = sb.limits
    if isinstance(start, bool) or not isinstance(start, int):
        raise ToolError(f"start must be a line number (integer >= 1), got {start!r}")
    if end is not None and (isinstance(end, bool) or not isinstance(end, int)):
        raise ToolError(f"end must be a line number (integer >= start) or omitted, got {end!r}")
    if start < 1:
        raise ToolError(f"start must be >= 1 (lines are numbered from 1), got {start}")
    if end is not None and end < start:
        raise ToolError(f"end ({end}) is before start ({start}); give end >= start")
    real = sb.resolve(path, kind="file")
    rel = sb.relative(real)
    if sb.is_binary(real):
        size = real.stat().st_size
        raise ToolError(f"Refused: {rel!r} is a binary file ({size:,} bytes); read_range only shows text files.")

    want_end = start + lim.read_max_lines - 1 if end is None else min(end, start + lim.read_max_lines - 1)
    byte_cap = lim.max_line_chars * 4 + 4
    collected, total = _scan(real, start, want_end, byte_cap)

    if total == 0:
        return ReadResult(rel, 0, 0, 0, [], requested_end=end, max_output_bytes=lim.max_output_bytes)
    if start > total:
        raise ToolError(
            f"{rel!r} has only {total} lines; start={start} is past the end. "
            f"Ask for a range within 1-{total}."
        )
    lines: list[NumberedLine] = []
    for number, data, full_len in collected:
        text = data.decode("utf-8", "backslashreplace").rstrip("\r\n")
        if len(text) > lim.max_line_chars or full_len > len(data):
            shown = text[: lim.max_line_chars]
            if full_len > len(data):
                cut = len(text) - len(shown) + (full_len - len(data))
            else:
                cut = len(text) - len(shown)
            lines.append(NumberedLine(number, shown, cut))
        else:
            lines.append(NumberedLine(number, text))
    shown_end = lines[-1].number if lines else start
    notes: list[str] = []
    asked_end = total if end is None else end
    if end is not None and end > total:
        notes.append(f"end={end} is past the end of the file; the file has {total} lines")
    if shown_end < min(asked_end, total):
        notes.append(
            f"showing {len(lines)} lines (limit {lim.read_max_lines} per call); "
            f"lines {shown_end + 1}-{min(asked_end, total)} not shown: call again with start={shown_end + 1}"
        )
    cut_lines = [ln.number for ln in lines if ln.cut_chars]
    if cut_lines:
        listed = ", ".join(map(str, cut_lines[:10])) + (" ..." if len(cut_lines) > 10 else "")
        notes.append(f"{len(cut_lines)} lines longer than {lim.max_line_chars} chars were cut: {listed}")
    return ReadResult(
        rel,
        start,
        shown_end,
        total,
        lines,
        requested_end=end,
        notes=notes,
        max_output_bytes=lim.max_output_bytes,
    )


def _scan(path, start: int, end: int, byte_cap: int) -> tuple[list[tuple[int, bytes, int]], int]:
    """One streaming pass: lines start..end (each at most `byte_cap` bytes, with its full length) and the line count.

    Chunks that hold no wanted line are only counted (`bytes.count`), so a 50 MB file costs one fast pass
    and a 5 MB single-line file never builds the whole line in memory.
    """
    out: list[tuple[int, bytes, int]] = []
    lineno = 1  # number of the line the next byte belongs to
    cur = bytearray()
    cur_len = 0
    last = b"\n"
    with open_utf8(path) as f:
        while chunk := f.read(_CHUNK):
            last = chunk[-1:]
            newlines = chunk.count(b"\n")
            if lineno > end or lineno + newlines < start:
                lineno += newlines
                continue
            pos = 0
            while pos < len(chunk):
                nl = chunk.find(b"\n", pos)
                stop = len(chunk) if nl == -1 else nl + 1
                if start <= lineno <= end:
                    piece = chunk[pos:stop]
                    room = byte_cap - len(cur)
                    if room > 0:
                        cur += piece[:room]
                    cur_len += len(piece)
                if nl == -1:
                    break
                if start <= lineno <= end:
                    data = bytes(cur)
                    out.append((lineno, data[:-1] if data.endswith(b"\n") else data, cur_len - 1))
                cur = bytearray()
                cur_len = 0
                lineno += 1
                pos = stop
                if lineno > end:
                    lineno += chunk.count(b"\n", pos)
                    break
    if last != b"\n":
        # the final line has no newline: it still counts, and may be wanted
        if start <= lineno <= end and cur_len:
            out.append((lineno, bytes(cur), cur_len))
        total = lineno
    else:
        total = lineno - 1
    return out, total
