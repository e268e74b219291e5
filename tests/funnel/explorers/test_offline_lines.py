"""The line the offline report cites first when no rule of the reasoning layer fires (the code line that shares the
most with the report), and where the narrow first range around it is placed."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.replay_lines import _knobs
from funnel.explorers.offline.lines import best_line, evidence_window, narrow_prime, pad, pointer, window
from funnel.explorers.offline.writer import Citation, WriterConfig
from repomap.focus import Focus
from schemas.enums import Role

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


LONG = "def configure(options):\n" + "".join(f"    step_{n} = options.get('step_{n}')\n" for n in range(1, 40)) + \
    "    return options\n"


def _narrowed(report: str) -> Citation:
    cite = Citation("pkg/setup.py", 1, 41, "configure", Role.cause, span=(1, 41))
    return narrow_prime([cite], report, Focus.from_text(report), {"step_5": 1.0}, {"pkg/setup.py": LONG},
                        WriterConfig())[0]


def test_a_line_the_report_links_to_anchors_the_first_range():
    plain = "`configure` mishandles `step_5`\n\nWith `step_5` set the result is wrong."
    first = _narrowed(plain)
    assert first.start <= 6 <= first.end and not first.start <= 33 <= first.end
    linked = _narrowed(plain + " See https://github.com/acme/setup/blob/main/pkg/setup.py#L33 where it goes wrong.")
    assert linked.end - linked.start + 1 <= 15 and linked.start <= 33 <= linked.end and linked.focus_lines[0] == 33


def test_the_first_range_slides_over_the_evidence_while_holding_the_selected_line():
    start, end = evidence_window(20, 1, 60, 15, {20: 1.0, 31: 0.5, 33: 0.8, 34: 0.4})
    assert (start, end) == (20, 34)
    assert window(20, 1, 60, 15) == (15, 29), "the default placement would leave the evidence out"


def test_with_no_other_evidence_the_first_range_keeps_its_default_placement():
    assert evidence_window(20, 1, 60, 15, {20: 1.0}) == window(20, 1, 60, 15)
    assert evidence_window(5, 1, 10, 15, {5: 1.0, 9: 3.0}) == (1, 10), "a short definition is cited whole"


SPREAD = "def render(card, options):\n" + "".join(
    f"    part_{n} = draw(card, {n})\n" if n not in (10, 21, 22, 23) else
    ("    ring = colour(options.ring)\n" if n == 10 else f"    circle_{n} = stroke(width, {n})\n")
    for n in range(2, 41)) + "    return card\n"


def test_narrow_prime_cites_the_stretch_where_the_report_terms_gather():
    cite = Citation("cards/stats.py", 1, 41, "render", Role.cause, span=(1, 41))
    report = "The ring colour option is ignored\n\nSetting the ring colour does not change the circle stroke."
    terms = {"ring": 2.0, "colour": 1.0, "circle": 1.0, "stroke": 1.0}

    def first(config: WriterConfig) -> Citation:
        return narrow_prime([Citation(**vars(cite))], report, Focus.from_text(report), terms,
                            {"cards/stats.py": SPREAD}, config)[0]

    placed, plain = first(WriterConfig()), first(WriterConfig(evidence_window=False))
    assert plain.start <= 10 <= plain.end and plain.end < 21
    assert placed.start <= 10 and placed.end >= 23 and placed.end - placed.start + 1 == 15
    assert placed.focus_lines[0] == plain.focus_lines[0] == 10, "the selected line stays the one quoted first"


FIELD = "class DurationField(Field):\n" + "".join(f"    attr_{n} = {n}\n" for n in range(2, 9)) + \
    "    default_error_messages = {'invalid': 'wrong format'}\n" + "".join(f"    other_{n} = {n}\n" for n in range(10, 13)) + \
    "    def get_internal_type(self):\n        return 'DurationField'\n" + "".join(
        f"    def helper_{n}(self):\n        return {n}\n" for n in range(20))


def test_a_short_definition_is_cited_with_the_lines_around_it_up_to_the_narrow_width():
    lines = FIELD.split("\n")
    method = lines.index("    def get_internal_type(self):") + 1
    cite = Citation("db/fields.py", method, method + 1, "DurationField.get_internal_type", Role.cause,
                    span=(method, method + 1))
    report = "DurationField error message shows the wrong format\n\nThe invalid message names the wrong format."

    def first(config: WriterConfig) -> Citation:
        return narrow_prime([Citation(**vars(cite))], report, Focus.from_text(report), {"format": 1.0},
                            {"db/fields.py": FIELD}, config)[0]

    padded, bare = first(WriterConfig()), first(WriterConfig(pad_first_range=False))
    assert (bare.start, bare.end) == (method, method + 1)
    assert padded.end - padded.start + 1 == 15 and padded.start <= method and method + 1 <= padded.end
    assert padded.start <= 9, "the class attribute above the method is inside the range"


def test_padding_stops_at_the_next_definition_the_report_cites():
    lines = FIELD.split("\n")
    method = lines.index("    def get_internal_type(self):") + 1
    first = Citation("db/fields.py", method, method + 1, "DurationField.get_internal_type", Role.cause,
                     span=(method, method + 1))
    helper = Citation("db/fields.py", method + 4, method + 5, "DurationField.helper_1", Role.related,
                      span=(method + 4, method + 5))
    report = "DurationField error message shows the wrong format\n\nThe invalid message names the wrong format."
    out = narrow_prime([first, helper], report, Focus.from_text(report), {"format": 1.0}, {"db/fields.py": FIELD},
                       WriterConfig(cite_rest=False))
    assert out[0].end == method + 3 and out[0].start < method, "widened upwards only, up to the cited helper"
    assert (out[1].start, out[1].end) == (method + 4, method + 5)


def test_padding_stays_inside_the_file_and_leaves_a_wide_range_alone():
    assert pad(2, 3, 1, 6, 15) == (1, 6)
    assert pad(10, 24, 1, 100, 15) == (10, 24)
    assert pad(50, 51, 1, 100, 15) == (46, 60)
    start, end = pad(100, 101, 1, 1, 15)
    assert start <= 100 and end == 101 and end - start + 1 == 15, "bounds that miss the range never stretch it"


_SCORES_SCRIPT = """
from funnel.explorers.offline.lines import line_scores
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lam", "mu"]
shown = {1: "def f():", 2: "    " + " + ".join(words), 3: "    return " + " + ".join(words[::3])}
query = {w: 0.1 * (k + 1) / 3 for k, w in enumerate(words)}
print(repr(sorted(line_scores(shown, 1, 3, query).items())))
"""


def test_line_scores_are_the_same_under_any_string_hash_seed():
    """A line's score sums over a set of terms, whose order follows the process's string hash: the sum must not."""
    root = Path(__file__).resolve().parents[3]
    runs = [subprocess.Popen([sys.executable, "-c", _SCORES_SCRIPT], stdout=subprocess.PIPE, text=True, cwd=root,
                             env=os.environ | {"PYTHONHASHSEED": str(seed)})
            for seed in range(4)]
    outputs = {run.communicate(timeout=120)[0] for run in runs}
    assert all(run.returncode == 0 for run in runs) and len(outputs) == 1, outputs


def test_the_line_replay_takes_writer_knobs_and_refuses_an_unknown_one_or_a_bad_value(capsys):
    parser = argparse.ArgumentParser(prog="replay_lines.py")
    assert _knobs(parser, ["stay_in_first=0.5", "pad_first_range=false"]) == {"stay_in_first": 0.5,
                                                                             "pad_first_range": False}
    for setting, why in (("line_pair_weight=1", "no knob 'line_pair_weight'"), ("stay_in_first=x", "not JSON")):
        with pytest.raises(SystemExit):
            _knobs(parser, [setting])
        assert why in capsys.readouterr().err


def test_a_line_the_reports_diff_removes_is_named_as_the_patchs_line_wherever_it_now_stands():
    focus = Focus.from_text("Fix:\n```diff\n--- a/pkg/render.py\n+++ b/pkg/render.py\n@@ -4,3 +4,3 @@\n def f(x):\n"
                            "-    y = x.split(sep)\n+    y = x.split(sep or None)\n     return y\n```\n")
    assert pointer(focus, "pkg/render.py", 9, "    y = x.split(sep)") == "patch"
    assert pointer(focus, "pkg/render.py", 5, "    return y") is None  # the hunk's number, another line's text
    assert pointer(focus, "pkg/other.py", 5, "    y = x.split(sep)") is None


PATHS = ("def is_valid_path(path):\n    level = 0\n    for part in path.split('/'):\n        level += 1\n"
         "    return level >= 0\n\n\ndef write_response(res):\n    if res.headers.get('content_type') == 'text/css':\n"
         "        return res\n    return None\n")


def test_a_named_value_elsewhere_does_not_move_the_citation_off_the_definition_the_title_names():
    def first(title: str) -> Citation:
        report = f"{title}\n\nThe response then has `content_type` text/javascript instead of text/css."
        cites = [Citation("web/paths.py", 1, 5, "is_valid_path", Role.cause, span=(1, 5)),
                 Citation("web/paths.py", 8, 11, "write_response", Role.related, span=(8, 11))]
        return narrow_prime(cites, report, Focus.from_text(report), {"path": 1.0, "content_type": 1.0},
                            {"web/paths.py": PATHS}, WriterConfig())[0]

    assert first("is_valid_path accepts paths with embedded NULs").symbol == "is_valid_path"
    moved = first("Paths with embedded NULs are accepted")
    assert moved.symbol == "write_response" and moved.finding and moved.finding.rule == "behaviour"


GO = "func configure(o Options) int {\n" + "".join(f"\tstep{n} := o.Get(\"step{n}\")\n" for n in range(1, 24)) + \
    "\treturn 0\n}\n"


def test_the_rest_of_a_definition_is_cited_only_where_it_holds_code_not_a_lone_closing_brace():
    report = "`configure` mishandles `step15`\n\nWith `step15` set the result is wrong."
    cite = Citation("pkg/setup.go", 1, 26, "configure", Role.cause, span=(1, 26))
    out = narrow_prime([cite], report, Focus.from_text(report), {"step15": 1.0}, {"pkg/setup.go": GO}, WriterConfig())
    assert (out[0].start, out[0].end) == (11, 25), "the first range ends on the return; line 26 is the `}`"
    assert [(c.start, c.end) for c in out[1:]] == [(1, 10)], "the code before it, and no range of the brace alone"


JAVA = '''  /**
   * Returns the hash code of this primitive.
   */
  @Override
  public int hashCode() {
    if (value == null) {
      return 31;
    }
    long contract = Double.doubleToLongBits(getAsNumber().doubleValue());
    return (int) (contract ^ (contract >>> 32));
  }
'''


def test_the_line_sharing_most_with_the_report_is_in_the_body_not_the_definitions_own_header():
    query = {"hash": 1.0, "code": 1.0, "hashcode": 2.0, "contract": 1.0}
    assert best_line(_shown(JAVA), 1, 11, query) == 5, "without the definition the header shares the most"
    assert best_line(_shown(JAVA), 1, 11, query, "JsonPrimitive.hashCode") == 9
    only_header = {"hashcode": 1.0}
    assert best_line(_shown(JAVA), 1, 11, only_header, "JsonPrimitive.hashCode") == 5, "the header when nothing else"
