"""The diagnosis: the product's contract with users and scripts. Exported as a versioned JSON Schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from schemas.enums import Classification, Complexity, Phase, Risk, Role, StopReason

SCHEMA_VERSION = "1.1.0"
"""Bumped on any change to the diagnosis shape: major for breaking changes."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=True)


def absolute_spelling(path: str) -> bool:
    """Whether `path` (with `/` separators) is spelled from a root outside the repository: `/x`, a home directory
    (`~`, `~/x`) or a drive letter with its root (`C:/x`). `~notes.md` and `x:12.py` are file names on POSIX."""
    return path.startswith("/") or path == "~" or path.startswith("~/") or (path[1:3] == ":/" and path[0].isalpha())


def _relative_posix(path: str) -> str:
    if absolute_spelling(path) or "\\" in path:
        raise ValueError(f"path {path!r} must be repository-relative POSIX (like 'src/app.py')")
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise ValueError(f"path {path!r} must be normalized: no empty, '.' or '..' parts")
    return path


class RootCause(_Strict):
    """Why the bug happens, with the evidence that supports it."""

    explanation: str = Field(min_length=1)
    """The root-cause hypothesis in plain words."""
    evidence: list[str] = Field(default_factory=list)
    """Observations from the code that support it (each one short, citing `path:line` where possible)."""


class AffectedFile(_Strict):
    """One cited location, ranked: the first entry is the prime suspect."""

    path: str = Field(min_length=1)
    """Repository-relative POSIX path."""
    line_start: int = Field(ge=1)
    """First cited line (1-based, inclusive)."""
    line_end: int = Field(ge=1)
    """Last cited line (1-based, inclusive)."""
    symbol: str | None = None
    """Enclosing function or class (`Class.method` when qualified), if any."""
    role: Role = Role.cause
    """What this location contributes to the bug."""
    evidence: str = ""
    """A snippet quoted from the cited lines; validated against the file."""

    _path = field_validator("path")(_relative_posix)

    @model_validator(mode="after")
    def _ordered(self) -> AffectedFile:
        if self.line_end < self.line_start:
            raise ValueError(f"line_end {self.line_end} is before line_start {self.line_start}")
        return self


class ProposedChange(_Strict):
    """A suggested change for a person to make; never applied by bugsleuth."""

    path: str = Field(min_length=1)
    """File to change."""
    symbol: str | None = None
    """Function or class to change."""
    description: str = Field(min_length=1)
    """What to change and why."""
    diff: str | None = None
    """Optional unified-diff sketch."""

    _path = field_validator("path")(_relative_posix)


class Rating(_Strict):
    """A level with the reason for it (the common base of the complexity and risk ratings)."""


class ComplexityRating(Rating):
    """How big the fix is."""

    level: Complexity
    """The level."""
    reason: str = ""
    """Why this level."""


class RiskRating(Rating):
    """How risky the fix is."""

    level: Risk
    """The level."""
    reason: str = ""
    """Why this level."""


class Termination(_Strict):
    """How the run ended; every exit other than `done` comes with its detail."""

    reason: StopReason
    """The stop clause that ended the run."""
    detail: str = ""
    """Human-readable detail (the budget hit, the error, the questions...)."""


class PhaseStats(_Strict):
    """Counters for one funnel phase."""

    tool_calls: int = 0
    """Tool calls made in this phase."""
    input_tokens: int = 0
    """Input tokens sent to the model in this phase."""
    output_tokens: int = 0
    """Output tokens received in this phase."""
    cached_tokens: int = 0
    """Input tokens served from the provider's cache."""
    requests: int = 0
    """Model requests made in this phase."""


class RejectedClaim(_Strict):
    """A claim the validator refused, kept so people can see what was dropped and why."""

    kind: Literal["affected_file", "proposed_change", "citation", "diff_sketch"]
    """What was claimed: an affected file, a proposed change, a location cited in the prose (the summary, the
    root cause, a change's description; `claim.text` says where), or a change's diff sketch whose old lines the file
    does not hold (the change is kept without it)."""
    claim: dict[str, Any]
    """The claim as the explorer made it."""
    reason: str
    """Why it was refused."""


