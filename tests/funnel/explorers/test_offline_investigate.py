"""The offline investigator end to end: through the real harness, tools, verification and structuring."""

from __future__ import annotations

from pathlib import Path

import pytest

from funnel.explorers.offline import OfflineExplorer
from funnel.explorers.offline.policy import OfflineConfig
from funnel.localize.rank import RankConfig
from funnel import investigate
from funnel.report.parse import parse_report
from schemas.diagnosis import Diagnosis
from schemas.enums import Role, StopReason
from schemas.report import BugReport
from tests.funnel.harness_support import FIXTURE_REPO
from tests.funnel.localize.test_offline_rank import GO_REPO, GO_REPORT, JAVA_REPO, JAVA_REPORT, NODE_REPO, NODE_REPORT, PY_REPO, RUST_REPO, RUST_REPORT, _make

PY_TRACE_REPORT = """Session.request crashes on a negative timeout

```
Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/pkg/client.py", line 4, in request
    raise ValueError('Timeout value must be a non-negative number')
ValueError: Timeout value must be a non-negative number
```
"""


def _report(text: str) -> BugReport:
    title, _, body = text.partition("\n")
    return BugReport(title=title, body=body)


@pytest.mark.parametrize(
    ("files", "text", "expected"),
    [
        (PY_REPO, PY_TRACE_REPORT, "pkg/client.py"),
        (GO_REPO, GO_REPORT, "internal/queue/ring.go"),
        (RUST_REPO, RUST_REPORT, "src/parser/lexer.rs"),
        (NODE_REPO, NODE_REPORT, "src/lib/header.js"),
        (JAVA_REPO, JAVA_REPORT, "src/main/java/com/example/shop/OrderService.java"),
    ],
    ids=["python", "go", "rust", "node", "java"],
)
async def test_offline_investigation_names_the_prime_suspect(tmp_path, files, text, expected):
    root = _make(tmp_path / "repo", files)
    result = await investigate(_report(text), root, explorer=OfflineExplorer())
    diagnosis = result.diagnosis
    assert isinstance(Diagnosis.model_validate_json(diagnosis.model_dump_json()), Diagnosis)
    assert diagnosis.termination.reason == StopReason.done, diagnosis.termination
    assert diagnosis.ranked_files()[0] == expected
    assert diagnosis.affected_files[0].role == Role.cause and diagnosis.affected_files[0].symbol
    assert diagnosis.stats.tool_calls <= 24
    assert diagnosis.stats.explorer == "offline"
    assert diagnosis.root_cause is not None and expected in " ".join(diagnosis.root_cause.evidence + [diagnosis.root_cause.explanation])


async def test_offline_report_quotes_the_lines_it_read(tmp_path):
    root = _make(tmp_path / "repo", PY_REPO)
    result = await investigate(_report(PY_TRACE_REPORT), root, explorer=OfflineExplorer())
    draft = parse_report(result.report_markdown)
    prime = draft.affected_files[0]
    lines = (root / prime.path).read_text().split("\n")
    assert prime.evidence and prime.evidence.split("\n")[0] in lines[prime.line_start - 1: prime.line_end]
    assert "raise ValueError" in result.report_markdown
    tools = [e.tool for e in result.events if getattr(e, "kind", "") == "tool_call"]
    assert "read_range" in tools and "search" in tools


async def test_low_evidence_report_gets_low_confidence_and_questions(tmp_path):
    root = _make(tmp_path / "repo", PY_REPO)
    result = await investigate(_report("It is broken\nSomething is wrong sometimes, please fix."), root,
                               explorer=OfflineExplorer())  # fmt: skip
    diagnosis = result.diagnosis
    assert diagnosis.confidence <= 0.35
    assert diagnosis.open_questions


async def test_report_matching_nothing_asks_the_reporter(tmp_path):
    root = _make(tmp_path / "repo", {"a.py": "x = 1\n"})
    result = await investigate(_report("Zzzq qqxv\nwwvk"), root, explorer=OfflineExplorer())
    assert result.diagnosis.termination.reason == StopReason.needs_info
    assert result.diagnosis.open_questions or result.diagnosis.termination.detail
    assert "which module, command or page" in result.diagnosis.termination.detail


async def test_a_repository_without_source_files_asks_whether_the_report_reached_the_right_one(tmp_path):
    root = _make(tmp_path / "repo", {"README.md": "# Amount\n\nThe converter drops cents.\n"})
    result = await investigate(_report("Amount drops the cents\nstd::string(Amount{250}) gives 2"), root,
                               explorer=OfflineExplorer())  # fmt: skip
    assert result.diagnosis.termination.reason == StopReason.needs_info
    detail = result.diagnosis.termination.detail
    assert "no source file to investigate at this commit (left out: 1 unsupported)" in detail
    assert "right repository and branch" in detail


