"""Login state beyond the signed cookie: revoked sessions and the failed-login throttle.

Logout ends a session for good, not only in the browser that logged out.

Session cookies are stateless (signed, with an expiry), so a copy of a logged-in cookie would stay valid
until it expires. Logging out records the session's id here until that expiry. The list is kept in a file
in the data directory (one `expires nonce` line per logout, appended), so every service process on the
machine, and the process after a restart, refuses a logged-out cookie.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Protocol

FILE_NAME = "revoked-sessions"
"""Name of the file in the data directory."""


class SessionRevocations:
    """Session ids logged out before their expiry (in memory, mirrored to `path` when one is given)."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._revoked: dict[str, int] = {}
        self._seen: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def revoke(self, nonce: str, expires: int) -> None:
        """Refuse the session `nonce` from now until `expires` (Unix time)."""
        with self._lock:
            self._revoked[nonce] = expires
            if self._path is None:
                return
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                with os.fdopen(fd, "a", encoding="ascii") as fh:
                    fh.write(f"{expires} {nonce}\n")
            except OSError:
                pass  # still revoked in this process

    def is_revoked(self, nonce: str) -> bool:
        """Whether the session `nonce` was logged out (by any process sharing the data directory)."""
        with self._lock:
            self._reload()
            return nonce in self._revoked

    def _reload(self) -> None:
        if self._path is None:
            return
        try:
            stat = self._path.stat()
        except OSError:
            return
        if self._seen == (stat.st_mtime_ns, stat.st_size):
            return
        now = time.time()
        try:
            lines = self._path.read_text(encoding="ascii", errors="replace").splitlines()
        except OSError:
            return
        for line in lines:
            expires, _, nonce = line.partition(" ")
            if expires.isdigit() and nonce:
                self._revoked[nonce] = int(expires)
        self._revoked = {n: e for n, e in self._revoked.items() if e >= now}
        if len(lines) > 2 * len(self._revoked) + 1000:  # mostly expired lines: rewrite the file
            self._compact()
            self._seen = None
        else:
            self._seen = (stat.st_mtime_ns, stat.st_size)

    def _compact(self) -> None:
        assert self._path is not None
        tmp = self._path.with_name(f".{FILE_NAME}.{os.getpid()}")
        try:
            tmp.write_text("".join(f"{e} {n}\n" for n, e in self._revoked.items()), encoding="ascii")
            os.replace(tmp, self._path)
        except OSError:
            tmp.unlink(missing_ok=True)


class ThrottleLimits(Protocol):
    """The limits the throttle reads (`security.AccessPolicy` has them)."""

    max_login_failures: int
    login_window_s: float


class LoginThrottle:
    """Counts failed logins per client address and refuses more than the policy allows in its window."""

    def __init__(self, policy: ThrottleLimits) -> None:
        self._policy = policy
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str) -> deque[float]:
        times = self._failures.setdefault(client, deque())
        cutoff = time.monotonic() - self._policy.login_window_s
        while times and times[0] < cutoff:
            times.popleft()
        return times

    def blocked(self, client: str) -> bool:
        """Whether this client has failed too often recently."""
        return len(self._recent(client)) >= self._policy.max_login_failures

    def failed(self, client: str) -> None:
        """Record one failed attempt."""
        self._recent(client).append(time.monotonic())
        if len(self._failures) > 10_000:  # bounded memory against address-spraying
            self._failures.clear()
