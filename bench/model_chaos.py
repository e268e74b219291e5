"""Random models against the harness: every run must end with a diagnosis and a labelled termination, never as
bugsleuth's own internal error. Three sources of chaos, each for a number of seconds from a seed:

    .venv/bin/python bench/model_chaos.py                          # all three, 120 s each, on this checkout
    .venv/bin/python bench/model_chaos.py --mode messages --seconds 60 --root /work/runA   # on another checkout

- `function`: a model (PydanticAI's `FunctionModel`) that answers each request with random text (pieces of a good
  report, tags, half an emoji) and random tool calls (offered tools, unknown names, arguments of every shape);
- `completions`: a Chat Completions server over real HTTP whose replies are the well-behaved path's, or those with
  fields deleted, set to null or to a value of another type;
- `messages`: an Anthropic Messages server over real HTTP whose event streams have events dropped, repeated or
  their JSON so mutated;
- `command`: a CLI agent (the external-command explorer) printing the JSON envelopes Claude Code, Codex and Gemini
  print, so mutated.

A mutated value may be a number at the edge (2**31, an unsigned -1, `NaN`, `Infinity`: Python's `json` reads and
writes both). Each run's outcome is then stored the way the service stores it (`app.store.finish`) in SQLite and,
when it answers on 127.0.0.1:5432, PostgreSQL; an outcome the store refuses is `lost`.

Prints, per mode: runs, how they ended (`done`, another labelled termination, `internal error`), how many outcomes
were lost, and each distinct internal error and storage failure. The fixture repository and the conformance suite's
scripted server are the checkout's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chaos import chaos_options, run_child  # noqa: E402

MODES = ("function", "completions", "messages", "command")

_CHILD = r'''
import asyncio, copy, json, random, sys, tempfile, time, traceback
from pathlib import Path
sys.path.insert(0, {root!r})
import psycopg
from app import store
from app.db import Database, run_migrations
from schemas import Classification, ClassificationResult, Status
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
SCHEMA = f"model_chaos_{{mode}}_{{__import__('os').getpid()}}"
openai_json = getattr(srv, "openai_json", None) or srv._openai_json
anthropic_json = srv._anthropic_json
WORDS = ["shop/pricing.py", "apply_discount", "8", "-1", "10**30", "null", "..", "/etc/passwd", "\ud83d", "```",
         "## Summary", "## Affected files", "`shop/pricing.py:8-8`", "<think>", "</think>", "<tool_call>", "1if",
         '{{"name": "search", "arguments": {{"pattern": "x"}}}}', "[TOOL_CALLS]", 'search(pattern="a")', "\n"]
VALID = {{"path": ["shop/pricing.py", "shop", "."], "pattern": ["apply_discount", "//"], "start": [1, 4, 8],
          "end": [8, 13, 99], "name": ["apply_discount"], "suspects": [["shop/pricing.py:apply_discount"], []],
          "questions": [["why?"], []]}}
EDGE = [2**31, 2**64 - 1, -(2**63), float("nan"), float("inf"), 1e308]
JUNK = lambda: rng.choice([None, 0, -1, 1.5, True, "", "x", [], {{}}, [None], "\ud83d", 10**20, "text_delta"] + EDGE)


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


ENVELOPES = [
    [{{"type": "result", "subtype": "success", "is_error": False, "result": GOOD_REPORT, "total_cost_usd": 0.02,
      "usage": {{"input_tokens": 12, "cache_creation_input_tokens": 30, "cache_read_input_tokens": 150,
                "output_tokens": 90}}}}],
    [{{"type": "item.completed", "item": {{"type": "agent_message", "text": GOOD_REPORT}}}},
     {{"type": "turn.completed", "usage": {{"input_tokens": 247, "cached_input_tokens": 244, "output_tokens": 12}}}}],
    [{{"response": GOOD_REPORT, "stats": {{}}}}],
]


def envelope(path):
    events = copy.deepcopy(rng.choice(ENVELOPES))
    if rng.random() < 0.8:
        mutate(events)
    path.write_text("\n".join(json.dumps(e) for e in events), encoding="utf-8", errors="surrogatepass")
    return f"command:cat > /dev/null; cat {{path}}"


async def one():
    if mode == "command":
        explorer = envelope(WORK / "envelope.json")
        return (await investigate(REPORT, FIXTURE_REPO, explorer=explorer, limits=Limits(history=False))).diagnosis
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
WORK = Path(tempfile.mkdtemp())


async def stores():
    """The store's databases, each with one investigation whose outcome every run overwrites."""
    urls = [f"sqlite+aiosqlite:///{{WORK / 'chaos.db'}}"]
    try:
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {{SCHEMA}} CASCADE"); c.execute(f"CREATE SCHEMA {{SCHEMA}}")
        urls.append(f"postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{{SCHEMA}}")
    except psycopg.OperationalError:
        pass
    out = []
    for url in urls:
        await asyncio.to_thread(run_migrations, url)
        db = Database(url)
        async with db.session() as s:
            inv, _ = await store.create_investigation(s, REPORT, ClassificationResult(
                label=Classification.bug, confidence=1, reason="chaos"), investigate=True, explorer="chaos")
        out.append((db, inv))
    return out


