"""What a CLI command printed, as one line of words: Typer draws a frame around a usage error and breaks its lines."""

from __future__ import annotations

import re
from typing import Any


def said(result: Any, stream: str = "output") -> str:
    """The text of a `CliRunner` result's `stream` (`output`, `stdout` or `stderr`) without the frame and the line
    breaks Typer's error box adds."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", getattr(result, stream)).split())
