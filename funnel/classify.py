"""Offline heuristic classification of a bug report: bug, crash, performance, feature request, question or other.

Deterministic and explainable: tracker labels are the strongest signal, then phrases in the title, then in
the body (stack traces, panics and segfaults mean a crash). Every decision says which signals it matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from repomap.focus import code_blocks
from repomap.frames import strip_frames
from schemas import BugReport, Classification, ClassificationResult
from schemas.text import without_blocks

__all__ = ("classify",)

Where = Literal["label", "title", "body", "prose"]
"""Where a signal is looked for: the tracker's labels, the title, the body, or the body's prose (`_prose`: without
its code blocks, inline code, stack-trace lines and indented lines, where `timeout=5` and `#define BENCHMARK` are
names, not complaints)."""

_INLINE_CODE = re.compile(r"`[^`\n]+`")
_INDENTED_LINE = re.compile(r"^(?:\t| {4}).*$", re.M)
"""A line indented like code (a traceback's source line, pasted output) rather than written as prose."""


@dataclass(frozen=True)
class _Signal:
    """One piece of evidence for a class."""

    label: Classification
    """The class it votes for."""
    where: Where
    """Which part of the report it is looked for in."""
    pattern: re.Pattern[str]
    """What to look for (case-insensitive)."""
    weight: float
    """How much it counts."""
    name: str
    """How the reason names it."""


def _s(label: Classification, where: Where, pattern: str, weight: float, name: str) -> _Signal:
    return _Signal(label, where, re.compile(pattern, re.IGNORECASE | re.MULTILINE), weight, name)


C = Classification
_LABEL_WEIGHT = 4.0
_SIGNALS: tuple[_Signal, ...] = (
    # --- labels (normalized: lower case, prefixes such as `type:` / `kind/` / `t-` dropped)
    _s(C.crash, "label", r"^(crash|crashes|segfault|panic|fatal)$", _LABEL_WEIGHT, "label"),
    _s(C.performance, "label", r"^(performance|perf|slow|speed|latency|memory|memory[- ]leak|optimi[sz]ation)$", _LABEL_WEIGHT, "label"),
    _s(C.feature_request, "label", r"^(enhancement|feature|feature[- ]request|new feature|improvement|proposal|story|epic)$", _LABEL_WEIGHT, "label"),
    _s(C.question, "label", r"^(question|support|usage|help|how[- ]to)$", _LABEL_WEIGHT, "label"),
    _s(C.bug, "label", r"^(bug|defect|regression|incident|problem|error|broken)$", _LABEL_WEIGHT, "label"),
    _s(C.other, "label", r"^(documentation|docs|typo|chore|refactor|ci|dependencies|test|tests|duplicate|wontfix|invalid)$", 2.0, "label"),
    # --- crash: stack traces of every runtime, panics, signals
    _s(C.crash, "body", r"Traceback \(most recent call last\)", 5.0, "Python traceback"),
    _s(C.crash, "body", r"^[^\S\n]*at [\w$.<>]+\([\w$]+\.(?:java|kt|scala):\d+\)", 5.0, "JVM stack trace"),
    _s(C.crash, "body", r"^[^\S\n]*at (?:async )?[\w$.<>\[\] ]*\(?[^\s()]+\.(?:js|mjs|cjs|ts|tsx|jsx):\d+:\d+\)?", 5.0, "JavaScript stack trace"),
    _s(C.crash, "body", r"^goroutine \d+ \[[\w ]+\]:", 5.0, "Go goroutine dump"),
    _s(C.crash, "body", r"^[^\S\n]*(?:from )?\S+\.rb:\d+:in [`']", 5.0, "Ruby backtrace"),
    _s(C.crash, "body", r"^Stack trace:\n#0 \S+\.php\(\d+\): ", 5.0, "PHP stack trace"),
    _s(C.crash, "body", r"^[^\S\n]*at [\w.`<>\[\],+]+\([^)\n]*\) in \S.*:line \d+", 5.0, ".NET stack trace"),
    _s(C.crash, "body", r"panicked at|^panic: |thread '[^']*' panicked", 5.0, "panic"),
    _s(C.crash, "title", r"\b(panic(?:s|ked)?|segfault|crash(?:es|ed|ing)?|core dump(?:ed)?)\b", 3.0, "crash word in title"),
    _s(C.crash, "body", r"\b(segmentation fault|SIGSEGV|SIGABRT|SIGBUS|core dumped|stack overflow|access violation|fatal error|abort(?:ed)? \(core)\b", 4.0, "fatal signal"),
    _s(C.crash, "body", r"\b(unhandled (?:exception|rejection)|uncaught (?:exception|typeerror|referenceerror)|crash(?:es|ed|ing)?)\b", 2.0, "crash phrase"),
    _s(C.crash, "title", r"\b\w*(?:Error|Exception)\b(?::| raised| thrown| when| on| in)", 1.5, "exception name in title"),
    # --- performance
    _s(C.performance, "title", r"\b(slow(?:er|ly|ness|down)?|latency|performance|perf|memory leak|leaks? memory|(?:memory|ram|cpu|disk) (?:usage|consumption|grows|growth)|timeouts?|timed? out|high cpu|cpu usage|takes? (?:forever|ages|too long)|hangs?|hanging|freez(?:e|es|ing)|sluggish|n\+1 (?:quer(?:y|ies)|problem|selects?)|quadratic|throughput)\b", 3.0, "performance word in title"),
    _s(C.performance, "prose", r"\b(slow(?:er|ly|ness|down)?|latency|p9[59]|p50|memory leak|leaks? memory|out of memory|oom|timeouts?|timed? out|high cpu|cpu usage|takes? \d+(?:\.\d+)?\s*(?:s|sec|seconds|ms|min|minutes)\b|hangs?|freez(?:e|es|ing)|regress(?:ed|ion) in (?:speed|performance)|n\+1 (?:quer(?:y|ies)|problem|selects?)|quadratic|benchmark|profil(?:e|er|ing))\b", 1.5, "performance phrase"),
    # --- feature request
    _s(C.feature_request, "title", r"\b(feature request|add support|support for|would be (?:nice|great|useful)|allow(?:s|ing)? (?:to|users?|the)|please add|add (?:an? )?(?:option|flag|setting|way)|proposal|suggestion|(?:provide|offer|want|need) (?:an? )?(?:way|option)|\[feature\]|\[rfe\]|request:|enhancement)", 3.5, "feature phrase in title"),
    _s(C.feature_request, "title", r"^\W*(?:allow|add|support|provide|expose|implement|introduce|enable|make it possible)\b", 2.5, "imperative feature title"),
    _s(C.feature_request, "body", r"\b(feature request|would be (?:nice|great|useful|helpful)|it would be (?:nice|great)|add support|could you add|please add|i(?:'d| would) (?:like|love) (?:to see|it if|a way)|is there any plan|nice to have|wish(?:list)?|suggestion)\b", 2.0, "feature phrase"),
    # --- question
    _s(C.question, "title", r"^(?:\[question\]|question:|q:)|^\W*how to\b|\b(how (?:do|can|should) (?:i|we|you)\b|is it possible|is there (?:a|any) way|what(?:'s| is) the (?:best|right|correct) way|can i\b.*\?|does .+ support\b.*\?|why does\b.*\?)", 3.0, "question phrasing in title"),
    _s(C.question, "title", r"[?？]\s*$", 1.0, "title ends with '?'"),
    _s(C.question, "body", r"\b(how do i|how can i|how should i|is it possible|is there a way|any (?:help|idea|hints?) (?:on|would|appreciated)|am i (?:doing|missing) something|what am i doing wrong)\b", 1.5, "question phrasing"),
    # --- bug
    _s(C.bug, "title", r"\b(bugs?|errors?|wrong|incorrect(?:ly)?|unexpected(?:ly)?|broken|breaks?|fails?|failing|failure|regression|doesn'?t work|does not work|not working|invalid|mismatch|duplicate[sd]?|missing|ignored|ignores?|off[- ]by[- ]one|inconsistency|overflows?|out of range|misses|strange|weird|confusing|incomplete|inequivalent|npe|asserts)\b|错误|报错|异常|失败|无法", 2.0, "bug word in title"),
    _s(C.bug, "title", r"\b(doesn'?t|does not|don'?t|isn'?t|is not|aren'?t|won'?t|can'?t|cannot|unable to|fails? to|not (?:properly|correctly|being|respected|handled)|improperly|inconsistent|insufficient(?:ly)?|crashes|should(?:n'?t| not| be| have| return| raise))\b", 1.5, "negation in title"),
    _s(C.bug, "title", r"\b(no longer|(?:changed|broke|started \w+ing) (?:in|since|after)|causes?)\b", 1.5, "regression or effect in title"),
    _s(C.bug, "body", r"\b(expected\b[^\n]{0,120}\b(?:got|but|instead|actual)|actual (?:result|behaviou?r)|instead of|should (?:be|return|not)|incorrect(?:ly)?|unexpected(?:ly)?|wrong (?:result|value|output|answer)|steps to reproduce|regression|raises? (?:an? )?\w*(?:error|exception))", 1.5, "bug phrase"),
    _s(C.bug, "body", r"\b(bugs?|errors?|exceptions?|fails?|broken|doesn'?t work|does not work)\b", 0.75, "bug word"),
)
"""Every signal, all classes; scores add up per class."""

_CRASH_EVIDENCE = 4.0
"""Crash score that turns a `bug` into a `crash` (a stack trace, a panic or a fatal signal)."""
_PERF_EVIDENCE = 3.0
"""Performance score that turns a `bug` into `performance` (a performance word in the title, or two phrases)."""
_LABEL_PREFIX = re.compile(r"^(?:type|kind|t|c|category|issue[- ]type|area)[:/\- ]+", re.IGNORECASE)
_PRIORITY = (C.crash, C.performance, C.bug, C.feature_request, C.question, C.other)
"""Tie-break order: the more specific and more actionable class first."""


def _normalize_label(label: str) -> str:
    label = re.sub(r"[^\w:/+\- ]", "", label).strip().lower()
    return _LABEL_PREFIX.sub("", label).strip()


def _prose(body: str) -> str:
    """The body's own words: without code blocks, inline code, stack-trace lines and lines indented like code."""
    words = without_blocks(body, code_blocks(body))
    return _INDENTED_LINE.sub("", strip_frames(_INLINE_CODE.sub("", words)))


def classify(report: BugReport) -> ClassificationResult:
    """Decide what kind of report this is, how sure we are, and which signals decided it."""
    labels = [_normalize_label(lb) for lb in report.labels]
    title = report.title
    body = report.visible_body[:50_000]  # an issue template's hidden instructions are not the report
    parts = {"title": title, "body": body, "prose": _prose(body)}
    scores: dict[Classification, float] = {c: 0.0 for c in Classification}
    evidence: dict[Classification, list[str]] = {c: [] for c in Classification}
    for sig in _SIGNALS:
        if sig.where == "label":
            hit = next((lb for lb in labels if sig.pattern.search(lb)), None)
            if hit is None:
                continue
            found = f"label {hit!r}"
        else:
            m = sig.pattern.search(parts[sig.where])
            if m is None:
                continue
            snippet = " ".join(m.group(0).split())[:40]
            found = f"{sig.name} ({snippet!r})"
        scores[sig.label] += sig.weight
        evidence[sig.label].append(found)

    ranked = sorted(Classification, key=lambda c: (-scores[c], _PRIORITY.index(c)))
    best, runner_up = ranked[0], ranked[1]
    if scores[best] <= 0:
        return ClassificationResult(label=C.other, confidence=0.3, reason="no signal of a bug, crash, performance problem, feature request or question")
    # A crash or a performance problem is a kind of bug: strong evidence of one refines a `bug` verdict.
    if best is C.bug:
        for special, needed in ((C.crash, _CRASH_EVIDENCE), (C.performance, _PERF_EVIDENCE)):
            if scores[special] >= needed:
                best, runner_up = special, C.bug
                break
    top, second = scores[best], scores[runner_up]
    confidence = round(min(0.95, 0.45 + 0.06 * top + 0.25 * (top - second) / top), 2)
    reason = f"{best.value}: " + "; ".join(evidence[best])
    if second > 0:
        reason += f" (also {runner_up.value}: score {second:g} vs {top:g})"
    return ClassificationResult(label=best, confidence=confidence, reason=reason[:500])
