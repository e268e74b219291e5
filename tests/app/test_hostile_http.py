"""Hostile bytes and hostile networks at the HTTP boundary: lone surrogates, non-ASCII cookies and CSRF tokens,
DNS rebinding (the Host check), session revocation, the login throttle, repository names, token strength and
the bearer scheme in OpenAPI."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from app import cookies, security, store
from app.config import ConfigurationError, Settings
from app.repos import tree_path
from tests.app._service_fixtures import (  # noqa: F401 - fixtures
    base_settings,
    fixture_repo,
    register,
    running_service,
)

SURROGATE = "\\ud800"  # as it appears inside JSON text: a valid escape of a code point UTF-8 cannot encode
TOKEN = "a-long-enough-api-token"


def _json_bytes(template: str) -> bytes:
    return template.replace("@", SURROGATE).encode()


async def _inv(svc) -> int:
    r = await svc.client.post("/api/reports", json={"repo": "acme/tiny", "title": "average crashes", "body": "x"})
    assert r.status_code == 202, r.text
    return r.json()["id"]


# ---------------------------------------------------------------------------------------------- item 2: surrogates


@pytest.mark.parametrize(
    ("path", "template", "field"),
    [
        ("/api/reports", '{"repo": "acme/tiny", "title": "crash @"}', "title"),
        ("/api/reports", '{"repo": "acme/tiny", "title": "t", "body": "b @"}', "body"),
        ("/api/reports", '{"repo": "acme/tiny", "title": "t", "labels": ["@"]}', "labels"),
        ("/api/repos", '{"name": "a/b", "location": "/tmp/@"}', "location"),
        ("/api/investigations/{id}/feedback", '{"verdict": "wrong", "note": "@"}', "note"),
        ("/api/investigations/{id}/rerun", '{"extra_context": "@"}', "extra_context"),
    ],
)
async def test_a_lone_surrogate_in_a_json_field_is_a_422_naming_the_field(base_settings, fixture_repo, path, template, field):
    async with running_service(base_settings(job_backend="none")) as svc:
        await register(svc, "acme/tiny", fixture_repo[0])
        url = path.format(id=await _inv(svc))
        r = await svc.client.post(url, content=_json_bytes(template), headers={"content-type": "application/json"})
        assert r.status_code == 422
        detail = json.loads(r.content.decode("utf-8"))["detail"]  # the reply itself is valid UTF-8 JSON
        assert any(field in err["loc"] for err in detail)
        assert "lone surrogate" in r.text
        assert "\ud800" not in r.text


def _github(title_json: str) -> bytes:
    return (
        '{"action": "opened", "issue": {"number": 3, "title": "' + title_json + '", "body": "boom", '
        '"user": {"login": "octo"}, "labels": [], "html_url": "https://github.com/acme/tiny/issues/3"}, '
        '"repository": {"full_name": "acme/tiny"}}'
    ).encode()


def _signed(body: bytes, delivery: str) -> dict[str, str]:
    sig = "sha256=" + hmac.new(b"whsec", body, hashlib.sha256).hexdigest()
    return {"X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig,
            "Content-Type": "application/json"}


async def test_a_signed_issue_with_a_lone_surrogate_is_accepted_with_replacement_characters_and_recorded(
    base_settings, fixture_repo
):
    async with running_service(base_settings(job_backend="none", github_webhook_secret=SecretStr("whsec"))) as svc:
        await register(svc, "acme/tiny", fixture_repo[0])
        body = _github("crash " + SURROGATE + " and NUL \\u0000 too")
        r = await svc.client.post("/webhooks/github", content=body, headers=_signed(body, "d-surrogate"))
        assert r.status_code == 202, r.text
        assert r.json()["outcome"] == "accepted"
        detail = (await svc.client.get(f"/api/investigations/{r.json()['id']}")).json()
        assert detail["report"]["title"] == "crash \ufffd and NUL \ufffd too"
        async with svc.runtime.db.read_session() as s:
            deliveries = await store.list_deliveries(s, limit=10, offset=0)
        assert [(d.delivery_id, d.outcome) for d in deliveries] == [("d-surrogate", "accepted")]


# ---------------------------------------------------------------------------------------------- item 3: cookies


@pytest.mark.parametrize("cookie", ["v1.1.a.1.\u00e9", "\u00e9\u00e9", "v1.9999999999.n.1." + "\u00ff" * 43])
async def test_a_non_ascii_session_cookie_is_an_invalid_session_not_a_server_error(base_settings, cookie):
    async with running_service(base_settings(job_backend="none")) as svc:
        raw = f"{cookies.SESSION_COOKIE}={cookie}".encode("utf-8")
        for path in ("/health", "/api/investigations", "/"):
            r = await svc.client.get(path, headers=[(b"cookie", raw)])
            assert r.status_code < 500, (path, r.status_code)


async def test_a_non_ascii_csrf_token_is_refused_as_expired(base_settings):
    async with running_service(base_settings(job_backend="none", api_token=SecretStr(TOKEN))) as svc:
        await svc.client.get("/login")
        r = await svc.client.post(
            "/login", content=b"csrf_token=%C3%A9&token=x",
            headers=[(b"content-type", b"application/x-www-form-urlencoded"), (b"x-csrf-token", "\u00e9".encode())],
        )
        assert r.status_code == 403


# ---------------------------------------------------------------------------------------------- item 6: Host


async def test_without_a_token_a_foreign_host_name_is_refused_and_nothing_is_registered(base_settings, tmp_path):
    async with running_service(base_settings(job_backend="none")) as svc:
        rebind = {"Host": "rebind.example:8000"}
        r = await svc.client.post("/api/repos", json={"name": "x/home", "location": str(tmp_path)}, headers=rebind)
        assert r.status_code == 400 and "BUGSLEUTH_ALLOWED_HOSTS" in r.json()["detail"]
        assert (await svc.client.get("/api/investigations", headers=rebind)).status_code == 400
        assert (await svc.client.get("/api/repos")).json() == []
        for host in ("localhost:8000", "127.0.0.1", "[::1]:8000", "LOCALHOST", "127.0.0.1:1234"):
            assert (await svc.client.get("/api/repos", headers={"Host": host})).status_code == 200, host


async def test_with_a_token_on_loopback_reads_from_a_foreign_host_name_are_closed_too(base_settings):
    async with running_service(base_settings(job_backend="none", api_token=SecretStr(TOKEN))) as svc:
        assert (await svc.client.get("/api/investigations", headers={"Host": "rebind.example"})).status_code == 400
        assert (await svc.client.get("/api/investigations")).status_code == 200


async def test_an_allowed_host_is_served_and_webhooks_are_not_host_checked(base_settings):
    settings = base_settings(job_backend="none", allowed_hosts=["bugs.example.org"])
    async with running_service(settings) as svc:
        assert (await svc.client.get("/health", headers={"Host": "bugs.example.org:443"})).status_code == 200
        assert (await svc.client.get("/health", headers={"Host": "evil.example.org"})).status_code == 400
        hook = await svc.client.post("/webhooks/github", content=b"{}", headers={"Host": "tunnel.example"})
        assert hook.status_code == 401  # the signature decides, not the Host header


def test_beyond_loopback_any_host_is_served_since_everything_needs_the_token():
    policy = security.access_policy(Settings(host="0.0.0.0", api_token=SecretStr(TOKEN), register_self=False))
    assert policy.host_allowed("10.1.2.3:8000") and policy.host_allowed("bugs.example.org")


# ---------------------------------------------------------------------------------------------- item 7


def _csrf(html: str) -> str:
    marker = 'name="csrf_token" value="'
    return html.split(marker, 1)[1].split('"', 1)[0]


def _https(svc) -> httpx.AsyncClient:
    """A client over https (the session cookie is `Secure`)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=svc.app), base_url="https://127.0.0.1")


