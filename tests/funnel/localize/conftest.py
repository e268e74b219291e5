"""Fixtures shared by the ranking tests."""

from __future__ import annotations

import pytest

from funnel.localize import history


@pytest.fixture
def fresh_history_memo():
    """No commit log kept in memory from another test, before or after this one."""
    history._MEMO.clear()
    yield
    history._MEMO.clear()
