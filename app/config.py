"""Service settings: defaults that run with zero configuration, a TOML config file, `BUGSLEUTH_` env vars."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ByteSize, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from app.hosts import is_loopback
from schemas import Classification

MIN_TOKEN_CHARS = 16
"""Shortest API token accepted when the service listens beyond loopback."""
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
"""The log levels the service and uvicorn both know."""
_SECRET_PARTS = ("token", "secret", "password", "database_url", "key")
"""Settings whose value an error message never repeats (a database URL may hold a password)."""
JobBackend = Literal["local", "procrastinate", "none"]
"""How investigations run: in-process pool, procrastinate workers, or not at all (store only)."""


def config_file_path() -> Path:
    """The TOML config file read at startup: `$BUGSLEUTH_CONFIG`, else `./bugsleuth.toml`."""
    return Path(os.environ.get("BUGSLEUTH_CONFIG", "bugsleuth.toml"))


class ConfigurationError(Exception):
    """The operator's settings are unusable (missing token on a public bind, bad database URL...)."""


class Settings(BaseSettings):
    """Everything the service can be told. Every field has a default that works on a laptop."""

    model_config = SettingsConfigDict(
        env_prefix="BUGSLEUTH_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    data_dir: Path = Path("data")
    """Where the SQLite database, repository clones and tree cache live."""
    database_url: str | None = None
    """SQLAlchemy async URL; default `sqlite+aiosqlite:///<data_dir>/bugsleuth.db`.
    PostgreSQL: `postgresql+psycopg://user@host:5432/db`."""
    host: str = "127.0.0.1"
    """Bind address of `bugsleuth serve`."""
    port: int = 8000
    """Bind port of `bugsleuth serve`."""
    api_token: SecretStr | None = None
    """Bearer token required on every write endpoint when set (mandatory, at least `MIN_TOKEN_CHARS`
    characters, when `host` is not loopback)."""
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Host names the service answers to besides loopback names and IP literals (its public name behind a
    proxy or tunnel); `*` answers to any. Comma-separated in the environment."""
    forwarded_allow_ips: str | None = None
    """Addresses of reverse proxies trusted for `X-Forwarded-For`/`-Proto` (comma-separated, `*` for any);
    none: proxy headers are ignored and the client address is the connection's."""

    github_webhook_secret: SecretStr | None = None
    """HMAC secret of GitHub deliveries (`X-Hub-Signature-256`)."""
    gitlab_webhook_secret: SecretStr | None = None
    """Shared token of GitLab deliveries (`X-Gitlab-Token`)."""
    sentry_webhook_secret: SecretStr | None = None
    """Client secret of Sentry deliveries (`Sentry-Hook-Signature`)."""
    jira_webhook_secret: SecretStr | None = None
    """Secret of Jira deliveries."""

    explorer: str = "offline"
    """Explorer used for investigations: `offline`, `command:...`, or a PydanticAI model string."""
    investigate_classes: list[Classification] = Field(
        default_factory=lambda: [Classification.bug, Classification.crash, Classification.performance]
    )
    """Classifications that are investigated; other reports are stored with status `skipped`."""

    job_backend: JobBackend | None = None
    """`local` (in-process pool), `procrastinate` (workers on PostgreSQL) or `none` (store only).
    Default: `local` on SQLite, `procrastinate` on PostgreSQL."""
    workers: int = Field(default=2, ge=1, le=64)
    """Investigations run at once by one process (in-process pool or one procrastinate worker)."""
    per_repo_concurrency: int = Field(default=1, ge=1, le=64)
    """Investigations of the same repository run at once."""
    job_max_attempts: int = Field(default=3, ge=1, le=20)
    """Times a job is tried when its worker crashes or the infrastructure fails."""
    sweep_interval_s: float = Field(default=5.0, gt=0)
    """How often the sweeper repairs queued investigations without a job and stalled jobs."""
    stalled_after_s: float = Field(default=30.0, gt=0)
    """A procrastinate worker silent for this long is dead; its jobs run again elsewhere."""
    heartbeat_s: float = Field(default=5.0, gt=0)
    """Heartbeat interval of procrastinate workers."""

    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    """Requests with a larger body are refused with 413."""
    register_self: bool = True
    """Register the checkout the service runs from as a repository at startup."""

    comment_back: bool = False
    """Post the diagnosis as a comment on the GitHub/GitLab issue it came from."""
    github_token: SecretStr | None = None
    """Token used for comment-back on GitHub."""
    gitlab_token: SecretStr | None = None
    """Token used for comment-back on GitLab."""
    github_api_url: str = "https://api.github.com"
    """GitHub API base URL (GitHub Enterprise, or a fake server in tests)."""
    gitlab_api_url: str = "https://gitlab.com/api/v4"
    """GitLab API base URL."""
    comment_timeout_s: float = Field(default=60.0, gt=0, le=900)
    """Total time one comment-back may take, retries included; past it the comment is given up (and recorded)."""
    public_url: str | None = None
    """The service's address as users reach it (`https://bugsleuth.example`): tracker comments link to the
    investigation's page there."""

    trees_max_size: ByteSize = ByteSize(10 * 2**30)
    """Cap of the per-commit trees under `data_dir/trees` (`10GiB`, `500MB`...; 0: no cap). The least recently
    used go first, never one used in the last hour."""
    tags_cache_max_size: ByteSize = ByteSize(2 * 2**30)
    """Cap of the repo-map tags cache (`$BUGSLEUTH_CACHE_DIR/repomap`); least recently used entries go first."""
    terms_cache_max_size: ByteSize = ByteSize(2**30)
    """Cap of the offline investigator's term-count cache (`$BUGSLEUTH_CACHE_DIR/offline`)."""
    corpora_cache_max_size: ByteSize = ByteSize(8 * 2**30)
    """Cap of the offline investigator's per-tree corpus indexes (`$BUGSLEUTH_CACHE_DIR/offline/trees`: one file
    per tree of `INDEX_MIN_FILES` files or more); the least recently used go first, never one used in the last
    hour."""

    log_level: LogLevel = "INFO"
    """Log level of the service loggers (any case in the environment)."""
    log_json: bool = True
    """Structured JSON logs (one object per line) instead of plain text."""
    access_log: bool = True
    """One log line per HTTP request (logger `bugsleuth.access`: method, path, status, duration, client, request id)."""

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        """`info` and `Info` are INFO, as uvicorn reads them."""
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        """`a.example,b.example` (env var) or a JSON/TOML list."""
        if isinstance(value, str):
            value = value.strip()
            if value.startswith("["):
                return json.loads(value)
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Priority: constructor arguments, env vars, `.env`, then the TOML config file."""
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file_path())
        return (init_settings, env_settings, dotenv_settings, toml, file_secret_settings)

    @property
    def resolved_database_url(self) -> str:
        """The database URL in force (the SQLite default under `data_dir` when none is set)."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'bugsleuth.db').resolve()}"

    @property
    def is_postgres(self) -> bool:
        """Whether storage is PostgreSQL."""
        return self.resolved_database_url.startswith("postgresql")

    @property
    def resolved_job_backend(self) -> JobBackend:
        """The job backend in force (`local` on SQLite, `procrastinate` on PostgreSQL by default)."""
        if self.job_backend:
            return self.job_backend
        return "procrastinate" if self.is_postgres else "local"

    @property
    def repos_dir(self) -> Path:
        """Clones of registered git URLs."""
        return self.data_dir / "repos"

    @property
    def trees_dir(self) -> Path:
        """Per-commit read-only trees (`git archive` output, export attributes off: `app.git_export`)."""
        return self.data_dir / "trees"

    def webhook_secret(self, provider: str) -> str | None:
        """The configured secret of one webhook provider, or None."""
        value = getattr(self, f"{provider}_webhook_secret", None)
        return value.get_secret_value() if value else None

    def check(self) -> None:
        """Refuse unsafe or unusable combinations (raises ConfigurationError with what to do)."""
        self._check_token()
        url = self.resolved_database_url
        if not (url.startswith("sqlite+aiosqlite://") or url.startswith("postgresql+psycopg://")):
            raise ConfigurationError(
                f"database_url {url!r} is not supported: use sqlite+aiosqlite:///PATH or postgresql+psycopg://..."
            )
        if self.resolved_job_backend == "procrastinate" and not self.is_postgres:
            raise ConfigurationError("job_backend 'procrastinate' needs a PostgreSQL database_url")
        self._check_data_dir()

    def _check_data_dir(self) -> None:
        """Create `data_dir` when it is missing; refuse one that cannot be made or written."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigurationError(f"data_dir {str(self.data_dir)!r} cannot be created: {e.strerror or e}") from None
        if not os.access(self.data_dir, os.W_OK | os.X_OK):
            raise ConfigurationError(f"data_dir {str(self.data_dir)!r} is not writable by this user")


    def _check_token(self) -> None:
        token = self.api_token.get_secret_value() if self.api_token is not None else None
        if token is not None and not token.strip():
            raise ConfigurationError("BUGSLEUTH_API_TOKEN is empty: unset it, or set a real token")
        if self.host.strip() and is_loopback(self.host):  # an empty host binds every interface
            return
        if not token:
            raise ConfigurationError(
                f"host {self.host!r} is not loopback: set BUGSLEUTH_API_TOKEN so write endpoints need a token"
            )
        if len(token.strip()) < MIN_TOKEN_CHARS:
            raise ConfigurationError(
                f"BUGSLEUTH_API_TOKEN has {len(token.strip())} characters; beyond loopback it needs at least "
                f"{MIN_TOKEN_CHARS} (make one: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once (tests override with FastAPI dependency overrides); a value that is not
    of its setting's type is a `ConfigurationError` naming the setting, where to set it and what it must be."""
    try:
        return Settings()
    except ValidationError as e:
        raise ConfigurationError("; ".join(_setting_error(err) for err in e.errors())) from None


def _setting_error(err: Any) -> str:
    """One invalid setting in words: `port (BUGSLEUTH_PORT or port in bugsleuth.toml): Input should be a valid
    integer, not 'abc'` (a secret's value is never repeated)."""
    name = ".".join(str(part) for part in err.get("loc", ())) or "settings"
    where = f"BUGSLEUTH_{name.upper()} or {name} in {config_file_path()}"
    shown = "" if any(part in name for part in _SECRET_PARTS) else f", not {err.get('input')!r}"
    return f"{name} ({where}): {err.get('msg', 'invalid')}{shown}"
