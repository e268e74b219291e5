"""The offline confidence as a probability: what the ranking says of itself mapped to how often the prime suspect
file is right, fitted on the tune half of the development sets.

A handful of numbers in `calibration.json`: a default mapping, fitted on SWE-bench Lite, and `groups` of languages
with mappings of their own (the evidence of other languages' reports is weaker for the same margin), chosen by the
language of the prime suspect file. A mapping is either a monotone curve of the raw confidence (knots `raw` →
`probability`, interpolated linearly, flat outside) or a logistic model over the ranking's
`CONFIDENCE_FEATURES` (`model`: `features`, `weights`, `intercept`), which can tell a lead backed by the report
writing the file's name from one of term counts alone. `bench/fit_calibration.py` fits them and states the command.
No data file: the raw value is kept.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from funnel.localize.candidates import CONFIDENCE_FEATURES
from repomap.languages import is_text_source, language_for

__all__ = ("CALIBRATION_FILE", "TEXT_SOURCE", "Calibration", "Curve", "Fit", "Logistic", "apply_curve", "apply_fit",
           "calibrated", "load_calibration", "prime_language")

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
"""Where the fitted mappings live."""

TEXT_SOURCE = "text"
"""The language of a prime suspect in a language with no grammar (`repomap.languages.TEXT_SOURCE_EXTENSIONS`)."""

Curve = tuple[tuple[float, ...], tuple[float, ...]]
"""(raw knots ascending, probabilities non-decreasing)."""


@dataclass(frozen=True)
class Logistic:
    """p = 1 / (1 + exp(-(intercept + weights · features))) over some of `CONFIDENCE_FEATURES`."""

    features: tuple[str, ...]
    """The names it reads, in the order of `weights`."""
    weights: tuple[float, ...]
    """One per feature, in the features' own units."""
    intercept: float
    """The log-odds of a ranking whose features are all 0."""

    def probability(self, features: Mapping[str, float]) -> float:
        """The model's probability for a ranking's features (a missing one counts 0)."""
        z = self.intercept + sum(w * features.get(name, 0.0) for name, w in zip(self.features, self.weights))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))  # clamped: exp overflows past ±709


Fit = Curve | Logistic
"""A fitted mapping to the probability that the prime suspect is right."""


@dataclass(frozen=True)
class Calibration:
    """The fitted mappings: one per group of languages, and the default for every other language."""

    default: Fit
    """The mapping of languages in no group."""
    groups: tuple[tuple[frozenset[str], Fit], ...] = ()
    """(language names as `repomap.languages` spells them, their mapping); the first group holding a language
    wins."""

    def fit_for(self, language: str | None) -> Fit:
        """The mapping of a prime suspect file in `language` (None: unknown, the default)."""
        for names, fit in self.groups:
            if language in names:
                return fit
        return self.default


def _fit(data: dict, path: Path) -> Fit:
    if "model" in data:
        model = data["model"]
        try:
            names, weights = tuple(model["features"]), tuple(float(w) for w in model["weights"])
            intercept = float(model["intercept"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: a model needs 'features', 'weights' and a numeric 'intercept' "
                             f"({exc!r})") from None
        unknown = sorted(set(names) - set(CONFIDENCE_FEATURES))
        if unknown or len(names) != len(weights):
            raise ValueError(f"{path}: a model needs one weight per feature of {', '.join(CONFIDENCE_FEATURES)}"
                             + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
        return Logistic(names, weights, intercept)
    raw, prob = tuple(float(x) for x in data["raw"]), tuple(float(y) for y in data["probability"])
    if len(raw) != len(prob) or not raw or list(raw) != sorted(raw) or list(prob) != sorted(prob):
        raise ValueError(f"{path}: 'raw' must ascend and 'probability' must not decrease, with equal lengths")
    return raw, prob


@cache
def load_calibration(path: Path = CALIBRATION_FILE) -> Calibration | None:
    """The fitted mappings, or None when the file is missing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    groups = tuple((frozenset(g["languages"]), _fit(g, path)) for g in data.get("groups", []))
    return Calibration(_fit(data, path), groups)


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


def apply_fit(fit: Fit, raw: float, features: Mapping[str, float] | None = None) -> float:
    """The probability a mapping gives a ranking: a curve reads the raw confidence, a model the features (a
    ranking with none, which has no candidate, keeps its raw value)."""
    if isinstance(fit, Logistic):
        return fit.probability(features) if features else raw
    return apply_curve(fit, raw)


def prime_language(path: str | None, data: bytes | None = None) -> str | None:
    """The language of a prime suspect file: its grammar's name, from its bytes too when given (a C++ header is C++);
    `TEXT_SOURCE` for a source file of a language with no grammar; None for no file or any other file."""
    spec = language_for(path, data) if path else None
    if spec is None and path and is_text_source(path):
        return TEXT_SOURCE
    return spec.name if spec is not None else None


def calibrated(raw: float, language: str | None = None, features: Mapping[str, float] | None = None) -> float:
    """The probability that the prime suspect file is right, given the ranking's raw confidence, its
    `CONFIDENCE_FEATURES` and the prime suspect's language (rounded to 0.01)."""
    found = load_calibration()
    return round(apply_fit(found.fit_for(language), raw, features), 2) if found is not None else raw
