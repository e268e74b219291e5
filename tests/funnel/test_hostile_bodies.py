"""A report's body of one character repeated to the size limit is investigated like any other, not in hours.

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

from schemas.report import MAX_BODY_CHARS
from tests.funnel.harness_support import FIXTURE_REPO

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 90.0

_CHILD = """
import sys
from funnel import Limits
from funnel.run.loop import investigate_sync
from schemas.report import BugReport
unit = sys.argv[1]
body = (unit * ({chars} // len(unit) + 1))[:{chars}]
result = investigate_sync(BugReport(title="crash in pricing", body=body), sys.argv[2], explorer="offline",
                          limits=Limits(history=False))
print(result.diagnosis.termination.reason.value)
"""


@pytest.mark.parametrize("unit", ["\n", " \n", "`", "\\", "https://github.com/"],
                         ids=["blank_lines", "spaces_and_newlines", "backticks", "backslashes", "urls"])  # fmt: skip
def test_a_body_of_one_character_repeated_to_the_limit_is_investigated_to_the_end(unit):
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD.format(chars=MAX_BODY_CHARS), unit, str(FIXTURE_REPO)],
                             capture_output=True, text=True, timeout=BOUND_S, cwd=ROOT)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {BOUND_S:.0f} s")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] in ("done", "needs_info")
