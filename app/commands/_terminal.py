"""Text a command writes for a person to read: whatever it quotes (a report, a model's words, a file's lines) cannot
drive the terminal.

A report is written by whoever filed it and a model's reply by whatever steered it. Printed as they are, an escape
sequence in them sets the window's title, writes the clipboard (OSC 52), links a word to another address (OSC 8) or
clears the screen, and a carriage return or backspace writes over what was printed before it. JSON output needs
none of this: the encoder writes control characters as escapes.
"""

from __future__ import annotations

import re

import typer

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters but the tab and the newline, DEL, and the bidirectional overrides and isolates that
reorder what a line shows (the "Trojan Source" characters)."""


def terminal_safe(text: str) -> str:
    """`text` with every character that could drive a terminal or reorder a line written as its escape (`\\x1b`,
    `\\u202e`); a carriage return before a newline is dropped. Text without such characters is returned as is."""
    text = text.replace("\r\n", "\n")
    return _UNSAFE.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def say(text: str, *, err: bool = False) -> None:
    """Print `text` (`terminal_safe`) and a newline, on stderr when `err`."""
    typer.echo(terminal_safe(text), err=err)
