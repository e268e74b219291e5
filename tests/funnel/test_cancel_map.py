"""Cancelling an investigation while its repo map is being built ends it `cancelled` at once (issue 21, item 5).

Before the map build was cancellable, `investigate_sync` (what the job runner calls) returned only when the
map's thread had finished: 4.5-9 s on this tree. The bound here is loose (3 s) for a noisy 2-core machine;
`bench/bench_cancel.py` measures the latency of every phase.
"""

from __future__ import annotations

import threading

import pytest

from bench.bench_cancel import cancel_latency, make_tree
from repomap import MapCancelled, build_repo_map
from schemas.enums import StopReason


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    return make_tree(tmp_path_factory.mktemp("big") / "tree", 1500)


def test_cancel_during_the_map_build_ends_the_run_cancelled_within_seconds(big_tree, tmp_path, monkeypatch):
    monkeypatch.setenv("BUGSLEUTH_CACHE_DIR", str(tmp_path / "cold"))
    latency, reason = cancel_latency(big_tree, "map", delay_s=0.3)
    assert reason == StopReason.cancelled.value
    assert latency < 3.0


def test_build_repo_map_raises_map_cancelled_once_the_event_is_set(big_tree, tmp_path):
    event = threading.Event()
    event.set()
    with pytest.raises(MapCancelled):
        build_repo_map(big_tree, cache_dir=tmp_path / "c", cancel=event)
