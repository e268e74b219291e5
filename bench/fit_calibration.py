"""Fit the offline confidence's calibration curves (`funnel/localize/calibration.json`) and check them.

    .venv/bin/python bench/fit_calibration.py /work/bench-out/eval-300-anchor \
        --data /work/shared/bench/swebench_lite.jsonl \
        --check-on /work/bench-out/eval-multilang-5fa84f5=/work/shared/bench/multilang_dev.jsonl --write
    .venv/bin/python bench/fit_calibration.py /work/bench-out/ml-final --data /work/shared/bench/multilang_dev.jsonl \
        --languages c,cpp,go,java,javascript,typescript,tsx,rust,ruby,text --write

Reads the raw confidence of each record: `ranking.raw_confidence` (recorded since it existed), else
`diagnosis.confidence` (a run of the code before any curve existed). The label is "the prime suspect file is one
the fix changed". The tune half is the data's even rows, the check half its odd rows (as
`bench/sweep_offline.py`). Fits isotonic regression (pool adjacent violators; `--method logistic`: Platt scaling)
on the tune half, checks the expected calibration error (five equal-width bins) on both halves and on every
`--check-on` set, each beside the error a perfectly calibrated confidence would show there by chance (`_by_chance`),
and with `--write` stores the curve's knots, nothing else. Without `--languages` it fits the default curve; with
it, the curve of a group of languages (records whose prime suspect is in one of them), kept beside the default.
A check applies each record the mapping of its prime suspect's language, as the writer does.

`--features margin,stem,...` fits a logistic model over those of the ranking's `CONFIDENCE_FEATURES` instead of a
curve of the raw value (scikit-learn's L2-penalized logistic regression on standardized features, `--c` its
inverse penalty; stored in the features' own units). The features are read from `ranking.confidence_features`,
recorded since they existed. Each line also gives the discrimination (`metrics.discrimination`, AUC), and a model
its five-fold cross-validated discrimination on the tune half (`tune_auc_cross_validated`), which compares feature
sets of different sizes without the check half.

    .venv/bin/python bench/fit_calibration.py /work/bench-out/ml-feat --data ../shared/bench/multilang_dev.jsonl \
        --languages c,cpp,go,java,javascript,typescript,tsx,rust,ruby,text --features margin,stem,mention --c 1.0 \
        --check-on /work/bench-out/commit-feat=/work/bench-out/commit-set.jsonl --write
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from app.evaluation.metrics import calibration, calibration_noise, discrimination, normalize_path  # noqa: E402
from funnel.localize.calibration import (  # noqa: E402
    CALIBRATION_FILE,
    TEXT_SOURCE,
    Calibration,
    Fit,
    Logistic,
    apply_fit,
    load_calibration,
    prime_language,
)
from funnel.localize.candidates import CONFIDENCE_FEATURES  # noqa: E402
from repomap.languages import BY_NAME  # noqa: E402



def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


Point = tuple[float, float, str | None, dict[str, float]]
"""(raw confidence, prime file right, the prime file's language, the ranking's confidence features)."""


def _raw(rec: dict) -> float:
    raw = (rec.get("ranking") or {}).get("raw_confidence")
    return float(raw if raw is not None else rec["diagnosis"]["confidence"])


def points(results: Path, data: Path) -> tuple[list[Point], list[Point]]:
    """The points of the tune half and of the check half."""
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
        features = (rec.get("ranking") or {}).get("confidence_features") or {}
        out[half[i]].append((_raw(rec), right, prime_language(files[0] if files else None), features))
    return out


def isotonic(pts: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Pool adjacent violators: knots (block mean of x, block mean of y), y non-decreasing."""
    blocks: list[list[float]] = []  # [sum x, sum y, count]
    for x, y in sorted((x, y) for x, y, *_ in pts):
        blocks.append([x, y, 1.0])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            b = blocks.pop()
            blocks[-1] = [blocks[-1][0] + b[0], blocks[-1][1] + b[1], blocks[-1][2] + b[2]]
    return [round(b[0] / b[2], 4) for b in blocks], [round(b[1] / b[2], 4) for b in blocks]


