"""The Host check against DNS rebinding.

A page on `http://rebind.example:8000` whose name is made to resolve to 127.0.0.1 talks to a loopback service
from the victim's browser, with the browser's idea of "same origin". Such requests carry the attacker's name in
`Host`, so the service answers only to names it knows: loopback names, IP literals (a browser sends an IP
literal only when it was pointed at that address, which no rebinding can arrange), the bind address, and the
operator's `allowed_hosts`. Off loopback every read needs the token anyway, so the check applies there only
when `allowed_hosts` is set.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
"""Host names that always mean this machine."""


def is_loopback(host: str | None) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    if not host:
        return True
    host = host.strip().strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a `Host` header, lower case, without port, brackets or trailing dot."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    name, colon, port = value.rpartition(":")
    if colon and port.isdigit() and ":" not in name:
        value = name
    return value.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostPolicy:
    """Which `Host` names the service answers to."""

    check: bool
    """False: any name (a token guards every read); True: only the names below."""
    names: frozenset[str]
    """Allowed names besides loopback names and IP literals; `*` allows any."""

    @classmethod
    def build(cls, *, require_auth: bool, bind_host: str, allowed: Iterable[str]) -> HostPolicy:
        """The policy for a bind address and the operator's `allowed_hosts`."""
        names = frozenset(host_name(a) for a in allowed if a.strip())
        if "*" in names:
            return cls(check=False, names=names)
        return cls(check=bool(names) or not require_auth, names=names | {host_name(bind_host)})

    def allows(self, header: str | None) -> bool:
        """Whether a request with this `Host` header (None: none sent) is served."""
        if not self.check or header is None:
            return True
        name = host_name(header)
        return name in LOOPBACK_NAMES or name.endswith(".localhost") or name in self.names or _is_ip(name)
