"""What the offline report asks the reporter when its evidence is weak: only what the report does not tell already,
in the terms of its kind (a fault's error output, steps and version; a request's intended use; a question's attempt;
a slowdown's sizes and timings).
"""

from __future__ import annotations

import re

from repomap.focus import Focus
from schemas.enums import Classification
from schemas.text import without_blocks

__all__ = ("open_questions", "states_error", "states_expectation", "states_steps", "states_version")

_VERSION = re.compile(
    r"\bversions?\b[^\n]{0,40}?\d+(?:\.\d+)+"  # "JQ version 1.6", "Version: 2.9.0"
    r"|\bv\d+(?:\.\d+)+\b"  # v1.5.0
    r"|(?<![\w.])\d+\.\d+\.\d+"  # 1.28.2, jackson-core-2.9.0.pr2
    r"|@\d+(?:\.\d+)+\b"  # axios@1.5.0
    r"|\b(?:commit|sha|revision)\b\W{0,3}[0-9a-f]{7,40}\b"
    r"|\b(?:main|master|default|development)\s+branch\b",
    re.I,
)
"""A project version, release or commit the report's words name."""
_PASTED_VERSION = re.compile(
    r"^[ \t]*(?!(?:i?python|node|java|openjdk|ruby|php|go|rustc|gcc|clang)\b)[A-Za-z][\w.-]*[ \t]*:?[ \t]*v?\d+\.\d+\.\d+",
    re.M | re.I)
"""A line of pasted environment output naming a package's version (`xarray: 0.16.0`, `astroid 2.5.6`; a runtime's,
`Python 3.6.0`, is an interpreter's banner); two in one block make the output of `show_versions()` or `--version`."""
_EXPECTATION = re.compile(
    r"\bexpect(?:s|ed|ing|ation|ations)?\b|\bshould(?:n't| not)?\b|\binstead\b|\bsupposed to\b|\bwould like\b"
    r"|\bought to\b|\bintended\b|\bcorrect (?:behaviou?r|output|result)\b",
    re.I,
)
"""Words stating what the reporter wanted to happen."""
_STEPS = re.compile(
    r"^[ \t>*#_-]*(?:steps to reproduce|to reproduce|how to reproduce|reproduction(?: steps)?|repro(?:duce)?)\b"
    r"|^[ \t]*1[.)][ \t]+\S[^\n]*\n(?:[^\n]*\n){0,6}?[ \t]*2[.)][ \t]+\S",
    re.I | re.M,
)
"""A reproduction section's heading, or a numbered list of at least two steps."""
_EMPTY_FIELD = re.compile(r"^#+[^\n]*\n\s*_No response_\s*$", re.M)
"""A field of a GitHub issue form the reporter left empty: its heading says nothing of the report."""
_ERROR_WORDS = re.compile(
    r"\b\w*(?:error|exception)s?\b|\bpanic|\bcrash|\bsegfault|\bsegmentation fault|\btraceback|\babort|\bthrows?\b",
    re.I,
)
"""Words saying the program fails with an error, not only behaves wrongly."""

_TRACE = "Can you share the full error output or stack trace?"
_ERROR_IF_ANY = "Does it fail with an error? If so, can you share the full output or stack trace?"
_SNIPPET = "Can you share a minimal snippet or the exact steps that reproduce the problem?"
_VERSION_AND_EXPECTED = "Which version or commit shows the problem, and what did you expect to happen instead?"
_VERSION_ONLY = "Which version or commit shows the problem?"
_EXPECTED_ONLY = "What did you expect to happen instead?"
_WHERE = "Which part of the project (module, command, page) is involved?"
_USE = "Can you show how you would use it: the call, option or configuration you would write, and what it should produce?"
_TRIED = "Can you show what you tried: the call, option or configuration you wrote, and what you expected it to produce?"
_SIZES = "Can you share the input (its size and shape) and the timings or profile that show the slowdown?"


def _outside_code(text: str, focus: Focus) -> str:
    """The report without its code blocks and its issue form's empty fields: what its own words say."""
    return _EMPTY_FIELD.sub("", without_blocks(text, focus.code_blocks))


def states_version(text: str, focus: Focus) -> bool:
    """Whether the report's words name a version, release or commit of the project (or the branch it was seen on),
    or a code block holds pasted environment output naming versions (`xarray: 0.16.0` and `numpy: 1.19.1`)."""
    return (_VERSION.search(_outside_code(text, focus)) is not None
            or any(len(_PASTED_VERSION.findall(block)) >= 2 for block in focus.code_blocks))


def states_error(text: str, focus: Focus) -> bool:
    """Whether the report says the program fails with an error (an error line, an error's name, "panics", "crashes",
    "throws"), not only that it behaves wrongly."""
    return bool(focus.errors) or _ERROR_WORDS.search(_outside_code(text, focus)) is not None


def states_expectation(text: str, focus: Focus) -> bool:
    """Whether the report's words say what should have happened ("expected", "should", "instead", …)."""
    return _EXPECTATION.search(_outside_code(text, focus)) is not None


def states_steps(text: str, focus: Focus) -> bool:
    """Whether the report holds steps to reproduce: a code block, a reproduction heading or a numbered list."""
    return bool(focus.code_blocks) or _STEPS.search(text) is not None


def open_questions(text: str, focus: Focus, kind: Classification = Classification.bug, *,
                   none_found: bool = False) -> list[str]:
    """The questions a weak diagnosis asks the reporter of `text`: for a fault, the error output, the steps, the
    version and the expected behaviour it leaves out; for a feature request, how the new behaviour would be used;
    for a question, what was tried; for a slowdown, sizes and timings; with `none_found` (nothing in the repository
    matched) also which part of the project is involved."""
    out: list[str] = []
    if kind in (Classification.feature_request, Classification.question):
        if not focus.code_blocks:
            out.append(_USE if kind == Classification.feature_request else _TRIED)
    else:
        if kind == Classification.performance:
            out.append(_SIZES)
        elif not focus.frames:
            out.append(_TRACE if kind == Classification.crash or states_error(text, focus) else _ERROR_IF_ANY)
        if not states_steps(text, focus):
            out.append(_SNIPPET)
        version, expected = states_version(text, focus), states_expectation(text, focus)
        if not version or not expected:
            out.append(_VERSION_AND_EXPECTED if not version and not expected
                       else _VERSION_ONLY if not version else _EXPECTED_ONLY)
    if none_found:
        out.append(_WHERE)
    return out
