"""Load and validate the evaluation inputs: the SWE-bench-style JSONL and the repository table.

An `Instance` keeps what the investigation may read (`problem_statement`) apart from what only scoring may
read (`Gold`); `Instance.bug_report()` is the one door from the data to the investigation.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.evaluation.errors import EvalInputError
from schemas import BugReport
from schemas.enums import Source
from schemas.report import MAX_BODY_CHARS, MAX_TITLE_CHARS


class Gold(BaseModel):
    """Scoring-only answers of one instance; never shown to the investigation."""

    model_config = ConfigDict(extra="ignore")

    files: list[str] = Field(default_factory=list)
    """Non-test files the fix modifies."""
    functions: dict[str, list[str]] = Field(default_factory=dict)
    """`{path: [names]}`: innermost def/class enclosing each change."""
    line_ranges: dict[str, list[tuple[int, int]]] = Field(default_factory=dict)
    """`{path: [[start, end], ...]}`: base-file lines the fix changes."""
    entities: dict[str, list[str]] = Field(default_factory=dict)
    """`{path: [names]}` like `functions`, nested functions folded into their outer function (`gold_entities`)."""


class Instance(BaseModel):
    """One benchmark instance."""

    model_config = ConfigDict(extra="ignore")

    instance_id: str = Field(min_length=1)
    """Unique id, e.g. `django__django-11099`."""
    repo: str = Field(min_length=3)
    """`owner/name` of the project."""
    base_commit: str = Field(min_length=4)
    """Commit the issue was filed against."""
    problem_statement: str
    """The issue text: the only field the investigation reads."""
    gold: Gold = Field(default_factory=Gold)
    """Scoring-only fields."""
    language: str | None = None
    """Programming language of the project, when the data says (`language`: per-language figures)."""

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        owner, _, name = value.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"repo {value!r} is not of the form owner/name")
        return value

    @property
    def has_gold(self) -> bool:
        """Whether the instance can be scored."""
        return bool(self.gold.files)

    def bug_report(self) -> BugReport:
        """The report the investigation receives: built from the problem statement alone."""
        return report_from_statement(self.problem_statement)


def report_from_statement(problem_statement: str) -> BugReport:
    """A BugReport from an issue text: first line as title, the rest as body, source `eval`, nothing else."""
    text = problem_statement.replace("\r\n", "\n").strip()
    title, _, body = text.partition("\n")
    title = title.strip()
    if len(title) > MAX_TITLE_CHARS:
        body = f"{title}\n{body}"
        title = title[: MAX_TITLE_CHARS - 1] + "…"
    return BugReport(title=title, body=body.strip()[:MAX_BODY_CHARS], source=Source.eval)


def parse_instance(raw: dict[str, Any]) -> Instance:
    """Build an Instance from one JSON object (scoring fields `gold_*` gathered into `Instance.gold`)."""
    gold = {
        "files": raw.get("gold_files") or [],
        "functions": raw.get("gold_functions") or {},
        "line_ranges": raw.get("gold_line_ranges") or {},
        "entities": raw.get("gold_entities") or {},
    }
    return Instance.model_validate({**raw, "gold": gold})


def load_instances(path: Path) -> list[Instance]:
    """Every instance of a JSONL file, in file order; a bad line raises EvalInputError naming the line."""
    path = Path(path)
    if not path.is_file():
        raise EvalInputError(f"data file {path} does not exist")
    instances: list[Instance] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalInputError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(raw, dict):
                raise EvalInputError(f"{path}:{lineno}: expected a JSON object, got {type(raw).__name__}")
            try:
                instance = parse_instance(raw)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'line'}: {err['msg']}" for err in exc.errors()
                )
                raise EvalInputError(f"{path}:{lineno}: invalid instance ({problems})") from None
            if instance.instance_id in seen:
                raise EvalInputError(
                    f"{path}:{lineno}: instance_id {instance.instance_id!r} already on line {seen[instance.instance_id]}"
                )
            seen[instance.instance_id] = lineno
            instances.append(instance)
    if not instances:
        raise EvalInputError(f"data file {path} holds no instances")
    return instances


def load_ids(path: Path) -> list[str]:
    """Instance ids from a file: one per line, `#` comments and blank lines ignored."""
    path = Path(path)
    if not path.is_file():
        raise EvalInputError(f"ids file {path} does not exist")
    ids = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            ids.append(line)
    return ids


def select(instances: list[Instance], *, ids: list[str] | None = None, limit: int | None = None) -> list[Instance]:
    """The instances to run: those named in `ids` (all when None), in data order, at most `limit`."""
    chosen = instances
    if ids is not None:
        known = {inst.instance_id for inst in instances}
        unknown = [i for i in ids if i not in known]
        if unknown:
            shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise EvalInputError(f"{len(unknown)} id(s) not in the data: {shown}")
        wanted = set(ids)
        chosen = [inst for inst in instances if inst.instance_id in wanted]
    if limit is not None:
        if limit < 0:
            raise EvalInputError("--limit must be 0 or more")
        chosen = chosen[:limit]
    return chosen


@dataclass(frozen=True)
class RepoTable:
    """`owner/name` → local git directory, as read from REPOS.toml."""

    repos: dict[str, Path] = field(default_factory=dict)
    """Git directory (bare or a work tree) of each repository."""
    source: Path | None = None
    """The file it was read from, for messages."""

    def git_dir(self, repo: str) -> Path:
        """The git directory of `repo`, or EvalInputError naming the table."""
        try:
            return self.repos[repo]
        except KeyError:
            where = f" in {self.source}" if self.source else ""
            raise EvalInputError(f"repository {repo} has no entry in [repos]{where}") from None

    def check(self, instances: list[Instance]) -> None:
        """Fail before any work when an instance's repository is missing from the table or from disk."""
        missing = sorted({inst.repo for inst in instances} - set(self.repos))
        if missing:
            where = f" in {self.source}" if self.source else ""
            raise EvalInputError(f"no entry in [repos]{where} for: {', '.join(missing)}")
        for repo in sorted({inst.repo for inst in instances}):
            if not self.repos[repo].exists():
                raise EvalInputError(f"git directory {self.repos[repo]} for {repo} does not exist")


def load_repo_table(path: Path) -> RepoTable:
    """Read REPOS.toml: a `[repos]` table mapping `owner/name` to a git directory (relative to the file)."""
    path = Path(path)
    if not path.is_file():
        raise EvalInputError(f"repository table {path} does not exist")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise EvalInputError(f"{path}: not valid TOML ({exc})") from None
    table = data.get("repos")
    if not isinstance(table, dict):
        raise EvalInputError(f"{path}: needs a [repos] table mapping \"owner/name\" = \"/path/to/git/dir\"")
    repos: dict[str, Path] = {}
    for name, value in table.items():
        if not isinstance(value, str):
            raise EvalInputError(f"{path}: [repos] {name!r} must be a path string")
        target = Path(value).expanduser()
        repos[name] = target if target.is_absolute() else (path.parent / target).resolve()
    return RepoTable(repos, path)
