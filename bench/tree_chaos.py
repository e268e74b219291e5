"""Random trees through the offline investigator: every run must end with a verified diagnosis, never an exception
or an `internal error`, within seconds.

    .venv/bin/python bench/tree_chaos.py --mirror /work/.mirror/jqlang+jq/repo --mirror /work/.mirror/psf+requests/repo
    .venv/bin/python bench/tree_chaos.py --mirror ... --seconds 300 --root /work/old   # the same trees, other code

Each tree is a few real source files of the mirrors (bare git directories; every language the map reads), each
perhaps mangled: cut at a random byte, a line repeated, a bracket opened thousands of times, a line of 200,000
characters, invalid UTF-8, NUL, a BOM, CRLF or lone CR line ends, UTF-16; beside them an empty file, a binary one, odd
file names. The report names a definition of the tree and an error, with a stack trace into the tree's files at
random lines. Prints the runs, how they ended, the slowest, and each failure with the seed that replays it; a run
still going `--grace` seconds after the time is up is stopped (with the child: a parse holds the interpreter) and
counted as stuck, its seed printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chaos import chaos_options, run_child  # noqa: E402

_CHILD = r'''
import json, random, re, shutil, subprocess, sys, tempfile, time, traceback
from pathlib import Path
sys.path.insert(0, {root!r})
from funnel import Limits, investigate_sync
from repomap.languages import EXTENSIONS
from schemas.report import MAX_BODY_CHARS, BugReport

MIRRORS, until, seed0 = {mirrors!r}, time.time() + {seconds}, {seed} * 1_000_000
ERRORS = ["TypeError: unsupported operand", "NullPointerException", "panicked at 'called `Option::unwrap()` on a `None` "
          "value'", "panic: runtime error: index out of range [3] with length 3", "Segmentation fault (core dumped)",
          "ZeroDivisionError: division by zero", "TypeError: Cannot read properties of undefined (reading 'x')",
          "KeyError: 'name'", "ClassCastException", "returns the wrong value"]
FRAMES = ['  File "{{p}}", line {{n}}, in {{f}}', "    at {{f}} ({{p}}:{{n}}:7)", "\t{{p}}:{{n}} +0x1d", "   --> {{p}}:{{n}}:5",
          "#0 0x0000 in {{f}} {{p}}:{{n}}"]


def sources():
    out = []
    for git_dir in MIRRORS:
        names = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD"],
                               capture_output=True, text=True).stdout.split("\n")
        out += [(git_dir, n) for n in names if Path(n).suffix.lower() in EXTENSIONS]
    return out


def blob(git_dir, name):
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{{name}}"], capture_output=True).stdout[:400_000]


def mangled(rng, data):
    k = rng.random()
    if k < 0.35:
        return data
    if k < 0.45:
        return data[:rng.randrange(len(data) + 1)]
    if k < 0.5:
        lines = data.split(b"\n"); i = rng.randrange(len(lines))
        return b"\n".join(lines[:i] + [lines[i]] * rng.randint(2, 3000) + lines[i:])
    if k < 0.6:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"{{", b"(", b"[", b"<", b"/*", b'"', b"`", b"'" * 3]) * rng.randint(50, 6000) + data[at:]
    if k < 0.65:
        return data + b"\nx = " + b"a" * 200_000 + b"\n"
    if k < 0.72:
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"\xff\xfe\x00", b"\x00", b"\xc3", b"\xed\xa0\x80", b"\x1b[2J"]) + data[at:]
    if k < 0.8:
        return rng.choice([b"\xef\xbb\xbf", b""]) + data.replace(b"\n", rng.choice([b"\r\n", b"\r"]))
    if k < 0.85:
        return data.decode("utf-8", "replace").encode("utf-16")
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 3000)))


def odd(rng, name):
    if rng.random() < 0.85:
        return name
    head, _, tail = name.rpartition("/")
    weird = rng.choice(["a b", "x:y", "ü", "#1", "$x", "~", "back\\slash", "é" * 40, "-", ".hidden", "日本"])
    return (head + "/" if head else "") + weird + "_" + tail


def tree(rng, pool, where):
    files = {{}}
    for _ in range(rng.randint(2, 10)):
        git_dir, name = rng.choice(pool)
        files[odd(rng, name)] = mangled(rng, blob(git_dir, name))
    files["empty" + rng.choice([".py", ".go", ".rs", ".c"])] = b""
    files["data.bin"] = bytes(range(256)) * 4
    for name, data in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def report(rng, files):
    names = list(files)
    words = re.findall(rb"[A-Za-z_][A-Za-z0-9_]{{3,}}", b" ".join(files.values())[:200_000])
    word = rng.choice(words).decode() if words else "compute"
    frames = "\n".join(rng.choice(FRAMES).format(p=rng.choice(names), n=rng.choice([1, 5, 40, 99999]), f=word)
                       for _ in range(rng.randint(0, 6)))
    error = rng.choice(ERRORS)
    body = f"Calling `{{word}}` gives:\n\n```\n{{error}}\n{{frames}}\n```"
    return BugReport(title=f"{{word}} fails: {{error}}"[:200], body=body[:MAX_BODY_CHARS], repo="chaos/tree")


pool = sources()
counts, failures, slowest = {{}}, {{}}, []
seed = seed0
while time.time() < until:
    seed += 1
    rng = random.Random(seed)
    print(json.dumps({{"counts": counts, "failures": failures, "slowest": slowest, "running": seed}}), flush=True)
    where = Path(tempfile.mkdtemp(prefix="tree-chaos-"))
    try:
        files = tree(rng, pool, where)
        started = time.monotonic()
        result = investigate_sync(report(rng, files), where, explorer="offline", limits=Limits(history=False))
        took = time.monotonic() - started
        term = result.diagnosis.termination
        kind = "done" if term.reason.value == "done" else (
            "internal error" if "internal error" in term.detail else f"ended {{term.reason.value}}")
        if kind != "done":
            failures.setdefault(f"{{kind}}: {{term.detail[:120]}}", [0, seed])[0] += 1
        slowest = sorted(slowest + [(round(took, 2), seed)], reverse=True)[:3]
    except Exception as exc:
        kind = "raised"
        failures.setdefault(f"raised {{type(exc).__name__}}: {{str(exc)[:100]}}", [0, seed])[0] += 1
        traceback.print_exc()
    finally:
        shutil.rmtree(where, ignore_errors=True)
    counts[kind] = counts.get(kind, 0) + 1
print(json.dumps({{"counts": counts, "failures": failures, "slowest": slowest, "running": None}}), flush=True)
'''


def main() -> None:
    ap = chaos_options(__doc__, 120.0)
    ap.add_argument("--mirror", action="append", required=True, help="a bare git directory to take source files from")
    ap.add_argument("--grace", type=float, default=120.0, help="seconds a run may go on past --seconds before the "
                    "child is stopped and that run counted as stuck")
    args = ap.parse_args()
    code = _CHILD.format(root=str(args.root.resolve()), mirrors=args.mirror, seconds=args.seconds, seed=args.seed)
    found = run_child(code, args.root, args.seconds + args.grace)
    counts = found["counts"]
    if found["running"] is not None:
        counts["stuck"] = 1
        print(f"stuck: the run of seed {found['running']} went on past --seconds + --grace and was stopped")
    print(f"runs {sum(counts.values())}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    print("slowest (s, seed): " + ", ".join(f"{t} ({s})" for t, s in found["slowest"]))
    for key, (n, seed) in sorted(found["failures"].items(), key=lambda x: -x[1][0]):
        print(f"{n} × {key} (first at seed {seed})")


if __name__ == "__main__":
    main()
