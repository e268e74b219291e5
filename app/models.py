"""Database tables (SQLAlchemy 2 declarative). One schema for SQLite and PostgreSQL; fixed sets are stored as
their enum values (`schemas.enums`), never free strings."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from schemas import Classification, Feedback, Source, Status
from schemas.text import scrub, storable


def utcnow() -> datetime:
    """Timezone-aware now (UTC)."""
    return datetime.now(timezone.utc)


def _enum(enum_cls: type, name: str) -> Enum:
    return Enum(
        enum_cls,
        name=name,
        native_enum=False,
        create_constraint=False,
        length=32,
        values_callable=lambda e: [m.value for m in e],
        validate_strings=True,
    )


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite stores none: UTC is attached on the way out)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value


class StorableText(TypeDecorator[str]):
    """Text that every backend stores: lone surrogates and NUL (PostgreSQL refuses it) become U+FFFD on the way
    in (`schemas.text.storable`), so no string that reached storage can fail the transaction. Inputs the caller
    can fix are refused earlier, at the API (422)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Any) -> str | None:
        return storable(value) if isinstance(value, str) else value


class StorableString(StorableText):
    """`StorableText` in a `VARCHAR(length)` column."""

    impl = String
    cache_ok = True


MAX_COUNT = 2**31 - 1
"""The largest value a counter column holds (PostgreSQL `integer`)."""


class StorableCount(TypeDecorator[int]):
    """A counter (tool calls, tokens, runs) that every backend stores: a count beyond a 32-bit integer (what a
    misbehaving model server or a sum of them may claim) is stored as the largest one, a negative one as 0, so no
    run's outcome fails its transaction over what it counted."""

    impl = Integer
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Any) -> int | None:
        return min(max(value, 0), MAX_COUNT) if isinstance(value, int) else value


class StorableJSON(TypeDecorator[Any]):
    """JSON that every backend stores (`schemas.text.scrub`): NUL and lone surrogates become U+FFFD and a float that
    is not finite (`NaN`, `Infinity`, which PostgreSQL's JSON refuses) null, anywhere in the document, so no run's
    diagnosis or trace fails its transaction over what it holds."""

    impl = JSON
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return scrub(value)


MAX_ID = 2**63 - 1
"""The largest row id (a signed 64-bit integer)."""


class RowId(TypeDecorator[int]):
    """A row id: 64-bit on PostgreSQL, INTEGER on SQLite so the column is the rowid alias (autoincrement). An id
    beyond the 64-bit range (twenty digits typed into a page's address) names no row: it is bound as 0, which no row
    has, so looking it up finds nothing instead of failing the request."""

    impl = BigInteger
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> Any:
        return dialect.type_descriptor(Integer() if dialect.name == "sqlite" else BigInteger())

    def process_bind_param(self, value: int | None, dialect: Any) -> int | None:
        return 0 if isinstance(value, int) and not -MAX_ID - 1 <= value <= MAX_ID else value


_BigId = RowId()


class Base(DeclarativeBase):
    """Declarative base of every bugsleuth table."""

    type_annotation_map = {dict[str, Any]: StorableJSON(), list[Any]: StorableJSON(), datetime: UTCDateTime()}


