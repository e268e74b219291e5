"""Source files of languages with no grammar (Groovy, a jq library, ...) are ranked by their text, with definitions
found by keyword, in memory and from the persisted index alike, and the offline investigation cites them."""

from __future__ import annotations

import os
from pathlib import Path

from funnel import investigate
from funnel.explorers.offline import OfflineExplorer
from funnel.localize.corpus import regex_definitions
from funnel.localize.indexed import IndexedCorpus, open_indexed
from funnel.localize.rank import build_corpus, rank
from repomap import build_repo_map
from repomap.focus import Focus
from repomap.gate import Gate
from schemas.enums import Role, StopReason
from schemas.report import BugReport
from tests.funnel.localize.test_indexed_corpus import _both, _dump, _write

GROOVY_REPO = {
    "src/main/groovy/com/acme/Invoice.groovy": (
        "package com.acme\n\nclass Invoice {\n    def total() {\n"
        "        double sum = 0.0\n        for (line in lines) {\n            sum += line.price * line.quantity\n"
        "        }\n        return sum\n    }\n\n    def averagePrice() {\n"
        "        return total() / lines.size()\n    }\n\n    List<Line> lines\n}\n"
    ),
    "src/main/groovy/com/acme/Line.groovy": "package com.acme\n\nclass Line {\n    double price\n    int quantity\n}\n",
    "src/main/groovy/com/acme/Report.groovy": (
        "package com.acme\n\nclass Report {\n    static def render(Invoice invoice) { \"total ${invoice.total()}\" }\n}\n"
    ),
    "scripts/release.py": "def release(version):\n    return version\n",
}
GROOVY_REPORT = """averagePrice returns NaN when an invoice has no lines

Calling new Invoice(lines: []).averagePrice() gives NaN instead of 0: the average divides by the number of lines.
"""


def test_definitions_of_a_language_without_a_grammar_are_found_by_keyword():
    spans = regex_definitions("src/main/groovy/com/acme/Invoice.groovy", GROOVY_REPO["src/main/groovy/com/acme/Invoice.groovy"])
    assert [(s.qualname, s.kind, s.start_line) for s in spans] == [
        ("Invoice", "class", 3), ("total", "function", 4), ("averagePrice", "function", 12)]
    jq = regex_definitions("src/builtin.jq", "def nth($n): .[$n];\ndef nth($n; f):\n  last(limit($n + 1; f));\n")
    # the last one ends on the file's third and last line: its final newline starts no fourth
    assert [(s.name, s.start_line, s.end_line) for s in jq] == [("nth", 1, 1), ("nth", 2, 3)]


def test_a_groovy_file_is_ranked_by_its_text_beside_the_mapped_files(tmp_path, monkeypatch):
    root = _write(tmp_path / "repo", GROOVY_REPO)
    assert [f.path for f in build_repo_map(root).files] == ["scripts/release.py"], "the map parses no Groovy"
    memory, indexed, a, b = _both(root, tmp_path / "cache", GROOVY_REPORT, monkeypatch)
    assert "src/main/groovy/com/acme/Invoice.groovy" in memory.by_path and "scripts/release.py" in memory.by_path
    assert a.candidates[0].path == "src/main/groovy/com/acme/Invoice.groovy"
    assert a.candidates[0].symbols[0].span.qualname == "averagePrice"
    assert isinstance(indexed, IndexedCorpus) and _dump(a) == _dump(b)


def test_a_changed_text_source_updates_the_index(tmp_path, monkeypatch):
    root = _write(tmp_path / "repo", GROOVY_REPO)
    _both(root, tmp_path / "cache", GROOVY_REPORT, monkeypatch)
    (root / "src/main/groovy/com/acme/Line.groovy").write_text(
        "package com.acme\n\nclass Line {\n    double price\n    int quantity\n\n"
        "    def averagePrice() { price / quantity }\n}\n")
    _, indexed, _, after = _both(root, tmp_path / "cache", GROOVY_REPORT, monkeypatch)
    assert indexed.stats.mode == "patched" and indexed.stats.counted == 1
    line = next(c for c in after.candidates if c.path == "src/main/groovy/com/acme/Line.groovy")
    assert "averagePrice" in [s.span.qualname for s in line.symbols]


async def test_offline_investigation_of_a_groovy_repository_cites_the_dividing_line(tmp_path):
    root = _write(tmp_path / "repo", GROOVY_REPO)
    title, _, body = GROOVY_REPORT.partition("\n")
    result = await investigate(BugReport(title=title, body=body), root, explorer=OfflineExplorer())
    diagnosis = result.diagnosis
    assert diagnosis.termination.reason == StopReason.done, diagnosis.termination
    first = diagnosis.affected_files[0]
    assert (first.path, first.symbol, first.role) == ("src/main/groovy/com/acme/Invoice.groovy", "averagePrice", Role.cause)
    assert first.line_start <= 13 <= first.line_end


CS_PRICING = ("namespace Shop\n{\n    [Serializable]\n    public class Pricing\n    {\n        public Pricing(int rate)\n"
              "        {\n        }\n\n        public int ApplyDiscount(int price,\n                                 int percent)\n"
              "        {\n            foreach (var rule in rules) { }\n            return price - price * percent / 10;\n"
              "        }\n    }\n}\n")  # fmt: skip


