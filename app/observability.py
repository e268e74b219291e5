"""Structured JSON logs carrying the request and investigation ids, the access log, and Prometheus metrics."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from starlette.types import ASGIApp, Receive, Scope, Send

from app.views import Counts

investigation_id_var: ContextVar[int | None] = ContextVar("investigation_id", default=None)
"""The investigation being worked on in this task; every log line carries it."""
request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The HTTP request being served in this task (or that created the investigation being run); every log line
carries it."""

REQUEST_ID_HEADER = "x-request-id"
"""Taken from the request when sane, else generated; always echoed on the response."""
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+=@-]{0,127}")
access_log = logging.getLogger("bugsleuth.access")

_RESERVED = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, investigation_id, and any `extra=` fields."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record."""
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        inv = getattr(record, "investigation_id", None) or investigation_id_var.get()
        if inv is not None:
            out["investigation_id"] = inv
        request_id = getattr(record, "request_id", None) or request_id_var.get()
        if request_id is not None:
            out["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _RESERVED and key not in out:
                out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def configure_logging(level: str = "INFO", *, json_logs: bool = True) -> None:
    """Send the service's logs to stderr, as JSON lines by default (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_logs else logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler.set_name("bugsleuth")
    for name in ("bugsleuth", "app", "procrastinate", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [h for h in logger.handlers if h.get_name() != "bugsleuth"] + [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    logging.getLogger("procrastinate").setLevel(max(logging.getLevelName(level.upper()), logging.WARNING))


class _DbCollector:
    """Exposes counts read from the database at scrape time, so every process's work is counted."""

    def __init__(self) -> None:
        self.counts: Counts | None = None
        self.totals: dict[str, float] = {}

    def collect(self) -> Any:
        g = GaugeMetricFamily(
            "bugsleuth_investigations", "Investigations by status and classification", labels=["status", "classification"]
        )
        if self.counts is not None:
            for (status, classification), n in self.counts.by_status_classification.items():
                g.add_metric([status, classification], n)
        yield g
        tools = CounterMetricFamily("bugsleuth_tool_calls", "Tool calls of finished investigations")
        tools.add_metric([], self.totals.get("tool_calls", 0))
        yield tools
        tokens = CounterMetricFamily("bugsleuth_tokens", "Model tokens of finished investigations", labels=["direction"])
        tokens.add_metric(["input"], self.totals.get("input_tokens", 0))
        tokens.add_metric(["output"], self.totals.get("output_tokens", 0))
        yield tokens


class Metrics:
    """The Prometheus metrics of one service instance (own registry, so tests can build many apps)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        """Registry rendered at /metrics."""
        self.db = _DbCollector()
        """Counts from the database, refreshed on each scrape."""
        self.registry.register(self.db)
        self.reports = Counter(
            "bugsleuth_reports_accepted", "Reports accepted", ["source", "classification"], registry=self.registry
        )
        """Reports accepted by intake."""
        self.deliveries = Counter(
            "bugsleuth_webhook_deliveries", "Webhook deliveries by outcome", ["provider", "outcome"], registry=self.registry
        )
        """Webhook deliveries."""
        self.finished = Counter(
            "bugsleuth_investigations_finished", "Investigations finished in this process", ["status", "termination"],
            registry=self.registry,
        )
        """Runs finished by this process."""
        self.run_tool_calls = Counter(
            "bugsleuth_run_tool_calls", "Tool calls made by runs in this process", ["tool"], registry=self.registry
        )
        """Tool calls seen in trace events."""
        self.duration = Histogram(
            "bugsleuth_investigation_duration_seconds",
            "Wall-clock duration of investigations run in this process",
            buckets=(1, 2, 5, 10, 30, 60, 120, 300, 600, 1800),
            registry=self.registry,
        )
        """Investigation durations."""
        self.intake_batch = Histogram(
            "bugsleuth_intake_batch_size",
            "Reports stored per intake transaction (group commit)",
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
            registry=self.registry,
        )
        """Group-commit batch sizes."""
        self.http = Histogram(
            "bugsleuth_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route", "status"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
            registry=self.registry,
        )
        """Request latencies."""

    def render(self, counts: Counts, totals: dict[str, float]) -> bytes:
        """The exposition text, with the database counts given."""
        self.db.counts, self.db.totals = counts, totals
        return generate_latest(self.registry)


def request_id_from(value: str | None) -> str:
    """The caller's request id when it is sane (1-128 URL-safe characters), else a new one."""
    if value and _SANE_REQUEST_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


class RequestContextMiddleware:
    """Gives every HTTP request an id (`X-Request-ID` in, or generated; echoed on the response) that every log
    line of the request carries, times it by route template, and writes one access-log line when it ends (pure
    ASGI, so event streams pass through)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics, log_access: bool = True) -> None:
        self.app = app
        self.metrics = metrics
        self.log_access = log_access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v.decode("latin-1") for k, v in scope["headers"] if k == REQUEST_ID_HEADER.encode()), None)
        request_id = request_id_from(given)
        token = request_id_var.set(request_id)
        start = time.perf_counter()
        status = {"code": 500}

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != REQUEST_ID_HEADER.encode()]
                message = {**message, "headers": [*headers, (REQUEST_ID_HEADER.encode(), request_id.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - start
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.http.labels(scope["method"], route, str(status["code"])).observe(elapsed)
            if self.log_access:
                client = scope.get("client")
                access_log.info(
                    "%s %s %s", scope["method"], scope["path"], status["code"],
                    extra={"method": scope["method"], "path": scope["path"], "status": status["code"],
                           "duration_ms": round(elapsed * 1000, 2), "client": client[0] if client else None},
                )
            request_id_var.reset(token)
