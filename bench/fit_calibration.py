"""Fit the offline confidence's calibration curve (`funnel/localize/calibration.json`) and check it.

    .venv/bin/python bench/fit_calibration.py /work/bench-out/eval-300-anchor \
        --data /work/shared/bench/swebench_lite.jsonl \
        --check-on /work/bench-out/eval-multilang-5fa84f5=/work/shared/bench/multilang_dev.jsonl --write

Reads eval results whose `diagnosis.confidence` is the ranking's raw confidence (a run of the code before the
curve existed, or any run with `--raw-from` pointing at one: the ranking, hence the raw value, does not change
with the curve). The label is "the prime suspect file is one the fix changed". The tune half is the data's
even rows, the check half its odd rows (as `bench/sweep_offline.py`). Fits isotonic regression (pool adjacent
violators; `--method logistic`: Platt scaling) on the tune half, checks the expected calibration error (five equal-width bins) on both halves and
on every `--check-on` set, and with `--write` stores the curve's knots, nothing else.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.metrics import normalize_path  # noqa: E402
from funnel.localize.calibration import CALIBRATION_FILE, apply_curve  # noqa: E402

BINS = 5


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def points(results: Path, data: Path) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(raw confidence, prime file right) of the tune half and of the check half."""
    rows = _jsonl(data)
    half = {r["instance_id"]: n % 2 for n, r in enumerate(rows)}
    gold = {r["instance_id"]: {normalize_path(p) for p in r.get("gold_files") or []} for r in rows}
    out: tuple[list, list] = ([], [])
    for rec in _jsonl(results / "results.jsonl"):
        i = rec["instance_id"]
        if i not in half or rec.get("error") or not rec.get("diagnosis"):
            continue
        files = rec.get("ranked_files") or []
        right = float(bool(files) and normalize_path(files[0]) in gold[i])
        out[half[i]].append((float(rec["diagnosis"]["confidence"]), right))
    return out


def isotonic(pts: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Pool adjacent violators: knots (block mean of x, block mean of y), y non-decreasing."""
    blocks: list[list[float]] = []  # [sum x, sum y, count]
    for x, y in sorted(pts):
        blocks.append([x, y, 1.0])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            b = blocks.pop()
            blocks[-1] = [blocks[-1][0] + b[0], blocks[-1][1] + b[1], blocks[-1][2] + b[2]]
    return [round(b[0] / b[2], 4) for b in blocks], [round(b[1] / b[2], 4) for b in blocks]


def logistic(pts: list[tuple[float, float]], knots: int = 11) -> tuple[list[float], list[float]]:
    """Platt scaling p = 1 / (1 + exp(-(a x + b))) fitted by Newton's method, sampled at `knots` raw values."""
    a, b = 1.0, 0.0
    for _ in range(50):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in pts:
            p = 1.0 / (1.0 + math.exp(-(a * x + b)))
            w = p * (1 - p)
            ga, gb = ga + (p - y) * x, gb + (p - y)
            haa, hab, hbb = haa + w * x * x, hab + w * x, hbb + w
        det = haa * hbb - hab * hab
        if abs(det) < 1e-12:
            break
        a, b = a - (hbb * ga - hab * gb) / det, b - (haa * gb - hab * ga) / det
    xs = [round(k / (knots - 1), 4) for k in range(knots)]
    return xs, [round(1.0 / (1.0 + math.exp(-(a * x + b))), 4) for x in xs]


def ece(pairs: list[tuple[float, float]]) -> float:
    """Expected calibration error over five equal-width bins of the predicted probability."""
    if not pairs:
        return float("nan")
    total = 0.0
    for b in range(BINS):
        inside = [(p, y) for p, y in pairs if min(int(p * BINS), BINS - 1) == b]
        if inside:
            total += len(inside) * abs(sum(p for p, _ in inside) / len(inside) - sum(y for _, y in inside) / len(inside))
    return total / len(pairs)


def main() -> None:
    """Fit, report and optionally write the curve."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, help="eval output directory with raw confidences")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--check-on", action="append", default=[], help="RESULTS_DIR=DATA.jsonl, raw confidences")
    ap.add_argument("--method", choices=["isotonic", "logistic"], default="isotonic")
    ap.add_argument("--write", action="store_true", help=f"store the knots in {CALIBRATION_FILE}")
    args = ap.parse_args()
    tune, check = points(args.results, args.data)
    xs, ys = (isotonic if args.method == "isotonic" else logistic)(tune)
    curve = (tuple(xs), tuple(ys))
    report = {"knots": len(xs), "tune_n": len(tune), "check_n": len(check)}
    for name, pts in (("tune", tune), ("check", check)):
        report[f"{name}_ece_raw"] = round(ece(pts), 3)
        report[f"{name}_ece_calibrated"] = round(ece([(apply_curve(curve, x), y) for x, y in pts]), 3)
    for spec in args.check_on:
        res, _, data = spec.partition("=")
        a, b = points(Path(res), Path(data))
        report[f"{Path(res).name}_n"] = len(a + b)
        report[f"{Path(res).name}_ece_raw"] = round(ece(a + b), 3)
        report[f"{Path(res).name}_ece_calibrated"] = round(ece([(apply_curve(curve, x), y) for x, y in a + b]), 3)
    print(json.dumps(report, indent=1))
    if args.write:
        CALIBRATION_FILE.write_text(json.dumps({"fitted_on": f"SWE-bench Lite tune half (even rows), {args.method}",
                                                "raw": xs, "probability": ys}, indent=1) + "\n")
        print(f"wrote {CALIBRATION_FILE}")


if __name__ == "__main__":
    main()