async def _login(client: httpx.AsyncClient, token: str) -> httpx.Response:
    page = await client.get("/login")
    return await client.post("/login", data={"csrf_token": _csrf(page.text), "token": token, "next": "/"})


async def test_logout_revokes_the_session_cookie_it_ends(base_settings):
    settings = base_settings(job_backend="none", api_token=SecretStr(TOKEN), host="0.0.0.0")
    async with running_service(settings) as svc, _https(svc) as client:
        assert (await _login(client, TOKEN)).status_code == 303
        stolen = client.cookies[cookies.SESSION_COOKIE]
        assert (await client.get("/api/investigations")).status_code == 200
        page = await client.get("/")
        assert (await client.post("/logout", data={"csrf_token": _csrf(page.text)})).status_code == 303
        client.cookies.clear()
        client.cookies.set(cookies.SESSION_COOKIE, stolen)
        assert (await client.get("/api/investigations")).status_code == 401


async def test_the_right_token_logs_in_after_many_failures_from_the_same_address(base_settings):
    settings = base_settings(job_backend="none", api_token=SecretStr(TOKEN), host="0.0.0.0")
    async with running_service(settings) as svc, _https(svc) as client:
        codes = [(await _login(client, f"guess-{i}")).status_code for i in range(12)]
        assert codes[0] == 401 and codes[-1] == 429
        assert (await _login(client, TOKEN)).status_code == 303


@pytest.mark.parametrize("name", ["..", "../../x", "a/../b", "./a", "a/./b", "/abs", "a\\b", "a//b", "a/", "~/x"])
async def test_a_repository_name_with_dot_segments_or_separators_is_refused(base_settings, fixture_repo, name):
    async with running_service(base_settings(job_backend="none")) as svc:
        r = await svc.client.post("/api/repos", json={"name": name, "location": str(fixture_repo[0])})
        assert r.status_code == 422, (name, r.text)
        assert "name" in r.text
        assert (await svc.client.get("/api/repos")).json() == []


