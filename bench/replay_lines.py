"""Replay the line choice on an earlier eval's citations, without ranking again (minutes instead of hours).

    .venv/bin/python bench/replay_lines.py /work/bench-out/eval-300-anchor --data /work/shared/bench/swebench_lite.jsonl \
        --repos bench/repos.toml --split tune

The ranking does not change with the reasoning layer, so the files and definitions an earlier run cited are the
ones this code cites; this script rebuilds those citations (definition spans from the repo map's parser, file
text from the repository at the instance's commit), runs `narrow_prime` on them and prints the line figures of
`bench/line_metrics.py` before (the run as recorded) and after. A development aid: the eval is the measure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tomllib
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import show_blob  # noqa: E402
from bench.line_metrics import score, summarize  # noqa: E402
from funnel.explorers.offline.lines import narrow_prime  # noqa: E402
from funnel.explorers.offline.writer import Citation, WriterConfig  # noqa: E402
from funnel.localize.candidates import RankConfig  # noqa: E402
from funnel.localize.bm25 import report_query  # noqa: E402
from repomap.focus import Focus  # noqa: E402
from repomap.languages import language_for  # noqa: E402
from repomap.tags import extract_tags  # noqa: E402
from schemas.enums import Role  # noqa: E402


_CACHE = Path("/tmp/replay-lines-cache")


def _show(git: str, commit: str, path: str) -> str:
    cached = _CACHE / commit / path
    if cached.exists():
        return cached.read_text()
    text = show_blob(git, commit, path).decode("utf-8", "replace")
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(text)
    return text


def _span(text: str, path: str, symbol: str | None, start: int, end: int) -> tuple[int, int] | None:
    data = text.encode()
    spec = language_for(path, data)
    if spec is None or not symbol:
        return None
    for d in extract_tags(data, spec.name).defs:
        q, s, e = d[1], d[3], d[4]
        if q == symbol and s <= start <= e:
            return s, e
    return None


def replay(record: dict, row: dict, git: str, config: WriterConfig) -> dict:
    """The record with its line ranges as this code's `narrow_prime` would cite them."""
    texts: dict[str, str] = {}
    cites = []
    for n, a in enumerate(record["diagnosis"]["affected_files"]):
        if a["path"] not in texts:
            texts[a["path"]] = _show(git, record["base_commit"], a["path"])
        cites.append(Citation(a["path"], a["line_start"], a["line_end"], a.get("symbol"),
                              Role.cause if n == 0 else Role.related,
                              span=_span(texts[a["path"]], a["path"], a.get("symbol"), a["line_start"], a["line_end"])))
    text = row["problem_statement"]
    focus = Focus.from_text(text)
    if cites:
        cites = narrow_prime(cites, text, focus, report_query(text, focus, RankConfig()), texts, config)
    ranges: dict[str, list[list[int]]] = {}
    for c in cites:
        ranges.setdefault(c.path, []).append([c.start, c.end])
    rule = cites[0].finding.rule if cites and cites[0].finding else "none"
    return record | {"line_ranges": ranges, "ranked_files": list(dict.fromkeys(c.path for c in cites)), "_rule": rule}


def _knobs(ap: argparse.ArgumentParser, settings: list[str]) -> dict[str, object]:
    """`--set NAME=VALUE` overrides as WriterConfig keywords; an unknown knob or a value that is not JSON stops
    the script with the reason."""
    known = {f.name for f in dataclasses.fields(WriterConfig)}
    out: dict[str, object] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in known:
            ap.error(f"--set {setting}: WriterConfig has no knob {name!r} (known: {', '.join(sorted(known))})")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            ap.error(f"--set {setting}: the value is not JSON (a number, true or false)")
    return out


def main() -> None:
    """Print before/after line figures of a split, and how often each rule chose the first line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--split", choices=["tune", "check", "all"], default="tune")
    ap.add_argument("--width", type=int, default=WriterConfig().first_range_lines)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a WriterConfig knob (a JSON value), e.g. --set stay_in_first=0.5")
    ap.add_argument("--changed", action="store_true", help="list the instances whose Hit@1 or Hit@any changed")
    args = ap.parse_args()
    rows = [json.loads(x) for x in args.data.read_text().splitlines() if x.strip()]
    rows = {"tune": rows[0::2], "check": rows[1::2], "all": rows}[args.split]
    by_id = {r["instance_id"]: r for r in rows}
    gits = tomllib.loads(args.repos.read_text())["repos"]
    config = WriterConfig(first_range_lines=args.width, **_knobs(ap, args.set))
    before, after, rules, hits = [], [], Counter(), Counter()
    groups: dict[str, tuple[list, list]] = {}
    for line in args.results.joinpath("results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        row = by_id.get(rec["instance_id"])
        if row is None or rec.get("error") or not rec.get("diagnosis") or rec["repo"] not in gits:
            continue
        gold = row.get("gold_line_ranges") or {}
        new = replay(rec, row, gits[rec["repo"]], config)
        b, a = score(rec, gold), score(new, gold)
        if a is None or b is None:
            continue
        before.append(b)
        after.append(a)
        if args.changed and (a["hit1_narrow"], a["hit_any"]) != (b["hit1_narrow"], b["hit_any"]):
            print(f"changed {rec['instance_id']}: Hit@1 {b['hit1_narrow']} -> {a['hit1_narrow']}, "
                  f"Hit@any {b['hit_any']} -> {a['hit_any']}")
        group = groups.setdefault(str(row.get("language", "")), ([], []))
        group[0].append(b)
        group[1].append(a)
        rules[new["_rule"]] += 1
        hits[new["_rule"]] += a["hit1_narrow"]
    print(json.dumps({"before": summarize(before), "after": summarize(after)}))
    for name, (b, a) in sorted(groups.items()) if len(groups) > 1 else ():
        print(json.dumps({"language": name, "before": summarize(b), "after": summarize(a)}))
    print(json.dumps({r: f"{hits[r]:.0f}/{n}" for r, n in rules.most_common()}))


if __name__ == "__main__":
    main()
