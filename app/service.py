"""What the routes do: intake (classify, store, enqueue in one transaction), reruns, cancellation, feedback,
repository registration, and webhook deliveries. Route handlers only translate HTTP to these calls."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import store
from funnel.classify import classify
from app.webhooks import WebhookOutcome, parse_delivery
from app.webhooks._common import invalid
from app.repos import is_git_url, repository_name_problem
from app.runtime import Runtime
from app.views import Accepted, FeedbackView, RepoView, links
from schemas import BugReport, ClassificationResult, Feedback, Source, Status

log = logging.getLogger("bugsleuth.intake")


class UnknownRepositoryError(Exception):
    """The report names a repository that is not registered: the caller's mistake."""

    def __init__(self, name: str | None) -> None:
        super().__init__(
            f"repository {name!r} is not registered; GET /api/repos lists the registered ones, "
            "POST /api/repos registers one"
        )
        self.name = name


class NotFoundError(Exception):
    """No such investigation."""


class InvalidRepositoryError(Exception):
    """A repository location that cannot be registered (missing path, unsupported URL)."""


def classify_report(report: BugReport) -> ClassificationResult:
    """The offline heuristic classifier (`funnel.classify.classify`)."""
    return classify(report)


async def submit_report(
    runtime: Runtime, report: BugReport, *, force: bool = False, explorer: str | None = None
) -> Accepted:
    """Classify, store and enqueue a report; committed before returning (nothing is lost after 202).

    `force` investigates it whatever its classification (someone asked for this investigation: MCP);
    `explorer` replaces the configured explorer for this report.
    Raises UnknownRepositoryError when the repository is not registered."""
    classification = classify_report(report)
    investigate = force or classification.label in runtime.settings.investigate_classes
    if not await repository_known(runtime, report.repo):
        raise UnknownRepositoryError(report.repo)
    if runtime.intake is not None and explorer is None:
        inv_id, report_id = await runtime.intake.submit(report, classification, investigate)
    else:
        async with runtime.db.session() as s:
            inv_id, report_id = await store.create_investigation(
                s, report, classification, investigate=investigate, explorer=explorer or runtime.settings.explorer
            )
            if investigate and runtime.jobs is not None:
                await runtime.jobs.enqueue(s, inv_id, report.repo)
        if investigate and runtime.jobs is not None:
            runtime.jobs.committed()
    runtime.metrics.reports.labels(report.source.value, classification.label.value).inc()
    log.info(
        "report accepted",
        extra={"investigation_id": inv_id, "repo": report.repo, "classification": classification.label.value},
    )
    return Accepted(
        id=inv_id,
        report_id=report_id,
        status=Status.queued if investigate else Status.skipped,
        classification=classification.label,
        urls=links(inv_id),
    )


async def repository_known(runtime: Runtime, name: str | None) -> bool:
    """Whether a repository is registered (names seen once are remembered: registrations are never removed)."""
    if name is None:
        return False
    if name in runtime.known_repos:
        return True
    async with runtime.db.read_session() as s:
        found = await store.get_repository(s, name) is not None
    if found:
        runtime.known_repos.add(name)
    return found


async def rerun(runtime: Runtime, investigation_id: int, extra_context: str | None) -> Accepted:
    """Queue a new investigation of the same report, with optional extra context from a person."""
    jobs = runtime.jobs
    async with runtime.db.session() as s:
        new_id = await store.create_rerun(
            s, investigation_id, extra_context=extra_context, explorer=runtime.settings.explorer
        )
        if new_id is None:
            raise NotFoundError(investigation_id)
        detail = await store.get_investigation(s, new_id)
        assert detail is not None
        if jobs is not None:
            await jobs.enqueue(s, new_id, detail.repo)
    if jobs is not None:
        jobs.committed()
    return Accepted(
        id=new_id,
        report_id=detail.report_id,
        status=Status.queued,
        classification=detail.classification,
        urls=links(new_id),
    )


async def cancel(runtime: Runtime, investigation_id: int) -> Status:
    """Ask an investigation to stop (a running one stops within a second); returns its status now."""
    async with runtime.db.session() as s:
        outcome = await store.request_cancel(s, investigation_id)
    if outcome is None:
        raise NotFoundError(investigation_id)
    status, job_id = outcome
    if runtime.jobs is not None and status in (Status.running, Status.cancelled):
        await runtime.jobs.cancel(investigation_id, job_id)
    return status


async def give_feedback(runtime: Runtime, investigation_id: int, verdict: Feedback, note: str) -> FeedbackView:
    """Record a verdict; it becomes memory for later runs on the same repository."""
    async with runtime.db.session() as s:
        view = await store.add_feedback(s, investigation_id, verdict, note)
    if view is None:
        raise NotFoundError(investigation_id)
    return view


async def register_repository(
    runtime: Runtime, name: str, location: str, *, default_ref: str | None = None, replace: bool = False
) -> RepoView:
    """Add a repository to the registry (a local directory, or a git URL cloned on first use)."""
    if (problem := repository_name_problem(name)) is not None:
        raise InvalidRepositoryError(problem)
    if not is_git_url(location):
        try:
            path = Path(location).expanduser()
            ok = path.is_absolute() and path.is_dir()
        except (OSError, ValueError, RuntimeError):
            ok = False
        if not ok:
            raise InvalidRepositoryError(
                f"{location[:200]!r} is neither an absolute path of a directory on this machine nor a git URL"
            )
        location = str(path.resolve())
    elif not location.startswith(("https://", "http://", "ssh://", "git://", "file://", "git@")):
        raise InvalidRepositoryError(f"unsupported git URL {location!r}: use https://, ssh://, git@ or file://")
    async with runtime.db.session() as s:
        return await store.add_repository(s, name, location, default_ref=default_ref, replace=replace)


