"""What hostile text in a report or a model's report does on the way out: the control characters `bugsleuth
investigate` prints to a terminal, and the GitLab quick actions and live mentions a comment-back posts.

    .venv/bin/python bench/hostile_output.py                      # this checkout
    .venv/bin/python bench/hostile_output.py --root /work/runA     # the same texts through another checkout

Each case runs `bugsleuth investigate` in its own process on the fixture repository, with a command explorer that
writes a report carrying the text, and a report whose title and body carry it too; the comment is
`app.comment.comment_body` of the diagnosis that run produced. GitLab's rule for where a note holds commands is
`GITLAB_COMMANDS` (its `Gitlab::QuickActions::Extractor`, any word standing for a command).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
FIXTURE = HERE / "tests" / "funnel" / "traces" / "repo"
CASES = {
    "clipboard write (OSC 52)": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "window title (OSC 0)": "\x1b]0;pwned\x07",
    "clear screen (CSI 2J)": "\x1b[2J\x1b[H",
    "carriage return over the line": "\rall good, nothing to see",
    "backspaces": "secret\x08\x08\x08\x08\x08\x08",
    "bidi override": "\u202eecirp eht",
    "C1 control sequence": "\x9b2J",
    "quick actions and mentions": "\n\n/close\n\n/assign @mallory\n\n/label ~wontfix\n\nping @all and @org/team",
}
"""Each case: the text a report and a model's report carry."""
GITLAB_COMMANDS = re.compile(
    r"(?P<code>^```.+?\n```$)|(?P<html>^<[^>]+?>\n.+?\n</[^>]+?>$)|(?P<quote>^>>>.+?\n>>>$)"
    r"|^/(?P<cmd>[a-z_]+)(?:[ ](?P<arg>[^\n]*))?(?:\s*\n|$)", re.S | re.M | re.I)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MENTION = re.compile(r"(?<![\w.+\-/@`\u200b])@[A-Za-z]")
REPORT = """## Summary
A 10% discount removes the whole price.{text}

## Root cause
The discount is divided by 10 instead of 100.{text}

## Affected files
1. `shop/pricing.py:8-8` — `apply_discount` (cause)
"""
_COMMENT = "import json, sys; from app.comment import comment_body; from schemas import Diagnosis; " \
           "print(comment_body(Diagnosis.model_validate(json.load(sys.stdin)), limit=1_000_000))"


def gitlab_commands(body: str) -> list[str]:
    """The quick actions GitLab would run from a note with this body."""
    return [m["cmd"] for m in GITLAB_COMMANDS.finditer(body.replace("\r", "")) if m["cmd"]]


def _on_a_terminal(command: list[str], env: dict[str, str], cwd: Path) -> str:
    """What `command` writes to stdout and stderr when both are a terminal (click leaves escape sequences in then)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env, cwd=cwd)
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its side
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=300)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")  # the terminal's own line ends


def run_case(root: Path, text: str, work: Path) -> dict[str, int]:
    """Control characters printed, quick actions and live mentions posted, for one hostile text on `root`."""
    (work / "model.md").write_text(REPORT.format(text=text))
    (work / "report.txt").write_text(f"apply_discount wrong {text}\napply_discount(1000, 10) gives 0 {text}\n")
    env = {**os.environ, "PYTHONPATH": str(root), "BUGSLEUTH_CACHE_DIR": str(work / "cache")}
    cli = [sys.executable, "-c", "from app.cli import main; main()", "investigate", str(FIXTURE), "--report",
           str(work / "report.txt"), "--explorer", f"command:cat > /dev/null; cat {work / 'model.md'}", "--no-fallback"]
    shown = _on_a_terminal(cli, env, root)
    as_json = subprocess.run([*cli, "--json", "-q"], capture_output=True, text=True, env=env, cwd=root, timeout=300)
    posted = subprocess.run([sys.executable, "-c", _COMMENT], input=as_json.stdout, capture_output=True, text=True,
                            env=env, cwd=root, timeout=120)  # fmt: skip
    prose = re.sub(r"`[^`\n]*`", "", posted.stdout)
    return {"printed": len(_CONTROL.findall(shown)), "commands": len(gitlab_commands(posted.stdout)),
            "mentions": len(_MENTION.findall(prose))}  # fmt: skip


def main() -> None:
    """Run every case on the checkout at `--root` and print one JSON line each, then the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=HERE, help="checkout whose code runs the cases")
    args = ap.parse_args()
    rows = []
    for name, text in CASES.items():
        with tempfile.TemporaryDirectory() as work:
            found = run_case(args.root.resolve(), text, Path(work))
        print(json.dumps({"case": name, **found}), flush=True)
        rows.append(f"| {name} | {found['printed']} | {found['commands']} | {found['mentions']} |")
    print("\n| case | control characters printed | GitLab quick actions posted | live mentions posted |")
    print("|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
