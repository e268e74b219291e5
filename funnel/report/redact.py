"""The last guard: a diagnosis and its report never carry a value of a withheld file, whoever wrote them.

The gate keeps secrets from every reader of ours, but an external CLI agent (`command:` explorer) reads the tree
with its own tools, and a model may be handed a value some other way. So before a result leaves `investigate()`,
the values found in the tree's withheld files (`.env`, keys, `.git/config`...) are replaced by `[withheld]` in the
diagnosis and the markdown report. The values are only compared, never shown or logged.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from repomap.config import DEFAULT_EXCLUDE_DIRS, MAX_DEPTH
from repomap.encoding import SNIFF_BYTES, looks_binary
from repomap.gate import DenyRules, Refused, denied_files, read_regular
from schemas.diagnosis import Diagnosis

__all__ = ("MARK", "redact_diagnosis", "redact_text", "withheld_values")

MARK = "[withheld]"
"""What a withheld value is replaced with."""
_MIN_VALUE_CHARS = 8
"""Shorter values (`true`, `5432`, `localhost`) are too common to redact."""
_MAX_FILES = 100
_MAX_FILE_BYTES = 64 * 1024
_SEPARATOR = re.compile(r"[=:]")
_SKIP_DIRS = frozenset({*DEFAULT_EXCLUDE_DIRS, ".git"})


def withheld_values(root: Path | str, rules: DenyRules | None = None) -> list[str]:
    """The values of the tree's withheld text files (a line's part after `=`/`:`, else the line), longest first.

    Walks at most `MAX_DEPTH` levels, skips dependency and build directories, reads at most 100 files of 64 KB;
    of `.git/` only `config` (remote URLs with tokens), not objects, refs or commit ids.
    """
    root = Path(root)
    found = denied_files(root, rules or DenyRules(), skip=_SKIP_DIRS, max_depth=MAX_DEPTH)
    files = [root / ".git" / "config", *(Path(e.path) for e in itertools.islice(found, _MAX_FILES))]
    values: set[str] = set()
    for path in files:
        try:
            data = read_regular(path, rel=path.name, max_bytes=_MAX_FILE_BYTES)
        except Refused:
            continue
        if looks_binary(data[:SNIFF_BYTES]):
            continue
        values.update(_values(data.decode("utf-8", errors="replace")))
    return sorted(values, key=lambda v: (-len(v), v))


def _values(text: str) -> set[str]:
    out = set()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "[", ";", "-----")):
            continue
        parts = _SEPARATOR.split(line, maxsplit=1)
        value = parts[1] if len(parts) == 2 else line.split()[-1]  # `KEY=value`, `key: value`, `Option value`
        value = value.strip().strip("'\"").strip()
        if len(value) >= _MIN_VALUE_CHARS and not any(c.isspace() for c in value):
            out.add(value)
    return out


def redact_text(text: str, values: list[str]) -> str:
    """`text` with every occurrence of one of `values` replaced by `MARK`."""
    for value in values:
        if value in text:
            text = text.replace(value, MARK)
    return text


def redact_diagnosis(diagnosis: Diagnosis, values: list[str]) -> Diagnosis:
    """A copy of `diagnosis` with `values` redacted from every string field (the same object when none occurs)."""
    if not values:
        return diagnosis
    dumped = diagnosis.model_dump(mode="json")
    changed = _redact(dumped, values)
    return Diagnosis.model_validate(changed) if changed != dumped else diagnosis


def _redact(obj: Any, values: list[str]) -> Any:
    if isinstance(obj, str):
        return redact_text(obj, values)
    if isinstance(obj, list):
        return [_redact(x, values) for x in obj]
    if isinstance(obj, dict):
        return {k: _redact(v, values) for k, v in obj.items()}
    return obj
