"""Text files the commands read (a report, a memory file, a focus file): decoded as their byte-order mark, UTF-8 or
Windows-1252 says, and refused with their reason when they hold binary data or are not there."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def decode_text(data: bytes) -> str:
    """A file's text: in the encoding its byte-order mark names (UTF-16 from Windows PowerShell's `>`, UTF-8
    with a BOM from Notepad), else UTF-8, else Windows-1252 (a legacy Windows editor's file); the mark left out."""
    # lazy: importing `repomap` loads the map's modules, which every other command would pay for
    from repomap.encoding import byte_order_mark

    if found := byte_order_mark(data):
        mark, codec = found
        return data[len(mark) :].decode(codec, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def text_of(data: bytes, where: str, option: str) -> str:
    """The text of a file's bytes (`decode_text`); `typer.BadParameter` for binary data (a NUL byte, as git
    judges it), which no decoding makes text of."""
    text = decode_text(data)
    if "\x00" in text:
        offset = data.find(b"\x00")
        raise typer.BadParameter(f"{where} is not text: it holds a NUL byte at offset {offset:,} (a "
                                 "binary file, or UTF-16 without a byte order mark); give a UTF-8 text file",
                                 param_hint=option)  # fmt: skip
    return text


def read_text_file(path: Path, option: str) -> str:
    """The text of the file an option names (`text_of`); `typer.BadParameter` when there is none or it is unreadable."""
    if not path.is_file():
        name = option.removeprefix("--").removesuffix("-file")
        raise typer.BadParameter(f"no {name} file at {path}", param_hint=option)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise typer.BadParameter(f"cannot read {path}: {e.strerror or e}", param_hint=option) from None
    return text_of(data, str(path), option)


def read_text_source(source: str | Path, option: str) -> str:
    """The text an option names: standard input for `-`, else the file (`read_text_file`), read as `text_of` reads."""
    if str(source) == "-":
        stdin = getattr(sys.stdin, "buffer", None)  # a replaced stdin (a test runner's) may have no bytes under it
        return text_of(stdin.read(), "stdin", option) if stdin is not None else sys.stdin.read()
    return read_text_file(Path(source), option)
