"""A stand-in for `funnel.investigate_sync` in eval tests: it ranks what the problem statement tells it to.

A line `STUB-RANK: path[:symbol][:start-end], ...` in the statement sets the affected files; `STUB-CRASH`
makes it raise, `STUB-DIE` kills its process (`STUB-DIE-ON: <path>`: once that file exists). Every call is
logged (report and keyword arguments) into $EVAL_STUB_LOG, so tests can see exactly what reached the investigation, even from spawned worker processes.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from schemas import AffectedFile, Diagnosis, RunStats, Termination
from schemas.enums import StopReason


@dataclass
class StubResult:
    """Same shape as funnel's InvestigationResult."""

    diagnosis: Diagnosis
    report_markdown: str = ""
    events: list[object] = field(default_factory=list)


def investigate(report, root, **kwargs):  # type: ignore[no-untyped-def]
    """Log the call, then rank the files the statement names (each must exist in the tree)."""
    log = os.environ.get("EVAL_STUB_LOG")
    if log:
        entry = {"report": report.model_dump(mode="json"), "root": str(root),
                 "kwargs": {k: str(v) for k, v in kwargs.items()}, "pid": os.getpid()}
        (Path(log) / f"{uuid.uuid4().hex}.json").write_text(json.dumps(entry))
    text = report.text
    if flag := re.search(r"STUB-DIE-ON: (\S+)", text):
        _wait_for(Path(flag.group(1)))
    if "STUB-DIE" in text:
        os._exit(3)  # a worker killed outright (out of memory, signal)
    if "STUB-CRASH" in text:
        raise RuntimeError("stub investigation exploded")
    affected = []
    match = re.search(r"STUB-RANK: (.*)", text)
    for item in (match.group(1).split(",") if match else []):
        parts = item.strip().split(":")
        path, symbol, lines = parts[0], None, (1, 1)
        for extra in parts[1:]:
            if re.fullmatch(r"\d+-\d+", extra):
                lines = tuple(int(x) for x in extra.split("-"))
            else:
                symbol = extra
        assert (Path(root) / path).is_file(), f"{path} not in the tree"
        affected.append(AffectedFile(path=path, symbol=symbol, line_start=lines[0], line_end=lines[1]))
    diagnosis = Diagnosis(affected_files=affected, termination=Termination(reason=StopReason.done),
                          stats=RunStats(tool_calls=len(affected) * 2, input_tokens=100, output_tokens=10))
    return StubResult(diagnosis)


def _wait_for(path: Path, limit: float = 120.0) -> None:
    waited = 0.0
    while not path.exists() and waited < limit:
        time.sleep(0.05)
        waited += 0.05
