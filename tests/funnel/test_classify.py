"""The offline classifier on real-looking reports of every class; each decision names its signals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funnel.classify import classify
from schemas import BugReport, Classification

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "webhooks"

CASES: list[tuple[Classification, dict]] = [
    (
        Classification.crash,
        {
            "title": "KeyError when saving a form with an empty optional field",
            "body": "Steps:\n1. open /settings\n2. clear 'nickname'\n3. save\n\n```\nTraceback (most recent call last):\n"
            '  File "app/forms.py", line 88, in save\n    data["nickname"].strip()\nKeyError: \'nickname\'\n```',
        },
    ),
    (
        Classification.crash,
        {
            "title": "Server segfaults under load",
            "body": "After ~10 minutes of traffic the worker dies:\n\nSegmentation fault (core dumped)\n\nRunning 4.2.0 on Debian 12.",
        },
    ),
    (
        Classification.crash,
        {
            "title": "Indexing a large repository aborts",
            "body": "thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 7', src/index.rs:142:17\n"
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        },
    ),
    (
        Classification.crash,
        {
            "title": "Checkout page blank",
            "body": "TypeError: Cannot read properties of undefined (reading 'price')\n"
            "    at CartTotal (webpack://shop/./app/components/Cart.tsx:31:22)\n    at renderWithHooks (react-dom.development.js:14985:18)",
            "labels": ["bug"],
        },
    ),
    (
        Classification.performance,
        {
            "title": "Dashboard takes forever to load with 10k projects",
            "body": "Loading /dashboard takes 45 seconds. The profiler shows 10,000 queries (N+1 in ProjectList).",
        },
    ),
    (
        Classification.performance,
        {
            "title": "Memory usage grows without bound in the worker",
            "body": "RSS grows by ~200 MB per hour until the OOM killer steps in. Looks like a memory leak in the cache.",
            "labels": ["bug"],
        },
    ),
    (
        Classification.feature_request,
        {
            "title": "Add support for YAML config files",
            "body": "It would be nice to configure the tool with a YAML file instead of only TOML. Many of our projects already use YAML.",
        },
    ),
    (
        Classification.feature_request,
        {
            "title": "Export to PDF",
            "body": "Our auditors need the reports as PDF.",
            "labels": ["enhancement"],
        },
    ),
    (
        Classification.question,
        {
            "title": "How do I configure a proxy for outgoing requests?",
            "body": "I'm behind a corporate proxy. Is there a way to set it in the config, or only through env variables?",
        },
    ),
    (
        Classification.question,
        {
            "title": "Is it possible to run the service without Docker?",
            "body": "The docs only show docker compose.",
        },
    ),
    (
        Classification.bug,
        {
            "title": "Total is wrong when a discount code is applied twice",
            "body": "Steps to reproduce: apply WINTER, then apply WINTER again.\nExpected total 90.00 but got 81.00.",
        },
    ),
    (
        Classification.bug,
        {
            "title": "Date filter returns unexpected results",
            "body": "Filtering by `2026-03-29` returns entries from the 28th. Expected only the 29th, instead of that the result includes the previous day.",
        },
    ),
    (
        Classification.other,
        {
            "title": "Fix typo in README",
            "body": "'recieve' should be 'receive'.",
            "labels": ["documentation"],
        },
    ),
    (
        Classification.other,
        {"title": "Thanks for the great project", "body": "Just wanted to say thanks to the maintainers."},
    ),
]


@pytest.mark.parametrize(("expected", "fields"), CASES, ids=[f"{c.value}-{i}" for i, (c, _) in enumerate(CASES)])
def test_classify_recognizes_each_class(expected: Classification, fields: dict):
    result = classify(BugReport(**fields))
    assert result.label == expected, result.reason
    assert 0.0 <= result.confidence <= 1.0
    assert result.reason


def test_classify_reason_names_the_matched_signals():
    result = classify(BugReport(title="Crash on start", body="Traceback (most recent call last):\n  File \"x.py\", line 1"))
    assert result.label == Classification.crash
    assert "Python traceback" in result.reason


def test_labels_outweigh_weak_text_signals():
    result = classify(BugReport(title="Error messages could be friendlier", body="", labels=["type: enhancement"]))
    assert result.label == Classification.feature_request
    assert "label 'enhancement'" in result.reason


def test_a_stack_trace_refines_a_bug_label_into_a_crash():
    body = "Traceback (most recent call last):\n  File \"a.py\", line 2, in f\nZeroDivisionError: division by zero"
    result = classify(BugReport(title="Report page broken", body=body, labels=["bug"]))
    assert result.label == Classification.crash
    assert "bug" in result.reason


def test_strong_evidence_is_more_confident_than_weak_evidence():
    strong = classify(BugReport(title="Segfault in parser", body="Segmentation fault (core dumped)", labels=["crash"]))
    weak = classify(BugReport(title="Something is off", body="the output looks wrong to me"))
    assert strong.confidence > weak.confidence


def test_empty_report_is_other():
    result = classify(BugReport())
    assert result.label == Classification.other


@pytest.mark.parametrize(
    ("fixture", "provider", "expected"),
    [
        ("github_issues_opened", "github", Classification.crash),
        ("gitlab_issue_open", "gitlab", Classification.performance),
        ("jira_issue_created", "jira", Classification.bug),
    ],
)
def test_classify_webhook_reports(fixture: str, provider: str, expected: Classification):
    import hashlib
    import hmac

    from app.webhooks import parse_delivery

    body = (FIXTURES / f"{fixture}.json").read_bytes()
    sig = hmac.new(b"k", body, hashlib.sha256).hexdigest()
    headers = {
        "github": {"X-GitHub-Event": "issues", "X-Hub-Signature-256": f"sha256={sig}"},
        "gitlab": {"X-Gitlab-Event": "Issue Hook", "X-Gitlab-Token": "k"},
        "jira": {"X-Hub-Signature": f"sha256={sig}"},
    }[provider]
    out = parse_delivery(provider, headers, body, "k")
    assert out.kind == "accepted", out.reason
    assert classify(out.report).label == expected


def test_sentry_event_report_is_a_crash():
    import hashlib
    import hmac

    from app.webhooks import parse_delivery

    body = (FIXTURES / "sentry_event_alert.json").read_bytes()
    headers = {"Sentry-Hook-Resource": "event_alert", "Sentry-Hook-Signature": hmac.new(b"k", body, hashlib.sha256).hexdigest()}
    out = parse_delivery("sentry", headers, body, "k")
    assert classify(out.report).label == Classification.crash
    json.loads(body)  # the fixture itself is valid JSON


@pytest.mark.parametrize("trace, signal", [
    ("app/models/order.rb:41:in 'total': undefined method '+' for nil (NoMethodError)\n"
     "\tfrom app/controllers/orders_controller.rb:12:in `show'", "Ruby backtrace"),
    ("TypeError: bad argument in /var/www/src/Cart.php:18\nStack trace:\n#0 /var/www/src/Cart.php(18): App\\Cart->total()\n"
     "#1 {main}", "PHP stack trace"),
    ("System.NullReferenceException: Object reference not set to an instance of an object.\n"
     "   at Acme.Shop.OrderService.Total(Order order) in C:\\src\\OrderService.cs:line 57", ".NET stack trace"),
])  # fmt: skip
def test_ruby_php_and_dotnet_stack_traces_make_a_crash(trace: str, signal: str):
    result = classify(BugReport(title="checkout fails", body=f"After the upgrade:\n\n```\n{trace}\n```\n"))
    assert result.label == Classification.crash and signal in result.reason


def test_an_issue_templates_hidden_instructions_do_not_classify_the_report():
    template = ("<!-- If you have a usage question, please ask on Stack Overflow. Is it possible to ... ? Ask there."
                " Feature requests: describe the feature you would like. -->\n")
    bare = classify(BugReport(title="jq crashes on empty input", body="Segmentation fault (core dumped)"))
    templated = classify(BugReport(title="jq crashes on empty input",
                                   body=template + "Segmentation fault (core dumped)"))
    assert templated.label == bare.label == Classification.crash
    assert templated.reason == bare.reason


@pytest.mark.parametrize("body", [
    "It should be rejected; the server answers:\n\n```\nKeep-Alive: timeout=5, max=5\n```\n",
    "It should be rejected, as the `#define BENCHMARK` build does.",
    'It should be rejected. Seen in production:\n File "cache/base.py", line 229, in get_or_set\n\tself.add(key, timeout=timeout)\n',
    "It should be rejected when there are fewer than n+1 outputs of g.",
    "It should be rejected; the server answers:\r\n\r\n```\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n```\r\n",
], ids=["code-block", "inline-code", "traceback-source-line", "n-plus-one-arithmetic", "crlf-code-block"])  # fmt: skip
def test_a_performance_word_in_code_or_arithmetic_does_not_make_a_wrong_result_a_performance_report(body):
    result = classify(BugReport(title="is_valid_path accepts paths with embedded NULs", body=body))
    assert result.label == Classification.bug, result.reason


@pytest.mark.parametrize(("title", "body"), [
    ("Listing orders is slow", "The orders page issues N+1 queries: one per order line."),
    ("Orders page takes ages", "Profiling shows most time in serialize()."),
    ("Export of big tables", "The export of 2 GB took 40 minutes and then timed out."),
])  # fmt: skip
def test_a_performance_complaint_in_the_prose_is_still_a_performance_report(title, body):
    assert classify(BugReport(title=title, body=body)).label == Classification.performance


@pytest.mark.parametrize("title", [
    "Matrix.col_insert() no longer seems to work correctly.",
    "Behavior of Matrix hstack and vstack changed in sympy 1.1",
    "DataSet.update causes chunked dask DataArray to evaluate its values eagerly",
    "JsonAdapter nullSafe parameter is ignored by JsonSerializer",
    "Get/set inconsistency for fractional array indices",
    "Date overflow with std::chrono::time_point",
    "NPE in `Version.equals()` if snapshot-info `null`",
    "nthroot_mod function misses one root of x = 0 mod p.",
    "cse() has strange behaviour for MatrixSymbol indexing",
    "goctl生成代码的import包路径错误",
], ids=["no-longer", "changed-in", "causes", "ignored", "inconsistency", "overflow", "npe", "misses", "strange",
        "chinese-error"])  # fmt: skip
def test_a_title_describing_a_fault_in_plain_words_is_a_bug_not_other(title):
    result = classify(BugReport(title=title, body="See the title."))
    assert result.label == Classification.bug, result.reason


@pytest.mark.parametrize("title", [
    "Suggestion：Add Route Print Info",
    "Want to provide a way to add a custom grpc streamInterceptors",
    "Offer a way to directly set `StreamReadConstraints` via `JsonFactory`",
])  # fmt: skip
def test_a_title_asking_for_a_way_or_making_a_suggestion_is_a_feature_request(title):
    assert classify(BugReport(title=title, body="See the title.")).label == Classification.feature_request


def test_a_title_ending_in_a_fullwidth_question_mark_is_asked_as_a_question():
    result = classify(BugReport(title="现在不支持etcd的身份验证吗？", body="etcd 开启了认证。"))
    assert result.label == Classification.question and "title ends with '?'" in result.reason