def logistic(pts: list[tuple[float, float]], knots: int = 11) -> tuple[list[float], list[float]]:
    """Platt scaling p = 1 / (1 + exp(-(a x + b))) (scikit-learn's logistic regression, unpenalized), sampled at
    `knots` raw values."""
    x = np.array([[p[0]] for p in pts])
    y = np.array([p[1] for p in pts])
    fitted = LogisticRegression(C=np.inf, tol=1e-10).fit(x, y)
    xs = [round(k / (knots - 1), 4) for k in range(knots)]
    return xs, [round(float(p), 4) for p in fitted.predict_proba(np.array(xs)[:, None])[:, 1]]


def logistic_model(pts: list[Point], names: list[str], c: float = 1.0) -> Logistic:
    """A logistic model of "the prime file is right" over the named features, fitted on standardized values and
    returned in the features' own units."""
    x = np.array([[p[3].get(n, 0.0) for n in names] for p in pts])
    y = np.array([p[1] for p in pts])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(C=c).fit((x - mean) / scale, y)
    weights = fitted.coef_[0] / scale
    intercept = float(fitted.intercept_[0] - (weights * mean).sum())
    return Logistic(tuple(names), tuple(round(float(w), 4) for w in weights), round(intercept, 4))


def cross_validated_auc(pts: list[Point], names: list[str], c: float, folds: int = 5) -> float | None:
    """The discrimination of the model on the tune half's own points, each scored by a model fitted without its
    fold (fold = position mod `folds`): how well the features carry beyond the points they were fitted on, so
    feature sets of different sizes can be compared on the tune half alone."""
    pairs = []
    for k in range(folds):
        train = [p for n, p in enumerate(pts) if n % folds != k]
        held = [p for n, p in enumerate(pts) if n % folds == k]
        if not held or len({p[1] for p in train}) < 2:
            continue
        model = logistic_model(train, names, c)
        pairs += [(model.probability(p[3]), bool(p[1])) for p in held]
    return discrimination(pairs)


def ece(pairs: list[tuple[float, float]]) -> float:
    """Expected calibration error over the eval's five equal-width bins (`metrics.calibration`); NaN with no pairs."""
    error, _ = calibration([(p, bool(y)) for p, y in pairs])
    return float("nan") if error is None else error


def _calibrated(cal: Calibration, pts: list[Point]) -> list[tuple[float, float]]:
    return [(apply_fit(cal.fit_for(lang), x, features), y) for x, y, lang, features in pts]


def _figures(report: dict, name: str, cal: Calibration, pts: list[Point]) -> None:
    """The error and discrimination of the raw value and of the calibrated one on `pts`, into `report`."""
    raw, calibrated = [(x, y) for x, y, *_ in pts], _calibrated(cal, pts)
    report[f"{name}_n"] = len(pts)
    report[f"{name}_ece_raw"] = round(ece(raw), 3)
    report[f"{name}_ece_calibrated"] = round(ece(calibrated), 3)
    report[f"{name}_ece_by_chance"] = _by_chance(calibrated)
    for kind, pairs in (("raw", raw), ("calibrated", calibrated)):
        auc = discrimination([(p, bool(y)) for p, y in pairs])
        report[f"{name}_auc_{kind}"] = None if auc is None else round(auc, 3)


def _by_chance(pairs: list[tuple[float, float]]) -> list[float] | None:
    """What a perfectly calibrated confidence would show on these reports (`metrics.calibration_noise`: mean, 95th
    percentile)."""
    noise = calibration_noise([p for p, _ in pairs])
    return None if noise is None else [round(noise[0], 3), round(noise[1], 3)]


def with_group(data: dict, languages: list[str], fitted: dict) -> dict:
    """Calibration data with `fitted` as the mapping of `languages`, placed first; those languages leave every other
    group, and a group left with none is dropped (the others keep their mappings)."""
    groups = []
    for group in data.get("groups", []):
        kept = [x for x in group["languages"] if x not in languages]
        if kept:
            groups.append({**group, "languages": kept})
    return {**data, "groups": [{"languages": list(languages), **fitted}, *groups]}


