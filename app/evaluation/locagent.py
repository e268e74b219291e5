"""The LocAgent localization protocol: how the localization literature scores SWE-bench Lite.

274 instances (the 26 ids of `locagent.json` left out), and Acc@k = the first k distinct predictions hold
min(k, number of gold locations) gold locations, at file level (k = 1, 3, 5, 10) and function level (k = 5, 10).
Function locations are `path:Class.method` or `path:function` (nested functions folded into their outer one,
as in the data's `gold_entities`), `path:Class.__init__` counts as `path:Class`, and module-level changes are no
function. Predictions match gold exactly after that normalisation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from app.evaluation import metrics

NAME = "locagent"
"""`--protocol` value."""
FILE_KS = (1, 3, 5, 10)
"""File-level cut-offs."""
FUNCTION_KS = (5, 10)
"""Function-level cut-offs."""
KEYS = tuple(f"file_acc_at_{k}" for k in FILE_KS) + tuple(f"function_acc_at_{k}" for k in FUNCTION_KS)
"""Per-instance score keys, in table order."""
_DATA = Path(__file__).with_name("locagent.json")


class Protocol(StrEnum):
    """Published evaluation protocols `bugsleuth eval` scores beside its own metrics (`--protocol`)."""

    locagent = NAME
    """LocAgent's: SWE-bench Lite minus 26 ids, Acc@k = the first k predictions hold min(k, gold) gold locations."""
_INIT = ".__init__"


@cache
def protocol_data() -> dict[str, Any]:
    """The excluded ids, the published figures and where both come from (`locagent.json`)."""
    return json.loads(_DATA.read_text(encoding="utf-8"))


def excluded_ids() -> frozenset[str]:
    """The 26 SWE-bench Lite ids LocAgent's evaluation leaves out."""
    return frozenset(protocol_data()["excluded_ids"])


def acc_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    """1.0 when the first `k` distinct ranked items hold min(k, |gold|) gold items, else 0.0; None with no gold."""
    gold_set = set(gold)
    if not gold_set:
        return None
    top = list(dict.fromkeys(ranked))[:k]
    return 1.0 if sum(item in gold_set for item in top) >= min(k, len(gold_set)) else 0.0


def entity(name: str) -> str:
    """A `path:qualified.name` location in the protocol's form: `path:A.__init__` becomes `path:A`."""
    path, name = metrics.split_entity(name)
    while name.endswith(_INIT) and len(name) > len(_INIT):
        name = name[: -len(_INIT)]
    return f"{path}:{name}" if path else name


def gold_functions(entities: Mapping[str, Sequence[str]]) -> list[str]:
    """Function-level gold from `gold_entities`: module-level changes left out, `__init__` as its class."""
    names = (entity(f"{path}:{n}") for path, ns in entities.items() for n in ns if n != metrics.MODULE_LEVEL)
    return list(dict.fromkeys(names))


def score(files: Sequence[str], functions: Sequence[str] | None, gold_files: Sequence[str],
          gold_entities: Mapping[str, Sequence[str]]) -> dict[str, float | None]:
    """Every protocol figure of one instance for a ranking (`files`, `functions` as `path:name`; None when the
    ranking has no function level: those figures are None)."""
    ranked_files = [metrics.normalize_path(p) for p in files]
    gold_paths = [metrics.normalize_path(p) for p in gold_files]
    gold = gold_functions(gold_entities)
    out: dict[str, float | None] = {f"file_acc_at_{k}": acc_at_k(ranked_files, gold_paths, k) for k in FILE_KS}
    ranked_functions = [entity(f) for f in functions] if functions is not None else None
    out.update({f"function_acc_at_{k}": acc_at_k(ranked_functions, gold, k) if ranked_functions is not None else None
                for k in FUNCTION_KS})
    return out


def select(instance_ids: Iterable[str]) -> list[str]:
    """The ids the protocol scores: all but the excluded ones."""
    left_out = excluded_ids()
    return [i for i in instance_ids if i not in left_out]


def summarize(scores: Sequence[Mapping[str, float | None]]) -> dict[str, Any]:
    """Mean of each figure over the instances with gold at that level, and their counts."""
    out: dict[str, Any] = {"n": len(scores)}
    out["function_n"] = sum(1 for s in scores if s.get("function_acc_at_5") is not None)  # gold and a ranking
    for key in KEYS:
        value = metrics.mean(s.get(key) for s in scores)
        out[key] = None if value is None else round(value, 3)
    return out
