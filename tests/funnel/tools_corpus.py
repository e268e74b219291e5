"""An adversarial repository for the tool tests, built in a temporary directory.

Holds secrets in every built-in spelling, `.git` internals, symlinks leading out (file and directory),
binaries, a FIFO, a file outside the root, and ignore rules; big files are built by separate fixtures.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SECRET_VALUES = {
    ".env": "SECRET_ENV_TOKEN_1",
    ".env.production": "SECRET_ENV_TOKEN_2",
    "config/server.pem": "SECRET_PEM_BODY_3",
    "config/tls.key": "SECRET_KEY_BODY_4",
    "deploy/id_rsa": "SECRET_RSA_BODY_5",
    "deploy/id_rsa.pub": "SECRET_RSA_PUB_6",
    ".netrc": "SECRET_NETRC_7",
    ".pypirc": "SECRET_PYPIRC_8",
    "credentials.json": "SECRET_CREDENTIALS_9",
    "nested/deep/.ENV": "SECRET_UPPER_ENV_10",
    ".git/config": "SECRET_GIT_CONFIG_11",
    "config/private.yml": "SECRET_DENIED_12",
}
"""Relative path -> a marker that must never appear in any tool output."""

OUTSIDE_VALUE = "OUTSIDE_ROOT_MARKER_13"
"""Content of a file next to (outside) the repository root."""

DENY = ("config/private.yml",)
"""The per-repository deny list used with this corpus."""


def build_corpus(base: Path) -> Path:
    """Create the adversarial repository under `base` and return its root."""
    root = base / "repo"
    outside = base / "outside"
    outside.mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{OUTSIDE_VALUE}\nneedle outside\n")
    files = {
        "src/app.py": "import os\n\n\ndef main():\n    return parse_args()\n\n\ndef parse_args():\n    return None  # needle\n",
        "src/pkg/__init__.py": "",
        "src/pkg/parser.py": "class Parser:\n    def parse(self, text):\n        return text.split()  # needle\n",
        "README.md": "# Demo\nneedle in the readme\n",
        ".gitignore": "*.log\nbuild/\n",
        "debug.log": "needle in an ignored log\n",
        "build/out.txt": "needle in ignored build output\n",
        "bad_utf8.txt": None,
        "no_newline.txt": "one\ntwo",
        ".git/HEAD": "ref: refs/heads/main\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            p.write_text(text)
    (root / "bad_utf8.txt").write_bytes(b"caf\xe9 needle \xff\xfe end\n")
    (root / "image.bin").write_bytes(b"needle\n" + b"\x00" * 64 + b"needle binary\n")
    for rel, value in SECRET_VALUES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{value}\nneedle\n")
    os.symlink(outside / "secret.txt", root / "escape_file")
    os.symlink(outside, root / "escape_dir")
    os.symlink(root / ".env", root / "innocent_name.txt")
    os.symlink("src/app.py", root / "app_link.py")
    os.mkfifo(root / "pipe")
    return root


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A fresh adversarial repository root."""
    return build_corpus(tmp_path)


def all_secret_markers() -> list[str]:
    """Every marker that must never leak."""
    return [*SECRET_VALUES.values(), OUTSIDE_VALUE]