async def test_a_report_matching_nothing_citable_says_which_files_their_names_left_out(tmp_path):
    root = _make(tmp_path / "repo", {"src/util.py": "def double(x):\n    return 2 * x\n",
                                     "src/to\\tal.py": "def compute_total(amount):\n    return amount / 100\n"})
    result = await investigate(_report("compute_total drops the cents\ncompute_total(250) gives 2"), root,
                               explorer=OfflineExplorer())  # fmt: skip
    assert result.diagnosis.termination.reason == StopReason.needs_info
    assert "1 file(s) were left out because their names hold" in result.diagnosis.termination.detail


async def test_tool_calls_stay_within_the_budget_median(tmp_path):
    root = _make(tmp_path / "repo", NODE_REPO)
    counts = []
    for text in (NODE_REPORT, NODE_REPORT.replace("Crash", "Failure"), "parseHeader fails\nwith undefined headers"):
        result = await investigate(_report(text), root, explorer=OfflineExplorer())
        counts.append(result.diagnosis.stats.tool_calls)
    assert sorted(counts)[1] <= 10 and max(counts) <= 24


async def test_explorer_config_knobs_change_the_citations(tmp_path):
    root = _make(tmp_path / "repo", PY_REPO)
    explorer = OfflineExplorer(OfflineConfig(rank=RankConfig(test_factor=1.0)))
    result = await investigate(_report(PY_TRACE_REPORT), root, explorer=explorer)
    assert explorer.last_policy is not None and explorer.last_policy.ranking is not None
    assert result.diagnosis.ranked_files()[0] == "pkg/client.py"


DURATION = '''class DurationField:
    default_error_messages = {
        "invalid": "value has an invalid format. It must be in the duration layout.",
    }

    def get_internal_type(self):
        return "DurationField"

    def to_python(self, value):
        return value
'''


async def test_the_root_cause_quotes_the_line_that_holds_the_reported_message(tmp_path):
    root = _make(tmp_path / "repo", {"fields/duration.py": DURATION, "fields/other.py": "def other():\n    return 1\n"})
    text = ('DurationField shows the wrong format\nThe error reads "value has an invalid format. It must be in the '
            'duration layout" but the field accepts more.')
    explanation = (await investigate(_report(text), root, explorer=OfflineExplorer())).diagnosis.root_cause.explanation
    assert "holds text the report quotes" in explanation
    assert "Line 3 of the file holds" in explanation or "line 3 reads" in explanation


async def test_the_proposed_change_quotes_a_message_never_a_fragment_of_code(tmp_path):
    root = _make(tmp_path / "repo", PY_REPO)
    code = "The output is wrong for\n```\nprint(', x) << ' ')\n```\nand 'nothing is printed at all' here."
    result = await investigate(_report(code), root, explorer=OfflineExplorer())
    description = result.diagnosis.proposed_changes[0].description
    assert "<<" not in description
    assert "“nothing is printed at all”" in description or "report shows" not in description


async def test_a_patch_in_the_report_for_the_cited_line_is_the_proposed_change(tmp_path):
    root = _make(tmp_path / "repo", {"pkg/render.py": "def render_title(card, title):\n    return title\n\n\n"
                                     "def render_body(card, body):\n    lines = body.split(card.separator)\n"
                                     "    return [line for line in lines if line]\n"})
    text = ("Card rendering drops the separator\nThis fixes it for me:\n```diff\n--- a/pkg/render.py\n"
            "+++ b/pkg/render.py\n@@ -5,3 +5,3 @@\n def render_body(card, body):\n"
            "-    lines = body.split(card.separator)\n+    lines = body.split(card.separator or None)\n"
            "     return [line for line in lines if line]\n```\n")
    diagnosis = (await investigate(_report(text), root, explorer=OfflineExplorer())).diagnosis
    assert diagnosis.proposed_changes[0].description.startswith(
        "The report's patch replaces line 6 (`lines = body.split(card.separator)`) with "
        "`lines = body.split(card.separator or None)`")
    assert diagnosis.proposed_changes[0].diff is None  # described, never applied


async def test_a_suspect_whose_file_name_holds_a_space_is_verified_at_the_first_attempt(tmp_path):
    root = _make(tmp_path / "repo", {"src/with space.py": "def compute_total(amount):\n    return amount // 100\n"})
    result = await investigate(_report("compute_total drops the cents\ncompute_total(250) returns 2, not 2.50"), root,
                               explorer=OfflineExplorer())  # fmt: skip
    assert result.diagnosis.termination.reason == StopReason.done
    assert [c.path for c in result.diagnosis.proposed_changes] == ["src/with space.py"]
    assert result.diagnosis.stats.claims_rejected == 0


