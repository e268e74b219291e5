"""What a file is by its path: the project's own code, a test, a doc or example (or a non-code file), the project's
tooling; and how much that scales its score in the ranking (`path_factor`)."""

from __future__ import annotations

import re

from funnel.localize.candidates import RankConfig
from funnel.localize.corpus import Corpus

__all__ = ("EXAMPLE_REASON", "about_examples", "is_code", "is_doc", "is_example", "is_test", "is_test_definition",
           "is_tooling", "path_factor")

_TEST_PATH = re.compile(
    r"(?:^|/)(?:\w+_)?(?:tests?|testing|__tests__|spec|specs|test_?data|fixtures?)(?:_\w+)?/|(?:^|/)test_[^/]*$|_tests?\.[a-z]+$|"
    r"\.(?:test|spec)\.[jt]sx?$|(?:^|/)conftest\.py$|(?:Tests?|Spec)\.(?:java|kt|cs|php|swift|scala)$|Suite\.scala$"
    r"|(?:^|/)(?:[\w-]+\.)*(?:Unit|Integration|Functional)?Tests?/|(?:^|/)[a-z]+Test/"
)
"""A test file's path. Beside the lower-case folders and the names most languages use: the capitalised `Tests/` of
SwiftPM and PHP projects, a .NET test project (`Newtonsoft.Json.Tests/`, `App.UnitTests/`), a Kotlin Multiplatform
source set (`jvmTest/`, `commonTest/`), PHPUnit's `FooTest.php`, XCTest's `FooTests.swift`, ScalaTest's and
MUnit's `FooSpec.scala`, `FooSuite.scala`."""
_DOC_PATH = re.compile(
    r"(?:^|/)(?:docs?|examples?|samples?|benchmarks?|asv_bench|tutorials?|galleries"
    r"|Docs?|Documentation|Examples?|Samples?|Benchmarks?)/"
)
_EXAMPLE_PATH = re.compile(r"(?:^|/)(?:[Ee]xamples?|[Ss]amples?)/")
_EXAMPLE_SUBJECT = re.compile(r"(?<!for )\bexamples?\b", re.IGNORECASE)
"""A title whose subject is an example program ("fix the downloads example"); "for example" is a phrase, and
"sample" a domain word too often (a statistician's samples, an audio sample) to say the same."""
EXAMPLE_REASON = "an example, which the title is about"
"""The reason an example program is a suspect of a report about an example (`about_examples`)."""
_TOOLING_PATH = re.compile(
    r"(?:^|/)(?:(?:scripts?|sandbox|build_tools|ci|\.github|\.circleci|hack|devtools)/"
    r"|(?:setup|setupext|noxfile|fabfile)\.py$|build\.rs$|[Gg](?:ulp|runt)file\.[cm]?[jt]s$"
    r"|[\w.-]+\.conf(?:ig)?\.[cm]?[jt]s$)"
)
"""The project's tooling rather than its code: build, release and CI scripts, packaging, bundler and test-runner
configuration."""
_NON_CODE = re.compile(r"\.(?:txt|rst|md|json|ya?ml|toml|cfg|ini|html|css|svg|csv|lock|xml|pyi)$|\.d\.[cm]?ts$")
_TEST_MODULES = frozenset({"test", "tests"})


def is_test(path: str) -> bool:
    """A test file, by its path."""
    return bool(_TEST_PATH.search(path))


def is_test_definition(qualname: str) -> bool:
    """A test written inside a code file, by its qualified name: a `test_*` function or anything in a `tests`
    module (Rust's `#[cfg(test)] mod tests`)."""
    parts = qualname.split(".")
    return parts[-1] == "tests" or parts[-1].startswith("test_") or any(p in _TEST_MODULES for p in parts[:-1])


def is_doc(path: str) -> bool:
    """A doc, example or non-code file, by its path."""
    return bool(_DOC_PATH.search(path) or _NON_CODE.search(path))


def is_example(path: str) -> bool:
    """An example or sample program, by its path (its code, not its README or data)."""
    return bool(_EXAMPLE_PATH.search(path)) and not _NON_CODE.search(path)


def about_examples(title: str) -> bool:
    """Whether a report's title is about an example program, so the project's examples are code it may concern."""
    return bool(_EXAMPLE_SUBJECT.search(title))


def is_tooling(path: str) -> bool:
    """A build, release or CI script, or a tool's configuration, by its path."""
    return bool(_TOOLING_PATH.search(path))


def is_code(path: str) -> bool:
    """Neither a test nor a doc (or non-code file) by its path."""
    return not is_test(path) and not is_doc(path)


def path_factor(path: str, config: RankConfig, corpus: Corpus, *, examples: bool = False) -> float:
    """The multiplier of a file's scores by what it is: a test, a doc (or non-code file), the project's tooling,
    generated, vendored, or the project's own code. With `examples` (the report is about one, `about_examples`)
    an example program counts as the project's code."""
    if is_test(path):
        return config.test_factor
    documentation = corpus.documentation
    example = examples and is_example(path)
    if not example and (path in documentation.on or (path not in documentation.off and is_doc(path))):
        return config.doc_factor
    if is_tooling(path):
        return config.tooling_factor
    if path in corpus.generated:
        return config.generated_factor
    return config.vendored_factor if path in corpus.vendored else 1.0

