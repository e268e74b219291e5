"""Byte-level fuzzing of everything the service reads from a request — JSON and form bodies, webhook deliveries
(signed, so the parsers get past the signature), headers, cookies, query strings and paths — with lone
surrogates, invalid and overlong UTF-8, NUL, control bytes and overlong values: no answer may be a 5xx, and every
JSON answer must be valid UTF-8. Beside the schemathesis run (which generates only schema-shaped, encodable
input); example counts are bounded so the module runs in well under a minute."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.app._service_fixtures import StubInvestigator, make_repo

SECRET = "fuzz-secret"
FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

# What hostile bytes look like: JSON escapes of lone surrogates and NUL, raw invalid UTF-8 (a stray continuation
# byte, an overlong NUL, an encoded surrogate, a truncated sequence, bytes never valid), control bytes, and long runs.
HOSTILE_JSON_TEXT = ["\\ud800", "\\udfff", "\\ud83d", "\\u0000", "\\ud800\\u0041", "\\\\ud800"]
HOSTILE_RAW = [b"\x80", b"\xc0\x80", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xff\xfe", b"\x00", b"\x1b[2J", b"\xe9"]
_pieces = st.one_of(
    st.sampled_from(HOSTILE_RAW),
    st.sampled_from([t.encode() for t in HOSTILE_JSON_TEXT]),
    st.binary(max_size=24),
    st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
hostile_bytes = st.one_of(
    st.lists(_pieces, max_size=6).map(b"".join),
    st.tuples(st.sampled_from(HOSTILE_RAW + [b"a"]), st.integers(1_000, 100_000)).map(lambda t: t[0] * t[1]),
)
header_bytes = hostile_bytes.map(lambda b: re.sub(rb"[\r\n]", b"", b)[:70_000])


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    """The real app with secrets for every provider, a registered repository and one investigation."""
    data = Path(tempfile.mkdtemp(prefix="bugsleuth-fuzz-"))
    make_repo(data / "tiny")
    app = create_app(
        Settings(
            data_dir=data / "data", register_self=False, job_backend="none", log_level="CRITICAL",
            allowed_hosts=["testserver"], api_token=SecretStr("fuzz-token-long-enough"),
            **{f"{p}_webhook_secret": SecretStr(SECRET) for p in ("github", "gitlab", "sentry", "jira")},
        ),
        investigate_fn=StubInvestigator(),
    )
    auth = {"Authorization": "Bearer fuzz-token-long-enough"}
    with TestClient(app, raise_server_exceptions=False) as c:
        assert c.post("/api/repos", json={"name": "acme/tiny", "location": str(data / "tiny")}, headers=auth).status_code == 201
        assert c.post("/api/reports", json={"repo": "acme/tiny", "title": "crash"}, headers=auth).status_code == 202
        yield c


def check(response) -> None:  # noqa: ANN001 - a TestClient response
    """No server error, and a JSON answer is valid UTF-8 JSON."""
    assert response.status_code < 500, (response.status_code, response.content[:300])
    if response.headers.get("content-type", "").startswith("application/json"):
        json.loads(response.content.decode("utf-8"))


def splice(template: dict, field_path: list, raw: bytes) -> bytes:
    """The JSON text of `template` with the string at `field_path` replaced by `raw`, unescaped."""
    marker = "\x01SPLICE\x01"
    target = template
    for key in field_path[:-1]:
        target = target[key]
    target[field_path[-1]] = marker
    return json.dumps(template).replace(json.dumps(marker)[1:-1], "\x02").encode().replace(b"\x02", raw)


API_BODIES = [
    ("/api/reports", {"repo": "acme/tiny", "title": "t", "body": "b", "labels": ["bug"], "ref": "main",
                      "reporter": "r", "url": "https://x"}, ["title", "body", "repo", "ref", "reporter", "url"]),
    ("/api/repos", {"name": "a/b", "location": "/tmp/x", "default_ref": "main"}, ["name", "location", "default_ref"]),
    ("/api/investigations/1/feedback", {"verdict": "wrong", "note": "n"}, ["note", "verdict"]),
    ("/api/investigations/1/rerun", {"extra_context": "c"}, ["extra_context"]),
]


@FUZZ
@given(target=st.sampled_from(API_BODIES), field=st.integers(0, 5), raw=hostile_bytes, whole=st.booleans())
def test_hostile_json_bodies_never_make_a_server_error(client, target, field, raw, whole):
    path, template, fields = target
    body = raw if whole else splice(json.loads(json.dumps(template)), [fields[field % len(fields)]], raw)
    check(client.post(path, content=body, headers={"content-type": "application/json",
                                                   "Authorization": "Bearer fuzz-token-long-enough"}))


def _github(title: bytes) -> tuple[bytes, dict[str, str]]:
    body = splice({"action": "opened", "issue": {"number": 1, "title": "x", "body": "b", "user": {"login": "o"},
                   "labels": [{"name": "bug"}], "html_url": "https://github.com/acme/tiny/issues/1"},
                   "repository": {"full_name": "acme/tiny"}}, ["issue", "title"], title)
    sig = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"X-GitHub-Event": "issues", "X-Hub-Signature-256": sig}


def _gitlab(title: bytes) -> tuple[bytes, dict[str, str]]:
    body = splice({"object_kind": "issue", "object_attributes": {"action": "open", "title": "x", "description": "d",
                   "iid": 1, "url": "https://gitlab.com/acme/tiny/-/issues/1"},
                   "project": {"path_with_namespace": "acme/tiny"}}, ["object_attributes", "title"], title)
    return body, {"X-Gitlab-Event": "Issue Hook", "X-Gitlab-Token": SECRET}


def _sentry(title: bytes) -> tuple[bytes, dict[str, str]]:
    body = splice({"action": "created", "data": {"issue": {"id": "1", "title": "x", "culprit": "c"}}},
                  ["data", "issue", "title"], title)
    sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"Sentry-Hook-Resource": "issue", "Sentry-Hook-Signature": sig}


def _jira(title: bytes) -> tuple[bytes, dict[str, str]]:
    body = splice({"webhookEvent": "jira:issue_created", "issue": {"key": "P-1", "fields": {"summary": "x",
                   "description": "d", "issuetype": {"name": "Bug"}}}}, ["issue", "fields", "summary"], title)
    return body, {}


DELIVERIES = {"github": _github, "gitlab": _gitlab, "sentry": _sentry, "jira": _jira}


@FUZZ
@given(provider=st.sampled_from(sorted(DELIVERIES)), raw=hostile_bytes, delivery=header_bytes, n=st.integers())
def test_signed_webhook_deliveries_with_hostile_bytes_are_recorded_never_a_server_error(client, provider, raw, delivery, n):
    body, headers = DELIVERIES[provider](raw)
    raw_headers = [(k.encode(), v.encode()) for k, v in headers.items()]
    raw_headers += [(b"content-type", b"application/json"), (b"x-github-delivery", delivery[:300] + str(n).encode()),
                    (b"x-request-id", delivery[:300])]
    check(client.post(f"/webhooks/{provider}?repo=acme/tiny&secret={SECRET}", content=body, headers=raw_headers))


HEADERS_READ = [b"authorization", b"cookie", b"x-csrf-token", b"last-event-id", b"host", b"origin", b"sec-fetch-site",
                b"content-type", b"accept", b"x-forwarded-for", b"x-request-id", b"referer", b"user-agent"]
ROUTES = [("GET", "/health"), ("GET", "/api/investigations"), ("GET", "/api/investigations/1"), ("GET", "/"),
          ("GET", "/metrics"), ("GET", "/stats"), ("GET", "/login"), ("GET", "/investigations/1"),
          ("POST", "/api/investigations/1/cancel"), ("POST", "/logout"), ("GET", "/docs"), ("GET", "/ready")]


@FUZZ
@given(route=st.sampled_from(ROUTES), name=st.sampled_from(HEADERS_READ), value=header_bytes, shaped=st.booleans())
def test_hostile_headers_and_cookies_never_make_a_server_error(client, route, name, value, shaped):
    if name == b"cookie":  # shaped: a well-formed session payload whose signature is hostile
        value = b"bugsleuth_session=" + (b"v1.9999999999.n.1." if shaped else b"") + value
    elif name == b"authorization" and shaped:
        value = b"Bearer " + value
    method, path = route
    check(client.request(method, path, headers=[(name, value)]))


@FUZZ
@given(route=st.sampled_from(ROUTES), query=hostile_bytes.map(lambda b: b[:5000]), segment=hostile_bytes)
def test_hostile_query_strings_and_paths_never_make_a_server_error(client, route, query, segment):
    from urllib.parse import quote_from_bytes

    method, path = route
    check(client.request(method, path + "?" + quote_from_bytes(query, safe="=&")))
    check(client.get("/api/investigations/" + quote_from_bytes(segment[:2000])))
    check(client.get("/api/investigations", params={"repo": segment[:300].decode("latin-1")}))


FORMS = [("/login", ["token", "next"]), ("/reports/new", ["repo", "title", "body", "ref"]),
         ("/investigations/1/feedback", ["verdict", "note"]), ("/investigations/1/rerun", ["extra_context"]),
         ("/investigations/1/cancel", []), ("/logout", [])]


@FUZZ
@given(form=st.sampled_from(FORMS), raw=hostile_bytes, multipart=st.booleans(), valid_csrf=st.booleans())
def test_hostile_form_posts_never_make_a_server_error(client, form, raw, multipart, valid_csrf):
    from urllib.parse import quote_from_bytes

    path, fields = form
    page = client.get("/login")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1) if valid_csrf else "x"
    if multipart:
        files = {f: (None, raw) for f in fields}
        check(client.post(path, data={"csrf_token": csrf}, files=files or {"x": (None, raw)}))
    else:
        pairs = [f"csrf_token={csrf}"] + [f"{f}={quote_from_bytes(raw)}" for f in fields] + [quote_from_bytes(raw)]
        check(client.post(path, content="&".join(pairs).encode(),
                          headers={"content-type": "application/x-www-form-urlencoded"}))