class Repository(Base):
    """A registered repository: a local path or a git URL cloned into the cache."""

    __tablename__ = "repositories"

    id: Mapped[int] = mapped_column(_BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(StorableString(200), unique=True)
    """`owner/name`; webhooks match on it."""
    location: Mapped[str] = mapped_column(StorableText())
    """Absolute local path or git URL."""
    default_ref: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    """Branch investigated when a report names no ref (None: the repository's HEAD)."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Report(Base):
    """A bug report exactly as it arrived (immutable)."""

    __tablename__ = "reports"

    id: Mapped[int] = mapped_column(_BigId, primary_key=True, autoincrement=True)
    source: Mapped[Source] = mapped_column(_enum(Source, "source"))
    repo: Mapped[str | None] = mapped_column(StorableString(200), index=True)
    title: Mapped[str] = mapped_column(StorableText(), default="")
    body: Mapped[str] = mapped_column(StorableText(), default="")
    ref: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    labels: Mapped[list[Any]] = mapped_column(default=list)
    reporter: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    url: Mapped[str | None] = mapped_column(StorableText(), default=None)
    external_id: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Investigation(Base):
    """One investigation of one report (a rerun is a new row pointing at the same report)."""

    __tablename__ = "investigations"
    __table_args__ = (
        Index("ix_investigations_status_id", "status", "id"),
        Index("ix_investigations_repo_id", "repo", "id"),
    )

    id: Mapped[int] = mapped_column(_BigId, primary_key=True, autoincrement=True)
    report_id: Mapped[int] = mapped_column(ForeignKey("reports.id", ondelete="CASCADE"), index=True)
    repo: Mapped[str | None] = mapped_column(StorableString(200))
    status: Mapped[Status] = mapped_column(_enum(Status, "status"), default=Status.queued)
    classification: Mapped[Classification] = mapped_column(_enum(Classification, "classification"), index=True)
    classification_confidence: Mapped[float] = mapped_column(Float, default=0.0)
    classification_reason: Mapped[str] = mapped_column(StorableText(), default="")
    explorer: Mapped[str] = mapped_column(StorableString(300), default="offline")
    extra_context: Mapped[str | None] = mapped_column(StorableText(), default=None)
    rerun_of: Mapped[int | None] = mapped_column(_BigId, default=None)
    request_id: Mapped[str | None] = mapped_column(StorableString(128), default=None)
    """The HTTP request that created it (`X-Request-ID`): its job's log lines carry it too."""
    commit: Mapped[str | None] = mapped_column(StorableString(64), default=None)
    diagnosis: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    report_markdown: Mapped[str | None] = mapped_column(StorableText(), default=None)
    termination: Mapped[str | None] = mapped_column(StorableString(32), default=None)
    error: Mapped[str | None] = mapped_column(StorableText(), default=None)
    tool_calls: Mapped[int] = mapped_column(StorableCount(), default=0)
    input_tokens: Mapped[int] = mapped_column(StorableCount(), default=0)
    output_tokens: Mapped[int] = mapped_column(StorableCount(), default=0)
    duration_s: Mapped[float | None] = mapped_column(Float, default=None)
    runs: Mapped[int] = mapped_column(StorableCount(), default=0)
    """Times a worker started this investigation (more than 1 after a crash or restart)."""
    job_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    """procrastinate job id, when jobs run on procrastinate."""
    worker: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    commented: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class TraceEventRow(Base):
    """One trace event of one run, persisted as it happens so any process can stream it."""

    __tablename__ = "trace_events"
    __table_args__ = (Index("ix_trace_events_inv_id", "investigation_id", "id"),)

    id: Mapped[int] = mapped_column(_BigId, primary_key=True, autoincrement=True)
    investigation_id: Mapped[int] = mapped_column(ForeignKey("investigations.id", ondelete="CASCADE"))
    run: Mapped[int] = mapped_column(Integer, default=1)
    kind: Mapped[str] = mapped_column(StorableString(32))
    data: Mapped[dict[str, Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class FeedbackRow(Base):
    """A person's verdict on a diagnosis; kept per repository as memory for later runs."""

    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(_BigId, primary_key=True, autoincrement=True)
    investigation_id: Mapped[int] = mapped_column(ForeignKey("investigations.id", ondelete="CASCADE"), index=True)
    repo: Mapped[str | None] = mapped_column(StorableString(200), index=True)
    verdict: Mapped[Feedback] = mapped_column(_enum(Feedback, "feedback"))
    note: Mapped[str] = mapped_column(StorableText(), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDelivery(Base):
    """Every webhook delivery and what became of it (accepted, ignored, unauthorized, invalid)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (UniqueConstraint("provider", "dedup_key", name="uq_webhook_deliveries_dedup"),)

    id: Mapped[int] = mapped_column(_BigId, primary_key=True, autoincrement=True)
    provider: Mapped[Source] = mapped_column(_enum(Source, "source"))
    delivery_id: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    """The delivery id the sender claimed (unverified for unauthorized deliveries)."""
    dedup_key: Mapped[str | None] = mapped_column(StorableString(200), default=None)
    """Set only for authenticated deliveries, so a forged id can never block the real one."""
    outcome: Mapped[str] = mapped_column(StorableString(32))
    reason: Mapped[str] = mapped_column(StorableText(), default="")
    investigation_id: Mapped[int | None] = mapped_column(_BigId, default=None)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
