"""Reading tool calls as plain servers send them: what is read as which tool, and what is left to be refused."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from funnel.tool_calls import encodable_response, repair_response, tool_name

READ = ToolDefinition(name="read_range", parameters_json_schema={
    "type": "object", "additionalProperties": False, "required": ["path"],
    "properties": {"path": {"type": "string"}, "start": {"type": "integer"}, "end": {"type": "integer"}}})  # fmt: skip
SEARCH = ToolDefinition(name="search", parameters_json_schema={
    "type": "object", "additionalProperties": False, "required": ["pattern"],
    "properties": {"pattern": {"type": "string"}}})  # fmt: skip
PARAMS = ModelRequestParameters(function_tools=[READ, SEARCH], allow_text_output=True)


def _one(*parts, params=PARAMS) -> list:
    return repair_response(ModelResponse(parts=list(parts)), params).parts


def test_a_name_is_read_as_the_one_offered_tool_it_spells():
    offered = {"read_range": READ, "search": SEARCH}
    assert [tool_name(n, offered) for n in ("functions.read_range", "ReadRange", "readRange", "tools:SEARCH",
                                            "read-range")] == ["read_range", "read_range", "read_range", "search",
                                                               "read_range"]  # fmt: skip
    assert tool_name("run_tests", offered) is None and tool_name("functions.find_symbol", offered) is None


def test_a_name_that_spells_two_offered_tools_is_left_as_sent():
    offered = {"read": READ, "Read": SEARCH}
    assert tool_name("READ", offered) is None


def test_a_well_formed_call_is_the_same_object():
    call = ToolCallPart("search", '{"pattern": "x"}', tool_call_id="c1")
    response = ModelResponse(parts=[call])
    assert repair_response(response, PARAMS) is response


def test_an_unknown_argument_is_dropped_only_when_every_needed_one_is_there():
    kept = _one(ToolCallPart("read_range", {"path": "a.py", "why": "look"}, tool_call_id="c1"))
    assert kept[0].args == {"path": "a.py"}
    typo = {"pth": "a.py", "start": 3}
    assert _one(ToolCallPart("read_range", typo, tool_call_id="c2"))[0].args == typo  # refused with both names


def test_an_argument_under_another_agents_name_is_read_as_the_parameter_it_means():
    sent = {"file_path": "a.py", "start_line": 3, "lineEnd": 9, "explanation": "look"}
    assert _one(ToolCallPart("read_range", sent, tool_call_id="c1"))[0].args == {"path": "a.py", "start": 3, "end": 9}
    assert _one(ToolCallPart("search", {"query": "x"}, tool_call_id="c2"))[0].args == {"pattern": "x"}


def test_a_name_is_not_read_as_a_parameter_the_call_already_sends_or_two_parameters():
    both = {"path": "a.py", "file_path": "b.py"}
    assert _one(ToolCallPart("read_range", both, tool_call_id="c1"))[0].args == {"path": "a.py"}  # the extra dropped
    ambiguous = {"start_end": 3}
    assert _one(ToolCallPart("read_range", ambiguous, tool_call_id="c2"))[0].args == ambiguous


def test_arguments_that_are_not_json_are_left_for_the_tool_to_refuse():
    assert _one(ToolCallPart("search", '{"pattern": "x",', tool_call_id="c1"))[0].args == '{"pattern": "x",'


def test_calls_written_in_the_text_become_tool_calls_and_the_prose_around_them_stays():
    parts = _one(TextPart('Reading.\n<tool_call>{"name": "read_range", "arguments": {"path": "a.py"}}</tool_call>\n'
                          '<tool_call>{"name": "search", "arguments": {"pattern": "x"}}</tool_call>'))
    assert parts[0] == TextPart("Reading.")
    assert [(p.tool_name, p.args) for p in parts[1:]] == [("read_range", {"path": "a.py"}), ("search", {"pattern": "x"})]
    mistral = _one(TextPart('[TOOL_CALLS][{"name": "search", "arguments": {"pattern": "y"}}]'))
    assert [(p.tool_name, p.args) for p in mistral] == [("search", {"pattern": "y"})]


def test_text_naming_no_offered_tool_or_offering_no_tool_stays_text():
    for body in ('{"name": "run_tests", "arguments": {}}', '{"summary": "x"}', "## Summary\n```json\n{\"a\": 1}\n```"):
        assert _one(TextPart(body)) == [TextPart(body)]
    report = '<tool_call>{"name": "search", "arguments": {"pattern": "x"}}</tool_call>'
    assert _one(TextPart(report), params=ModelRequestParameters(allow_text_output=True)) == [TextPart(report)]


_PIECES = st.sampled_from(["<tool_call>", "</tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "```json\n", "\n```", "{",
                           "}", "[", "]", '"name"', ":", '"search"', '"arguments"', '"pattern"', '"x"', ",", "null",
                           " ", "\n", "text"])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join), st.sampled_from(["search", "Search", "functions.x", ""]))
def test_any_reply_is_read_or_left_as_sent_never_a_crash(text, name):
    for part in (TextPart(text), ToolCallPart(name, text, tool_call_id="c1")):
        assert repair_response(ModelResponse(parts=[part]), PARAMS).parts


def test_calls_written_as_python_become_tool_calls():
    read = ("read_range", {"path": "shop/pricing.py", "start": 4, "end": 8})
    search = ("search", {"pattern": "apply_discount"})
    for written, calls, prose in [
        ('[search(pattern="apply_discount"), read_range(path="shop/pricing.py", start=4, end=8)]', [search, read],
         []),  # Llama 3.2 and 4
        ('Let me look.\n```tool_code\nprint(default_api.search(pattern="apply_discount"))\n```', [search],
         ["Let me look."]),  # Gemma
        ('read_range("shop/pricing.py", 4, 8)', [read], []),  # positional: in the order of the tool's parameters
        ('<|python_start|>search(pattern="apply_discount", explanation=null)<|python_end|>', [search], []),
    ]:  # fmt: skip
        parts = _one(TextPart(written))
        assert [(p.tool_name, p.args) for p in parts if isinstance(p, ToolCallPart)] == calls
        assert [p.content for p in parts if isinstance(p, TextPart)] == prose


def test_python_that_is_not_only_calls_of_offered_tools_stays_text():
    for written in ('The bug is in apply_discount(price=10).', 'x = search(pattern="a")', 'search(pattern=a_name)',
                    '[search(pattern="a"), run_tests()]', 'search(*args)', 'read_range("a", 1, 2, 3, 4)', '[1, 2]'):
        assert _one(TextPart(written)) == [TextPart(written)]


def test_prose_that_python_warns_about_stays_text_without_a_warning(recwarn):  # recwarn records every warning
    for written in ("Set n to 1if it is 0.", "Use '\\d' there.", "{'path': 1if}"):
        assert _one(TextPart(written)) == [TextPart(written)]
        assert _one(ToolCallPart("search", written, tool_call_id="c1"))[0].args == written
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning)]


def test_a_reply_nested_deeper_than_a_parser_goes_stays_text_and_its_arguments_go_to_the_tool():
    # a repetition loop of one token: json.loads raised RecursionError and ended the run as an internal error
    assert _one(TextPart("[" * 5000)) == [TextPart("[" * 5000)]
    assert _one(ToolCallPart("read_range", "{" * 5000, tool_call_id="c1"))[0].args == "{" * 5000


def test_arguments_written_as_a_python_literal_are_read_as_the_object():
    call = ToolCallPart("read_range", "{'path': 'shop/pricing.py', 'start': 4, 'end': 8,}", tool_call_id="c1")
    assert _one(call)[0].args == {"path": "shop/pricing.py", "start": 4, "end": 8}
    written = "<tool_call>{'name': 'search', 'arguments': {'pattern': 'apply_discount'}}</tool_call>"
    assert [(p.tool_name, p.args) for p in _one(TextPart(written))] == [("search", {"pattern": "apply_discount"})]
    for code in ("{'path': f'{x}'}", "{'path': open('x')}", "print(1)"):  # only literals are read; nothing runs
        assert _one(ToolCallPart("read_range", code, tool_call_id="c1"))[0].args == code


def test_a_whole_call_sent_as_its_own_arguments_is_read_as_that_calls_arguments():
    wrapped = '{"name": "functions.read_range", "arguments": {"path": "shop/pricing.py", "start": 4}}'
    assert _one(ToolCallPart("read_range", wrapped, tool_call_id="c1"))[0].args == {"path": "shop/pricing.py",
                                                                                     "start": 4}  # fmt: skip
    other = '{"name": "search", "arguments": {"path": "shop/pricing.py"}}'  # names another tool: left to be refused
    assert _one(ToolCallPart("read_range", other, tool_call_id="c1"))[0].args == other


def test_calls_sharing_an_id_each_get_one_of_their_own():
    parts = _one(ToolCallPart("search", {"pattern": "a"}, tool_call_id="call_0"),
                 ToolCallPart("read_range", {"path": "a.py"}, tool_call_id="call_0"), params=ModelRequestParameters())
    assert parts[0].tool_call_id == "call_0" and parts[1].tool_call_id not in ("call_0", "")


def test_calls_written_as_xml_become_tool_calls_with_values_of_their_schemas_types():
    qwen = ("I will read it.\n<tool_call>\n<function=read_range>\n<parameter=path>\nshop/pricing.py\n</parameter>\n"
            "<parameter=start>\n4\n</parameter>\n</function>\n</tool_call>")  # Qwen3-Coder
    claude = ('<function_calls>\n<invoke name="search">\n<parameter name="pattern">apply_discount</parameter>\n'
              "</invoke>\n</function_calls>")  # Claude's legacy format
    parts = _one(TextPart(qwen))
    assert parts[0] == TextPart("I will read it.") and parts[1].args == {"path": "shop/pricing.py", "start": 4}
    assert [(p.tool_name, p.args) for p in _one(TextPart(claude))] == [("search", {"pattern": "apply_discount"})]
    unknown = "<tool_call>\n<function=run_tests>\n</function>\n</tool_call>"
    assert _one(TextPart(unknown)) == [TextPart(unknown)]


def test_calls_on_gpt_oss_commentary_channel_become_tool_calls():
    for written in ('<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>'
                    '{"pattern": "apply_discount"}<|call|>',
                    '<|start|>assistant to=functions.search<|channel|>commentary json<|message|>{"pattern": '
                    '"apply_discount"}<|call|>'):  # fmt: skip
        assert [(p.tool_name, p.args) for p in _one(TextPart(written))] == [("search", {"pattern": "apply_discount"})]
    other = '<|channel|>commentary to=functions.run_tests <|constrain|>json<|message|>{}<|call|>'
    assert _one(TextPart(other)) == [TextPart(other)]


def test_half_a_surrogate_pair_becomes_a_replacement_character_everywhere_a_reply_carries_text():
    half = "\ud83d"
    response = ModelResponse(parts=[TextPart(f"a{half}"), ThinkingPart(f"t{half}"),
                                    ToolCallPart("search", f'{{"pattern": "x{half}"}}', tool_call_id="c1"),
                                    ToolCallPart("read_range", {"path": f"p{half}", "start": 1}, tool_call_id="c2")])
    text, thought, as_text, as_dict = encodable_response(response).parts
    assert (text.content, thought.content) == ("a\ufffd", "t\ufffd")
    assert as_text.args == '{"pattern": "x\ufffd"}' and as_dict.args == {"path": "p\ufffd", "start": 1}
    for part in (text, as_text):
        (part.content if isinstance(part, TextPart) else part.args).encode("utf-8")


def test_a_reply_without_a_lone_surrogate_is_left_as_it_is():
    response = ModelResponse(parts=[TextPart("😀 ok"), ToolCallPart("search", {"pattern": "x"}, tool_call_id="c")])
    assert encodable_response(response) is response
