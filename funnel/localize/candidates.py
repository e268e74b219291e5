"""What the offline ranking produces and the knobs it runs with: `RankConfig`, `Candidate`, `CandidateSymbol`,
`CandidateRanking`."""

from __future__ import annotations

from dataclasses import dataclass, field

from funnel.localize.corpus import SymbolSpan

__all__ = ("CONFIDENCE_FEATURES", "CONTEXT_PARTS", "Candidate", "CandidateRanking", "CandidateSymbol", "RankConfig",
           "report_title")

CONTEXT_PARTS = frozenset({"pagerank", "history"})
"""Signals that say where a project's work happens, not that the report matched the code: alone no evidence."""

CONFIDENCE_FEATURES: tuple[str, ...] = (
    "margin", "frame", "message", "path", "mention", "constant", "stem", "module_path", "history",
)
"""What the calibration model may read of a ranking (`CandidateRanking.confidence_features`): the prime suspect's
lead over the next file (its share of the prime suspect's evidence), and for each pointer signal whether it points
at the prime suspect (1.0) or not (0.0)."""


@dataclass(frozen=True)
class RankConfig:
    """Knobs of the fusion; the defaults are what `bench/tune_offline.py` measured best on the dev split."""

    k1: float = 1.2
    """BM25 term-frequency saturation."""
    b: float = 0.75
    """BM25 length normalization."""
    w_file: float = 1.4
    """Weight of file-level BM25 (normalized to the best file)."""
    w_symbol: float = 0.8
    """Weight of the best symbol-level BM25 in the file (normalized to the best symbol)."""
    w_pagerank: float = 0.1
    """Weight of the repo map's PageRank (normalized to the best file)."""
    w_history: float = 0.2
    """Weight of the history signal: files changed by past commits whose messages resemble the report (normalized
    to the best file; see `history.history_scores`; 0 turns it off)."""
    w_frame: float = 1.2
    """Boost of the innermost in-repository stack frame's file (outer frames get less)."""
    frame_decay: float = 0.4
    """Share of the frame boost that outer frames get (divided by their depth)."""
    w_mention: float = 0.25
    """Boost of files defining names mentioned in the report (rarer and qualified names count more)."""
    prose_mention_factor: float = 0.5
    """Multiplier of `w_mention` for a plain lowercase word of the prose (`visible`, `request`) that names a
    definition: a word of English names a definition by coincidence more often than a name written as code does."""
    w_import: float = 0.35
    """Boost of files whose module path a code block imports."""
    w_path: float = 0.6
    """Boost of files whose path the report mentions."""
    w_link: float = 1.0
    """Bonus of the definition holding a line the report points at outside a stack trace (a code host's
    permalink, "line 77 of a/b.py"); the line becomes evidence the report cites."""
    w_quote: float = 1.0
    """Bonus of the definition holding a source line the report quotes (a whole line of at most three code
    files; split among them); the line becomes evidence the report cites."""
    w_module_path: float = 0.3
    """Boost of the module file a fully qualified name of the prose is written under, when the name is defined there
    (`a.b.c.func` → `a/b/c.py`; `com.x.Gson.toJson` → `.../com/x/Gson.java`): the reporter pointing at the code.
    The same name in the report's code is usage (`on_delete=django.db.models.deletion.CASCADE`) and does not count."""
    w_stem: float = 0.3
    """Boost of files whose name (without extension) the report writes."""
    w_constant: float = 0.75
    """Boost of files assigning, at top level, a constant or setting the report names."""
    w_message: float = 0.3
    """Boost of files containing a literal message quoted in the report."""
    w_title_path: float = 0.6
    """Order-only lift of files whose name or directory name carries a term of the title (rarer path terms
    count more; see `pathterms.path_term_scores`)."""
    w_sibling: float = 0.1
    """Order-only lift of files in the directory of one of the `lift_top` best code files (× those files' summed
    score relative to the first, / `lift_top`)."""
    w_title_bm25: float = 0.4
    """Order-only lift by BM25 over the title's terms alone, relative to the best file: in a long report the
    one-line summary is outweighed by tracebacks and code, and this gives it a share of its own."""
    w_title_def: float = 0.3
    """Order-only lift of files defining a name the title writes as code (`Derivative`, `JSONField`, `get_fields`:
    not a plain lowercase word) when at most three code files define it; each such name counts 1 / those files."""
    w_cochange: float = 0.0
    """Order-only lift of the files that past commits changed together with the leading suspects (the share of
    a leader's commits that changed the file too, × the leader's score relative to the first, summed over
    `cochange_top` leaders, at most 1): a fix often spans files that always change together. Applied last,
    after the learned reorder, and never to the first file."""
    cochange_top: int = 1
    """Leading files whose co-change partners `w_cochange` lifts."""
    cochange_confidence: float = 0.0
    """Partners are lifted only when the ranking's own confidence (`CandidateRanking.confidence`, before
    calibration) is at least this: the partners of a wrong leading file are wrong too."""
    cochange_pool: int = 0
    """Only partners already among this many best files are lifted (0: wherever they rank): a partner of a
    wrong leading file that nothing in the report points at stays where it is."""
    lift_top: int = 3
    """Leading code files whose directories count for `w_sibling`."""
    lift_pool: int = 50
    """Best-ranked files that the order-only lifts may move."""
    lift_keep_first: bool = True
    """The order-only lifts reorder only the files after the first (file Acc@1 is left to the evidence)."""
    test_factor: float = 0.3
    """Multiplier of scores of test files."""
    doc_factor: float = 0.4
    """Multiplier of scores of docs, examples and non-code files."""
    tooling_factor: float = 0.4
    """Multiplier of scores of the project's tooling (build, release and CI scripts, packaging, bundler and
    test-runner configuration: `file_kinds.is_tooling`)."""
    generated_factor: float = 0.3
    """Multiplier of scores of generated files (`Corpus.generated`: a generator's mark in the file's head)."""
    vendored_factor: float = 0.3
    """Multiplier of scores of third-party code copied into the tree (`Corpus.vendored`: `vendor/`, `third_party/`,
    `extern/`..., or a nested package declaring its own `__version__`)."""
    code_term_weight: float = 2.0
    """Query weight of terms written as code (backticks, code blocks) relative to prose terms."""
    title_term_weight: float = 2.0
    """Query weight of terms of the first line (the title)."""
    strip_frame_lines: bool = True
    """Leave stack-frame lines out of the lexical query (frames count through `w_frame`)."""
    symbol_pool: int = 300
    """Files (by file BM25 and evidence) whose symbols are scored."""
    detailed: int = 20
    """Top candidates given their ranked definitions."""
    symbols_kept: int = 6
    """Ranked definitions kept per detailed candidate."""
    definition_coverage: float = 0.3
    """How a file's definitions are ordered (not how the file scores): each definition's BM25 × (its share of the
    query's IDF-weighted terms) ** this. BM25 lets a few report terms repeated through a long body outweigh a
    definition holding more of the report's distinct terms; the share favours the one covering more of the
    report. 0: BM25 alone. Chosen on the tune halves of SWE-bench Lite and the other-language set
    (docs/offline.md, "The 51st round")."""
    test_definitions: bool = True
    """Scale the score of a test written inside a code file (`file_kinds.is_test_definition`: a Rust `mod tests`, a
    `test_*` function) by `test_factor`, as a test file's is: the fix goes into the code the test exercises."""
    learned_files: bool = True
    """Reorder the best files with the learned file model (`funnel.localize.learned`, fitted on real fix commits)
    after the fusion and the lifts, when the prime suspect is written in one of `learned_languages`."""
    learned_languages: tuple[str, ...] = ("c", "go", "java", "javascript", "typescript", "tsx")
    """Languages (`repomap.languages` names, of the prime suspect) whose rankings the file model reorders; empty:
    every language. Chosen on the tune halves: it lifts file Acc@5 for these and lowers it for Python (SWE-bench
    Lite), C++ and Rust (docs/offline.md, "The learned reranker")."""
    learned_tooling_penalty: float = 4.0
    """Subtracted from the file model's score of the project's tooling (`file_kinds.is_tooling`: build, release and
    CI scripts, bundler configuration). The model learned from commits, which fix tooling as often as code
    (its `is_tooling` weight is +0.015), so it undid the fusion's `tooling_factor` and put a theme-preview
    script among the best five of 10 of 27 JavaScript reports; with the penalty such a file moves up only on far
    stronger evidence."""
    learned_keep_first: bool = True
    """The file model reorders only the files after the first (file Acc@1 is left to the evidence, as with the
    order-only lifts)."""
    learned_functions: bool = False
    """Order the best files' definitions (what the report cites, and the function ranking) with the learned
    function model instead of the definition BM25 and the file ratio."""
    learned_in_file: bool = False
    """The function model orders each file's definitions only: every place keeps its fused score, so how the
    files' definitions interleave in the citations stays the fusion's (`learned_functions` on; measured, and
    off: docs/offline.md, "The learned reranker")."""
    ranker: str = ""
    """The learned models' file (empty: the shipped `funnel/localize/ranker.json`)."""
    cite_file_power: float = 4.0
    """Citation order across files: 0 cites the prime suspect's best definitions, then one per next file; above
    0 the definitions of the top files are merged by (file score / best file score) ** this ×
    (definition score / the file's best) ** `cite_symbol_power`, after the prime suspect's first
    `cite_prime_first`."""
    cite_symbol_power: float = 1.0
    """See `cite_file_power`."""
    cite_prime_first: int = 2
    """See `cite_file_power`."""


