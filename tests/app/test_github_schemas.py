"""The GitHub fixtures against octokit's published webhook JSON schemas (`tests/fixtures/octokit`, vendored from
the npm package `@octokit/webhooks-schemas`): the real deliveries are valid as they are; the hand-made fixtures,
trimmed to what bugsleuth reads, carry every field they have with the type GitHub sends."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.app._realclient import REALCLIENT, ROOT

SCHEMA = json.loads((ROOT / "tests/fixtures/octokit/webhooks-schema-7.6.1.json").read_text())
HAND_MADE = ROOT / "tests/fixtures/webhooks"
REAL = {
    "opened.payload.json": "issues$opened",
    "reopened.payload.json": "issues$reopened",
    "labeled.payload.json": "issues$labeled",
    "edited.payload.json": "issues$edited",
    "created.payload.json": "issue_comment$created",
    "payload.json": "ping$event",
}
MADE = {
    "github_issues_opened.json": "issues$opened",
    "github_issues_closed.json": "issues$closed",
    "github_issues_edited.json": "issues$edited",
    "github_issues_labeled.json": "issues$labeled",
    "github_issue_comment.json": "issue_comment$created",
    "github_ping.json": "ping$event",
}


def validator(definition: str) -> jsonschema.Draft7Validator:
    """A validator of one event's schema (its `$ref`s resolve inside the vendored document)."""
    schema = {"$schema": SCHEMA["$schema"], "definitions": SCHEMA["definitions"], "$ref": f"#/definitions/{definition}"}
    return jsonschema.Draft7Validator(schema)


def messages(errors) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors]


@pytest.mark.skipif(REALCLIENT is None, reason="the real payloads (../shared/realclient) are absent")
@pytest.mark.parametrize("file", sorted(REAL))
def test_a_real_github_delivery_is_valid_against_octokits_schema(file):
    body = json.loads((REALCLIENT / "github" / file).read_text())
    assert messages(validator(REAL[file]).iter_errors(body)) == []


@pytest.mark.parametrize("file", sorted(MADE))
def test_a_hand_made_github_fixture_has_every_field_it_carries_of_the_right_type(file):
    body = json.loads((HAND_MADE / file).read_text())
    wrong = [e for e in validator(MADE[file]).iter_errors(body) if e.validator != "required"]
    assert messages(wrong) == []


def test_the_schema_refuses_what_the_parser_refuses_a_title_of_the_wrong_type():
    body = json.loads((HAND_MADE / "github_issues_opened.json").read_text())
    body["issue"]["title"] = 5
    wrong = [e for e in validator("issues$opened").iter_errors(body) if e.validator != "required"]
    assert [list(e.absolute_path) for e in wrong] == [["issue", "title"]]


def test_every_fixture_names_a_definition_of_the_vendored_schema():
    assert set(REAL.values()) | set(MADE.values()) <= set(SCHEMA["definitions"])
    assert {p.name for p in HAND_MADE.glob("github_*.json")} == set(MADE)
    assert Path(ROOT / "tests/fixtures/octokit/README.md").read_text().count("7.6.1") >= 2
