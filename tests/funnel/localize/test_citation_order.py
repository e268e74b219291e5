"""Which definitions a diagnosis cites, in which order: the prime suspect's best first, close files merged in."""

from __future__ import annotations

from funnel.localize.citations import affected_entries
from funnel.localize.corpus import SymbolSpan
from funnel.localize.rank import Candidate, CandidateRanking, CandidateSymbol, RankConfig


def _ranking(files: dict[str, tuple[float, list[float]]], **config) -> CandidateRanking:
    """A hand-made ranking: path -> (file score, its definitions' scores, best first)."""
    cands = []
    for path, (score, sym_scores) in files.items():
        hits = [CandidateSymbol(SymbolSpan(f"f{n}", f"f{n}", "function", 10 * n + 1, 10 * n + 5), s) for n, s in enumerate(sym_scores)]
        cands.append(Candidate(path=path, score=score, symbols=hits))
    return CandidateRanking(cands, 0.5, {}, RankConfig(**config))


def test_citation_order_default_is_prime_suspect_then_one_per_file():
    ranking = _ranking({"a.py": (2.0, [1.0, 0.9, 0.8, 0.7, 0.6]), "b.py": (1.9, [1.0, 0.95]), "c.py": (1.0, [])},
                       cite_file_power=0.0)
    assert affected_entries(ranking) == [("a.py", "f0"), ("a.py", "f1"), ("a.py", "f2"), ("a.py", "f3"),
                                         ("b.py", "f0"), ("c.py", None)]


def test_citation_order_merges_close_files_and_keeps_file_order():
    close = _ranking({"a.py": (2.0, [1.0, 0.9, 0.5, 0.4]), "b.py": (1.9, [1.0, 0.95]), "c.py": (1.8, [1.0]),
                      "d.py": (0.5, [1.0])})
    entries = affected_entries(close)
    # the prime suspect's two best first, then the close second and third files before its weaker definitions
    assert entries[:5] == [("a.py", "f0"), ("a.py", "f1"), ("b.py", "f0"), ("b.py", "f1"), ("c.py", "f0")]
    assert entries[5:] == [("d.py", "f0")]  # every top file is cited, in ranked order
    paths = list(dict.fromkeys(p for p, _ in entries))
    assert paths == ["a.py", "b.py", "c.py", "d.py"]
    far = _ranking({"a.py": (3.0, [1.0, 0.9, 0.8, 0.7]), "b.py": (1.5, [1.0])})
    assert affected_entries(far) == [("a.py", "f0"), ("a.py", "f1"), ("a.py", "f2"), ("a.py", "f3"), ("b.py", "f0")]
