"""Inline markdown that renders as written (`funnel.inline`), and an offline diagnosis quoting code and a title that
hold backticks, read back the way the dashboard shows it."""

from __future__ import annotations

import re

from markupsafe import escape

from app.dashboard._pages import inline_code
from funnel import investigate
from funnel.explorers.offline import OfflineExplorer
from funnel.inline import code_span, paired_ticks
from schemas.report import BugReport
from tests.funnel.localize.test_offline_rank import _make

CARD_JS = """\
export function renderCard(name, showIcons) {
  const labelOffset = showIcons ? `x="25"` : "";
  const title = `${name}'s GitHub Stats`;
  return `<svg>${title}${labelOffset}</svg>`;
}
"""


def test_code_holding_backticks_is_fenced_by_a_longer_run():
    assert code_span('const a = `x="25"`;') == '``const a = `x="25"`;``'
    assert code_span("``T`` can be used") == "``` ``T`` can be used ```"
    assert code_span("plain") == "`plain`"


def test_a_stray_backtick_in_prose_becomes_an_apostrophe_and_pairs_are_kept():
    assert paired_ticks("UnmarshalJsonReader doesn`t work") == "UnmarshalJsonReader doesn't work"
    assert paired_ticks("Add `X.y()` to `Z`") == "Add `X.y()` to `Z`"
    assert paired_ticks("use `open") == "use 'open"


def test_the_dashboard_reads_a_longer_fence_as_one_code_span():
    html = str(inline_code('reads ``const a = `x`;`` in `card.js`'))
    assert html == "reads <code>const a = `x`;</code> in <code>card.js</code>"


async def test_an_offline_diagnosis_quotes_template_literals_and_a_stray_backtick_so_they_render(tmp_path):
    report = BugReport(title="renderCard label doesn`t show the icon offset",
                       body="With showIcons the labelOffset in renderCard is wrong: the title and labelOffset "
                            "overlap in the card.")
    repo = _make(tmp_path / "repo", {"src/cards/card.js": CARD_JS})
    dx = (await investigate(report, repo, explorer=OfflineExplorer())).diagnosis
    assert "“renderCard label doesn't show the icon offset”" in dx.summary
    assert "`" not in re.sub(r"<code>.*?</code>", "", str(inline_code(dx.summary)))
    quoted = {str(escape(line.strip())) for line in CARD_JS.splitlines() if "`" in line}
    shown = {code for e in dx.root_cause.evidence for code in re.findall(r"<code>(.*?)</code>", str(inline_code(e)))}
    assert quoted & shown, (dx.root_cause.evidence, shown)  # a template literal's line shown whole as one span


SESSION_SWIFT = """\
open class Session {
    public static let `default` = Session()
    public let rootQueue: DispatchQueue

    public init(rootQueue: DispatchQueue) {
        self.rootQueue = rootQueue
    }
}
"""


async def test_a_swift_escaped_identifier_is_quoted_so_the_sentence_after_it_stays_prose(tmp_path):
    report = BugReport(title="Session.default ignores the rootQueue",
                       body="Using `Session.default` the rootQueue passed to init is not used by the default session.")
    repo = _make(tmp_path / "repo", {"Source/Session.swift": SESSION_SWIFT})
    dx = (await investigate(report, repo, explorer=OfflineExplorer())).diagnosis
    texts = [dx.summary, dx.root_cause.explanation, *dx.root_cause.evidence]
    assert any("`default`" in t for t in texts)
    assert "Session.`default`" in {f.symbol for f in dx.affected_files}  # not cut to `Session` on the way back
    assert all("`" not in re.sub(r"<code>.*?</code>", "", str(inline_code(t))) for t in texts), texts
