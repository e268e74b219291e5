"""Exports of a `Diagnosis`: JSON, a compact markdown issue comment, and SARIF 2.1.0 for code-scanning tools."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import quote

from funnel.inline import code_span
from funnel.report.template import fence_language, format_location
from schemas.diagnosis import AffectedFile, Diagnosis
from schemas.enums import Classification, Role, StopReason

__all__ = ("SARIF_SCHEMA_URI", "SARIF_VERSION", "blob_url", "to_json", "to_markdown", "to_sarif")

SARIF_VERSION = "2.1.0"
"""The SARIF version `to_sarif` writes."""
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
"""The official schema of that version (a copy is in tests/fixtures/sarif/)."""

_RULES: dict[Role, tuple[str, str, str, str]] = {
    # role: (rule id, name, SARIF level, short description)
    Role.cause: ("bugsleuth/cause", "SuspectedRootCause", "error", "Suspected root cause of the reported bug"),
    Role.symptom: ("bugsleuth/symptom", "BugSymptom", "warning", "Where the reported bug shows itself"),
    Role.related: ("bugsleuth/related", "RelatedCode", "note", "Code related to the reported bug"),
}

_FAULTS = frozenset({Classification.bug, Classification.crash, Classification.performance})
"""Classifications that report a fault in the code, whose results keep their role's level."""


def to_json(diagnosis: Diagnosis) -> str:
    """The diagnosis as indented JSON, valid against schemas/diagnosis.schema.json."""
    return diagnosis.model_dump_json(indent=2)


def blob_url(repo_uri: str | None, commit: str | None, path: str, start: int | None = None, end: int | None = None) -> str | None:
    """A web link to cited lines on GitHub-, GitLab- or Gitea-style hosts; None without a repository URI."""
    if not repo_uri or not repo_uri.startswith(("http://", "https://")):
        return None
    base = repo_uri.removesuffix("/").removesuffix(".git")
    ref = commit or "HEAD"
    gitlab = "gitlab" in base.split("/")[2]
    url = f"{base}/{'-/' if gitlab else ''}blob/{quote(ref)}/{quote(path)}"
    if start:
        url += f"#L{start}"
        if end and end != start:
            url += f"-{end}" if gitlab else f"-L{end}"
    return url


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _cite(item: AffectedFile, repo_uri: str | None, commit: str | None, *, lines_only: bool = False) -> str:
    where = format_location(item.path, item.line_start, item.line_end)
    loc = f"`{where.removeprefix(f'{item.path}:') if lines_only else where}`"
    url = blob_url(repo_uri, commit, item.path, item.line_start, item.line_end)
    return f"[{loc}]({url})" if url else loc


def _by_definition(items: list[AffectedFile]) -> list[tuple[AffectedFile, list[AffectedFile]]]:
    """Each suspect at its first place, with the later ranges cited in the same definition (the rest of a long
    function the ranking cites around its first range): one definition is one suspect to a reader."""
    out: list[tuple[AffectedFile, list[AffectedFile]]] = []
    first: dict[tuple[str, str], list[AffectedFile]] = {}
    for item in items:
        key = (item.path, item.symbol or "")
        if item.symbol and key in first:
            first[key].append(item)
            continue
        out.append((item, []))
        if item.symbol:
            first[key] = out[-1][1]
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def to_markdown(diagnosis: Diagnosis, *, repo_uri: str | None = None, title: str = "bugsleuth diagnosis") -> str:
    """A compact markdown comment for an issue tracker: the conclusion up front, details collapsed."""
    d = diagnosis
    commit = d.stats.commit
    facts = [d.classification.value.replace("_", " "), f"confidence {d.confidence:.2f}"]
    if d.complexity:
        facts.append(f"{d.complexity.level.value} fix")
    if d.risk:
        facts.append(f"{d.risk.level.value} risk")
    out = [f"### {title}", "", f"_{' · '.join(facts)}_", ""]
    if d.termination.reason is not StopReason.done:
        detail = f": {_one_line(d.termination.detail)}" if d.termination.detail else ""
        out += [f"> **Stopped early** ({d.termination.reason.value}{detail}). This result may be incomplete.", ""]
    if d.summary:
        out += [f"**Summary.** {d.summary.strip()}", ""]
    if d.root_cause:
        out += [f"**Root cause.** {d.root_cause.explanation.strip()}", ""]
    if d.affected_files:
        out.append("**Suspects**")
        for n, (item, more) in enumerate(_by_definition(d.affected_files), 1):
            symbol = f" — {code_span(item.symbol)}" if item.symbol else ""
            lines = "line" if len(more) == 1 and more[0].line_start == more[0].line_end else "lines"
            also = f"; also {lines} {', '.join(_cite(m, repo_uri, commit, lines_only=True) for m in more)}" if more else ""
            out.append(f"{n}. {_cite(item, repo_uri, commit)}{symbol} ({item.role.value}{also})")
        out.append("")
    if d.proposed_changes:
        out.append("**Proposed changes** (suggestions; nothing was changed)")
        for change in d.proposed_changes:
            symbol = f" — {code_span(change.symbol)}" if change.symbol else ""
            out.append(f"- `{change.path}`{symbol}: {_one_line(change.description)}")
        out.append("")
    if d.open_questions:
        out.append("**Open questions**")
        out += [f"- {_one_line(q)}" for q in d.open_questions]
        out.append("")
    evidence = [item for item in d.affected_files if item.evidence.strip()]
    if (d.root_cause and d.root_cause.evidence) or evidence:
        out += ["<details><summary>Evidence</summary>", ""]
        if d.root_cause:
            out += [f"- {_one_line(e)}" for e in d.root_cause.evidence]
            out.append("")
        for item in evidence:
            out += [f"{_cite(item, repo_uri, commit)}", "", _fence(item.evidence, fence_language(item.path)), ""]
        out += ["</details>", ""]
    diffs = [c for c in d.proposed_changes if c.diff and c.diff.strip()]
    if diffs:
        out += ["<details><summary>Diff sketches</summary>", ""]
        for change in diffs:
            out += [f"`{change.path}`", "", _fence(change.diff or "", "diff"), ""]
        out += ["</details>", ""]
    if d.rejected:
        out += [f"<details><summary>Dropped claims ({len(d.rejected)})</summary>", ""]
        for claim in d.rejected:
            where = format_location(str(claim.claim.get("path") or "?"), claim.claim.get("line_start"), claim.claim.get("line_end"))
            out.append(f"- `{where}`: {_one_line(claim.reason)}")
        out += ["", "</details>", ""]
    if d.corrections:
        out += [f"<details><summary>Corrected citations ({len(d.corrections)})</summary>", ""]
        out += [f"- {_one_line(c)}" for c in d.corrections]
        out += ["", "</details>", ""]
    s = d.stats
    rows = [
        ("explorer", s.explorer or "?"), ("structurer", s.structurer), ("commit", s.commit or "?"),
        ("tool calls", str(s.tool_calls)), ("tokens in / out", f"{s.input_tokens} / {s.output_tokens}"),
        ("cost", f"${s.cost_usd:.4f}" if s.cost_usd is not None else "n/a"), ("duration", f"{s.duration_s:.1f} s"),
        ("attempts", str(s.attempts)), ("claims kept / made", f"{s.claims_total - s.claims_rejected} / {s.claims_total}"),
        ("stopped by", d.termination.reason.value),
    ]  # fmt: skip
    out += ["<details><summary>Run</summary>", "", "| | |", "|---|---|"]
    out += [f"| {k} | {v.replace('|', '/')} |" for k, v in rows]
    out += ["", "</details>", "", "<sub>Read-only investigation by bugsleuth: a suggestion for a person to check.</sub>"]
    return "\n".join(out) + "\n"


