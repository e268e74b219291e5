"""The checkout's registry name comes from its `origin` remote, whatever form the remote takes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.repos import name_for_location, name_from_remote


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ("https://github.com/acme/widget.git", "acme/widget"),
        ("git@github.com:acme/widget.git", "acme/widget"),
        ("/srv/git/acme/widget/", "acme/widget"),
        ("/work/acme/widget/.", "acme/widget"),  # a clone of `.`
    ],
)
def test_name_comes_from_the_origin_remote(tmp_path: Path, origin: str, expected: str):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", origin], check=True)
    assert name_from_remote(tmp_path) == expected


def test_a_checkout_without_origin_gets_the_default(tmp_path: Path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert name_from_remote(tmp_path) == "bugsleuth/bugsleuth"


@pytest.mark.parametrize(
    ("location", "expected"),
    [("https://github.com/acme/widget.git", "acme/widget"), ("/work/acme/widget/.", "acme/widget"), ("widget", "widget")],
)
def test_a_location_given_without_a_name_is_named_the_same_way(location: str, expected: str):
    assert name_for_location(location) == expected
