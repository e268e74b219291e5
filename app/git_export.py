"""`git archive` that writes a commit's tree as a checkout of it holds it.

`git archive` obeys the export attributes of the tree it writes: a path the project's `.gitattributes` marks
`export-ignore` (its tests, its CI, the `.gitattributes` itself) is left out of the archive, and a file marked
`export-subst` has its `$Format:...$` placeholders replaced. Both are meant for release tarballs; an investigation
must see the commit's files as they are. The command runs against a throwaway git directory that borrows the
repository's objects (`GIT_ALTERNATE_OBJECT_DIRECTORIES`) and whose `info/attributes`, which outranks every
`.gitattributes`, switches both attributes off. Nothing is written into the repository's own git directory.
`extract_commit` is the one extractor of the service's and the eval's trees.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ("EXACT_TREE_SUFFIX", "ExportError", "archive_command", "extract_commit")

EXACT_TREE_SUFFIX = "-exact"
"""Appended to a cached tree's directory name: trees written before export attributes were switched off (which
may lack files) are not reused."""

_OVERRIDE = "* -export-ignore -export-subst\n"
_REPOSITORY_VARS = ("GIT_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_INDEX_FILE",
                    "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_NAMESPACE")
"""Variables that would point git at another repository than the throwaway one."""


def _objects_dir(git: str, git_dir: Path) -> Path:
    """Where `git_dir` keeps its objects (a linked worktree's git directory keeps them in its common directory), as
    an absolute path: the archive runs with another git directory, so a relative one would point nowhere."""
    git_dir = git_dir.resolve()  # git answers relative to the working directory when asked with a relative one
    done = subprocess.run([git, f"--git-dir={git_dir}", "rev-parse", "--git-path", "objects"],
                          capture_output=True, text=True, check=False, timeout=60)
    path = Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else Path("objects")
    return path if path.is_absolute() else (git_dir / path).resolve()


def _alternate(objects: Path) -> str:
    """One entry of `GIT_ALTERNATE_OBJECT_DIRECTORIES`, a `:`-separated list: C-quoted when the path holds a `:`."""
    text = str(objects)
    if ":" not in text and not text.startswith('"'):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_PROMISOR_KEYS = r"^(extensions\.partialclone|remote\..*\.(url|promisor|partialclonefilter))$"
"""What makes a partial clone's missing blobs fetchable from its promisor remote."""


def _lend_promisor(git: str, git_dir: Path, shadow: Path) -> None:
    """Give the throwaway git directory the partial-clone settings of `git_dir`, if it has any, so a blob the clone
    never fetched is fetched as `git archive` in the clone itself would (into the throwaway directory, unless the
    caller forbids lazy fetching with `GIT_NO_LAZY_FETCH`)."""
    done = subprocess.run([git, f"--git-dir={git_dir}", "config", "--get-regexp", _PROMISOR_KEYS],
                          capture_output=True, text=True, check=False, timeout=60)
    pairs = [line.split(" ", 1) for line in done.stdout.splitlines() if " " in line]
    if not any(key == "extensions.partialclone" or key.endswith(".promisor") for key, _ in pairs):
        return
    config = str(shadow / "config")
    for key, value in [("core.repositoryformatversion", "1"), *pairs]:
        subprocess.run([git, "config", "--file", config, key, value], capture_output=True, check=True, timeout=60)


def archive_command(git_dir: Path, commit: str, scratch: Path, *, git: str = "git", pathspec: Sequence[str] = (),
                    env: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The `git archive --format=tar` command and environment (from `env`, default the process's) that write
    `commit` of `git_dir` whole, through a throwaway git directory made in the empty directory `scratch` (which
    must outlive the command). A partial clone lends its promisor remote too, so the blobs it never fetched arrive
    as they would for `git archive` in the clone itself."""
    shadow = scratch / "git"
    for sub in ("objects", "refs", "info"):
        (shadow / sub).mkdir(parents=True, exist_ok=True)
    (shadow / "HEAD").write_text("ref: refs/heads/main\n", encoding="ascii")
    (shadow / "info" / "attributes").write_text(_OVERRIDE, encoding="ascii")
    _lend_promisor(git, git_dir, shadow)
    out = {k: v for k, v in (os.environ if env is None else env).items() if k not in _REPOSITORY_VARS}
    out["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = _alternate(_objects_dir(git, git_dir))
    cmd = [git, f"--git-dir={shadow}", "archive", "--format=tar", commit]
    if pathspec:
        cmd += ["--", *pathspec]
    return cmd, out


class ExportError(RuntimeError):
    """`git archive` failed (a commit or object the git directory does not have, a broken repository)."""


def extract_commit(git_dir: Path, commit: str, dest: Path, *, git: str = "git", pathspec: Sequence[str] = (),
                   env: Mapping[str, str] | None = None, timeout: float | None = None) -> None:
    """Write the files of `commit` of `git_dir` (all of them, or those `pathspec` selects) into the directory
    `dest`, streamed from `git archive` (`archive_command`). A member that would land outside `dest` (an absolute
    or `..` path, a link out of the tree) is left out, not fatal. Raises `ExportError` when git fails or outlasts
    `timeout` seconds (then it is killed)."""
    with tempfile.TemporaryDirectory(prefix="bugsleuth-export-") as scratch, tempfile.TemporaryFile() as errors:
        cmd, run_env = archive_command(git_dir, commit, Path(scratch), git=git, pathspec=pathspec, env=env)
        # stderr goes to a file: a pipe nobody reads while the archive streams could fill and stall git
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, env=run_env)
        assert proc.stdout is not None
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            proc.kill()

        watchdog = threading.Timer(timeout, stop) if timeout is not None else None
        unreadable: tarfile.TarError | None = None
        try:
            if watchdog is not None:
                watchdog.start()  # the stream itself can stall: a killed git ends it
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                tar.extractall(dest, filter=_inside_or_skip)
            # the reader stops at the end marker; git still writes its padding, and a pipe closed under it kills
            # git with SIGPIPE (an intermittent failure git says nothing about)
            while proc.stdout.read(1 << 16):
                pass
        except tarfile.TarError as exc:  # git failed before writing a whole archive: its own message says why
            unreadable = exc
        finally:
            proc.stdout.close()
            code = proc.wait()
            if watchdog is not None:
                watchdog.cancel()
        if timed_out.is_set():
            raise ExportError(f"git archive {commit} in {git_dir} did not finish within {timeout} s")
        if code != 0 or unreadable is not None:
            errors.seek(0)
            why = errors.read().decode(errors="replace").strip()[:500]
            why = why or (f"git was killed by signal {-code}" if code < 0 else str(unreadable or f"exit status {code}"))
            raise ExportError(f"git archive {commit} in {git_dir} failed: {why}")


def _inside_or_skip(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None
