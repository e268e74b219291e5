"""A report's body of one character repeated to the size limit is investigated like any other, not in hours; a
degenerate model reply (one tag, then whitespace to the token limit; a tag repeated) is read in a moment.

A body comes from whoever files the issue. Patterns that backtracked over a run of one character (`^\\s*` over
blank lines in the classifier, the stack-frame and import readers; a fence's info string over backticks) cost time
quadratic in the run: 200,000 newlines kept a worker busy for over an hour. Each body runs in its own process,
stopped after a bound no sound run comes near (they take about a second; `bench/hostile_bodies.py` has the figures).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.hostile_bodies import SHAPES, run_shape
from schemas.report import MAX_BODY_CHARS

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 90.0


@pytest.mark.parametrize("shape", ["blank_lines", "spaces_and_newlines", "backticks", "backslashes", "urls"])
def test_a_body_of_one_character_repeated_to_the_limit_is_investigated_to_the_end(shape):
    seconds, ended = run_shape(ROOT, SHAPES[shape], MAX_BODY_CHARS, BOUND_S)
    assert seconds is not None, f"still running after {BOUND_S:.0f} s"
    assert ended in ("done", "needs_info"), ended


_REPLY = """
import sys
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition
from funnel.tool_calls import repair_response
from funnel.thinking import split_thinking
from funnel.report.parse import parse_report
tool = ToolDefinition(name="search", parameters_json_schema={{"type": "object", "properties": {{"pattern": {{}}}}}})
text = sys.argv[1] + sys.argv[2] * {repeat}
repair_response(split_thinking(ModelResponse(parts=[TextPart(text)])), ModelRequestParameters(function_tools=[tool]))
parse_report(text)
print("read")
"""


@pytest.mark.parametrize(("head", "unit"), [("<tool_call>", "\n"), ("<tool_call>", " "), ("```tool_code\n", " "),
                                            ("", "<tool_call>"), ("", "<function_calls>"), ("", "```json\n{"),
                                            ("", "</think>")],
                         ids=["tag_then_newlines", "tag_then_spaces", "fence_then_spaces", "tags", "xml_blocks",
                              "json_fences", "thinking_closes"])  # fmt: skip
def test_a_degenerate_model_reply_is_read_to_the_end(head, unit):
    code = _REPLY.format(repeat=30_000 // len(unit))
    try:
        out = subprocess.run([sys.executable, "-c", code, head, unit], capture_output=True, text=True,
                             timeout=BOUND_S, cwd=ROOT)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"still reading after {BOUND_S:.0f} s")
    assert out.returncode == 0 and out.stdout.split() == ["read"], out.stderr[-2000:]