async def test_a_suspect_holding_a_latin1_byte_is_verified_at_the_first_attempt(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "price.py").write_bytes(b'def format_price(amount):\n    label = "Prix: \xe9 %d" % amount\n'
                                            b"    return label / 100\n")
    report = "format_price raises TypeError\nTypeError: unsupported operand type(s) for /: 'str' and 'int'"
    result = await investigate(_report(report), root, explorer=OfflineExplorer())
    assert result.diagnosis.termination.reason == StopReason.done
    assert result.diagnosis.stats.claims_rejected == 0
    assert result.diagnosis.affected_files[0].path == "src/price.py"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
async def test_a_suspect_saved_as_utf16_is_read_searched_and_verified_like_any_source(tmp_path, codec):
    """Windows PowerShell's `>` and older Visual Studio projects save UTF-16 with a byte-order mark; its NUL bytes
    made the file binary, so the tree held "no source file to investigate"."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    text = 'def format_price(amount):\r\n    label = "Prix: é %d" % amount\r\n    return label / 100\r\n'
    (root / "src" / "price.py").write_bytes("\ufeff".encode(codec) + text.encode(codec))
    report = "format_price raises TypeError\nTypeError: unsupported operand type(s) for /: 'str' and 'int'"
    result = await investigate(_report(report), root, explorer=OfflineExplorer())
    dx = result.diagnosis
    assert dx.termination.reason == StopReason.done and dx.stats.claims_rejected == 0
    assert [(f.path, f.symbol) for f in dx.affected_files[:1]] == [("src/price.py", "format_price")]
    assert "return label / 100" in dx.affected_files[0].evidence


FORMSETS = '''class ManagementForm:
    def clean(self, data):
        data.setdefault("total_forms", 0)
        warn_template("default.html", data)
        return data


def warn_template(name, data):
    return name
'''


async def test_the_root_cause_claims_only_the_name_the_report_writes(tmp_path):
    root = _make(tmp_path / "repo", {"forms/formsets.py": FORMSETS, "forms/other.py": "def other():\n    return 1\n"})
    text = "ManagementForm raises the default.html deprecation warning\nThe total_forms data of a ManagementForm warns."
    explanation = (await investigate(_report(text), root, explorer=OfflineExplorer())).diagnosis.root_cause.explanation
    assert "The report names `ManagementForm`; its member `ManagementForm.clean`" in explanation
    assert "The report names `ManagementForm.clean`" not in explanation


async def test_the_root_cause_does_not_claim_a_plain_word_as_a_name(tmp_path):
    source = "def indices(array, wanted):\n    return [k for k in wanted if k < len(array)]\n"
    root = _make(tmp_path / "repo", {"src/indices.py": source, "src/other.py": "def other():\n    return 1\n"})
    text = "Negative indices wrap twice\nAn array of three with wanted negative indices wraps around twice."
    diagnosis = (await investigate(_report(text), root, explorer=OfflineExplorer())).diagnosis
    assert diagnosis.affected_files[0].symbol == "indices"
    assert "The report names" not in diagnosis.root_cause.explanation
    assert "named in the report" not in diagnosis.root_cause.explanation


BLANK_LINE_REPO = {
    "shop/cart.py": "def total(items, discount):\n    subtotal = sum(i.price for i in items)\n\n"
                    "    return subtotal - discount\n",
    "shop/views.py": "def view():\n    return 1\n",
}
BLANK_LINE_REPORT = """Checkout total ignores the discount

The total comes out without the discount; see line 3 of shop/cart.py.
"""


async def test_evidence_quotes_the_nearest_code_where_the_line_pointed_at_is_blank(tmp_path):
    root = _make(tmp_path / "repo", BLANK_LINE_REPO)
    result = await investigate(_report(BLANK_LINE_REPORT), root, explorer=OfflineExplorer())
    evidence = result.diagnosis.root_cause.evidence
    assert evidence and all(not item.endswith(": ``") for item in evidence)
    assert any(item.startswith("`shop/cart.py:4` in `total`: `return subtotal - discount`") for item in evidence)


async def test_a_code_line_the_report_pastes_without_a_fence_is_named_as_its_quote():
    report = BugReport(title="apply_discount removes the whole price",
                       body="In shop/pricing.py the line\n\nreturn price_cents - price_cents * percent // 10\n\n"
                            "takes 100% off for a 10% discount.")  # fmt: skip
    result = await investigate(report, FIXTURE_REPO, explorer="offline")
    explanation = result.diagnosis.root_cause.explanation
    assert "Line 8 there is the line the report quotes: `return price_cents - price_cents * percent // 10`" in explanation
    assert "shares the most terms" not in explanation
