"""The project's `.gitattributes` has the last word on which files are vendored or generated (Linguist's
attributes), read with git's rules."""

from __future__ import annotations

import subprocess

from funnel.localize.corpus import Corpus
from funnel.localize.linguist import read_attributes
from funnel.localize.rank import rank
from repomap.focus import Focus
from tests.funnel.localize.test_offline_rank import _make

PATHS = ["src/decNumber/decNumber.c", "src/decNumber/sub/decimal.c", "src/jv.c", "src/parser.c", "vendor/ours/a.c",
         "vendor/theirs/b.c", "docs/gen/api.js", "lib/gen/api.js"]


def _declared(root, attribute):
    return read_attributes(root, PATHS).declared(attribute)


def _on_off(tmp_path, text: str, attribute="linguist-vendored") -> tuple[set[str], set[str]]:
    (tmp_path / ".gitattributes").write_text(text)
    found = _declared(tmp_path, attribute)
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


def test_a_nested_file_matches_below_its_directory_and_overrides_the_root(tmp_path):
    (tmp_path / "src" / "decNumber").mkdir(parents=True)
    (tmp_path / ".gitattributes").write_text("src/** linguist-vendored\n")
    (tmp_path / "src" / ".gitattributes").write_text("jv.c -linguist-vendored\n")
    (tmp_path / "src" / "decNumber" / ".gitattributes").write_text("* linguist-vendored\n")
    found = _declared(tmp_path, "linguist-vendored")
    assert found.on == {"src/decNumber/decNumber.c", "src/decNumber/sub/decimal.c", "src/parser.c"}
    assert found.off == {"src/jv.c"}


def test_a_nested_file_without_a_root_one_speaks_for_its_directory_only(tmp_path):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / ".gitattributes").write_text("ours/** -linguist-vendored\n*.c linguist-generated\n")
    assert _declared(tmp_path, "linguist-vendored").off == {"vendor/ours/a.c"}
    assert _declared(tmp_path, "linguist-generated").on == {"vendor/ours/a.c", "vendor/theirs/b.c"}


