"""`bugsleuth investigate --explorer openai-chat:M` against a server that plays behaviours 1-2, as a user runs it:
the CLI in its own process, the model over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from funnel.run.trace import read_trace
from schemas.diagnosis import Diagnosis
from tests.funnel.conformance._checks import check_causal_trace, check_no_hallucination
from tests.funnel.conformance._server import ModelServer
from tests.funnel.conformance.scenarios import literal_model, template_location
from tests.funnel.harness_support import FIXTURE_REPO, REPORT

ROOT = Path(__file__).resolve().parents[3]


def test_the_cli_with_a_literal_model_ends_done_with_only_real_paths(tmp_path):
    report = tmp_path / "issue.md"
    report.write_text(f"{REPORT.title}\n\n{REPORT.body}\n")
    trace = tmp_path / "run.jsonl"
    with ModelServer(literal_model()) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test",
               "PYTHONPATH": str(ROOT)}  # fmt: skip
        cmd = [sys.executable, "-c", "from app.cli import main; main()", "investigate", str(FIXTURE_REPO),
               "--report", str(report), "--explorer", "openai-chat:fake-model", "--json", "--no-history",
               "--no-fallback", "--trace", str(trace)]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    dx = json.loads(done.stdout)
    assert dx["termination"]["reason"] == "done" and dx["stats"]["attempts"] == 2
    diagnosis = Diagnosis.model_validate(dx)
    check_no_hallucination(diagnosis, FIXTURE_REPO)
    assert [f.path for f in diagnosis.affected_files] == ["shop/pricing.py"]
    copied = template_location(requests[0])
    assert copied not in done.stdout and "shop/prices.py" not in {f.path for f in diagnosis.affected_files}
    assert "placeholder from the report template" in done.stderr or "placeholder" in trace.read_text()
    check_causal_trace(read_trace(trace))
    assert len(requests) == 7  # 3 explore, 1 deep-dive, report, attempt 2: finish_deep_dive again, report
