"""The trace: one JSONL line per event, appended and flushed as the run goes, plus the full transcript beside it.

Files for a trace at `run.jsonl`:

* `run.jsonl`: the events (`schemas.trace.TraceEvent`), one per line; a crash keeps every line written so far.
* `run.messages.json`: the full PydanticAI transcript (`ModelMessagesTypeAdapter`), uncompacted, written at the end.
* `run.diagnosis.json`: the final `Diagnosis`, written at the end when there is one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from funnel.errors import UserError
from schemas.diagnosis import Diagnosis
from schemas.trace import TraceEvent, trace_event_adapter

__all__ = (
    "TraceWriter",
    "diagnosis_path",
    "messages_path",
    "read_diagnosis",
    "read_messages",
    "read_trace",
)

_log = logging.getLogger(__name__)


def messages_path(trace_path: Path) -> Path:
    """Where the full transcript of a trace is stored."""
    return trace_path.with_suffix(".messages.json")


def diagnosis_path(trace_path: Path) -> Path:
    """Where the final diagnosis of a trace is stored."""
    return trace_path.with_suffix(".diagnosis.json")


class TraceWriter:
    """Appends events to a JSONL file (flushed per line), keeps them in memory and forwards them live."""

    def __init__(self, path: Path | None = None, on_event: Callable[[TraceEvent], None] | None = None) -> None:
        self.path = path
        """The JSONL file, or None to keep events in memory only."""
        self.events: list[TraceEvent] = []
        """Every event emitted so far."""
        self._on_event = on_event
        self._fh: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = path.open("w", encoding="utf-8")

    def emit(self, event: TraceEvent) -> None:
        """Record one event: append it to the file, keep it, and pass it to the live callback."""
        self.events.append(event)
        if self._fh is not None:
            self._fh.write(event.model_dump_json() + "\n")
            self._fh.flush()
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:  # a broken listener must not break the investigation
                _log.exception("on_event callback failed")

    def save_messages(self, messages: Sequence[ModelMessage]) -> None:
        """Store the full transcript beside the trace."""
        if self.path is not None:
            messages_path(self.path).write_bytes(ModelMessagesTypeAdapter.dump_json(list(messages), indent=1))

    def save_diagnosis(self, diagnosis: Diagnosis) -> None:
        """Store the final diagnosis beside the trace."""
        if self.path is not None:
            diagnosis_path(self.path).write_text(diagnosis.model_dump_json(indent=1), encoding="utf-8")

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_trace(path: Path) -> list[TraceEvent]:
    """The events of a JSONL trace; a truncated last line (crash mid-write) is skipped, other bad lines raise."""
    if not path.is_file():
        raise UserError(f"no trace file at {path}")
    events: list[TraceEvent] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(trace_event_adapter.validate_json(line))
        except ValidationError as e:
            if n == len(lines):
                _log.warning("skipping truncated last line of %s", path)
                continue
            raise UserError(f"{path}:{n}: not a trace event: {e.errors()[0]['msg']}") from e
    return events


def read_messages(trace_path: Path) -> list[ModelMessage]:
    """The full transcript stored beside a trace (empty when none was stored)."""
    p = messages_path(trace_path)
    if not p.is_file():
        return []
    return list(ModelMessagesTypeAdapter.validate_json(p.read_bytes()))


def read_diagnosis(trace_path: Path) -> Diagnosis | None:
    """The diagnosis stored beside a trace, or None."""
    p = diagnosis_path(trace_path)
    if not p.is_file():
        return None
    try:
        return Diagnosis.model_validate_json(p.read_text(encoding="utf-8"))
    except ValidationError:
        return None