async def stored(dbs, d):
    """Why the store refused the run's outcome in each database (empty: stored everywhere)."""
    status = Status.done if d.termination.reason.value != "error" else Status.failed
    failures = []
    for db, inv in dbs:
        try:
            async with db.session() as s:
                await store.finish(s, inv, status=status, diagnosis=d.model_dump(mode="json"), report_markdown="r",
                                   error=None)
        except Exception as e:
            failures.append(f"{{db.engine.dialect.name}}: {{type(e).__name__}}: {{str(e).splitlines()[0][:90]}}")
    return failures


async def main():
    dbs = await stores()
    counts, internal, lost = {{}}, {{}}, {{}}
    while time.time() < until:
        try:
            d = await asyncio.wait_for(one(), 120)
            term = d.termination
            kind = "internal error" if term.detail.startswith("internal error") else (
                "done" if term.reason.value == "done" else "labelled")
            if kind == "internal error":
                internal[term.detail[:120]] = internal.get(term.detail[:120], 0) + 1
            failures = await stored(dbs, d)
            for why in failures:
                lost[why] = lost.get(why, 0) + 1
            counts["lost"] = counts.get("lost", 0) + bool(failures)
        except Exception as e:
            kind = "internal error"
            internal[f"raised {{type(e).__name__}}"] = internal.get(f"raised {{type(e).__name__}}", 0) + 1
        counts[kind] = counts.get(kind, 0) + 1
    for db, _ in dbs:
        await db.dispose()
    print(json.dumps({{"counts": counts, "internal": internal, "lost": lost, "stores": len(dbs)}}))


asyncio.run(main())
'''


def run_mode(root: Path, mode: str, seconds: float, seed: int) -> dict:
    """The counts of one mode's runs on the code at `root`."""
    code = _CHILD.format(root=str(root), mode=mode, seconds=seconds, seed=seed)
    return run_child(code, root, seconds + 600, f"{mode}: the child")


def main() -> None:
    ap = chaos_options(__doc__, 120.0)
    ap.add_argument("--mode", choices=MODES, nargs="+", default=list(MODES))
    args = ap.parse_args()
    print("| chaos | runs | done | labelled | internal error | outcome lost (stores) |\n|---|---:|---:|---:|---:|---:|")
    errors: dict[str, dict[str, int]] = {}
    for mode in args.mode:
        found = run_mode(args.root.resolve(), mode, args.seconds, args.seed)
        c = found["counts"]
        runs = sum(n for kind, n in c.items() if kind != "lost")
        print(f"| {mode} | {runs} | {c.get('done', 0)} | {c.get('labelled', 0)} | {c.get('internal error', 0)} | "
              f"{c.get('lost', 0)} ({found['stores']}) |")
        errors[mode] = {**found["internal"], **{f"lost: {k}": n for k, n in found["lost"].items()}}
    for mode, found in errors.items():
        for detail, n in sorted(found.items(), key=lambda x: -x[1]):
            print(f"{mode}: {n} × {detail}")


if __name__ == "__main__":
    main()