@dataclass
class CandidateSymbol:
    """A definition of a candidate file worth reading, with why."""

    span: SymbolSpan
    """The definition."""
    score: float
    """Fused symbol score."""
    reasons: list[str] = field(default_factory=list)
    """Evidence that pointed here."""
    learned: float | None = None
    """The learned function model's score (`RankConfig.learned_functions`, ordering across files), else None (also
    with `learned_in_file`: the place keeps its fused score)."""


@dataclass
class Candidate:
    """A candidate file with its fused score and the evidence behind it."""

    path: str
    """Repository-relative path."""
    score: float
    """Fused score (higher is better)."""
    parts: dict[str, float] = field(default_factory=dict)
    """Each signal's contribution."""
    symbols: list[CandidateSymbol] = field(default_factory=list)
    """Best definitions in this file, best first."""
    lines: list[int] = field(default_factory=list)
    """Lines the evidence points at directly (stack frames, literal messages)."""
    reasons: list[str] = field(default_factory=list)
    """Human-readable evidence."""
    quoted_line: int | None = None
    """The line holding the text of a message the report quotes (the `messages` signal), when it found one."""
    lift: float = 0.0
    """Part of `score` added by the order-only lifts (`w_title_path`, `w_sibling`, `w_title_bm25`, `w_title_def`);
    `citation_order` and the confidence leave it out, so a lifted file enters the top five without taking more
    citation slots."""


@dataclass
class CandidateRanking:
    """Candidate files for a report, best first, with a margin-based confidence."""

    candidates: list[Candidate]
    """Ranked files."""
    confidence: float
    """0..1 from the score margin and the strength of direct evidence."""
    query_terms: dict[str, float]
    """The weighted query."""
    config: RankConfig = field(default_factory=RankConfig)
    """The knobs it was ranked with (citation order reads them)."""
    confidence_features: dict[str, float] = field(default_factory=dict)
    """The values of `CONFIDENCE_FEATURES` for this ranking, what a calibration model turns into the probability
    that the prime suspect is right (empty: no candidate)."""

    def top(self, k: int = 5) -> list[Candidate]:
        """The k best candidates."""
        return self.candidates[:k]


def report_title(text: str) -> str:
    """The first line of a report's text (its title, as `BugReport.text` puts it first)."""
    return text.strip().split("\n", 1)[0]
