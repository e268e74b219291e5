"""The offline investigation over trees real repositories have and no test data had: odd file names and bytes.

    .venv/bin/python bench/bench_odd_trees.py [--json OUT]

Builds each tree in a temporary directory (cold caches), investigates one report about its only suspect with the
offline explorer, and prints one row per tree: how the run ended, the attempts it took (a verification failure
costs one), the claims the verifier rejected and the prime suspect cited. The 47th round found every one of these
trees failing: an undecodable byte in a file name failed the map (and so the run), a newline or a backtick split
the cited path, a space or a colon cut it, a Latin-1 byte made the quoted snippet unmatchable, and an empty tree
asked the reporter which module was involved. The 48th round added Next.js route folders, `#`, `$`, an emoji, a
leading `~` and a backslash, each of which failed verification twice. The 49th round added UTF-16 files, which
were taken for binary: the tree held "no source file". Run it from two checkouts to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from funnel.limits import Limits  # noqa: E402
from funnel.run.loop import investigate_sync  # noqa: E402
from schemas.report import BugReport  # noqa: E402

SOURCE = b"def compute_total(amount):\n    label = 'total: %d' % amount\n    return label / 100\n"
LATIN1 = b"def compute_total(amount):\n    label = 'Total \xe9: %d' % amount\n    return label / 100\n"
REPORT = BugReport(title="compute_total raises TypeError",
                   body="compute_total(250) fails:\nTypeError: unsupported operand type(s) for /: 'str' and 'int'")

TREES: dict[str, dict[bytes, bytes]] = {
    "plain name": {b"src/total.py": SOURCE},
    "space in the name": {b"src/with space.py": SOURCE},
    "colon in the name": {b"src/x:12.py": SOURCE},
    "a drive letter's shape, at the root": {b"x:12.py": SOURCE},
    "a leading dash, at the root": {b"-rf.py": SOURCE},
    "a decomposed accent in the name (as committed from macOS)": {"src/cafe\u0301_total.py".encode(): SOURCE},
    "backtick in a neighbour's name": {b"src/total.py": SOURCE, b"src/we`ird.py": SOURCE.replace(b"compute", b"c")},
    "newline in a neighbour's name": {b"src/total.py": SOURCE, b"src/new\nline.py": SOURCE},
    "byte 0xff in a neighbour's name": {b"src/total.py": SOURCE, b"src/bad\xffname.py": SOURCE},
    "Next.js route folders (app/(shop)/[id]/)": {b"app/(shop)/[id]/total.py": SOURCE},
    "a hash in the name": {b"src/#total.py": SOURCE},
    "a dollar sign in the name (as Java's $Gson$Types.java)": {b"src/$total.py": SOURCE},
    "an emoji in the name": {"src/tot\U0001F600al.py".encode(): SOURCE},
    "a tilde leading the name, at the root": {b"~total.py": SOURCE},
    "backslash in the suspect's name": {b"src/to\\tal.py": SOURCE, b"src/util.py": b"def double(x):\n    return 2 * x\n"},
    "Latin-1 byte in the suspect": {b"src/total.py": LATIN1},
    "byte-order mark and CRLF line ends": {b"src/total.py": b"\xef\xbb\xbf" + SOURCE.replace(b"\n", b"\r\n")},
    "UTF-16 with its byte-order mark and CRLF (as Windows PowerShell saves)": {
        b"src/total.py": b"\xff\xfe" + SOURCE.replace(b"\n", b"\r\n").decode().encode("utf-16-le")},
    "UTF-16 big-endian": {b"src/total.py": b"\xfe\xff" + SOURCE.decode().encode("utf-16-be")},
    "no source file": {b"README.md": b"# total\n"},
}
"""Tree name → files (path bytes → content)."""


def _write(root: Path, files: dict[bytes, bytes]) -> None:
    for rel, data in files.items():
        path = os.fsencode(root) + b"/" + rel
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def run_tree(name: str, files: dict[bytes, bytes], base: Path) -> dict[str, object]:
    """Investigate the report in one freshly written tree; what the run ended with."""
    root = base / name.replace(" ", "-").replace("'", "")
    _write(root, files)
    try:
        result = investigate_sync(REPORT, root, limits=Limits(history=False))
    except Exception as exc:  # a crash is a result of this benchmark, not its end
        return {"tree": name, "termination": f"raised {type(exc).__name__}", "attempts": "-", "rejected": "-",
                "prime": "-"}
    d = result.diagnosis
    checks = [e for e in result.events if getattr(e, "kind", "") == "verify"]
    attempts = f"{sum(1 for e in checks if not e.ok)} failed of {len(checks)}" if checks else "-"
    prime = f"{d.affected_files[0].path}:{d.affected_files[0].line_start}" if d.affected_files else "-"
    detail = (d.termination.detail or "").rpartition("can give: ")[2][:90]
    return {"tree": name, "termination": f"{d.termination.reason.value} {detail}".strip(), "attempts": attempts,
            "rejected": d.stats.claims_rejected, "prime": prime}


def main() -> None:
    """Print the table (and write the rows as JSON with `--json`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BUGSLEUTH_CACHE_DIR"] = str(Path(tmp) / "cache")
        rows = [run_tree(name, files, Path(tmp)) for name, files in TREES.items()]
    print("| tree | termination | verifications | claims rejected | prime suspect |")
    print("|---|---|---:|---:|---|")
    for r in rows:
        print(f"| {r['tree']} | {r['termination']} | {r['attempts']} | {r['rejected']} | `{r['prime']!s}` |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
