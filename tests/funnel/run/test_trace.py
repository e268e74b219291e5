"""The JSONL trace: written and flushed per event, read back leniently, transcript and diagnosis beside it."""

from __future__ import annotations

import pytest

from funnel.errors import UserError
from funnel.run.loop import investigate
from funnel.run.trace import TraceWriter, diagnosis_path, messages_path, read_diagnosis, read_messages, read_trace
from schemas.enums import Phase, StopReason
from schemas.trace import RequestEvent, StartEvent, StopEvent
from tests.funnel.harness_support import FIXTURE_REPO, HAPPY_STEPS, REPORT, Script, ScriptExplorer


def test_events_round_trip_through_the_file(tmp_path):
    path = tmp_path / "t.jsonl"
    got = []
    w = TraceWriter(path, got.append)
    w.emit(StartEvent(explorer="x"))
    w.emit(RequestEvent(input_tokens=5, phase=Phase.deep_dive, iteration=2))
    w.emit(StopEvent(reason=StopReason.done))
    w.close()
    back = read_trace(path)
    assert back == got == w.events
    assert back[1].input_tokens == 5 and back[1].phase == Phase.deep_dive


def test_a_truncated_last_line_is_skipped_but_a_bad_middle_line_is_an_error(tmp_path):
    path = tmp_path / "t.jsonl"
    w = TraceWriter(path)
    w.emit(StartEvent(explorer="x"))
    w.emit(StopEvent(reason=StopReason.done))
    w.close()
    good = path.read_text()
    path.write_text(good + '{"kind": "request", "input_tok')
    assert [e.kind for e in read_trace(path)] == ["start", "stop"]
    path.write_text('{"kind": "nope"}\n' + good)
    with pytest.raises(UserError, match=":1: not a trace event"):
        read_trace(path)
    with pytest.raises(UserError, match="no trace file"):
        read_trace(tmp_path / "missing.jsonl")


def test_a_failing_listener_does_not_break_the_trace(tmp_path):
    def boom(event):
        raise RuntimeError("listener down")

    w = TraceWriter(tmp_path / "t.jsonl", boom)
    w.emit(StartEvent(explorer="x"))
    w.close()
    assert len(read_trace(tmp_path / "t.jsonl")) == 1


async def test_a_run_stores_transcript_and_diagnosis_beside_the_trace(tmp_path):
    trace = tmp_path / "run.jsonl"
    result = await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(HAPPY_STEPS)), trace_path=trace)
    assert messages_path(trace).name == "run.messages.json" and diagnosis_path(trace).name == "run.diagnosis.json"
    assert read_messages(trace) == result.messages
    assert read_diagnosis(trace) == result.diagnosis
    events = read_trace(trace)
    assert [e.iteration for e in events if e.kind == "request"] == [1, 2, 3, 4, 5, 6]
    assert events[0].limits["explore_calls"] == 8


class _Killed(BaseException):
    pass


async def test_a_crash_mid_run_keeps_the_lines_written(tmp_path, monkeypatch):
    trace = tmp_path / "crash.jsonl"

    def crash(state):
        if state.iterations == 2:
            raise _Killed  # not an Exception: escapes the run like a kill would
        return None

    monkeypatch.setattr("funnel.run.loop.check_stop", crash)
    with pytest.raises(_Killed):
        await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(HAPPY_STEPS)), trace_path=trace)
    kinds = [e.kind for e in read_trace(trace)]
    assert kinds[:3] == ["start", "request", "tool_call"]
    assert read_messages(trace)  # the transcript is saved in `finally`
    assert kinds[-1] == "stop"


async def test_on_event_is_always_called_on_the_event_loop_thread():
    import threading

    loop_thread = threading.get_ident()
    threads = set()
    await investigate(REPORT, FIXTURE_REPO, explorer=ScriptExplorer(Script(HAPPY_STEPS)),
                      on_event=lambda e: threads.add(threading.get_ident()))  # fmt: skip
    assert threads == {loop_thread}
