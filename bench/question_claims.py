"""Count the questions of an eval run's diagnoses that ask the reporter for what the report already holds, and the
summaries whose strength contradicts the confidence shown.

    .venv/bin/python bench/question_claims.py /work/bench-out/ml-A /work/bench-out/ml-B \
        --data ../shared/bench/multilang_dev.jsonl [--list-claims]

A weak diagnosis ends with questions for the reporter. Per run: the diagnoses asking any, the questions, and the
ones that misfit the report: a stack trace asked of a feature request; the version asked though the report's words
name one; what was expected asked though they say it; steps asked though the report holds a code block or a
numbered list (`funnel.explorers.offline.questions`' readings of the report as the investigator reads it, an issue
template's HTML comments hidden; `--list-claims` prints each misfit for a reader to check). And the summaries
saying "Weak evidence only" beside a confidence of 0.5 or more (`weak_said_above_half`), or naming the likely cause
beside less than 0.5 (`firm_said_below_half`), with how often the prime suspect file is right in each group
(`right_when_weak`, `right_when_firm`, from the record's gold files).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.name_claims import count_runs  # noqa: E402
from funnel.explorers.offline.questions import states_expectation, states_steps, states_version  # noqa: E402
from repomap.focus import Focus  # noqa: E402
from schemas.text import visible_markdown  # noqa: E402

_MISFITS = {
    "trace_of_a_request": lambda q, kind, text, focus: kind == "feature_request" and "stack trace" in q,
    "version_given": lambda q, kind, text, focus: "Which version" in q and states_version(text, focus),
    "expectation_given": lambda q, kind, text, focus: "expect to happen" in q and states_expectation(text, focus),
    "steps_given": lambda q, kind, text, focus: "steps that reproduce" in q and states_steps(text, focus),
}


def audit(results: Path, reports: dict[str, str], *, list_claims: bool = False) -> dict[str, int]:
    """The counts of one run's `results.jsonl` (records without a diagnosis are skipped); with `list_claims`, each
    misfit question on stderr."""
    counts = ({"diagnoses": 0, "asking": 0, "questions": 0, "misfits": 0} | dict.fromkeys(_MISFITS, 0)
              | dict.fromkeys(("weak", "right_when_weak", "firm", "right_when_firm", "weak_said_above_half",
                               "firm_said_below_half"), 0))
    for line in results.joinpath("results.jsonl").read_text().splitlines():
        record = json.loads(line)
        diagnosis = record.get("diagnosis") or {}
        text = reports.get(record["instance_id"])
        if not diagnosis or text is None:
            continue
        text = visible_markdown(text)  # as the investigator reads it: an issue template's comments hidden
        counts["diagnoses"] += 1
        _strength(counts, diagnosis, record)
        questions = diagnosis.get("open_questions") or []
        counts["asking"] += bool(questions)
        counts["questions"] += len(questions)
        focus = Focus.from_text(text)
        for question in questions:
            found = [name for name, misfit in _MISFITS.items()
                     if misfit(question, diagnosis.get("classification"), text, focus)]
            for name in found:
                counts[name] += 1
            counts["misfits"] += bool(found)
            if list_claims and found:
                print(f"  {record['instance_id']} ({', '.join(found)}): {question}", file=sys.stderr)
    return counts


def _strength(counts: dict[str, int], diagnosis: dict, record: dict) -> None:
    """Count whether the summary calls the evidence weak, whether the confidence shown agrees, and whether the prime
    suspect file is one the fix changed."""
    weak = diagnosis.get("summary", "").startswith("Weak evidence only")
    confidence = diagnosis.get("confidence") or 0.0
    prime = next(iter(diagnosis.get("affected_files") or []), {}).get("path")
    right = prime is not None and record.get("scores", {}).get("ours", {}).get("first_gold_rank") == 1
    group = "weak" if weak else "firm"
    counts[group] += 1
    counts[f"right_when_{group}"] += right
    counts["weak_said_above_half"] += weak and confidence >= 0.5
    counts["firm_said_below_half"] += not weak and confidence < 0.5


def main() -> None:
    """Print one JSON line of counts per run."""
    count_runs(__doc__.split("\n")[0], audit, flags={"list_claims": "print each misfit question (stderr)"})


if __name__ == "__main__":
    main()
