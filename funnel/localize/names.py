"""Which of the report's words name code: a definition's name written as such, or a plain English word.

The ranking weighs a plain word that happens to name a definition less (`signals.mentions`); the offline report
claims "the report names" a definition only when it writes that name (`report_names`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from repomap.focus import Focus

__all__ = ("is_plain_mention", "is_prose_word", "report_names")


def is_prose_word(word: str) -> bool:
    """A plain lowercase word (`kind`, `request`): as likely a word of English as the name of a definition."""
    return re.fullmatch(r"[a-z]+", word) is not None


def is_plain_mention(ident: str, code_identifiers: Collection[str]) -> bool:
    """Whether the report writes identifier `ident` only as a plain word: unquoted, unqualified and a prose word
    (`visible` in "is not visible"), not as the name of a definition (`visible`, `Widget.visible`, `is_visible`)."""
    return ident not in code_identifiers and is_prose_word(ident)  # a prose word has no `.` or `::`


def report_names(symbol: str, focus: Focus) -> str | None:
    """The part of a definition's qualified name `symbol` that the report writes as a name, not as a plain word:
    the whole `symbol` when it writes the definition's own name, the enclosing definition (`Form` of `Form.clean`)
    when it writes only that one's, else None."""
    code = set(focus.code_identifiers)
    written = {re.split(r"\.|::", ident)[-1] for ident in focus.identifiers if not is_plain_mention(ident, code)}
    pieces = symbol.split(".")
    named = next((k for k in range(len(pieces), 0, -1) if pieces[k - 1] in written), None)
    return ".".join(pieces[:named]) if named else None