def _message(d: Diagnosis, item: AffectedFile) -> str:
    what = code_span(item.symbol) if item.symbol else "This code"
    if item.role is Role.cause:
        why = d.root_cause.explanation if d.root_cause else d.summary
        text = f"{what} is the suspected root cause. {why}".strip()
    elif item.role is Role.symptom:
        text = f"{what} is where the bug shows itself. {d.summary}".strip()
    else:
        text = f"{what} is related to the bug. {d.summary}".strip()
    return _one_line(text)[:2000] or "Suspected location of the reported bug."


def _installed_version() -> str:
    try:
        return version("bugsleuth")
    except PackageNotFoundError:
        return "0.0.0"


def to_sarif(diagnosis: Diagnosis, *, tool_version: str | None = None, repo_uri: str | None = None) -> dict[str, Any]:
    """The diagnosis as a SARIF 2.1.0 log: one result per affected file, ruleId and level by role (every result a
    `note` when the report is no fault: a feature request, a question).

    `tool_version` defaults to the installed bugsleuth version; `repo_uri` (with the commit from the run's
    stats) is recorded as version-control provenance.
    """
    d = diagnosis
    tool_version = tool_version or _installed_version()
    rule_index = {role: i for i, role in enumerate(_RULES)}
    results = []
    for rank, item in enumerate(d.affected_files, 1):
        rule_id, _name, level, _desc = _RULES[item.role]
        if d.classification not in _FAULTS:  # a feature request's place flags no defect in the code
            level = "note"
        region: dict[str, Any] = {"startLine": item.line_start, "endLine": item.line_end}
        if item.evidence.strip():
            region["snippet"] = {"text": item.evidence}
        location: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": quote(item.path), "uriBaseId": "SRCROOT"}, "region": region}
        }
        if item.symbol:
            location["logicalLocations"] = [{"fullyQualifiedName": item.symbol, "name": item.symbol.rsplit(".", 1)[-1]}]
        results.append(
            {
                "ruleId": rule_id,
                "ruleIndex": rule_index[item.role],
                "level": level,
                "message": {"text": _message(d, item)},
                "locations": [location],
                "properties": {"rank": rank, "role": item.role.value, "confidence": d.confidence},
            }
        )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "bugsleuth",
                "version": tool_version,
                "rules": [
                    {"id": rid, "name": name, "shortDescription": {"text": desc}, "defaultConfiguration": {"level": lvl}}
                    for rid, name, lvl, desc in _RULES.values()
                ],
            }
        },
        "invocations": [
            {
                "executionSuccessful": d.termination.reason is not StopReason.error,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": _one_line(f"Dropped claim {c.claim.get('path') or '?'}: {c.reason}")}}
                    for c in d.rejected
                ],
                "properties": {"termination": d.termination.reason.value, "detail": d.termination.detail},
            }
        ],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {
            "schemaVersion": d.schema_version,
            "classification": d.classification.value,
            "summary": d.summary,
            "rootCause": d.root_cause.model_dump(mode="json") if d.root_cause else None,
            "confidence": d.confidence,
            "complexity": d.complexity.model_dump(mode="json") if d.complexity else None,
            "risk": d.risk.model_dump(mode="json") if d.risk else None,
            "proposedChanges": [c.model_dump(mode="json") for c in d.proposed_changes],
            "openQuestions": list(d.open_questions),
        },
    }
    if repo_uri:
        provenance: dict[str, Any] = {"repositoryUri": repo_uri, "mappedTo": {"uriBaseId": "SRCROOT"}}
        if d.stats.commit:
            provenance["revisionId"] = d.stats.commit
        run["versionControlProvenance"] = [provenance]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
