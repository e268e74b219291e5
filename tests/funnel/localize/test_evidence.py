"""The helpers that read a report and tool output for the offline ranker: identifiers, definitions found by
pattern, message fragments, the names worth looking up, and the tools' rendered answers."""

from __future__ import annotations

from funnel.localize.corpus import regex_definitions
from funnel.localize.evidence import literal_keys, parse_read, parse_search_hits, symbol_queries
from funnel.localize.terms import count_terms, split_identifier
from repomap.focus import Focus


def test_identifiers_split_on_camel_and_snake_case():
    assert split_identifier("getHTTPResponse_code") == ["get", "http", "response", "code"]
    terms = count_terms("parseHeader(raw_value)")
    assert {"parseheader", "parse", "header", "raw_value", "raw", "value"} <= set(terms)


def test_regex_definitions_nest_python_methods():
    spans = regex_definitions("a.py", "class A:\n    def b(self):\n        return 1\n\ndef c():\n    pass\n")
    assert [(s.qualname, s.start_line, s.end_line) for s in spans] == [("A", 1, 3), ("A.b", 2, 3), ("c", 5, 6)]


def test_literal_keys_drop_interpolated_values():
    assert literal_keys("Field 'id' expected a number but got 'abc'.") == ["expected a number but got"]


def test_symbol_queries_prefer_qualified_code_names():
    focus = Focus.from_text("Calling `Session.request` fails; request is broken and Session too.")
    assert symbol_queries(focus, {"request", "Session"})[0] == "Session.request"


def test_tool_output_parsers_read_hits_and_numbered_lines():
    assert parse_search_hits("a/b.py:3: x = 1\na/b.py-4- y\nc.py:10: z") == [("a/b.py", 3), ("c.py", 10)]
    read = parse_read("a/b.py lines 3-4 of 9\n3| x = 1\n4|     y = 2")
    assert read is not None and read.lines == {3: "x = 1", 4: "    y = 2"}


def test_symbol_queries_never_look_up_plain_words_of_the_prose():
    text = "Using the class with a Session: the request fails. Calling fetch_all() or parse() or `Loader` breaks too."
    focus = Focus.from_text(text)
    known = {"class", "with", "Session", "request", "fetch_all", "parse", "Loader", "Calling", "Using"}
    asked = symbol_queries(focus, known, limit=10, text=text)
    assert set(asked) == {"fetch_all", "parse", "Loader"}
