"""Errors of the evaluation, named by whose fault they are."""

from __future__ import annotations


class EvalInputError(ValueError):
    """The caller's input is wrong (data file, repository table, ids file, options): the message says how to fix it."""


class EvalSetupError(RuntimeError):
    """The environment failed (git missing or broken, disk full...): not the data's fault."""
