"""The project's `.gitattributes` has the last word on which files are vendored or generated (Linguist's
attributes), read with git's rules."""

from __future__ import annotations

from funnel.localize.corpus import Corpus
from funnel.localize.linguist import declared
from funnel.localize.rank import rank
from repomap.focus import Focus
from tests.funnel.localize.test_offline_rank import _make

PATHS = ["src/decNumber/decNumber.c", "src/decNumber/sub/decimal.c", "src/jv.c", "src/parser.c", "vendor/ours/a.c",
         "vendor/theirs/b.c", "docs/gen/api.js", "lib/gen/api.js"]


def _on_off(tmp_path, text: str, attribute="linguist-vendored") -> tuple[set[str], set[str]]:
    (tmp_path / ".gitattributes").write_text(text)
    found = declared(tmp_path, PATHS, attribute)
    return set(found.on), set(found.off)


def test_a_glob_sets_the_attribute_and_a_later_line_unsets_it(tmp_path):
    text = "* text=auto eol=lf\nsrc/decNumber/** linguist-vendored\nvendor/** linguist-vendored=true\n" \
           "vendor/ours/** -linguist-vendored\n"
    on, off = _on_off(tmp_path, text)
    assert on == {"src/decNumber/decNumber.c", "src/decNumber/sub/decimal.c", "vendor/theirs/b.c"}
    assert off == {"vendor/ours/a.c"}


def test_a_name_without_a_slash_matches_at_any_depth_and_a_directory_pattern_matches_no_file(tmp_path):
    on, _ = _on_off(tmp_path, "gen/** linguist-generated\nsrc/decNumber/ linguist-generated\nparser.c linguist-generated\n",
                    "linguist-generated")
    assert on == {"src/parser.c"}  # `gen/**` holds a slash: anchored at the root, where no `gen/` is


def test_false_and_unspecified_and_a_macro_read_as_git_reads_them(tmp_path):
    text = "[attr]thirdparty linguist-vendored diff=binary\nsrc/** thirdparty\nsrc/jv.c linguist-vendored=false\n" \
           "src/parser.c !linguist-vendored\n"
    on, off = _on_off(tmp_path, text)
    assert on == {"src/decNumber/decNumber.c", "src/decNumber/sub/decimal.c"}
    assert off == {"src/jv.c"}


def test_a_whole_language_declared_vendored_corrects_language_statistics_and_vendors_nothing(tmp_path):
    on, off = _on_off(tmp_path, "*.c linguist-vendored\nsrc/jv.c -linguist-vendored\nlib/** linguist-vendored\n")
    assert on == {"lib/gen/api.js"} and off == {"src/jv.c"}


def test_a_directory_declared_vendored_counts_however_much_of_the_tree_it_holds(tmp_path):
    on, _ = _on_off(tmp_path, "src/** linguist-vendored\n*.js linguist-vendored\n")
    assert on == {p for p in PATHS if p.startswith("src/") or p.endswith(".js")}


def test_no_gitattributes_or_no_linguist_line_declares_nothing(tmp_path):
    assert declared(tmp_path, PATHS, "linguist-vendored").on == frozenset()
    assert _on_off(tmp_path, "* text=auto\n*.png binary\n") == (set(), set())


def test_a_vendored_library_the_project_declares_ranks_below_its_own_code(tmp_path):
    files = {
        "src/decNumber/decNumber.c": "/* decimal number digits */\nint decNumberDigits(int digits) {\n"
                                     "  /* digits of a decimal number */\n  return digits;\n}\n",
        "src/jv.c": "/* numbers */\nint jv_number_digits(int n) {\n  return n;\n}\n",
    }
    root = _make(tmp_path, files)
    text = "number digits wrong\n\nA decimal number prints the wrong digits: decimal digits of a number"
    before = [c.path for c in rank(Corpus.build(root, list(files)), text, Focus.from_text(text)).candidates]
    (root / ".gitattributes").write_text("src/decNumber/** linguist-vendored\nsrc/jv.c linguist-generated=false\n")
    corpus = Corpus.build(root, list(files))
    after = [c.path for c in rank(corpus, text, Focus.from_text(text)).candidates]
    assert corpus.vendored == {"src/decNumber/decNumber.c"} and corpus.generated == frozenset()
    assert before[0] == "src/decNumber/decNumber.c" and after[0] == "src/jv.c"
