"""Count the behaviour findings of an eval run whose words say the wrong thing of what their line does with a name.

    .venv/bin/python bench/use_claims.py /work/bench-out/ml-A /work/bench-out/ml-B --data ../shared/bench/multilang_dev.jsonl \
        --repos bench/repos-multilang.toml [--list-claims]

A behaviour finding reads "`X`, which the report names, is compared at file.py:12 (…)" (or returned, passed,
defaulted, raised, read). The claim is checked against the cited file at the instance's commit: what the line does with
`X` by `X`'s own place in the tree (`funnel.localize.reasoning.uses.name_use`: `fmt` handed to a call in a branch
of a conditional is passed there, not compared). Per run: the claims and the ones the tree contradicts.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._trees import show_blob  # noqa: E402
from bench.name_claims import count_runs  # noqa: E402
from funnel.localize.reasoning.uses import name_use  # noqa: E402
from repomap.languages import grammar, language_for  # noqa: E402

_CLAIM = re.compile(r"`([^`]+)`, which the report names, is (compared|returned|passed|defaulted|raised|read) at "
                    r"([^\s:`]+):(\d+)")


def audit(results: Path, reports: dict[str, str], gits: dict[str, Path], *, list_claims: bool = False) -> dict[str, int]:
    """The counts of one run's `results.jsonl` (records without a diagnosis or a known repository are skipped);
    with `list_claims`, each contradicted claim on stderr."""
    counts = {"diagnoses": 0, "claims": 0, "contradicted": 0}
    for line in results.joinpath("results.jsonl").read_text().splitlines():
        record = json.loads(line)
        diagnosis = record.get("diagnosis") or {}
        if not diagnosis or record["repo"] not in gits or record["instance_id"] not in reports:
            continue
        counts["diagnoses"] += 1
        explanation = (diagnosis.get("root_cause") or {}).get("explanation", "")
        for name, said, base, ln in _CLAIM.findall(explanation):
            path = next((a["path"] for a in diagnosis.get("affected_files", [])
                         if a["path"].rpartition("/")[2] == base), None)
            data = show_blob(gits[record["repo"]], record["base_commit"], path) if path else b""
            spec = language_for(path, data) if path else None
            if spec is None:
                continue
            use = name_use(grammar(spec.name).parser.parse(data).root_node, int(ln), name) or "read"
            counts["claims"] += 1
            counts["contradicted"] += use != said
            if list_claims and use != said:
                print(f"  {record['instance_id']}: `{name}` {said} -> {use} at {path}:{ln}", file=sys.stderr)
    return counts


def main() -> None:
    """Print one JSON line of counts per run."""
    count_runs(__doc__.split("\n")[0], audit, repos=True, flags={"list_claims": "print each contradicted claim (stderr)"})


if __name__ == "__main__":
    main()
