import json

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from app.cli import cli
from schemas import AffectedFile, Diagnosis, SCHEMA_VERSION, StopEvent, StopReason, trace_event_adapter


def test_schema_command_prints_versioned_json_schema():
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["version"] == SCHEMA_VERSION
    assert "affected_files" in schema["properties"]


def test_affected_file_rejects_reversed_range():
    with pytest.raises(ValidationError, match="before line_start"):
        AffectedFile(path="a.py", line_start=10, line_end=2)


def test_diagnosis_rejects_unknown_fields():
    with pytest.raises(ValidationError):
        Diagnosis.model_validate({"summary": "x", "surprise": 1})


def test_trace_event_round_trips_through_json():
    event = StopEvent(reason=StopReason.step_budget, detail="12 >= 12")
    back = trace_event_adapter.validate_json(event.model_dump_json())
    assert back == event


@pytest.mark.parametrize("path, ok", [("x:12.py", True), ("src/a:b.py", True), ("~notes.py", True),
                                      ("~src/a.py", True), ("C:/Windows/win.ini", False), ("/etc/passwd", False),
                                      ("~/a.py", False), ("~", False), ("src\\a.py", False), ("src/../a.py", False)])
def test_a_cited_path_is_refused_only_when_it_is_absolute_or_not_normalized(path, ok):
    if ok:
        assert AffectedFile(path=path, line_start=1, line_end=1).path == path
    else:
        with pytest.raises(ValidationError):
            AffectedFile(path=path, line_start=1, line_end=1)
