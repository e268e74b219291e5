"""Exports: JSON (and the committed JSON Schema), the issue-comment markdown, and SARIF 2.1.0."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from funnel.report.export import blob_url, to_json, to_markdown, to_sarif
from schemas import (
    AffectedFile,
    ComplexityRating,
    Diagnosis,
    ProposedChange,
    RejectedClaim,
    RiskRating,
    RootCause,
    RunStats,
    Termination,
    diagnosis_json_schema,
)
from schemas.enums import Classification, Complexity, Risk, Role, StopReason

ROOT = Path(__file__).resolve().parents[3]
SARIF_SCHEMA = json.loads((ROOT / "tests/fixtures/sarif/sarif-schema-2.1.0.json").read_text())
DIAGNOSIS_SCHEMA_FILE = ROOT / "schemas/diagnosis.schema.json"


def _diagnosis(**over) -> Diagnosis:
    base = dict(
        summary="An empty settings file crashes the loader.",
        root_cause=RootCause(explanation="`Config.load` indexes a missing key.", evidence=["config.py:15 indexes"]),
        affected_files=[
            AffectedFile(path="src/app/config.py", line_start=12, line_end=15, symbol="Config.load", role=Role.cause,
                         evidence='def load(self):\n    return data["section"]'),
            AffectedFile(path="src/app/main.py", line_start=6, line_end=6, symbol="main", role=Role.symptom,
                         evidence="section = cfg.load()"),
            AffectedFile(path="docs/a b.md", line_start=1, line_end=1, role=Role.related),
        ],
        proposed_changes=[ProposedChange(path="src/app/config.py", symbol="Config.load", description="use .get",
                                         diff='-    return data["section"]\n+    return data.get("section", {})')],
        complexity=ComplexityRating(level=Complexity.trivial, reason="one line"),
        risk=RiskRating(level=Risk.low, reason="local"),
        confidence=0.8,
        open_questions=["Should an empty file mean defaults?"],
        rejected=[RejectedClaim(kind="affected_file", claim={"path": "ghost.py", "line_start": 3}, reason="Not found")],
        stats=RunStats(explorer="offline", commit="0123abc", tool_calls=9, claims_total=5, claims_rejected=1),
    )  # fmt: skip
    base.update(over)
    return Diagnosis(**base)


def _sarif_errors(log: dict) -> list[str]:
    validator = jsonschema.Draft4Validator(SARIF_SCHEMA, format_checker=jsonschema.FormatChecker())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def test_committed_json_schema_matches_the_code():
    committed = json.loads(DIAGNOSIS_SCHEMA_FILE.read_text())
    assert committed == diagnosis_json_schema(), (
        "schemas/diagnosis.schema.json is stale: regenerate it with "
        "`bugsleuth schema > schemas/diagnosis.schema.json` and bump SCHEMA_VERSION if the change is deliberate"
    )


def test_json_export_round_trips_and_validates_against_the_committed_schema():
    d = _diagnosis()
    text = to_json(d)
    assert Diagnosis.model_validate_json(text) == d
    jsonschema.Draft202012Validator(json.loads(DIAGNOSIS_SCHEMA_FILE.read_text())).validate(json.loads(text))


def test_sarif_validates_against_the_official_schema():
    log = to_sarif(_diagnosis(), tool_version="0.1.0", repo_uri="https://github.com/acme/app")
    assert _sarif_errors(log) == []


def test_sarif_of_a_feature_request_flags_no_defect():
    request = _diagnosis().model_copy(update={"classification": Classification.feature_request})
    log = to_sarif(request, tool_version="0.1.0")
    assert [r["level"] for r in log["runs"][0]["results"]] == ["note", "note", "note"]
    assert log["runs"][0]["properties"]["classification"] == "feature_request" and _sarif_errors(log) == []
    assert to_markdown(request).split("\n")[2].startswith("_feature request · confidence")


def test_sarif_of_an_empty_or_failed_diagnosis_is_still_valid():
    d = Diagnosis(termination=Termination(reason=StopReason.error, detail="rg missing"))
    log = to_sarif(d, tool_version="0.1.0")
    assert _sarif_errors(log) == []
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_sarif_results_carry_rule_level_location_and_snippet_by_role():
    log = to_sarif(_diagnosis(), tool_version="0.1.0")
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("bugsleuth/cause", "error"), ("bugsleuth/symptom", "warning"), ("bugsleuth/related", "note"),
    ]  # fmt: skip
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/app/config.py"
    assert (loc["region"]["startLine"], loc["region"]["endLine"]) == (12, 15)
    assert loc["region"]["snippet"]["text"].startswith("def load(self):")
    assert results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "docs/a%20b.md"
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


def test_sarif_records_repository_and_commit_when_known():
    log = to_sarif(_diagnosis(), tool_version="0.1.0", repo_uri="https://github.com/acme/app")
    (prov,) = log["runs"][0]["versionControlProvenance"]
    assert prov == {"repositoryUri": "https://github.com/acme/app", "revisionId": "0123abc", "mappedTo": {"uriBaseId": "SRCROOT"}}


def test_markdown_comment_is_compact_with_collapsible_details():
    text = to_markdown(_diagnosis(), repo_uri="https://github.com/acme/app")
    top = text.split("<details>")[0]
    assert "**Summary.** An empty settings file" in top
    assert "1. [`src/app/config.py:12-15`](https://github.com/acme/app/blob/0123abc/src/app/config.py#L12-L15)" in top
    assert "— `Config.load` (cause)" in top
    for summary in ("Evidence", "Diff sketches", "Dropped claims (1)", "Run"):
        assert f"<details><summary>{summary}</summary>" in text
    assert text.count("<details>") == text.count("</details>")
    assert "```diff" in text


def test_markdown_comment_lists_corrected_citations():
    text = to_markdown(_diagnosis(corrections=["app/config.py:12-15 does not exist; moved to src/app/config.py:12-15"]))
    assert "<summary>Corrected citations (1)</summary>" in text
    assert "moved to src/app/config.py:12-15" in text


def test_markdown_comment_warns_when_the_run_stopped_early():
    text = to_markdown(_diagnosis(termination=Termination(reason=StopReason.step_budget, detail="40 >= 40")))
    assert "**Stopped early** (step_budget: 40 >= 40)" in text


@pytest.mark.parametrize(
    ("repo", "expected"),
    [
        ("https://github.com/a/b", "https://github.com/a/b/blob/c1/x/y.py#L3-L5"),
        ("https://gitlab.com/a/b.git", "https://gitlab.com/a/b/-/blob/c1/x/y.py#L3-5"),
        ("git@github.com:a/b.git", None),
        (None, None),
    ],
)
def test_blob_url_links_to_cited_lines(repo, expected):
    assert blob_url(repo, "c1", "x/y.py", 3, 5) == expected


def test_sarif_schema_check_catches_a_broken_log():
    log = to_sarif(_diagnosis(), tool_version="0.1.0")
    log["runs"][0]["results"][0]["level"] = "fatal"
    del log["runs"][0]["tool"]["driver"]["name"]
    errors = _sarif_errors(log)
    assert any("fatal" in e for e in errors)
    assert any("'name' is a required property" in e for e in errors)


def test_sarif_tool_version_defaults_to_the_installed_package():
    log = to_sarif(_diagnosis())
    assert log["runs"][0]["tool"]["driver"]["version"]
    assert _sarif_errors(log) == []


@pytest.mark.parametrize("path", ["/etc/passwd", "../x.py", "a/../b.py", "./a.py", "a\\b.py", "C:/x.py", "a//b.py"])
def test_diagnosis_refuses_paths_that_are_not_repository_relative(path):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="repository-relative|normalized"):
        AffectedFile(path=path, line_start=1, line_end=1)
    with pytest.raises(ValidationError):
        ProposedChange(path=path, description="d")


def test_rejection_rate_is_derived_and_survives_a_json_round_trip():
    stats = RunStats(claims_total=8, claims_rejected=2)
    assert stats.rejection_rate == 0.25
    again = RunStats.model_validate_json(stats.model_dump_json())
    assert again == stats and again.rejection_rate == 0.25


def test_markdown_comment_quotes_a_swift_escaped_identifier_as_one_code_span():
    cited = AffectedFile(path="Source/Session.swift", line_start=2, line_end=2, symbol="Session.`default`",
                         role=Role.cause, evidence="public static let `default` = Session()")
    text = to_markdown(_diagnosis(affected_files=[cited], proposed_changes=[]))
    assert "— `` Session.`default` `` (cause)" in text


def test_a_definition_cited_in_several_ranges_is_one_suspect_with_its_other_lines():
    cited = [AffectedFile(path="pkg/session.py", line_start=423, line_end=437, symbol="Session.request", role=Role.cause),
             AffectedFile(path="pkg/models.py", line_start=4, line_end=9, symbol="prepare", role=Role.related),
             AffectedFile(path="pkg/session.py", line_start=378, line_end=422, symbol="Session.request", role=Role.related),
             AffectedFile(path="pkg/session.py", line_start=438, line_end=438, symbol="Session.request", role=Role.related),
             AffectedFile(path="pkg/compat.py", line_start=1, line_end=5, role=Role.related),
             AffectedFile(path="pkg/compat.py", line_start=9, line_end=12, role=Role.related)]  # fmt: skip
    suspects = to_markdown(Diagnosis(summary="s", affected_files=cited)).split("**Suspects**\n")[1].split("\n\n")[0]
    assert suspects.splitlines() == [
        "1. `pkg/session.py:423-437` — `Session.request` (cause; also lines `378-422`, `438`)",
        "2. `pkg/models.py:4-9` — `prepare` (related)",
        "3. `pkg/compat.py:1-5` (related)",  # ranges outside any definition stay apart
        "4. `pkg/compat.py:9-12` (related)",
    ]
    linked = to_markdown(Diagnosis(summary="s", affected_files=cited[:3]), repo_uri="https://github.com/o/r")
    assert "(cause; also line [`378-422`](https://github.com/o/r/blob/HEAD/pkg/session.py#L378-L422))" not in linked
    assert "(cause; also lines [`378-422`](https://github.com/o/r/blob/HEAD/pkg/session.py#L378-L422))" in linked