def test_a_macro_is_read_from_the_root_file_only(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / ".gitattributes").write_text("[attr]copied linguist-vendored\n")
    (tmp_path / "lib" / ".gitattributes").write_text("[attr]local linguist-vendored\ngen/** copied\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / ".gitattributes").write_text("[attr]local linguist-vendored\ngen/** local\n")
    assert _declared(tmp_path, "linguist-vendored").on == {"lib/gen/api.js"}


def test_a_byte_order_mark_and_windows_line_ends_read_as_git_reads_them(tmp_path):
    bom = b"\xef\xbb\xbf"
    (tmp_path / ".gitattributes").write_bytes(bom + b"src/** linguist-vendored\r\nsrc/jv.c -linguist-vendored\r\n")
    found = _declared(tmp_path, "linguist-vendored")
    assert "src/parser.c" in found.on and found.off == {"src/jv.c"}


def test_no_gitattributes_or_no_linguist_line_declares_nothing(tmp_path):
    assert _declared(tmp_path, "linguist-vendored").on == frozenset()
    assert _on_off(tmp_path, "* text=auto\n*.png binary\n") == (set(), set())


def _ranked_before_and_after(tmp_path, files: dict[str, str], text: str, attributes: str):
    """The ranking without a `.gitattributes`, the corpus with `attributes` written, and its ranking."""
    root = _make(tmp_path, files)
    before = [c.path for c in rank(Corpus.build(root, list(files)), text, Focus.from_text(text)).candidates]
    (root / ".gitattributes").write_text(attributes)
    corpus = Corpus.build(root, list(files))
    return before, corpus, [c.path for c in rank(corpus, text, Focus.from_text(text)).candidates]


def test_a_vendored_library_the_project_declares_ranks_below_its_own_code(tmp_path):
    files = {
        "src/decNumber/decNumber.c": "/* decimal number digits */\nint decNumberDigits(int digits) {\n"
                                     "  /* digits of a decimal number */\n  return digits;\n}\n",
        "src/jv.c": "/* numbers */\nint jv_number_digits(int n) {\n  return n;\n}\n",
    }
    text = "number digits wrong\n\nA decimal number prints the wrong digits: decimal digits of a number"
    before, corpus, after = _ranked_before_and_after(
        tmp_path, files, text, "src/decNumber/** linguist-vendored\nsrc/jv.c linguist-generated=false\n")
    assert corpus.vendored == {"src/decNumber/decNumber.c"} and corpus.generated == frozenset()
    assert before[0] == "src/decNumber/decNumber.c" and after[0] == "src/jv.c"


def test_code_the_project_declares_documentation_ranks_like_a_doc_and_an_undeclared_doc_like_code(tmp_path):
    files = {
        "guide/render.c": "/* render the page title */\nint render_title(int title) {\n  return title;\n}\n",
        "src/page.c": "/* page */\nint page_title(int t) {\n  return t;\n}\n",
        "docs/title.c": "/* render the page title, the title of a rendered page */\n"
                        "int title(int t) {\n  return t;\n}\n",
    }
    text = "render title wrong\n\nThe page title renders wrong: render the title of the page"
    before, corpus, after = _ranked_before_and_after(
        tmp_path, files, text, "guide/** linguist-documentation\ndocs/** -linguist-documentation\n")
    assert corpus.documentation.on == {"guide/render.c"} and corpus.documentation.off == {"docs/title.c"}
    assert before[:2] == ["guide/render.c", "docs/title.c"] and after[:2] == ["docs/title.c", "guide/render.c"]


def test_the_reading_agrees_with_git_check_attr(tmp_path):
    files = {
        ".gitattributes": "[attr]copied linguist-vendored\nsrc/** linguist-vendored\nlib/gen/** copied\n"
                          "src/*.c linguist-generated=true\nvendor/**/*.c linguist-generated\n"
                          "src/jv.c linguist-generated=false\n",
        "src/.gitattributes": "jv.c -linguist-vendored\nparser.c !linguist-vendored\n",
        "src/decNumber/.gitattributes": "* linguist-generated\nsub/** -linguist-generated\n",
        "vendor/.gitattributes": "ours/** linguist-vendored=false\ntheirs/b.c linguist-vendored\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    attributes = read_attributes(tmp_path, PATHS)
    for attribute in ("linguist-vendored", "linguist-generated"):
        listing = subprocess.run(["git", "check-attr", attribute, "--", *PATHS], cwd=tmp_path, capture_output=True,
                                 text=True, check=True).stdout
        said = {line.split(": ")[0]: line.split(": ")[2] for line in listing.splitlines()}
        found = attributes.declared(attribute)
        assert found.on == {p for p, v in said.items() if v not in ("unset", "unspecified", "false", "0")}
        assert found.off == {p for p, v in said.items() if v in ("unset", "false", "0")}


def test_the_repositorys_info_attributes_outrank_every_gitattributes_and_may_use_their_own_macro(tmp_path):
    (tmp_path / ".gitattributes").write_text("src/decNumber/** linguist-vendored\n")
    (tmp_path / "src" / "decNumber").mkdir(parents=True)
    (tmp_path / "src" / "decNumber" / ".gitattributes").write_text("sub/** linguist-vendored\n")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "attributes").write_text(
        "[attr]third-party linguist-vendored\nsrc/decNumber/sub/** -linguist-vendored\nsrc/jv.c third-party\n")
    found = read_attributes(tmp_path, PATHS, ["", "src/decNumber"]).declared("linguist-vendored")
    assert set(found.on) == {"src/decNumber/decNumber.c", "src/jv.c"}
    assert set(found.off) == {"src/decNumber/sub/decimal.c"}


def test_info_attributes_alone_declare_without_any_gitattributes_in_the_tree(tmp_path):
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "attributes").write_text("src/parser.c linguist-generated\n")
    assert set(_declared(tmp_path, "linguist-generated").on) == {"src/parser.c"}
