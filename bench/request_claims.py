"""Count, per eval run, what the diagnoses say of the kind of report they answer, and the ranges the verifier cut.

    .venv/bin/python bench/request_claims.py /work/bench-out/ml-A /work/bench-out/ml-C --data ../shared/bench/multilang_dev.jsonl

For the reports the classifier reads as feature requests (`funnel.classify`, run on each instance's text): how many
diagnoses carry that class, how many are worded as a fault (the summary "The behaviour reported in …" or a proposed
"regression test"), how many name a definition the title asks for that the tree lacks ("does not define yet"), how
many name an existing definition of that name on another owner to follow (" has one: "), and how many cite the
place a requested definition would go first ("It would go beside").
For every diagnosis: those whose classification differs from the report's class, and those the verifier had to
correct for a range ending past the end of its file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.data import report_from_statement  # noqa: E402
from bench.name_claims import count_runs  # noqa: E402
from funnel.classify import classify  # noqa: E402
from schemas.enums import Classification  # noqa: E402


def audit(results: Path, kinds: dict[str, Classification]) -> dict[str, int]:
    """The counts of one run's `results.jsonl` (records without a diagnosis or a report are skipped)."""
    counts = dict.fromkeys(("diagnoses", "other_class", "past_the_end", "requests", "request_class",
                            "request_as_fault", "requested", "precedent", "placed"), 0)
    for line in results.joinpath("results.jsonl").read_text().splitlines():
        record = json.loads(line)
        diagnosis, kind = record.get("diagnosis") or {}, kinds.get(record["instance_id"])
        if not diagnosis or kind is None:
            continue
        counts["diagnoses"] += 1
        counts["other_class"] += diagnosis.get("classification") != kind.value
        counts["past_the_end"] += any("past the end of the file" in str(c) for c in diagnosis.get("corrections", []))
        if kind != Classification.feature_request:
            continue
        explanation = (diagnosis.get("root_cause") or {}).get("explanation", "")
        changes = " ".join(c.get("description", "") for c in diagnosis.get("proposed_changes", []))
        counts["requests"] += 1
        counts["request_class"] += diagnosis.get("classification") == kind.value
        counts["request_as_fault"] += (diagnosis.get("summary", "").startswith("The behaviour reported in")
                                       or "regression test" in changes)
        counts["requested"] += "does not define yet" in explanation
        counts["precedent"] += " has one: " in explanation
        counts["placed"] += "It would go beside" in explanation
    return counts


def main() -> None:
    """Print one JSON line of counts per run."""
    count_runs(__doc__.split("\n")[0], lambda run, reports: audit(run, {
        i: classify(report_from_statement(text)).label for i, text in reports.items()}))


if __name__ == "__main__":
    main()
