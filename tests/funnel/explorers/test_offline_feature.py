"""The offline report of a feature request, end to end: through the real harness, tools and verification."""

from __future__ import annotations

from funnel import investigate
from funnel.explorers.offline import OfflineExplorer
from funnel.explorers.offline.feature import with_precedent
from funnel.localize.corpus import SymbolSpan
from funnel.localize.requested import Addition, Precedent
from schemas.enums import Classification, Risk, StopReason
from schemas.report import BugReport
from tests.funnel.localize.test_offline_rank import _make
from tests.funnel.localize.test_requested import ORDERS_PY, WATCH_RS

FILES = {"src/watch.rs": WATCH_RS, "shop/orders.py": ORDERS_PY, "src/lib.rs": "pub mod watch;\n"}


async def test_a_requested_member_is_placed_after_the_member_it_resembles(tmp_path):
    report = BugReport(title="Add `mark_unchanged` for `watch::Receiver`",
                       body="It would be nice to mark the current version seen without borrowing the value, the "
                            "opposite of what mark_changed does on the Receiver.")
    dx = (await investigate(report, _make(tmp_path / "repo", FILES), explorer=OfflineExplorer())).diagnosis
    first = dx.affected_files[0]
    assert dx.termination.reason == StopReason.done and not dx.termination.detail  # verified at the first attempt
    assert dx.classification == Classification.feature_request
    assert dx.summary.startswith("The report asks for new behaviour")
    assert (first.path, first.symbol) == ("src/watch.rs", "Receiver.mark_changed")
    assert first.line_start <= 13 < first.line_end  # mark_changed ends at line 13; the room after it is cited
    assert "`mark_unchanged`, which `Receiver` does not define yet" in dx.root_cause.explanation
    assert "best match" not in dx.root_cause.explanation
    assert dx.proposed_changes[0].description.startswith("Add `mark_unchanged` to `Receiver` in `src/watch.rs`, after "
                                                         "`Receiver.mark_changed` (line 13)")
    assert dx.risk.level == Risk.low


async def test_a_request_naming_nothing_new_proposes_to_extend_the_cited_definition(tmp_path):
    report = BugReport(title="Support a currency in total", body="It would be nice if total(orders) took a currency.")
    dx = (await investigate(report, _make(tmp_path / "repo", FILES), explorer=OfflineExplorer())).diagnosis
    assert dx.classification == Classification.feature_request
    assert dx.root_cause.explanation.startswith("The report asks for new behaviour rather than reporting a fault")
    assert dx.affected_files[0].symbol == "total"
    assert dx.proposed_changes[0].description.startswith("Extend `total` to provide what the report asks for")
    assert "regression" not in dx.proposed_changes[0].description and dx.risk.level == Risk.medium


async def test_a_bug_report_naming_a_missing_member_is_still_worded_as_a_fault(tmp_path):
    report = BugReport(title="`Receiver::mark_unchanged` is missing after the upgrade",
                       body="Calling mark_unchanged on the Receiver fails to compile since 1.2; mark_changed works.")
    dx = (await investigate(report, _make(tmp_path / "repo", FILES), explorer=OfflineExplorer())).diagnosis
    assert dx.classification == Classification.bug
    assert dx.summary.startswith("The behaviour reported in")
    assert "does not define yet" not in dx.root_cause.explanation


async def test_a_first_range_widened_at_the_end_of_a_file_cites_only_lines_it_has(tmp_path):
    source = "def total(orders):\n    return sum(o.amount for o in orders)\n\n\ndef names(orders):\n    return [o.name for o in orders]\n"
    root = _make(tmp_path / "repo", {"shop/orders.py": source})
    report = BugReport(title="names returns the wrong list", body="names(orders) returns the names in the wrong order.")
    dx = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis
    first = dx.affected_files[0]
    assert first.symbol == "names" and first.line_end == 6  # the file's six lines; its final newline starts no seventh
    assert f"(`shop/orders.py:{first.line_start}-6`)" in dx.root_cause.explanation