@pytest.mark.parametrize("name", ["..", ".", "../../x", "a/../b"])
def test_the_tree_cache_path_of_any_name_stays_under_trees(tmp_path, name):
    settings = Settings(data_dir=tmp_path / "data", register_self=False)
    trees = settings.trees_dir.resolve()
    path = tree_path(settings, name, "c0ffee").resolve()
    assert path.is_relative_to(trees) and path.parent != trees


@pytest.mark.parametrize("token", ["", "   ", "x", "short-token"])
def test_a_blank_or_short_api_token_is_refused_off_loopback(tmp_path, token):
    settings = Settings(data_dir=tmp_path, host="0.0.0.0", api_token=SecretStr(token), register_self=False)
    with pytest.raises(ConfigurationError, match="BUGSLEUTH_API_TOKEN"):
        settings.check()


def test_a_blank_api_token_is_refused_on_loopback_too(tmp_path):
    with pytest.raises(ConfigurationError, match="empty"):
        Settings(data_dir=tmp_path, api_token=SecretStr(" "), register_self=False).check()
    Settings(data_dir=tmp_path, api_token=SecretStr("dev"), register_self=False).check()  # short is fine on loopback


# ---------------------------------------------------------------------------------------------- issue 20: bearer


async def test_openapi_declares_the_bearer_scheme_on_every_api_route(base_settings):
    async with running_service(base_settings(job_backend="none")) as svc:
        spec = (await svc.client.get("/openapi.json")).json()
        schemes = spec["components"]["securitySchemes"]
        (name, scheme), = schemes.items()
        assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
        for path, method in (("/api/reports", "post"), ("/api/investigations", "get"), ("/metrics", "get")):
            assert spec["paths"][path][method]["security"] == [{name: []}], path
        assert "security" not in spec["paths"]["/health"]["get"]
        assert "security" not in spec["paths"]["/webhooks/{provider}"]["post"]


async def test_the_bearer_token_is_checked_once_for_writes(base_settings, fixture_repo):
    async with running_service(base_settings(job_backend="none", api_token=SecretStr(TOKEN))) as svc:
        body = {"name": "acme/tiny", "location": str(fixture_repo[0])}
        assert (await svc.client.post("/api/repos", json=body)).status_code == 401
        bad = await svc.client.post("/api/repos", json=body, headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 401
        ok = await svc.client.post("/api/repos", json=body, headers={"Authorization": f"bearer {TOKEN}"})
        assert ok.status_code == 201



# ---------------------------------------------------------------------------------------------- issue 20: proxies


def test_serve_trusts_proxy_headers_only_from_forwarded_allow_ips(monkeypatch, tmp_path):
    import uvicorn
    from typer.testing import CliRunner

    from app.cli import cli
    from app.config import get_settings

    calls: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: calls.append(kw))
    monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(tmp_path / "cli-data"))
    monkeypatch.setenv("BUGSLEUTH_HOST", "127.0.0.1")
    monkeypatch.setenv("BUGSLEUTH_FORWARDED_ALLOW_IPS", "")  # `serve --forwarded-allow-ips` sets it: restored after
    monkeypatch.delenv("BUGSLEUTH_FORWARDED_ALLOW_IPS")
    get_settings.cache_clear()
    try:
        assert CliRunner().invoke(cli, ["serve"]).exit_code == 0
        get_settings.cache_clear()
        assert CliRunner().invoke(cli, ["serve", "--forwarded-allow-ips", "10.0.0.1,10.0.0.2"]).exit_code == 0
    finally:
        get_settings.cache_clear()
    assert calls[0]["proxy_headers"] is False
    assert calls[1]["proxy_headers"] is True and calls[1]["forwarded_allow_ips"] == "10.0.0.1,10.0.0.2"


async def test_behind_a_trusted_proxy_failed_logins_are_counted_per_real_client(base_settings):
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    settings = base_settings(job_backend="none", api_token=SecretStr(TOKEN), host="0.0.0.0")
    async with running_service(settings) as svc:
        proxied = ProxyHeadersMiddleware(svc.app, trusted_hosts="10.9.9.9")  # what `serve --forwarded-allow-ips` runs
        transport = httpx.ASGITransport(app=proxied, client=("10.9.9.9", 4321))

        def behind_proxy(client_ip: str) -> httpx.AsyncClient:
            return httpx.AsyncClient(transport=transport, base_url="https://bugs.example",
                                     headers={"X-Forwarded-For": client_ip, "X-Forwarded-Proto": "https"})

        async with behind_proxy("203.0.113.7") as guesser, behind_proxy("198.51.100.2") as owner:
            codes = [(await _login(guesser, f"guess-{i}")).status_code for i in range(12)]
            assert codes[-1] == 429
            assert (await _login(owner, "one-typo")).status_code == 401  # not locked out by the guesser
            assert (await _login(owner, TOKEN)).status_code == 303
