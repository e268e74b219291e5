"""Webhook deliveries in the database: the dedup record of every delivery. Re-exported by `app.store`."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app._store_common import DuplicateError
from app._store_common import storable as _storable
from app.models import WebhookDelivery
from app.views import DeliveryView
from schemas import Source

# --- webhook deliveries --------------------------------------------------------------------------------------


async def record_delivery(
    session: AsyncSession,
    provider: Source,
    *,
    delivery_id: str | None,
    outcome: str,
    reason: str = "",
    authenticated: bool,
    investigation_id: int | None = None,
    identity: str | None = None,
) -> int:
    """Record a webhook delivery; raises DuplicateError when an authenticated delivery with the same key (the
    body's `identity` when it has one, else the delivery id) was seen before."""
    key = identity or delivery_id
    row = WebhookDelivery(
        provider=provider,
        delivery_id=_storable(delivery_id, 200),
        dedup_key=_storable(key, 200) if authenticated and key else None,
        outcome=outcome,
        reason=_storable(reason, 2000),
        investigation_id=investigation_id,
    )
    session.add(row)
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError as exc:
        raise DuplicateError(f"{provider.value} delivery {delivery_id!r} was already received") from exc
    return row.id


async def find_delivery(session: AsyncSession, provider: Source, key: str) -> DeliveryView | None:
    """The authenticated delivery recorded under this key (the body's identity when it had one, else its
    delivery id), or None."""
    row = await session.scalar(
        select(WebhookDelivery).where(
            WebhookDelivery.provider == provider, WebhookDelivery.dedup_key == _storable(key, 200)
        )
    )
    return _delivery_view(row) if row else None


async def set_delivery_investigation(session: AsyncSession, delivery_row_id: int, investigation_id: int) -> None:
    """Link a recorded delivery to the investigation it created."""
    await session.execute(
        update(WebhookDelivery).where(WebhookDelivery.id == delivery_row_id).values(investigation_id=investigation_id)
    )


def _delivery_view(row: WebhookDelivery) -> DeliveryView:
    return DeliveryView(
        id=row.id,
        provider=row.provider,
        delivery_id=row.delivery_id,
        outcome=row.outcome,
        reason=row.reason,
        investigation_id=row.investigation_id,
        received_at=row.received_at,
    )


async def list_deliveries(session: AsyncSession, *, limit: int = 50, offset: int = 0) -> list[DeliveryView]:
    """Webhook deliveries, newest first."""
    rows = await session.scalars(
        select(WebhookDelivery).order_by(WebhookDelivery.id.desc()).limit(limit).offset(offset)
    )
    return [_delivery_view(r) for r in rows]
