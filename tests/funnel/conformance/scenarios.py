"""The conformance scenarios: one model behaviour each (issue 17's list, 1-10; 11: tool calls as plain servers pass
them through), run through the real harness over HTTP.

A scenario is a `Script` for `ModelServer` plus what the run may end with; `_run.run_scenario` runs one.
`bench/conformance_table.py` runs them all and prints the README table.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from funnel import Limits
from schemas.enums import StopReason
from tests.funnel.conformance._reports import (
    BAD_QUOTE,
    FENCED_REPORT,
    FRENCH_REPORT,
    JSON_REPORT,
    PERMALINK_REPORT,
    RENAMED_REPORT,
    SETEXT_REPORT,
    THOUGHT,
    structured,
)
from tests.funnel.conformance._server import Call, ModelServer, Protocol, Script, Seen, Turn, anthropic_sse, openai_json
from tests.funnel.conformance._wire import created_in_us, overflow, uncounted
from tests.funnel.harness_support import GOOD_REPORT

EXPLORER = {"openai": "openai-chat:fake-model", "anthropic": "anthropic:claude-sonnet-4-5"}
STRUCTURER = {"openai": "openai-chat:cheap-model", "anthropic": "anthropic:claude-haiku-4-5"}

BASE_LIMITS = Limits(retry_backoff_s=0.05, request_timeout_s=10.0, model_retries=2, timeout_s=30.0,
                     fallback_to_offline=False, max_iterations=16, explore_calls=6, deep_dive_reads=3,
                     history=False)  # fmt: skip
"""Small budgets so every scenario ends in a few seconds; the fallback is off unless a scenario turns it on; no git
history (the fixture tree sits inside this repository's checkout)."""

DONE = frozenset({StopReason.done})


def tc(name: str, args: dict[str, Any] | str | None = None, **kw: Any) -> Turn:
    """A reply with one tool call."""
    return Turn(calls=[Call(name, {} if args is None else args)], **kw)


def text(body: str, **kw: Any) -> Turn:
    """A reply with text only."""
    return Turn(text=body, **kw)


SEARCH = tc("search", {"pattern": "apply_discount", "fixed_strings": True})
BEGIN = tc("begin_deep_dive", {"suspects": ["shop/pricing.py:apply_discount"]})
READ = tc("read_range", {"path": "shop/pricing.py", "start": 4, "end": 8})
FINISH = tc("finish_deep_dive")
GOOD = text(GOOD_REPORT)
SEARCH_AND_LIST = Turn(calls=[SEARCH.calls[0], Call("list_dir", {"path": "shop"})])


def cite(report: str, location: str) -> str:
    """GOOD_REPORT with its affected-file citation replaced."""
    return report.replace("shop/pricing.py:8-8", location)


def template_location(seen: Seen) -> str:
    """The first `path:line` citation of the report template in the system prompt: what a literal model copies."""
    section = seen.text.split("Report template", 1)[-1]
    m = re.search(r"`([^`\s]+?):(\d+|<\w+>)", section)
    assert m, "the system prompt shows no citation example"
    return m.group(1)


def _copy_template_path(seen: Seen) -> Turn:
    return tc("read_range", {"path": template_location(seen), "start": 1, "end": 40})


def _report_with_template_path(seen: Seen) -> Turn:
    return text(cite(GOOD_REPORT, f"{template_location(seen)}:1-5"))


def literal_model() -> Script:
    """Behaviours 1-2 as one mediocre model: copies the template's path, mangles a repo path, cites past the end of
    the file, then in attempt 2 does what it is told ("write the report now")."""
    past_end = cite(GOOD_REPORT, "shop/pricing.py:8-400")
    return Script(
        explore=[_copy_template_path, tc("read_range", {"path": "shop/prices.py"}), BEGIN],
        deep_dive=[FINISH],
        output=[lambda s: text(cite(past_end, f"{template_location(s)}:1-5").replace("shop/pricing.py` — ",
                                                                                   "shop/prices.py` — ")), GOOD],
    )  # fmt: skip


HAPPY = dict(explore=[SEARCH, BEGIN], deep_dive=[READ, FINISH], output=[GOOD])


def happy(**over: list) -> Script:
    """The well-behaved path with some phase lists replaced."""
    return Script(**{**HAPPY, **over})


@dataclass(frozen=True)
class Scenario:
    """One model behaviour and the terminations an honest harness may end it with."""

    behaviour: int
    name: str
    what: str
    script: Callable[[], Script]
    expect: frozenset[StopReason] = DONE
    limits: dict[str, Any] = field(default_factory=dict)
    structurer: bool = False


UPSTREAM_ERROR = {"error": {"message": "Upstream provider returned an error", "code": 502}}
MALFORMED = '{"path": "shop/pricing.py", "start": 4,'
NO_CHOICE = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m"}
"""A Chat Completions body without its `choices`."""


def _malformed_usage(seen: Seen) -> Turn:
    """The search call with a usage that is not an object: what a proxy that rewrites replies has sent."""
    if seen.protocol == "openai":
        return Turn(raw=json.dumps({**openai_json(SEARCH, "fake-model"), "usage": "x"}).encode())
    events = anthropic_sse(SEARCH, "fake-model").decode()
    return Turn(raw=events.replace('"usage": {"output_tokens": 60}', '"usage": null').encode())


SPLIT_EMOJI = "\ud83d"
"""The first half of 😀's surrogate pair: what a server that cuts an emoji between two tokens sends."""
REFUSAL = "I'm sorry, but I can't help with that."


def _plain(shape: Callable[[Call], Turn]) -> Script:
    """The happy path with every tool call sent in one shape a plain server passes through, every time."""
    return Script(**{k: [shape(t.calls[0]) if t.calls else t for t in v] for k, v in HAPPY.items()})


_OTHER_NAMES = {"path": "file_path", "start": "start_line", "end": "end_line", "pattern": "query"}


def _thought_in_text(open_: str, close: str) -> Script:
    """The happy path with the model's thought written before every reply's text, in `open_` … `close`."""
    def thinking(t: Turn, thought: str) -> Turn:
        return dataclasses.replace(t, text=f"{open_}{thought}{close}{t.text or ''}")
    return Script(**{k: [thinking(t, "I should read the pricing code." if t.calls else THOUGHT) for t in v]
                     for k, v in HAPPY.items()})  # fmt: skip


def _python(call: Call) -> str:
    """The call as a model trained on Python tool calls writes it, its values in JSON (`true`, not `True`)."""
    assert isinstance(call.args, dict)
    return f"{call.name}({', '.join(f'{k}={json.dumps(v)}' for k, v in call.args.items())})"


def _qwen_xml(call: Call) -> Turn:
    assert isinstance(call.args, dict)
    params = "".join(f"<parameter={k}>\n{json.dumps(v) if not isinstance(v, str) else v}\n</parameter>\n"
                     for k, v in call.args.items())  # fmt: skip
    return text(f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>")


def _harmony(turn: Turn) -> Turn:
    """A reply as gpt-oss writes it in its harmony format, which a server without the format's parser passes on."""
    if not turn.calls:
        return text(f"<|channel|>analysis<|message|>{THOUGHT}<|end|><|start|>assistant<|channel|>final<|message|>"
                    f"{turn.text}<|return|>")
    call = turn.calls[0]
    return text("<|channel|>analysis<|message|>I should look at the pricing code.<|end|><|start|>assistant<|channel|>"
                f"commentary to=functions.{call.name} <|constrain|>json<|message|>{json.dumps(call.args)}<|call|>")


def _hermes(call: Call) -> Turn:
    return text(f"I will call a tool.\n<tool_call>\n{json.dumps({'name': call.name, 'arguments': call.args})}"
                "\n</tool_call>")


SCENARIOS: tuple[Scenario, ...] = (
    # 1. literal obedience, repeats, control tools in attempt 2
    Scenario(1, "literal_template_path", "reads the template's example path; in attempt 2 calls finish_deep_dive again",
             lambda: Script(explore=[_copy_template_path, BEGIN], deep_dive=[FINISH],
                            output=[_report_with_template_path, GOOD])),
    Scenario(1, "repeats_a_call_once", "the same search twice in a row",
             lambda: happy(explore=[SEARCH, SEARCH, BEGIN])),
    Scenario(1, "rereads_in_attempt_2", "re-reads in attempt 2 the range it read in attempt 1, as the retry asks",
             lambda: happy(deep_dive=[READ, FINISH, READ, FINISH], output=[text(BAD_QUOTE), GOOD])),
    # 2. hallucinated locations
    Scenario(2, "nonexistent_path", "cites a mangled path in both attempts",
             lambda: happy(output=[text(cite(GOOD_REPORT, "shop/prices.py:8-8"))])),
    Scenario(2, "lines_past_the_end", "cites lines 8-400 of a 13-line file, then fixes it",
             lambda: happy(output=[text(cite(GOOD_REPORT, "shop/pricing.py:8-400")), GOOD])),
    Scenario(2, "snippet_not_there", "quotes code the file does not contain, in both attempts",
             lambda: happy(output=[text(BAD_QUOTE)])),
    Scenario(2, "literal_model", "behaviours 1-2 together (the CLI scenario)", literal_model),
    # 3. tools that are not offered, unknown, malformed, mistyped
    Scenario(3, "hidden_tool", "calls search during the deep-dive", lambda: happy(deep_dive=[SEARCH, READ, FINISH])),
    Scenario(3, "unknown_tool", "calls a tool that does not exist",
             lambda: happy(explore=[tc("run_tests", {"path": "."}), SEARCH, BEGIN])),
    Scenario(3, "malformed_json", "sends arguments that are not JSON",
             lambda: happy(explore=[tc("read_range", MALFORMED), SEARCH, BEGIN])),
    Scenario(3, "wrong_types", "sends a string where a line number goes",
             lambda: happy(explore=[tc("read_range", {"path": "shop/pricing.py", "start": "four"}), SEARCH, BEGIN])),
    Scenario(3, "hidden_tool_forever", "calls search at every turn of the deep-dive",
             lambda: happy(deep_dive=[SEARCH])),
    Scenario(3, "control_tool_forever", "calls finish_deep_dive at every turn of explore", lambda: happy(explore=[FINISH])),
    Scenario(3, "tools_in_output_forever", "calls read_range at every turn of the output phase",
             lambda: happy(output=[READ]), expect=frozenset({StopReason.error})),
    Scenario(3, "tools_in_output_fallback", "the same; the offline fallback is on", lambda: happy(output=[READ]),
             limits={"fallback_to_offline": True}),
    Scenario(3, "malformed_forever", "never sends valid arguments",
             lambda: happy(explore=[tc("read_range", MALFORMED)]),
             expect=frozenset({StopReason.error, StopReason.step_budget})),
    # 4. parallel tool calls
    Scenario(4, "parallel_reads", "search and list_dir in one response", lambda: happy(explore=[SEARCH_AND_LIST, BEGIN])),
    Scenario(4, "control_with_read", "begin_deep_dive and read_range in one response",
             lambda: happy(explore=[SEARCH, Turn(calls=[BEGIN.calls[0], READ.calls[0]])], deep_dive=[FINISH])),
    Scenario(4, "search_after_begin", "begin_deep_dive then search in one response",
             lambda: happy(explore=[Turn(calls=[BEGIN.calls[0], SEARCH.calls[0]])])),
    Scenario(4, "read_after_finish", "read, finish_deep_dive, read in one response",
             lambda: happy(deep_dive=[Turn(calls=[READ.calls[0], FINISH.calls[0],
                                                  Call("read_range", {"path": "shop/cart.py"})])])),
    # 5. text where tools were expected, empty content, both at once
    Scenario(5, "early_plain_answer", "answers in prose during explore",
             lambda: happy(explore=[text("The bug is in pricing."), SEARCH, BEGIN])),
    Scenario(5, "early_full_report", "writes the whole report at the first request", lambda: happy(explore=[GOOD])),
    Scenario(5, "empty_content", "an empty reply in the deep-dive", lambda: happy(deep_dive=[text(""), READ, FINISH])),
    Scenario(5, "content_and_calls", "text and a tool call in one reply",
             lambda: happy(deep_dive=[Turn(text="Let me read it.", calls=READ.calls), FINISH])),
    Scenario(5, "empty_forever", "only empty replies", lambda: Script(explore=[text("")]),
             expect=frozenset({StopReason.error, StopReason.step_budget})),
    Scenario(5, "nested_too_deep", "a degenerate reply, `[` 5,000 times, as text and as a tool call's arguments",
             lambda: happy(explore=[text("[" * 5000), SEARCH, BEGIN], deep_dive=[tc("read_range", "{" * 5000), READ,
                                                                                 FINISH])),
    Scenario(5, "split_emoji", "half an emoji's surrogate pair (`\\ud83d`) in its text and in a tool call's arguments",
             lambda: happy(explore=[text(f"Looking {SPLIT_EMOJI}"),
                                    tc("search", f'{{"pattern": "apply_discount{SPLIT_EMOJI}"}}'), SEARCH, BEGIN],
                           output=[text(GOOD_REPORT.replace("A 10%", f"A {SPLIT_EMOJI}10%"))])),
    # 6. cut off, context overflow
    Scenario(6, "report_cut_off", "finish_reason length in the report, then the whole report",
             lambda: happy(output=[text(GOOD_REPORT[:90], finish="length"), GOOD])),
    Scenario(6, "tool_call_cut_off", "finish_reason length inside a tool call's arguments",
             lambda: happy(explore=[tc("search", '{"pattern": "apply_disc', finish="length"), SEARCH, BEGIN])),
    Scenario(6, "context_overflow", "the server says the prompt is too long", lambda: happy(deep_dive=[overflow]),
             expect=frozenset({StopReason.error})),
    Scenario(6, "refuses", "refuses in the deep-dive (`refusal`; Messages: `stop_reason: refusal`)",
             lambda: happy(deep_dive=[Turn(refusal=REFUSAL)]), expect=frozenset({StopReason.error})),
    Scenario(6, "refuses_fallback", "the same; the offline fallback is on",
             lambda: happy(deep_dive=[Turn(refusal=REFUSAL)]), limits={"fallback_to_offline": True}),
    Scenario(6, "content_filter_cut", "the content filter cuts the report, then the whole report",
             lambda: happy(output=[text(GOOD_REPORT[:90], finish="content_filter"), GOOD])),
    # 7. reports that ignore the template
    Scenario(7, "renamed_sections", "other section names", lambda: happy(output=[text(RENAMED_REPORT)])),
    Scenario(7, "setext_headings", "setext headings", lambda: happy(output=[text(SETEXT_REPORT)])),
    Scenario(7, "fenced_markdown", "the whole report in a ````markdown fence",
             lambda: happy(output=[text(FENCED_REPORT)])),
    Scenario(7, "json_report", "JSON instead of markdown", lambda: happy(output=[text(JSON_REPORT)])),
    Scenario(7, "answer_tags", "the whole report in `<final_answer>…</final_answer>` tags",
             lambda: happy(output=[text(f"<final_answer>{GOOD_REPORT}</final_answer>")])),
    Scenario(7, "other_language", "a report in French", lambda: happy(output=[text(FRENCH_REPORT)])),
    Scenario(7, "permalinks", "cites files by GitHub address (`…/blob/4f2c1e9/shop/pricing.py#L8`)",
             lambda: happy(output=[text(PERMALINK_REPORT)])),
    # 8. transport
    Scenario(8, "rate_limited", "429 with Retry-After: 1, then fine",
             lambda: happy(first=[Turn(status=429, headers={"Retry-After": "1"})])),
    Scenario(8, "server_error_once", "500 once, then fine", lambda: happy(first=[Turn(status=500)])),
    Scenario(8, "server_error_always", "500 on every request", lambda: Script(first=[], explore=[Turn(status=500)]),
             expect=frozenset({StopReason.error})),
    Scenario(8, "error_in_a_200", "answers 200 with a proxy's `{\"error\": …}` and no choice, then fine",
             lambda: happy(first=[Turn(body=UPSTREAM_ERROR)])),
    Scenario(8, "no_choice_always", "answers 200 with `\"choices\": []` on every request",
             lambda: Script(first=[], explore=[Turn(body={**NO_CHOICE, "choices": []})]),
             expect=frozenset({StopReason.error})),
    Scenario(8, "choice_not_an_object", "answers 200 with `\"choices\": [\"x\"]`, then fine",
             lambda: happy(first=[Turn(body={**NO_CHOICE, "choices": ["x"]})])),
    Scenario(8, "created_in_microseconds", "sends `created` in microseconds (`1733600000123456`) on every reply",
             lambda: Script(**{phase: [created_in_us(t) for t in turns] for phase, turns in HAPPY.items()})),
    Scenario(8, "malformed_reply", "a reply whose usage is not an object (`\"usage\": null` in a stream's "
             "`message_delta`, `\"usage\": \"x\"` in a completion), then fine",
             lambda: happy(first=[_malformed_usage])),
    Scenario(8, "usage_beyond_any_count", "every reply's usage claims 18446744073709551615 tokens (an unsigned -1)",
             lambda: Script(**{phase: [uncounted(t) for t in turns] for phase, turns in HAPPY.items()})),
    Scenario(8, "connection_reset", "drops the connection mid-response, then fine",
             lambda: happy(first=[Turn(reset=True, calls=SEARCH.calls)])),
    Scenario(8, "slower_than_timeout", "answers after 4 s with a 1.5 s request timeout, then fine",
             lambda: happy(first=[Turn(delay_s=4.0, calls=SEARCH.calls)]), limits={"request_timeout_s": 1.5}),
    Scenario(8, "never_answers", "never answers", lambda: Script(explore=[Turn(hang=True)]),
             expect=frozenset({StopReason.error}), limits={"model_retries": 1, "request_timeout_s": 1.0}),
    Scenario(8, "never_answers_fallback", "never answers; the offline fallback is on",
             lambda: Script(explore=[Turn(hang=True)]),
             limits={"model_retries": 1, "request_timeout_s": 1.0, "fallback_to_offline": True}),
    # 9. reasoning models
    Scenario(9, "reasoning_around_calls", "reasoning_content / thinking blocks on every reply",
             lambda: Script(**{k: [Turn(text=t.text, calls=t.calls, reasoning="Let me think about the discount.")
                                   for t in v] for k, v in HAPPY.items()})),
    Scenario(9, "report_in_reasoning_only", "the report only in the reasoning, empty content, then the report",
             lambda: happy(output=[Turn(text="", reasoning=GOOD_REPORT), GOOD])),
    Scenario(9, "thought_closed_only", "writes its thought into the text, ended by a lone `</think>` (DeepSeek-R1, "
             "Qwen3 thinking models on a plain server)", lambda: _thought_in_text("", "\n</think>\n\n")),
    Scenario(9, "thought_in_other_tags", "writes its thought into the text in `[THINK]…[/THINK]` (Magistral)",
             lambda: _thought_in_text("[THINK]", "[/THINK]\n")),
    # 10. the structurer model
    Scenario(10, "structurer_hallucinates", "the structurer misspells a path (its quoted snippet proves the real one)",
             lambda: happy(output=[text(FRENCH_REPORT)], structurer=[tc("final_result", structured("shop/prices.py")),
                                                                     tc("final_result", structured())]),
             structurer=True),
    Scenario(10, "structurer_always_wrong", "the structurer always invents a path and a snippet",
             lambda: happy(output=[text(FRENCH_REPORT)],
                           structurer=[tc("final_result", structured("shop/x.py", "nope"))]),
             structurer=True),
    Scenario(10, "structurer_malformed", "the structurer sends malformed JSON, then a valid draft",
             lambda: happy(output=[text(FRENCH_REPORT)], structurer=[tc("final_result", '{"summary": "x", '),
                                                                     tc("final_result", structured())]),
             structurer=True),
    Scenario(10, "structurer_text", "the structurer answers in prose, then calls final_result",
             lambda: happy(output=[text(FRENCH_REPORT)],
                           structurer=[text("The bug is in pricing."), tc("final_result", structured())]),
             structurer=True),
    Scenario(10, "structurer_refuses", "the structurer refuses",
             lambda: happy(output=[text(FRENCH_REPORT)], structurer=[Turn(refusal=REFUSAL)]), structurer=True),
    Scenario(10, "structurer_down", "the structurer endpoint returns 500 on every request",
             lambda: happy(output=[text(FRENCH_REPORT)], structurer=[Turn(status=500)]), structurer=True),
    # 11. tool calls as plain servers pass them through, the same way every time
    Scenario(11, "prefixed_names", "names every tool `functions.<name>`",
             lambda: _plain(lambda c: tc(f"functions.{c.name}", c.args))),
    Scenario(11, "camel_case_names", "names every tool in CamelCase (`ReadRange`)",
             lambda: _plain(lambda c: tc(c.name.title().replace("_", ""), c.args))),
    Scenario(11, "extra_argument", "adds an `explanation` argument to every call",
             lambda: _plain(lambda c: tc(c.name, {**c.args, "explanation": "to find the bug"}))),
    Scenario(11, "other_agents_names", "names arguments as other agents' tools do (`file_path`, `start_line`, `query`)",
             lambda: _plain(lambda c: tc(c.name, {_OTHER_NAMES.get(k, k): v for k, v in c.args.items()}))),
    Scenario(11, "encoded_arguments", "sends arguments as a JSON string in the JSON string, `null` when none",
             lambda: _plain(lambda c: tc(c.name, json.dumps(json.dumps(c.args)) if c.args else "null"))),
    Scenario(11, "python_dict_arguments", "sends arguments as a Python dict, `{'pattern': 'apply_discount', "
             "'fixed_strings': True,}`", lambda: _plain(lambda c: tc(c.name, repr(c.args)[:-1] + ",}" if c.args else "{}"))),
    Scenario(11, "call_as_arguments", "sends each call whole as its own arguments, `{\"name\": …, \"arguments\": {…}}`",
             lambda: _plain(lambda c: tc(c.name, json.dumps({"name": c.name, "arguments": c.args})))),
    Scenario(11, "calls_in_text", "writes every call into the text as `<tool_call>{…}</tool_call>`",
             lambda: _plain(_hermes)),
    Scenario(11, "calls_as_json_text", "answers every call with a bare JSON object in the text",
             lambda: _plain(lambda c: text(json.dumps({"name": c.name, "parameters": c.args})))),
    Scenario(11, "xml_calls", "writes every call as Qwen3-Coder's XML, `<tool_call><function=search><parameter="
             "pattern>…`", lambda: _plain(_qwen_xml)),
    Scenario(11, "harmony_calls", "gpt-oss without its harmony parser: analysis, then each call on the commentary "
             "channel, the report on the final one", lambda: Script(**{k: [_harmony(t) for t in v] for k, v in HAPPY.items()})),
    Scenario(11, "python_calls", "writes every call as Python, `[search(pattern=\"…\", fixed_strings=true)]` (Llama "
             "3.2 and 4)", lambda: _plain(lambda c: text(f"[{_python(c)}]"))),
    Scenario(11, "tool_code_fence", "writes every call in a ```` ```tool_code ```` fence as "
             "`print(default_api.search(…))` (Gemma)",
             lambda: _plain(lambda c: text(f"Let me look.\n```tool_code\nprint(default_api.{_python(c)})\n```"))),
    Scenario(11, "same_call_ids", "gives every tool call the id `call_0`, two calls in one reply included",
             lambda: Script(**{k: [dataclasses.replace(t, call_id="call_0") for t in v]
                               for k, v in {**HAPPY, "explore": [SEARCH_AND_LIST, BEGIN]}.items()})),
    Scenario(11, "legacy_function_call", "sends each call in the legacy `function_call` field",
             lambda: Script(**{k: [dataclasses.replace(t, legacy=True) for t in v] for k, v in HAPPY.items()})),
    Scenario(11, "bare_completions", "completions without ids, `type` or `role`, arguments as JSON objects",
             lambda: Script(**{k: [Turn(text=t.text, calls=t.calls, bare=True) for t in v] for k, v in HAPPY.items()})),
)
"""Every scenario, in the order of issue 17's list. All run over Chat Completions; `ANTHROPIC` over Messages too."""

ANTHROPIC = frozenset({
    "literal_model", "rereads_in_attempt_2", "malformed_json", "control_with_read", "empty_content",
    "context_overflow", "refuses", "content_filter_cut", "setext_headings", "rate_limited", "malformed_reply",
    "server_error_always", "connection_reset", "usage_beyond_any_count",
    "reasoning_around_calls", "split_emoji", "structurer_malformed", "prefixed_names", "calls_in_text",
})  # fmt: skip
"""The scenarios also run over Anthropic Messages (one or more per behaviour; the suite stays fast)."""


def cases(*behaviours: int) -> list[tuple[Scenario, Protocol]]:
    """(scenario, protocol) pairs of some behaviours, for `pytest.mark.parametrize`."""
    out: list[tuple[Scenario, Protocol]] = []
    for s in SCENARIOS:
        if s.behaviour in behaviours:
            out.append((s, "openai"))
            if s.name in ANTHROPIC:
                out.append((s, "anthropic"))
    return out


def by_name(name: str) -> Scenario:
    """The scenario called `name`."""
    return next(s for s in SCENARIOS if s.name == name)
