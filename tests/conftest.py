"""Root test configuration: every test runs with a private cache and data directory."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    """Keep caches and data of one test away from the developer's own and from other tests."""
    base = tmp_path_factory.mktemp("bugsleuth-home")
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("BUGSLEUTH_DATA_DIR", str(base / "data"))
