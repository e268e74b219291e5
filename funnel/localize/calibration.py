"""The offline confidence as a probability: the ranking's raw confidence mapped to how often the prime suspect
file is right, by a monotone (isotonic) curve fitted on the tune half of SWE-bench Lite.

The curve is a handful of numbers in `calibration.json` (knots `raw` → `probability`, interpolated linearly,
flat outside); `bench/fit_calibration.py` fits it and states the command. No data file: the raw value is kept.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from functools import cache
from pathlib import Path

__all__ = ("CALIBRATION_FILE", "Curve", "apply_curve", "calibrated", "load_curve")

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
"""Where the fitted curve lives."""

Curve = tuple[tuple[float, ...], tuple[float, ...]]
"""(raw knots ascending, probabilities non-decreasing)."""


@cache
def load_curve(path: Path = CALIBRATION_FILE) -> Curve | None:
    """The fitted curve, or None when the file is missing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    raw, prob = tuple(float(x) for x in data["raw"]), tuple(float(y) for y in data["probability"])
    if len(raw) != len(prob) or not raw or list(raw) != sorted(raw) or list(prob) != sorted(prob):
        raise ValueError(f"{path}: 'raw' must ascend and 'probability' must not decrease, with equal lengths")
    return raw, prob


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


def calibrated(raw: float) -> float:
    """The probability that the prime suspect file is right, given the ranking's raw confidence (rounded to 0.01)."""
    curve = load_curve()
    return round(apply_curve(curve, raw), 2) if curve is not None else raw
