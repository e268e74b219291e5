"""A local fake of the GitHub and GitLab comment APIs on 127.0.0.1 (ephemeral port), speaking their wire format:
GitHub `GET/POST /repos/{o}/{r}/issues/{n}/comments` (pages linked by `Link: rel="next"`) and
`PATCH /repos/{o}/{r}/issues/comments/{id}`; GitLab `GET/POST /api/v4/projects/{p}/issues/{iid}/notes`
(pages numbered by `X-Next-Page`) and `PUT .../notes/{id}`; `GET /user` on either (a GitHub App's installation
token, `ghs_…`, gets 403 there and writes as a bot). Scripted failures answer the next requests."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

_GH_LIST = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
_GH_ONE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")
_GL_LIST = re.compile(r"^/api/v4/projects/([^/]+)/issues/(\d+)/notes$")
_GL_ONE = re.compile(r"^/api/v4/projects/([^/]+)/issues/(\d+)/notes/(\d+)$")
PERSON = {"id": 2, "login": "alice", "username": "alice", "type": "User"}
"""Who wrote the seeded comments."""
_APP_BOT = {"id": 99, "login": "bugsleuth[bot]", "type": "Bot"}


def _user(headers: dict[str, str]) -> dict | None:
    """Who the request's token is; None for a GitHub App's installation token, which may not ask."""
    given = {k.lower(): v for k, v in headers.items()}
    token = given.get("private-token") or given.get("authorization", "").removeprefix("Bearer ")
    if token.startswith("ghs_"):
        return None
    return {"id": 1, "login": "bugsleuth-bot", "username": "bugsleuth-bot", "type": "User"}


@dataclass
class FakeTracker:
    """The fake's state: comments per issue, every request received, failures to answer next."""

    url: str = ""
    comments: dict[str, list[dict]] = field(default_factory=dict)
    """`github:owner/repo#7` or `gitlab:group/proj#3` -> comments in creation order."""
    requests: list[dict] = field(default_factory=list)
    failures: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    """(status, headers) answered, in order, to the next requests instead of serving them."""
    fail_always: tuple[int, dict[str, str]] | None = None
    link_base: str = ""
    """Where GitHub's `Link: rel="next"` points (default: this fake), to play a tracker linking elsewhere."""
    _next_id: int = 1000
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def seed(self, issue: str, bodies: list[str], author: dict = PERSON) -> None:
        """Comments other people wrote before."""
        for body in bodies:
            self._add(issue, body, author)

    def bots(self, issue: str, marker: str = "<!-- bugsleuth:investigation") -> list[dict]:
        """The comments of the issue that carry bugsleuth's marker."""
        return [c for c in self.comments.get(issue, []) if marker in c["body"]]

    def _add(self, issue: str, body: str, author: dict) -> dict:
        self._next_id += 1
        key = "user" if issue.startswith("github:") else "author"
        comment = {"id": self._next_id, "body": body, "created_at": time.time(), key: author}
        self.comments.setdefault(issue, []).append(comment)
        return comment

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], object]:
        """One request: (status, headers, JSON answer)."""
        with self._lock:
            self.requests.append({"method": method, "path": raw_path, "headers": headers, "t": time.monotonic(),
                                  "body": json.loads(body) if body else None})  # fmt: skip
            if self.failures or self.fail_always:
                status, extra = self.failures.pop(0) if self.failures else self.fail_always
                return status, extra, {"message": "scripted failure"}
            parts = urlsplit(raw_path)
            path, query = parts.path, parse_qs(parts.query)  # GitLab's project stays %2F-encoded in the match
            payload = json.loads(body) if body else {}
            if path in ("/user", "/api/v4/user"):
                me = _user(headers)
                return (200, {}, me) if me else (403, {}, {"message": "Resource not accessible by integration"})
            payload["author"] = _user(headers) or _APP_BOT
            if m := _GH_LIST.match(path):
                return self._list_or_create(f"github:{m[1]}#{m[2]}", method, parts.path, query, payload, "github")
            if (m := _GH_ONE.match(path)) and method == "PATCH":
                return self._update(int(m[2]), payload)
            if m := _GL_LIST.match(path):
                return self._list_or_create(f"gitlab:{unquote(m[1])}#{m[2]}", method, parts.path, query, payload, "gitlab")
            if (m := _GL_ONE.match(path)) and method == "PUT":
                return self._update(int(m[3]), payload)
            return 404, {}, {"message": "Not Found"}

    def _list_or_create(self, issue, method, path, query, payload, kind):
        if method == "POST":
            return 201, {}, self._add(issue, payload["body"], payload["author"])
        items = self.comments.get(issue, [])
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            if kind == "github":
                headers["Link"] = f'<{self.link_base or self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"'
            else:
                headers["X-Next-Page"] = str(page + 1)
        return 200, headers, chunk

    def _update(self, comment_id: int, payload: dict):
        for comments in self.comments.values():
            for c in comments:
                if c["id"] == comment_id:
                    c["body"] = payload["body"]
                    return 200, {}, c
        return 404, {}, {"message": "Not Found"}


@contextmanager
def fake_tracker() -> Iterator[FakeTracker]:
    """A running fake on 127.0.0.1 (port 0)."""
    state = FakeTracker()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            status, headers, answer = state.handle(self.command, self.path, dict(self.headers), self.rfile.read(length))
            data = json.dumps(answer).encode()
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = _serve  # noqa: N815 - http.server API

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