GROOVY_PRICING = ("package shop\n\n@CompileStatic\nclass Pricing {\n    Pricing(int rate) {\n    }\n\n"
                  "    int applyDiscount(int price,\n                      int percent) {\n"
                  "        for (rule in rules) { }\n        return price - price * percent / 10\n    }\n}\n")  # fmt: skip


def test_a_method_which_takes_no_keyword_is_a_definition_on_its_names_line():
    spans = regex_definitions("src/Pricing.groovy", GROOVY_PRICING)
    assert [(s.qualname, s.kind, s.start_line) for s in spans] == [
        ("Pricing", "class", 4), ("Pricing", "function", 5), ("applyDiscount", "function", 8)]


async def test_a_csharp_method_is_a_definition_of_the_map_and_the_investigation_cites_it(tmp_path):
    root = _write(tmp_path / "repo", {"src/Pricing.cs": CS_PRICING,
                                      "src/Cart.cs": "public class Cart {\n  public int Total() { return 0; }\n}\n"})
    assert "10-15 public int ApplyDiscount(int price," in build_repo_map(root).text
    report = BugReport(title="ApplyDiscount returns 0 for a 10% discount", body="ApplyDiscount(1000, 10) gives 0.")
    first = (await investigate(report, root, explorer=OfflineExplorer())).diagnosis.affected_files[0]
    assert (first.path, first.symbol) == ("src/Pricing.cs", "Pricing.ApplyDiscount")
    assert first.line_start <= 14 <= first.line_end


def test_a_text_source_enters_by_its_own_score_without_moving_the_parsed_files(tmp_path):
    files = {
        "shop/orders.py": "def average(orders):\n    return sum(o.total for o in orders) / len(orders)\n",
        "shop/invoice.py": "def invoice_total(lines):\n    return sum(line.price for line in lines)\n",
        "shop/util.py": "def clamp(value, low, high):\n    return max(low, min(value, high))\n",
    }
    report = "average of orders divides by zero\n\nThe invoice total of no orders is a ZeroDivisionError in average."
    root = _write(tmp_path / "repo", files)

    def file_parts() -> dict[str, float]:
        corpus, pagerank = build_corpus(root, build_repo_map(root), tmp_path / "terms")
        ranking = rank(corpus, report, Focus.from_text(report), pagerank=pagerank)
        return {c.path: c.parts.get("file", 0.0) for c in ranking.candidates}

    before = file_parts()
    (root / "shop/Orders.groovy").write_text("def average(orders) { orders.sum { it.total } / orders.size() }\n"
                                         "// average orders invoice total zero division\n")
    after = file_parts()
    assert "shop/Orders.groovy" in after
    parsed = sorted(before, key=before.get, reverse=True)
    assert sorted(parsed, key=after.get, reverse=True) == parsed
    ratio = [after[p] / before[p] for p in parsed if before[p]]
    assert max(ratio) - min(ratio) < 1e-9, "the parsed files' BM25 is scaled, never reordered by the Groovy file"


def _age(root: Path) -> None:
    """Every file and directory under `root` last modified long ago (out of any racy window)."""
    for path in [*root.rglob("*"), root]:
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))


def test_an_unchanged_text_source_is_not_read_to_know_it_is_unchanged(tmp_path, monkeypatch):
    root = _write(tmp_path / "repo", GROOVY_REPO)
    _age(root)
    first = open_indexed(root, build_repo_map(root, cache_dir=tmp_path / "map"), tmp_path / "index")
    assert first.stats.mode == "built"
    read = []
    original = Gate.read_bytes
    monkeypatch.setattr(Gate, "read_bytes", lambda self, rel, **kw: read.append(rel) or original(self, rel, **kw))
    again = open_indexed(root, build_repo_map(root, cache_dir=tmp_path / "map"), tmp_path / "index")
    assert again.stats.mode == "unchanged" and read == []
    invoice = root / "src/main/groovy/com/acme/Invoice.groovy"
    guarded = GROOVY_REPO["src/main/groovy/com/acme/Invoice.groovy"].replace("lines.size()", "Math.max(lines.size(), 1)")
    invoice.write_text(guarded)
    edited = open_indexed(root, build_repo_map(root, cache_dir=tmp_path / "map"), tmp_path / "index")
    assert edited.stats.mode == "patched" and edited.stats.counted == 1  # just written: read, not trusted by stat


def test_the_map_lists_text_sources_by_its_own_walk_and_ignore_rules(tmp_path):
    root = _write(tmp_path / "repo", GROOVY_REPO | {"build/Generated.groovy": "class Generated\n", ".gitignore": "build/\n"})
    _age(root)
    cache = tmp_path / "cache"
    cold = build_repo_map(root, cache_dir=cache)
    warm = build_repo_map(root, cache_dir=cache)
    expected = sorted(p for p in GROOVY_REPO if p.endswith(".groovy"))
    assert [f.path for f in cold.text_sources] == [f.path for f in warm.text_sources] == expected
    assert warm.stats.walk == "snapshot" and [f.path for f in warm.files] == ["scripts/release.py"]
    assert all(f.size == len(GROOVY_REPO[f.path].encode()) for f in warm.text_sources)
