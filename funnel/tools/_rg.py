"""The ripgrep process behind `search`: the binary, its exact command line, and one bounded run of it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from funnel.errors import UnrecoverableError
from funnel.tools.sandbox import Sandbox
from repomap.config import DEPENDENCY_DIRS, MAX_DEPTH

__all__ = ("RipgrepRun", "find_rg", "rg_args")

_SKIP_DIRS = DEPENDENCY_DIRS
"""Dependency, virtualenv and cache directories never searched even when no `.gitignore` names them."""
_POLL_S = 0.05


def find_rg() -> str:
    """The ripgrep binary: the one installed next to the running Python first, then `PATH`.

    Raises `UnrecoverableError` when there is none: no search is possible and the harness must stop.
    """
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rg")
    if found is None:
        raise UnrecoverableError("ripgrep (`rg`) is not installed: neither next to the Python interpreter nor on PATH")
    return found


def rg_args(
    sb: Sandbox,
    pattern: str,
    *,
    target_rel: str = ".",
    fixed_strings: bool = False,
    globs: list[str] | tuple[str, ...] = (),
    exclude: list[str] | tuple[str, ...] = (),
    ignore_case: bool = False,
    context: int = 0,
    max_per_file: int = 10,
    vcs_ignore: bool = True,
) -> list[str]:
    """The exact ripgrep command line `search` runs (from the repository root), for reuse by benchmarks."""
    # The real ripgrep binary in a subprocess, not an in-process binding such as `ripgrep-python`:
    # a binding cannot be interrupted mid-search (no timeout, no cancellation) and ignores context options.
    # A subprocess in its own process group can be killed at any moment, so a runaway pattern or a
    # million-line match never outlives its timeout or output cap.
    args = [
        find_rg(),
        "--json",
        "--no-config",
        "--no-require-git",
        "--no-ignore-parent",
        "--no-ignore-global",
        "--hidden",
        "--sort",
        "path",
        "--max-count",
        str(max_per_file),
        "--max-depth",  # the map's depth cap: a 10,000-level tree is not walked to the bottom
        str(MAX_DEPTH + 1),
        "--no-ignore-dot",  # like the map's walker: .gitignore only (a FIFO named .ignore would block ripgrep)
    ]
    if not vcs_ignore:
        args.append("--no-ignore-vcs")
    for g in globs:
        args += ["--glob", g]
    for g in exclude:
        args += ["--glob", "!" + g.lstrip("!")]
    # Later globs win in ripgrep: the secret exclusions come last so no include glob can re-admit a secret.
    for g in ("!.git", *(f"!{d}/" for d in _SKIP_DIRS), *sb.rg_exclude_globs):
        args += ["--glob", g]
    if fixed_strings:
        args.append("--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    if context:
        args += ["--context", str(context)]
    args += ["--regexp", pattern, "--", target_rel]
    return args


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


class RipgrepRun:
    """One ripgrep subprocess in its own process group: a watchdog thread kills it on timeout or cancellation, a
    second thread drains its stderr (first 64 KiB kept). Call `finish` once its output was read."""

    def __init__(self, args: list[str], cwd: Path, *, timeout_s: float, cancel: threading.Event | None) -> None:
        try:
            self.proc = subprocess.Popen(
                args,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                bufsize=1 << 16,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
            )
        except OSError as exc:
            raise UnrecoverableError(f"ripgrep could not be started: {exc}") from exc
        self.stop: str | None = None
        """Why the search stopped early (time limit, cancellation, output limit), when it did."""
        self._timeout_s = timeout_s
        self._cancel = cancel
        self._done = threading.Event()
        self._stderr: list[bytes] = []
        self._threads = [threading.Thread(target=self._watchdog, daemon=True),
                         threading.Thread(target=self._drain_stderr, daemon=True)]  # fmt: skip
        for t in self._threads:
            t.start()

    @property
    def stdout(self) -> IO[bytes]:
        """ripgrep's JSON output."""
        assert self.proc.stdout is not None
        return self.proc.stdout

    def note_stop(self, why: str | None) -> None:
        """Record why the search stopped early (the first reason wins)."""
        self.stop = self.stop or why

    def _watchdog(self) -> None:
        deadline = time.monotonic() + self._timeout_s
        while not self._done.wait(_POLL_S):
            if self._cancel is not None and self._cancel.is_set():
                self.note_stop("cancelled")
                _kill(self.proc)
                return
            if time.monotonic() > deadline:
                self.note_stop(f"time limit of {self._timeout_s:g}s reached")
                _kill(self.proc)
                return

    def _drain_stderr(self) -> None:
        size = 0
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
            if size < 65536:
                self._stderr.append(chunk)
                size += len(chunk)

    def finish(self, *, at_eof: bool) -> None:
        """Kill ripgrep unless its output was read to the end, wait for it, stop the threads, close the pipes."""
        if not at_eof:
            _kill(self.proc)
        # At EOF ripgrep is exiting; the watchdog still bounds this wait. (`wait(timeout=...)` would poll with sleeps.)
        self.proc.wait()
        self._done.set()
        for t in self._threads:
            t.join(timeout=1)
        if self.proc.stdout:
            self.proc.stdout.close()
        if self.proc.stderr:
            self.proc.stderr.close()

    @property
    def returncode(self) -> int | None:
        """ripgrep's exit status (after `finish`)."""
        return self.proc.returncode

    @property
    def stderr(self) -> str:
        """What ripgrep wrote to stderr (after `finish`)."""
        return b"".join(self._stderr).decode("utf-8", "replace")
