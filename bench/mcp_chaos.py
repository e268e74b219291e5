"""Random tool calls against the MCP server: every call must answer, or refuse with a reason, never fail unexpectedly
(a bare "Error executing tool X" with nothing for the client to act on, and a traceback in the server's log).

    .venv/bin/python bench/mcp_chaos.py                          # 60 s from seed 1, on this checkout
    .venv/bin/python bench/mcp_chaos.py --root /work/old         # the same calls on another checkout's server

Each call names one of the server's nine tools with each argument left out or set to a random value: a value of
another JSON type, 2**64, `NaN`, NUL, half a surrogate pair, 5,000 characters, `..`, a regex that does not compile,
an option-like ref, or a sound value (the fixture repository, its file, its function). The server is the one
`bugsleuth mcp` serves (in process, through the SDK's client), on a fresh SQLite database, with a stub investigator.
Prints the calls, how they ended, and each distinct unexpected failure with the seed that replays it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chaos import chaos_options, run_child  # noqa: E402

_CHILD = r'''
import asyncio, json, logging, random, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, {root!r})
logging.disable(logging.CRITICAL)
from tests.app.test_mcp_tools import session
from tests.app._mcp_fixtures import make_repo
from tests.app._service_fixtures import StubInvestigator

VALUES = [None, 0, -1, 2**64, 10**30, 1.5, float("nan"), True, "", "x", "\x00", "\ud800", "../..", "/etc", "a" * 5000,
          [], {{}}, ["x"], {{"a": 1}}, "HEAD", "--all", "*", "[", "(?P<", "\\"]
TOOLS = {{"investigate": ["repository", "title", "body", "ref", "explorer", "labels"], "get_investigation":
         ["investigation_id"], "list_investigations": ["repository", "status", "classification", "search", "limit",
         "offset"], "list_repositories": [], "repo_map": ["repository", "focus", "ref", "tokens"], "search":
         ["repository", "pattern", "path", "fixed_strings", "globs", "exclude", "ignore_case", "context",
         "max_results", "max_per_file", "ref"], "read_range": ["repository", "path", "start", "end", "ref"],
         "list_dir": ["repository", "path", "depth", "ref"], "find_symbol": ["repository", "name", "ref"]}}


async def main():
    tmp = Path(tempfile.mkdtemp())
    repo, _ = make_repo(tmp)
    sound = [str(repo), "app.py", "average", 5, 1]
    counts, unexpected, until, seed = {{}}, {{}}, time.time() + {seconds}, {seed} * 1_000_000
    async with session(tmp, investigate_fn=StubInvestigator()) as (client, _):
        while time.time() < until:
            seed += 1
            rng = random.Random(seed)
            tool = rng.choice(sorted(TOOLS))
            args = {{p: rng.choice(VALUES + sound) for p in TOOLS[tool] if rng.random() < 0.5}}
            if "repository" in TOOLS[tool] and rng.random() < 0.7:
                args["repository"] = str(repo)
            if tool == "investigate":
                args["wait"] = False
            try:
                result = await asyncio.wait_for(client.call_tool(tool, args), 60)
                text = result.content[0].text if result.content else ""
                kind = "refused" if result.is_error else "answered"
                if result.is_error and text.strip() == f"Error executing tool {{tool}}":
                    kind = "unexpected"
                    unexpected.setdefault(tool, [0, seed])[0] += 1
            except Exception as exc:
                kind = "unexpected"
                unexpected.setdefault(f"{{tool}}: raised {{type(exc).__name__}}", [0, seed])[0] += 1
            counts[kind] = counts.get(kind, 0) + 1
    print(json.dumps({{"counts": counts, "unexpected": unexpected}}))


asyncio.run(main())
'''


def main() -> None:
    args = chaos_options(__doc__, 60.0, "server runs").parse_args()
    code = _CHILD.format(root=str(args.root.resolve()), seconds=args.seconds, seed=args.seed)
    found = run_child(code, args.root, args.seconds + 300)
    counts = found["counts"]
    print("| calls | answered | refused with a reason | unexpected |\n|---:|---:|---:|---:|")
    print(f"| {sum(counts.values())} | {counts.get('answered', 0)} | {counts.get('refused', 0)} | "
          f"{counts.get('unexpected', 0)} |")
    for tool, (n, seed) in sorted(found["unexpected"].items(), key=lambda x: -x[1][0]):
        print(f"{n} × {tool} (first at seed {seed})")


if __name__ == "__main__":
    main()
