"""The line the offline report cites first when no rule of the reasoning layer fires: the code line that shares the
most with the report."""

from __future__ import annotations

from funnel.explorers.offline.lines import best_line

PARSE = '''def parse_http_date(date):
    """
    Parse a date format as specified by HTTP RFC7231: the year of a two digit year.
    """
    # the year is the hard part of parsing a date
    m = match(date)
    year = int(m.group('year'))
    if year < 100:
        if year < 70:
            year += 2000
    return parse_rest(date, year)
'''


def _shown(text: str) -> dict[int, str]:
    return {k + 1: line for k, line in enumerate(text.split("\n"))}


def test_docstrings_and_comments_are_never_the_cited_line():
    query = {"year": 1.0, "two": 3.0, "digit": 3.0, "rfc7231": 3.0}
    line = best_line(_shown(PARSE), 1, 11, query)
    assert line is not None and line > 5, "lines 2-5 are the docstring and a comment"


def test_a_term_on_every_line_counts_less_than_a_rare_one():
    text = "def f(year):\n    year = clean(year)\n    year = shift(year)\n    log(year)\n    return century(x)\n"
    query = {"year": 1.0, "century": 0.8}
    assert best_line(_shown(text), 1, 5, query) == 5


def test_no_shared_term_gives_no_line():
    assert best_line(_shown(PARSE), 1, 11, {"unrelated": 1.0}) is None