class RunStats(_Strict):
    """Where the time, tokens and tool calls went."""

    per_phase: dict[Phase, PhaseStats] = Field(default_factory=dict)
    """Counters keyed by phase."""
    tool_calls: int = 0
    """Total tool calls."""
    input_tokens: int = 0
    """Total input tokens."""
    output_tokens: int = 0
    """Total output tokens."""
    cost_usd: float | None = None
    """Money spent, when the model's prices are known."""
    duration_s: float = 0.0
    """Wall-clock seconds for the whole investigation."""
    attempts: int = 1
    """Verification attempts used."""
    explorer: str = ""
    """Which explorer produced the report (`offline`, `openai:gpt-4o`, `command:...`)."""
    structurer: str = "parser"
    """What turned markdown into this object (`parser` or a model string)."""
    commit: str | None = None
    """Repository commit investigated, when known."""
    claims_total: int = 0
    """Claims the explorer made and the validator checked: affected files, proposed changes, their diff sketches
    and the repository locations the prose cites (since schema 1.1.0)."""
    claims_rejected: int = 0
    """Claims the validator refused."""
    claims_corrected: int = 0
    """Claims the validator kept after fixing their path, lines or symbol from the evidence."""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        # `rejection_rate` is derived and appears in dumps; accept it back on load so JSON round-trips.
        if isinstance(data, dict) and "rejection_rate" in data:
            data = {k: v for k, v in data.items() if k != "rejection_rate"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rejection_rate(self) -> float:
        """Share of claims refused by validation (0 when nothing was claimed)."""
        return round(self.claims_rejected / self.claims_total, 4) if self.claims_total else 0.0


class Diagnosis(_Strict):
    """A validated investigation result: every path and line in it was checked against the repository."""

    schema_version: str = SCHEMA_VERSION
    """Version of this schema."""
    classification: Classification = Classification.bug
    """What kind of report this was."""
    summary: str = ""
    """One or two sentences on what is wrong."""
    root_cause: RootCause | None = None
    """Root-cause hypothesis; None when the run could not form one."""
    affected_files: list[AffectedFile] = Field(default_factory=list)
    """Ranked suspects, prime suspect first."""
    proposed_changes: list[ProposedChange] = Field(default_factory=list)
    """Suggested changes for a person."""
    complexity: ComplexityRating | None = None
    """Size of the fix."""
    risk: RiskRating | None = None
    """Risk of the fix."""
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    """Calibrated confidence in the root cause, 0..1."""
    open_questions: list[str] = Field(default_factory=list)
    """What only the reporter can answer."""
    rejected: list[RejectedClaim] = Field(default_factory=list)
    """Claims dropped by validation, with why."""
    corrections: list[str] = Field(default_factory=list)
    """Fixes the validator made to kept claims (a path or line range moved to where the quoted snippet really is)."""
    termination: Termination = Field(default_factory=lambda: Termination(reason=StopReason.done))
    """How the run ended."""
    stats: RunStats = Field(default_factory=RunStats)
    """Counters for the run."""

    def ranked_files(self) -> list[str]:
        """Distinct affected paths in rank order."""
        seen: dict[str, None] = {}
        for item in self.affected_files:
            seen.setdefault(item.path, None)
        return list(seen)


def diagnosis_json_schema() -> dict[str, Any]:
    """The Diagnosis JSON Schema with its version, as `bugsleuth schema` prints it.

    It describes the documents bugsleuth emits (serialization mode, so derived fields such as
    `stats.rejection_rate` are listed); schemas/diagnosis.schema.json is the committed copy.
    """
    schema = Diagnosis.model_json_schema(mode="serialization")
    schema["$id"] = f"https://bugsleuth.dev/schemas/diagnosis/{SCHEMA_VERSION}.json"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["version"] = SCHEMA_VERSION
    return schema
