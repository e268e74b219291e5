"""A hostile repository, built in tmp: secrets behind links of every kind, hard-to-walk trees, odd files.

Every reader of repository content is run over the same tree (tests/funnel/test_hostile_repo.py,
tests/app/test_hostile_dashboard.py); none may ever show one of `SECRETS`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

SECRET = "hunter2-SECRET"
"""In `.env`, the file the issue's reproduction links to."""
SSH_SECRET = "ssh-SECRET-7f3a"
"""In `.ssh/config` (a secret directory)."""
GIT_SECRET = "git-SECRET-token-91"
"""In `.git/config` (git internals)."""
OUTSIDE_SECRET = "outside-SECRET-55"
"""In files outside the repository root."""
SECRETS = (SECRET, SSH_SECRET, GIT_SECRET, OUTSIDE_SECRET)

DEEP_LEVELS = 1200
"""Nested directories of `deep/` (the recursive walker failed near 990)."""

LINKS_TO_SECRETS = (
    "app/settings.py",  # the case: a code-file name linking to .env
    "app/chain1.py",  # chain1 -> chain2 -> .env
    "app/abs_env.py",  # absolute target inside the root
    "app/gitcfg.py",  # -> .git/config
    "app/conf/config",  # app/conf -> ../.ssh (directory symlink)
    "app/outside.py",  # -> a secret outside the root
    "app/outdir/leak.py",  # app/outdir -> a directory outside the root
    "app/hard.py",  # a hard link to .env
    "AGENTS.md",  # the memory file, linking to .env
)
"""Paths of the tree whose content is a secret: each must be refused by every reader."""

ODD_FILES = ("app/pipe.py", "self.py", "ping.py", "app/huge.py", "app/blob.py")
"""A FIFO, a self-link, a two-link loop, a file over the size cap, a binary file."""

BAD_NAMES = (b"app/load\nsettings.py", b"app/load\xffsettings.py", b"app/load`settings.py", b"app/load\\settings.py")
"""Files no report can cite, by their names' bytes: a newline, a byte that is not UTF-8, a backtick, a backslash
(which readers of a cited path take for a Windows separator). Each holds the report's words, so a reader that kept
them would rank them."""


@dataclass(frozen=True)
class Hostile:
    """The built tree and where things are."""

    root: Path
    outside: Path
    deep_file: str
    """Repository-relative path of the file at the bottom of `deep/`."""


LOADER = '''import os


def load():
    """Read the settings (crashes when DATABASE_PASSWORD is missing)."""
    return dict(line.split("=", 1) for line in open(".env").read().splitlines())["DATABASE_PASSWORD"]
'''


def remove_hostile(base: Path) -> None:
    """Remove a tree `build_hostile` wrote: GNU rm walks it iteratively, where Python's `shutil.rmtree` (and so
    pytest's clean-up of old temporary directories) recurses and fails on the 1,200-level `deep/`."""
    subprocess.run(["rm", "-rf", "--", str(base)], check=True)


def build_hostile(base: Path) -> Hostile:
    """Write the hostile tree under `base/repo` (and its outside targets under `base/outside`)."""
    root, outside = base / "repo", base / "outside"
    (root / "app").mkdir(parents=True)
    (root / ".ssh").mkdir()
    (root / ".git").mkdir()
    outside.mkdir()
    (root / ".env").write_text(f"DATABASE_PASSWORD={SECRET}\n")
    (root / ".ssh" / "config").write_text(f"Host x\n  IdentityFile {SSH_SECRET}\n")
    (root / ".git" / "config").write_text(f'[remote "origin"]\n  url = https://{GIT_SECRET}@example.com/r.git\n')
    (outside / "secret.py").write_text(f"TOKEN = '{OUTSIDE_SECRET}'\n")
    (outside / "leak.py").write_text(f"def leak():\n    return '{OUTSIDE_SECRET}'\n")
    (root / "app" / "loader.py").write_text(LOADER)
    (root / "app" / "__init__.py").write_text("")

    os.symlink("../.env", root / "app" / "settings.py")
    os.symlink("chain2.py", root / "app" / "chain1.py")
    os.symlink("../.env", root / "app" / "chain2.py")
    os.symlink(root / ".env", root / "app" / "abs_env.py")
    os.symlink("../.git/config", root / "app" / "gitcfg.py")
    os.symlink("../.ssh", root / "app" / "conf")
    os.symlink(outside / "secret.py", root / "app" / "outside.py")
    os.symlink(outside, root / "app" / "outdir")
    os.link(root / ".env", root / "app" / "hard.py")
    os.symlink(".env", root / "AGENTS.md")

    os.mkfifo(root / "app" / "pipe.py")
    (root / "app" / "sub").mkdir()
    os.mkfifo(root / "app" / "sub" / ".gitignore")  # read by the ignore rules: must not block
    (root / "app" / "sub" / "ok.py").write_text("def ok():\n    return 1\n")
    (root / "loop").mkdir()
    os.symlink("..", root / "loop" / "up")
    (root / "loop" / "x.py").write_text("def x():\n    return 2\n")
    os.symlink("self.py", root / "self.py")
    os.symlink("pong.py", root / "ping.py")
    os.symlink("ping.py", root / "pong.py")
    (root / "app" / "huge.py").write_text("x = 1\n" * 400_000)  # 2.4 MB, over the map's 1 MB cap
    (root / "app" / "oneline.js").write_text("var a=" + "1+" * 300_000 + "1;\n")  # 600 KB on one line
    (root / "app" / "blob.py").write_bytes(b"\x00\x01binary\x00" * 1000)
    for name in BAD_NAMES:
        with open(os.fsencode(root) + b"/" + name, "w") as handle:
            handle.write(LOADER)
    wide = root / "wide"
    wide.mkdir()
    for i in range(300):
        (wide / f"w{i}.py").write_text(f"def w{i}():\n    return {i}\n")

    deep_rel = "/".join(["d"] * DEEP_LEVELS)
    fd = os.open(root, os.O_RDONLY)
    try:  # one level at a time, relative to a directory fd: the whole path is longer than PATH_MAX
        os.mkdir("deep", dir_fd=fd)
        cur = os.open("deep", os.O_RDONLY, dir_fd=fd)
        for _ in range(DEEP_LEVELS):
            os.mkdir("d", dir_fd=cur)
            nxt = os.open("d", os.O_RDONLY, dir_fd=cur)
            os.close(cur)
            cur = nxt
        out = os.open("bottom.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=cur)
        os.write(out, b"def bottom():\n    return 3\n")
        os.close(out)
        os.close(cur)
    finally:
        os.close(fd)
    return Hostile(root, outside, f"deep/{deep_rel}/bottom.py")


def leaks(text: str) -> list[str]:
    """The secrets found in a text (empty when none)."""
    return [s for s in SECRETS if s in text]
