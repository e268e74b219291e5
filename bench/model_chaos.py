"""Random models against the harness: every run must end with a diagnosis and a labelled termination, never as
bugsleuth's own internal error. Three sources of chaos, each for a number of seconds from a seed:

    .venv/bin/python bench/model_chaos.py                          # all three, 120 s each, on this checkout
    .venv/bin/python bench/model_chaos.py --mode messages --seconds 60 --root /work/runA   # on another checkout

- `function`: a model (PydanticAI's `FunctionModel`) that answers each request with random text (pieces of a good
  report, tags, half an emoji) and random tool calls (offered tools, unknown names, arguments of every shape);
- `completions`: a Chat Completions server over real HTTP whose replies are the well-behaved path's, or those with
  fields deleted, set to null or to a value of another type;
- `messages`: an Anthropic Messages server over real HTTP whose event streams have events dropped, repeated or
  their JSON so mutated.

Prints, per mode: runs, how they ended (`done`, another labelled termination, `internal error`), and each distinct
internal error. The fixture repository and the conformance suite's scripted server are the checkout's own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
MODES = ("function", "completions", "messages")

_CHILD = r'''
import asyncio, copy, json, random, sys, time, traceback
sys.path.insert(0, {root!r})
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
import tests.funnel.conformance._server as srv
from funnel import investigate
from funnel.explorers.agent import ModelExplorer
from funnel.limits import Limits
from tests.funnel.conformance._run import run_scenario
from tests.funnel.conformance.scenarios import BEGIN, FINISH, GOOD, READ, SEARCH, Scenario, tc, text
from tests.funnel.harness_support import FIXTURE_REPO, GOOD_REPORT, REPORT

mode, rng, until = {mode!r}, random.Random({seed}), time.time() + {seconds}
openai_json = getattr(srv, "openai_json", None) or srv._openai_json
anthropic_json = srv._anthropic_json
WORDS = ["shop/pricing.py", "apply_discount", "8", "-1", "10**30", "null", "..", "/etc/passwd", "\ud83d", "```",
         "## Summary", "## Affected files", "`shop/pricing.py:8-8`", "<think>", "</think>", "<tool_call>", "1if",
         '{{"name": "search", "arguments": {{"pattern": "x"}}}}', "[TOOL_CALLS]", 'search(pattern="a")', "\n"]
VALID = {{"path": ["shop/pricing.py", "shop", "."], "pattern": ["apply_discount", "//"], "start": [1, 4, 8],
          "end": [8, 13, 99], "name": ["apply_discount"], "suspects": [["shop/pricing.py:apply_discount"], []],
          "questions": [["why?"], []]}}
JUNK = lambda: rng.choice([None, 0, -1, 1.5, True, "", "x", [], {{}}, [None], "\ud83d", 10**20, "text_delta"])


def words(n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def reply_text():
    k = rng.random()
    if k < 0.3:
        i = rng.randint(0, len(GOOD_REPORT)); j = rng.randint(i, len(GOOD_REPORT))
        return GOOD_REPORT[:i] + words(rng.randint(0, 4)) + GOOD_REPORT[j:]
    return "" if k < 0.4 else words(rng.randint(1, 60))


def arguments(tool):
    props = list((tool.parameters_json_schema.get("properties") or {{}})) if tool else []
    if tool and rng.random() < 0.5:
        return json.dumps({{k: rng.choice(VALID[k]) for k in props if k in VALID}})
    if rng.random() < 0.1:
        return words(5).replace("\ud83d", "")  # a raw surrogate: FunctionModel itself could not size the reply
    args = {{rng.choice(props + ["x", "file_path", "query"]): rng.choice([JUNK(), words(3)]) for _ in range(3)}}
    return json.dumps(args, default=str).replace("\\ud83d", "")


def random_model(messages, info: AgentInfo):
    tools = list(info.function_tools) + list(info.output_tools or [])
    parts = [TextPart(reply_text())] if rng.random() < 0.5 else []
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        tool = rng.choice(tools) if tools and rng.random() < 0.85 else None
        parts.append(ToolCallPart(tool.name if tool else rng.choice(["nope", "Search"]), arguments(tool),
                                  tool_call_id=rng.choice(["call_0", f"c{{rng.random()}}"])))
    return ModelResponse(parts=parts or [TextPart("")])


def mutate(o):
    def paths(x, pre=()):
        yield pre
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, v in items:
            yield from paths(v, pre + (k,))
    for _ in range(rng.randint(1, 3)):
        ps = [p for p in paths(o) if p]
        if not ps:
            break
        p = rng.choice(ps); parent = o
        for k in p[:-1]:
            parent = parent[k]
        if rng.random() < 0.4:
            del parent[p[-1]]
        else:
            parent[p[-1]] = JUNK()
    return o


def mutated_stream(fn):
    def out(*a, **kw):
        data = fn(*a, **kw)
        if rng.random() < 0.4:
            return data
        events = []
        for ev in data.decode().split("\n\n"):
            r = rng.random()
            if r < 0.05:
                continue
            if r < 0.1:
                events.append(ev)
            if r < 0.35:
                ev = "\n".join("data: " + json.dumps(mutate(json.loads(ln[6:]))) if ln.startswith("data: {{") else ln
                               for ln in ev.split("\n"))
            events.append(ev)
        return "\n\n".join(events).encode("utf-8", "surrogatepass")
    return out


TURNS = [SEARCH, BEGIN, READ, FINISH, GOOD, text("thinking"), tc("list_dir", {{"path": "shop"}})]


def turn(seen):
    t = rng.choice(TURNS)
    if mode == "completions" and rng.random() < 0.5:
        return srv.Turn(body=mutate(copy.deepcopy(openai_json(t, "fake-model"))))
    return t


async def one():
    if mode == "function":
        limits = Limits(model_retries=0, retry_backoff_s=0.01)
        return (await investigate(REPORT, FIXTURE_REPO, explorer=ModelExplorer(FunctionModel(random_model)),
                                  limits=limits)).diagnosis
    script = lambda: srv.Script(explore=[turn], deep_dive=[turn], output=[turn], structurer=[turn])
    protocol = "openai" if mode == "completions" else "anthropic"
    scenario = Scenario(0, "chaos", "", script, limits={{"model_retries": 1}})
    return (await run_scenario(scenario, protocol)).result.diagnosis


if mode == "messages":
    name = "anthropic_sse" if hasattr(srv, "anthropic_sse") else "_anthropic_sse"
    setattr(srv, name, mutated_stream(getattr(srv, name)))
counts, internal = {{}}, {{}}
while time.time() < until:
    try:
        d = asyncio.run(asyncio.wait_for(one(), 120))
        term = d.termination
        kind = "internal error" if term.detail.startswith("internal error") else (
            "done" if term.reason.value == "done" else "labelled")
        if kind == "internal error":
            internal[term.detail[:120]] = internal.get(term.detail[:120], 0) + 1
    except Exception as e:
        kind = "internal error"
        internal[f"raised {{type(e).__name__}}"] = internal.get(f"raised {{type(e).__name__}}", 0) + 1
    counts[kind] = counts.get(kind, 0) + 1
print(json.dumps({{"counts": counts, "internal": internal}}))
'''


def run_mode(root: Path, mode: str, seconds: float, seed: int) -> dict:
    """The counts of one mode's runs on the code at `root`."""
    code = _CHILD.format(root=str(root), mode=mode, seconds=seconds, seed=seed)
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         timeout=seconds + 600)  # fmt: skip
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"{mode}: the child failed:\n{out.stderr[-3000:]}")
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=MODES, nargs="+", default=list(MODES))
    ap.add_argument("--seconds", type=float, default=120.0, help="how long each mode runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", type=Path, default=HERE, help="the checkout whose code runs (default: this one)")
    args = ap.parse_args()
    print("| chaos | runs | done | labelled | internal error |\n|---|---:|---:|---:|---:|")
    errors: dict[str, dict[str, int]] = {}
    for mode in args.mode:
        found = run_mode(args.root.resolve(), mode, args.seconds, args.seed)
        c = found["counts"]
        print(f"| {mode} | {sum(c.values())} | {c.get('done', 0)} | {c.get('labelled', 0)} | "
              f"{c.get('internal error', 0)} |")
        errors[mode] = found["internal"]
    for mode, found in errors.items():
        for detail, n in sorted(found.items(), key=lambda x: -x[1]):
            print(f"{mode}: {n} × {detail}")


if __name__ == "__main__":
    main()
