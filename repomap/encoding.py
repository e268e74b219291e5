"""Source text in the encodings real trees hold: UTF-8, with a byte-order mark or without, and UTF-16 with its
byte-order mark, as Windows PowerShell (`>`, `Out-File`) and older Visual Studio projects save a file. A UTF-16 file
is transcoded to UTF-8 where it is read (`repomap.gate.read_regular`, `open_utf8`), so everything past the reading
gate sees UTF-8 with the same lines: the map's tags, the tools, the offline investigator and the verifier agree with
ripgrep, which transcodes such a file the same way."""

from __future__ import annotations

import codecs
import io
from pathlib import Path
from typing import BinaryIO

__all__ = ("SNIFF_BYTES", "byte_order_mark", "file_looks_binary", "line_count", "looks_binary", "open_utf8", "to_utf8",
           "utf16")

SNIFF_BYTES = 8192
"""How much of a file's head `file_looks_binary` reads by default: the 8 KiB git and ripgrep look at."""

_MARKS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
          (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
"""Byte-order marks and the codecs they name, UTF-32's first: its little-endian mark begins with UTF-16's."""


def line_count(text: str) -> int:
    """How many lines a file's text has: a final newline ends the last line, it starts none."""
    return text.count("\n") + (not text.endswith("\n"))


def byte_order_mark(head: bytes) -> tuple[bytes, str] | None:
    """The byte-order mark `head` begins with and the codec it names, or None."""
    return next(((mark, codec) for mark, codec in _MARKS if head.startswith(mark)), None)


def utf16(head: bytes) -> str | None:
    """The codec of a file whose first bytes are `head` when they are UTF-16's byte-order mark, else None (a UTF-32
    file's stays None)."""
    found = byte_order_mark(head)
    return found[1] if found is not None and found[1].startswith("utf-16") else None


def to_utf8(data: bytes) -> bytes:
    """`data` as UTF-8 when it is UTF-16 with a byte-order mark (the mark dropped, an odd last byte of a cut head
    dropped, an unpaired surrogate replaced); any other bytes unchanged."""
    codec = utf16(data)
    if codec is None:
        return data
    body = data[2 : len(data) - (len(data) % 2)]
    return body.decode(codec, errors="replace").encode("utf-8")


def looks_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` is binary: a NUL byte in them, the rule git and ripgrep use, unless
    they are UTF-16 text, whose NUL bytes are half its ASCII characters."""
    return b"\0" in head and utf16(head) is None


def file_looks_binary(path: str | Path, sniff_bytes: int = SNIFF_BYTES) -> bool:
    """Whether the file at `path` is binary by its first `sniff_bytes` bytes (`looks_binary`); an OSError reading it
    is the caller's to handle."""
    with open(path, "rb") as fh:
        return looks_binary(fh.read(sniff_bytes))


def open_utf8(path: str | Path) -> BinaryIO:
    """`path` opened for reading as UTF-8 bytes: the file itself, or its text transcoded when it is UTF-16 (read
    whole: such a file is a source file a person saved, not a log of gigabytes)."""
    fh = open(path, "rb")  # noqa: SIM115 - returned open to the caller, who closes it
    head = fh.read(4)
    if utf16(head) is None:
        fh.seek(0)
        return fh
    with fh:
        return io.BytesIO(to_utf8(head + fh.read()))