async def test_a_rule_fired_in_a_request_says_where_the_requested_behaviour_would_be_decided(tmp_path):
    source = 'def render(text, color=True):\n    if color:\n        return "<b>" + text + "</b>"\n    return text\n'
    root = _make(tmp_path / "repo", {"cli/render.py": source})
    report = BugReport(title="Support the NO_COLOR environment variable in render",
                       body="It would be nice if render turned `color` off when NO_COLOR is set.")
    dx = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis
    explanation = dx.root_cause.explanation
    assert "The requested behaviour touches `render` (`cli/render.py:2`)" in explanation
    assert "would be decided here" in explanation and "The reported behaviour" not in explanation
    assert dx.proposed_changes[0].description.startswith("Extend `render` (at line 2) to provide what the report asks for")


async def test_a_file_without_definitions_is_cited_to_its_last_line_with_nothing_to_correct(tmp_path):
    root = _make(tmp_path / "repo", {"scripts/run.py": "import os\nprint(os.sep.join(['a', 'b']))\n"})
    report = BugReport(title="scripts/run.py prints the wrong separator", body="`python scripts/run.py` prints a/b on Windows.")
    dx = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis
    assert (dx.affected_files[0].path, dx.affected_files[0].line_end) == ("scripts/run.py", 2)
    assert dx.stats.claims_corrected == 0 and dx.corrections == []


async def test_a_patch_in_a_request_is_checked_against_the_requested_behaviour(tmp_path):
    root = _make(tmp_path / "repo", {"pkg/render.py": "def render_body(card, body):\n    lines = body.split(card.separator)\n"
                                     "    return [line for line in lines if line]\n"})
    body = ("It would be nice to split on any whitespace when no separator is set:\n```diff\n--- a/pkg/render.py\n"
            "+++ b/pkg/render.py\n@@ -1,3 +1,3 @@\n def render_body(card, body):\n"
            "-    lines = body.split(card.separator)\n+    lines = body.split(card.separator or None)\n"
            "     return [line for line in lines if line]\n```\n")
    dx = (await investigate(BugReport(title="Support cards without a separator", body=body), root,
                            explorer=OfflineExplorer())).diagnosis
    assert dx.classification == Classification.feature_request
    assert dx.proposed_changes[0].description.startswith("The report's patch replaces line 2")
    assert dx.proposed_changes[0].description.endswith(
        "check it against the requested behaviour; add a test of the new behaviour.")


async def test_a_request_for_a_member_another_owner_has_proposes_to_follow_that_one(tmp_path):
    report = BugReport(title="Expose a `try_io` method on `Receiver`",
                       body="It would be nice to try an operation on the Receiver without waiting for a change.")
    dx = (await investigate(report, _make(tmp_path / "repo", FILES), explorer=OfflineExplorer())).diagnosis
    assert dx.termination.reason == StopReason.done and not dx.termination.detail
    assert dx.summary.endswith("the change most likely belongs in `Receiver` in `src/watch.rs`.")
    assert ("`try_io`, which `Receiver` does not define yet (`ReadyGuard` has one: `ReadyGuard.try_io`, "
            "`src/watch.rs:25-27`)") in dx.root_cause.explanation
    assert "following `ReadyGuard.try_io`, `src/watch.rs:25-27`" in dx.proposed_changes[0].description
    assert ("`src/watch.rs:25` in `ReadyGuard.try_io`: `pub fn try_io(&mut self) -> bool {` (the existing `try_io` "
            "the new one can follow)") in dx.root_cause.evidence


def test_the_precedents_signature_is_quoted_after_the_cited_lines_and_before_the_searches():
    bind = SymbolSpan(name="bind", qualname="UnixDatagram.bind", kind="method", start_line=2, end_line=4)
    addition = Addition(name="bind", owner="UnixStream", path="net/stream.rs", after=None,
                        precedent=Precedent("net/datagram.rs", bind))
    texts = {"net/datagram.rs": "impl UnixDatagram {\n    /// Binds.\n    pub fn bind(path: &str) -> Self {\n    }\n}\n"}
    cited = ["`net/stream.rs:7` in `UnixStream.connect`: `open(path)`", "Searching for “bind” matched 2 line(s) in `a`."]
    assert with_precedent(cited, addition, texts) == [
        cited[0],
        "`net/datagram.rs:3` in `UnixDatagram.bind`: `pub fn bind(path: &str) -> Self {` (the existing `bind` the new "
        "one can follow)",
        cited[1],
    ]
    assert with_precedent(cited, None, texts) == cited