def _write(fit: Fit, languages: list[str], method: str, data_name: str) -> None:
    data = json.loads(CALIBRATION_FILE.read_text()) if CALIBRATION_FILE.exists() else {}
    if isinstance(fit, Logistic):
        fitted: dict = {"model": {"features": list(fit.features), "weights": list(fit.weights),
                                  "intercept": fit.intercept}}
    else:
        fitted = {"raw": list(fit[0]), "probability": list(fit[1])}
    if languages:
        data = with_group(data, languages, {"fitted_on": f"{data_name} tune half (even rows), {method}", **fitted})
    else:
        data = {"fitted_on": f"SWE-bench Lite tune half (even rows), {method}", **fitted,
                **({"groups": data["groups"]} if data.get("groups") else {})}
    CALIBRATION_FILE.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {CALIBRATION_FILE}")


def main() -> None:
    """Fit, report and optionally write the curve."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, help="eval output directory with raw confidences")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--check-on", action="append", default=[], help="RESULTS_DIR=DATA.jsonl, raw confidences")
    ap.add_argument("--method", choices=["isotonic", "logistic"], default="isotonic")
    ap.add_argument("--languages", default="", help="fit the curve of this group of languages (comma-separated)")
    ap.add_argument("--features", default="", help="fit a logistic model over these confidence features "
                    f"(comma-separated, of {', '.join(CONFIDENCE_FEATURES)})")
    ap.add_argument("--c", type=float, default=1.0, help="the model's inverse L2 penalty (with --features)")
    ap.add_argument("--write", action="store_true", help=f"store the mapping in {CALIBRATION_FILE}")
    args = ap.parse_args()
    languages = [x for x in args.languages.split(",") if x]
    features = [x for x in args.features.split(",") if x]
    known = [*BY_NAME, TEXT_SOURCE]
    unknown = [x for x in languages if x not in known]
    if unknown:
        ap.error(f"--languages: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    strange = [x for x in features if x not in CONFIDENCE_FEATURES]
    if strange:
        ap.error(f"--features: unknown {', '.join(strange)}; choose from {', '.join(CONFIDENCE_FEATURES)}")
    current = load_calibration()
    if languages and current is None:
        ap.error(f"--languages fits a group beside the default curve, and {CALIBRATION_FILE} has none: fit it first")
    tune, check = points(args.results, args.data)
    if languages:
        tune, check = ([p for p in half if p[2] in languages] for half in (tune, check))
    if not tune:
        among = f" whose prime suspect is in {args.languages}" if languages else ""
        ap.error(f"no record of the tune half to fit on{among}")
    if features and not any(p[3] for p in tune):
        ap.error("--features: the records carry no `ranking.confidence_features`; run the eval with this code first")
    fit: Fit
    if features:
        fit, method = logistic_model(tune, features, args.c), f"logistic over {', '.join(features)}"
    else:
        xs, ys = (isotonic if args.method == "isotonic" else logistic)(tune)
        fit, method = (tuple(xs), tuple(ys)), args.method
    if languages:
        cal = Calibration(current.default, ((frozenset(languages), fit), *current.groups))
    else:
        cal = Calibration(fit, current.groups if current is not None else ())
    report: dict = {"fit": fit if isinstance(fit, Logistic) else {"knots": len(fit[0])}}
    if features:
        cv = cross_validated_auc(tune, features, args.c)
        report["tune_auc_cross_validated"] = None if cv is None else round(cv, 3)
    for name, pts in (("tune", tune), ("check", check)):
        _figures(report, name, cal, pts)
    for spec in args.check_on:
        res, _, data = spec.partition("=")
        a, b = points(Path(res), Path(data))
        for name, pts in (("", a + b), ("_check_half", b)):
            _figures(report, f"{Path(res).name}{name}", cal, pts)
    print(json.dumps(report, indent=1, default=lambda o: o.__dict__))
    if args.write:
        _write(fit, languages, method, args.data.stem)


if __name__ == "__main__":
    main()
