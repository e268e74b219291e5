"""Errors raised by the funnel, named by whose fault they are."""

from __future__ import annotations

__all__ = ("BugsleuthError", "ToolError", "UnrecoverableError", "UserError")


class BugsleuthError(Exception):
    """Base class of every error the funnel raises on purpose."""

    message: str
    """The human- or model-readable description of what went wrong."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class ToolError(BugsleuthError):
    """The model asked a tool for something it cannot have, and can fix the request.

    `str(error)` is the instructive text shown to the model instead of a tool result:
    it says what was wrong and what to try instead (nearest paths, the file's length, the regex error).
    """


class UnrecoverableError(BugsleuthError):
    """The environment is broken (repository gone, `rg` missing); the harness stops the run with `error`."""


class UserError(BugsleuthError):
    """A programmer used the API wrongly (bad limits, bad arguments); not shown to a model."""
