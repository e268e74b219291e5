"""Text that every store and every wire format can carry.

JSON can spell code points UTF-8 cannot encode (a lone surrogate such as `"\\ud800"`), and PostgreSQL refuses
NUL in text. Where the sender cannot be asked to fix its input (a webhook delivery, an error reply that echoes
the input), such characters are replaced with U+FFFD; where it can (the JSON API), they are refused (422).
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
"""What an unstorable character becomes."""
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` with every lone surrogate and NUL replaced by U+FFFD (the same string when there is none)."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def unstorable_reason(text: str) -> str | None:
    """Why `text` cannot be stored as it is, or None when it can."""
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return "must not contain NUL characters"
    return "must be valid Unicode text (no lone surrogates such as \\ud800)"


def scrub(value: Any) -> Any:
    """A JSON-like value with `storable` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value
