"""Build a monorepo from the fetched benchmark repositories: every mirror's newest tree in its own folder.

Usage: python bench/build_monorepo.py --out /work/monorepo [--mirrors /work/.mirror] [--limit-files N]

Each `owner+name/repo` git directory under `--mirrors` is archived at its HEAD into `OUT/owner+name/` (blobs a
snapshot lacks are skipped). `--limit-files N` keeps about N files in all, to
build the smaller trees of the growth curve (`--limit-files 5000`, `20000`): every project keeps the same share of
its files, the first in path order. The result lives outside the
repository and is never committed; `OUT/.git` makes it one repository, the way a real monorepo is one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


def mirrors_under(root: Path) -> list[Path]:
    """The git directories of the fetched repositories, in name order."""
    return sorted(p / "repo" for p in root.iterdir() if (p / "repo" / "HEAD").exists())


def tracked_files(git_dir: Path, ref: str = "HEAD") -> list[tuple[str, str]]:
    """(blob id, path) of every file of `ref` whose blob the snapshot holds."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", ref], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    entries = []
    for record in listing.split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode in ("100644", "100755"):
            entries.append((blob, path))
    ids = "\n".join(blob for blob, _ in entries) + "\n"
    present = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch-check"], input=ids.encode(), capture_output=True
    ).stdout.decode().splitlines()
    return [entry for entry, line in zip(entries, present, strict=True) if not line.endswith("missing")]


def read_blobs(git_dir: Path, files: list[tuple[str, str]]) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of each (blob, path) of `git_dir`, streamed through one `cat-file --batch`."""
    proc = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin and proc.stdout
    for blob, path in files:
        proc.stdin.write(blob.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        yield path, data
    proc.stdin.close()
    proc.wait()


def write_tree(git_dir: Path, dest: Path, files: list[tuple[str, str]]) -> None:
    """Write each (blob, path) of `git_dir` under `dest`."""
    for path, data in read_blobs(git_dir, files):
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    """Build the monorepo; print its size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--limit-files", type=int, default=0, help="keep only the first N files (0: all)")
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out} is not empty; remove it first", file=sys.stderr)
        return 2
    plan = [(git_dir, git_dir.parent.name, tracked_files(git_dir)) for git_dir in mirrors_under(args.mirrors)]
    everything = sum(len(files) for _, _, files in plan)
    share = min(1.0, args.limit_files / everything) if args.limit_files else 1.0
    total = 0
    for git_dir, folder, files in plan:
        keep = files[: round(len(files) * share)]
        write_tree(git_dir, args.out / folder, keep)
        total += len(keep)
        print(f"{folder}: {len(keep)} files", flush=True)
    subprocess.run(["git", "init", "-q", str(args.out)], check=True)
    print(f"{args.out}: {total} files from {len({folder for _, folder, _ in plan})} mirrors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
