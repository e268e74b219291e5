"""Which of the report's words name code: a definition's name written as such, or a plain English word.

The ranking weighs a plain word that happens to name a definition less (`signals.mentions`); the offline report
claims "the report names" a definition only when it writes that name (`report_names`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from funnel.inline import code_span
from repomap.focus import Focus

__all__ = ("is_plain_mention", "is_prose_word", "plain_mention_reason", "prose_form", "report_names")


def is_prose_word(word: str) -> bool:
    """A plain lowercase word (`kind`, `request`): as likely a word of English as the name of a definition."""
    return re.fullmatch(r"[a-z]+", word) is not None


def is_plain_mention(ident: str, code_identifiers: Collection[str]) -> bool:
    """Whether the report writes identifier `ident` only as a plain word: unquoted, unqualified and a prose word
    (`visible` in "is not visible"; a prose call too, `delete` in "after .delete()"), not as the name of a definition
    (`visible` in backticks, `Widget.visible`, `is_visible`)."""
    return ident not in code_identifiers and is_prose_word(ident)  # a prose word has no `.` or `::`


def prose_form(name: str, text: str) -> str | None:
    """How the report's `text` writes an unquoted name `name` (`is_plain_mention`): None when it writes it as a plain
    word at least once, else its first form, called or as a member (`.delete()` in "after .delete() the pk is
    kept", `QuerySet.defer()`)."""
    written = re.finditer(rf"(\w*(?:\.|#|::))?(?<!\w){re.escape(name)}(?!\w)(\()?", text)
    forms = [(m.group(1) or "", m.group(2) or "") for m in written]
    if not forms or any(not before and not call for before, call in forms):
        return None
    before, call = forms[0]
    return f"{before}{name}{'()' if call else ''}"


def plain_mention_reason(qualname: str, name: str, form: str | None) -> str:
    """The evidence sentence for a definition `qualname` whose name `name` the report writes unquoted: "uses as the
    plain word", or, when it writes it only in another `form` (`prose_form`), that form."""
    if form is None:
        return f"defines {code_span(qualname)}, whose name the report uses as the plain word “{name}”"
    return f"defines {code_span(qualname)}, whose name the report writes unquoted in its prose (“{form}”)"


def report_names(symbol: str, focus: Focus) -> str | None:
    """The part of a definition's qualified name `symbol` that the report writes as a name, not as a plain word:
    the whole `symbol` when it writes the definition's own name, the enclosing definition (`Form` of `Form.clean`)
    when it writes only that one's, else None."""
    code = set(focus.code_identifiers)
    written = {re.split(r"\.|::", ident)[-1] for ident in focus.identifiers if not is_plain_mention(ident, code)}
    pieces = symbol.split(".")
    named = next((k for k in range(len(pieces), 0, -1) if pieces[k - 1] in written), None)
    return ".".join(pieces[:named]) if named else None
