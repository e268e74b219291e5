"""The offline confidence as a probability: the ranking's raw confidence mapped to how often the prime suspect
file is right, by monotone (isotonic) curves fitted on the tune half of the development sets.

The curves are a handful of numbers in `calibration.json`: a default curve (knots `raw` → `probability`,
interpolated linearly, flat outside), fitted on SWE-bench Lite, and `groups` of languages with curves of their
own (the evidence of other languages' reports is weaker for the same margin), chosen by the language of the prime
suspect file. `bench/fit_calibration.py` fits them and states the command. No data file: the raw value is kept.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from repomap.languages import is_text_source, language_for

__all__ = ("CALIBRATION_FILE", "TEXT_SOURCE", "Calibration", "Curve", "apply_curve", "calibrated", "load_calibration",
           "prime_language")

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
"""Where the fitted curves live."""

TEXT_SOURCE = "text"
"""The language of a prime suspect in a language with no grammar (`repomap.languages.TEXT_SOURCE_EXTENSIONS`)."""

Curve = tuple[tuple[float, ...], tuple[float, ...]]
"""(raw knots ascending, probabilities non-decreasing)."""


@dataclass(frozen=True)
class Calibration:
    """The fitted curves: one per group of languages, and the default for every other language."""

    default: Curve
    """The curve of languages in no group."""
    groups: tuple[tuple[frozenset[str], Curve], ...] = ()
    """(language names as `repomap.languages` spells them, their curve); the first group holding a language wins."""

    def curve_for(self, language: str | None) -> Curve:
        """The curve of a prime suspect file in `language` (None: unknown, the default)."""
        for names, curve in self.groups:
            if language in names:
                return curve
        return self.default


def _curve(data: dict, path: Path) -> Curve:
    raw, prob = tuple(float(x) for x in data["raw"]), tuple(float(y) for y in data["probability"])
    if len(raw) != len(prob) or not raw or list(raw) != sorted(raw) or list(prob) != sorted(prob):
        raise ValueError(f"{path}: 'raw' must ascend and 'probability' must not decrease, with equal lengths")
    return raw, prob


@cache
def load_calibration(path: Path = CALIBRATION_FILE) -> Calibration | None:
    """The fitted curves, or None when the file is missing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    groups = tuple((frozenset(g["languages"]), _curve(g, path)) for g in data.get("groups", []))
    return Calibration(_curve(data, path), groups)


def apply_curve(curve: Curve, raw: float) -> float:
    """The curve's value at `raw` (linear between knots, flat beyond the ends)."""
    xs, ys = curve
    if raw <= xs[0]:
        return ys[0]
    if raw >= xs[-1]:
        return ys[-1]
    i = bisect_right(xs, raw)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 + (y1 - y0) * (raw - x0) / (x1 - x0) if x1 > x0 else y1


def prime_language(path: str | None, data: bytes | None = None) -> str | None:
    """The language of a prime suspect file: its grammar's name, from its bytes too when given (a C++ header is C++);
    `TEXT_SOURCE` for a source file of a language with no grammar; None for no file or any other file."""
    spec = language_for(path, data) if path else None
    if spec is None and path and is_text_source(path):
        return TEXT_SOURCE
    return spec.name if spec is not None else None


def calibrated(raw: float, language: str | None = None) -> float:
    """The probability that the prime suspect file is right, given the ranking's raw confidence and the prime
    suspect's language (rounded to 0.01)."""
    found = load_calibration()
    return round(apply_curve(found.curve_for(language), raw), 2) if found is not None else raw