@dataclass
class WebhookAnswer:
    """What the webhook route answers."""

    status_code: int
    """HTTP status."""
    body: dict[str, Any]
    """JSON body."""


def _parsed(runtime: Runtime, provider: Source, headers: dict[str, str], body: bytes,
            query: dict[str, str] | None) -> tuple[WebhookOutcome, int]:
    """What the delivery amounts to, and the HTTP status if it is refused as invalid: 400 for the sender's fault,
    500 when the parser itself failed (the delivery still recorded, the traceback logged)."""
    try:
        return parse_delivery(provider, headers, body, runtime.settings.webhook_secret(provider.value), query=query), 400
    except ValueError as exc:  # a field the report model refuses: recorded as invalid, never a 500
        return invalid(provider, f"delivery cannot be turned into a report: {str(exc)[:500]}"), 400
    except Exception as exc:  # bugsleuth's own fault on a shape it did not expect: the delivery is not lost unseen
        log.exception("webhook delivery could not be read", extra={"provider": provider.value})
        why = f"{type(exc).__name__}: {str(exc)[:300]}"
        return invalid(provider, f"bugsleuth could not read this delivery ({why}); the service log has the traceback"), 500


async def handle_webhook(
    runtime: Runtime,
    provider: Source,
    headers: dict[str, str],
    body: bytes,
    query: dict[str, str] | None = None,
) -> WebhookAnswer:
    """Verify, deduplicate, record and (for bug reports on registered repositories) accept a delivery.

    Forged or unsigned: 401, recorded, nothing queued. Malformed: 400. Redelivery of a known delivery id:
    200 `duplicate`. Irrelevant events and unregistered repositories: 202 `ignored` with the reason. A delivery the
    parser itself fails on: 500, still recorded (as `invalid`, the reason naming the failure), the traceback logged."""
    outcome, status = _parsed(runtime, provider, headers, body, query)
    kind = outcome.kind
    delivery_id = outcome.delivery_id[:200] if outcome.delivery_id else None
    reason = outcome.reason
    report = outcome.report

    def count(result: str) -> None:
        runtime.metrics.deliveries.labels(provider.value, result).inc()

    if kind in ("unauthorized", "invalid"):
        async with runtime.db.session() as s:
            await store.record_delivery(
                s, provider, delivery_id=delivery_id, outcome=kind, reason=reason, authenticated=False
            )
        count(kind)
        code = 401 if kind == "unauthorized" else status
        return WebhookAnswer(code, {"outcome": kind, "detail": reason or kind})

    jobs = runtime.jobs
    async with runtime.db.session() as s:
        # The signed body's identity first: a body resent under a new delivery id is the same event.
        key = outcome.identity or delivery_id
        seen = await store.find_delivery(s, provider, key) if key else None
        if seen is not None:
            count("duplicate")
            return WebhookAnswer(200, _duplicate(delivery_id, seen))
        if kind == "accepted" and report is not None:
            if report.repo is None or await store.get_repository(s, report.repo) is None:
                kind, reason = "ignored", f"repository {report.repo!r} is not registered"
        try:
            row_id = await store.record_delivery(
                s, provider, delivery_id=delivery_id, outcome=kind, reason=reason, authenticated=True,
                identity=outcome.identity,
            )
        except store.DuplicateError:
            count("duplicate")
            return WebhookAnswer(200, _duplicate(delivery_id, None))
        if kind != "accepted" or report is None:
            answer = WebhookAnswer(202, {"outcome": "ignored", "reason": reason, "delivery_id": delivery_id})
        else:
            classification = classify_report(report)
            investigate = classification.label in runtime.settings.investigate_classes
            inv_id, _ = await store.create_investigation(
                s, report, classification, investigate=investigate, explorer=runtime.settings.explorer
            )
            await store.set_delivery_investigation(s, row_id, inv_id)
            if investigate and jobs is not None:
                await jobs.enqueue(s, inv_id, report.repo)
            answer = WebhookAnswer(
                202,
                {
                    "outcome": "accepted",
                    "delivery_id": delivery_id,
                    "id": inv_id,
                    "status": (Status.queued if investigate else Status.skipped).value,
                    "classification": classification.label.value,
                    "urls": links(inv_id).model_dump(),
                },
            )
    if answer.body["outcome"] == "accepted" and jobs is not None:
        jobs.committed()
    count(answer.body["outcome"])
    return answer


def _duplicate(delivery_id: str | None, seen: Any) -> dict[str, Any]:
    """The answer to a delivery already received (the same delivery id, or the same event under a new id)."""
    body: dict[str, Any] = {"outcome": "duplicate", "delivery_id": delivery_id}
    if seen is not None:
        body["reason"] = f"already received as delivery {seen.delivery_id!r} ({seen.outcome})"
        body["id"] = seen.investigation_id
    return body
