"""Random webhook deliveries against the parsers: every signed delivery must be accepted, ignored or refused as
invalid with a reason, never raise (a raise was a 500 and a delivery lost unseen).

    .venv/bin/python bench/webhook_chaos.py                               # 60 s from seed 1, on this checkout
    .venv/bin/python bench/webhook_chaos.py --seconds 120 --root /work/old   # the same deliveries on other code

Each delivery is a real one (`../shared/realclient/`, GitHub, GitLab, Sentry, Jira) or a hand-made fixture
(`tests/fixtures/webhooks/`) with one to three fields, at any depth, deleted or replaced: by a value of another JSON
type, a number at the edge (`NaN`, `Infinity`, 2**64, 1e308), hostile text (NUL, half a surrogate pair, 100,000
characters, a fence), or a structure nested 50 to 600 levels deep. The body is signed with the provider's scheme
and handed to `app.webhooks.parse_delivery`, as the webhook route does. Prints the outcomes, the deliveries that
raised, and each distinct exception with a seed that replays it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chaos import HERE, chaos_options, run_child  # noqa: E402

REALCLIENT = HERE.parent / "shared" / "realclient"

_CHILD = r'''
import json, random, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from app.webhooks import parse_delivery
from tests.app.test_webhook_field_types import SECRET, signed_headers

fixtures = [(p.parent.name, p) for p in sorted(Path({realclient!r}).glob("*/*.json"))]
fixtures += [(p.name.split("_")[0], p) for p in sorted(Path({root!r}, "tests/fixtures/webhooks").glob("*.json"))]
VALUES = [float("nan"), float("inf"), -float("inf"), 1e308, 2**64, 10**400, -1, 0, 0.5, True, False, None, "", " ",
          "5", "-1", "null", "1e999", "\x00", "\ud800", "a" * 100_000, "```", "\n\n", "#L1-L", "../../etc/passwd",
          [], {{}}, [None], ["x"], {{"a": 1}}]


def paths(node, prefix=()):
    yield prefix
    if len(prefix) > 12:
        return
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in children:
        yield from paths(value, (*prefix, key))


def mutated(rng, data):
    for _ in range(rng.randint(1, 3)):
        where = rng.choice([p for p in paths(data) if p] or [None])
        if where is None:
            break
        parent = data
        for key in where[:-1]:
            parent = parent[key]
        r = rng.random()
        if r < 0.2:
            del parent[where[-1]]
        elif r < 0.3:
            deep = rng.choice(VALUES)
            for _ in range(rng.choice([50, 300, 600])):
                deep = rng.choice([[deep], {{"type": "paragraph", "content": [deep]}}, {{"a": deep}}])
            parent[where[-1]] = deep
        else:
            parent[where[-1]] = rng.choice(VALUES)
    return data


outcomes, raised, until, seed = {{}}, {{}}, time.time() + {seconds}, {seed} * 1_000_000
while time.time() < until:
    seed += 1
    rng = random.Random(seed)
    provider, path = rng.choice(fixtures)
    data = mutated(rng, json.loads(path.read_text()))
    try:
        body = json.dumps(data).encode("utf-8", "surrogatepass")
        json.loads(body)
    except (ValueError, RecursionError):
        continue  # not a body any sender can send
    try:
        out = parse_delivery(provider, signed_headers(provider, body), body, SECRET, query={{"repo": "acme/shop"}})
        kind = out.kind
    except Exception as exc:
        kind = "raised"
        key = f"{{provider}}: {{type(exc).__name__}}: {{str(exc)[:90]}}"
        raised.setdefault(key, [0, seed])[0] += 1
    outcomes[kind] = outcomes.get(kind, 0) + 1
print(json.dumps({{"outcomes": outcomes, "raised": raised}}))
'''


def run(root: Path, seconds: float, seed: int) -> dict:
    """The outcome counts of the deliveries parsed by the code at `root`."""
    code = _CHILD.format(root=str(root), realclient=str(REALCLIENT), seconds=seconds, seed=seed)
    return run_child(code, root, seconds + 300)


def main() -> None:
    args = chaos_options(__doc__, 60.0, "parsers run").parse_args()
    found = run(args.root.resolve(), args.seconds, args.seed)
    counts = found["outcomes"]
    print("| deliveries | accepted | ignored | invalid | unauthorized | raised |\n|---:|---:|---:|---:|---:|---:|")
    print(f"| {sum(counts.values())} | " + " | ".join(str(counts.get(k, 0)) for k in (
        "accepted", "ignored", "invalid", "unauthorized", "raised")) + " |")
    for key, (n, seed) in sorted(found["raised"].items(), key=lambda x: -x[1][0]):
        print(f"{n} × {key} (first at seed {seed})")


if __name__ == "__main__":
    main()
