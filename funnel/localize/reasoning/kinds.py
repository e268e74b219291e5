"""The error-semantics table: error kinds per language and the code shapes that raise them (plain data).

A kind is selected when its `trigger` matches the report (the error name or message); its shapes are
tree-sitter queries run over the suspect definitions, each capturing `@hit` (the node whose line is cited)
and optionally `@target`, `@object`, `@name` (words for the explanation). A shape's `check` names a post-filter
in `funnel.localize.reasoning.checks` that decides whether a match really has the shape and may add words.
Nothing here knows a repository: the shapes are the language's own semantics.

Templates use `{code}` (the cited line), `{line}` (`file:line`), `{target}`, `{object}`, `{name}`, `{arg}`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("ErrorKind", "Shape", "KINDS", "PY", "JS", "JAVA", "GO", "RUST", "C", "RUBY", "CSHARP", "KOTLIN", "PHP",
           "SWIFT")

PY = ("python",)
JS = ("javascript", "typescript", "tsx")
JAVA = ("java",)
GO = ("go",)
RUST = ("rust",)
C = ("c", "cpp")
RUBY = ("ruby",)
CSHARP = ("csharp",)
KOTLIN = ("kotlin",)
PHP = ("php",)
SWIFT = ("swift",)


@dataclass(frozen=True)
class Shape:
    """One code shape that raises a kind of error, in some languages."""

    languages: tuple[str, ...]
    """Grammar names (`repomap.languages`) the query is written for."""
    query: str
    """Tree-sitter query capturing `@hit` (plus optional word captures)."""
    mechanism: str
    """What this shape does wrong, in words (template)."""
    change: str
    """The edit proposed at the cited line, in words (template)."""
    check: str = ""
    """Name of a post-filter in `checks.CHECKS` (empty: every match counts)."""
    suggestion: str = ""
    """A code suggestion (template); empty when the rule knows none."""
    weight: float = 1.0
    """How specific the shape is to the error (a `datetime(...)` without tzinfo beats any subscript)."""


@dataclass(frozen=True)
class ErrorKind:
    """An error kind: what in a report selects it and the shapes that raise it."""

    name: str
    """Stable id (`python.naive_aware`)."""
    error: str
    """The error as a reader knows it."""
    trigger: str
    """Regular expression (case-insensitive) over the report text; group `name` (optional) names the
    attribute, key or method the message mentions."""
    shapes: tuple[Shape, ...]
    """Shapes that raise it."""


_PY_ATTRIBUTE = "(attribute object: (_) @object attribute: (identifier) @name) @hit"
_PY_CALL = ("(call function: [(identifier) @callee (attribute attribute: (identifier) @callee)] @fn "
            "arguments: (argument_list) @args) @hit")

KINDS: tuple[ErrorKind, ...] = (
    ErrorKind("python.naive_aware", "TypeError (naive and aware datetimes)",
              r"offset-naive and offset-aware|naive and aware|aware and naive|can't compare offset|tzinfo|USE_TZ",
              (Shape(PY, _PY_CALL, check="datetime_without_tzinfo", weight=3.0,
                     mechanism="`{target}` is built with `{fn}(...)` {source} but without a `tzinfo` ({line}), so "
                               "comparing or subtracting it with an aware datetime raises `TypeError`",
                     change="pass the timezone of the aware value when building `{target}` ({line})",
                     suggestion="{fn}({argtext}, tzinfo={tzsource})"),
               Shape(PY, _PY_CALL, check="naive_now", weight=2.0,
                     mechanism="`{fn}()` at {line} returns a naive datetime, which cannot be compared with an "
                               "aware one",
                     change="use an aware current time at {line} (e.g. `timezone.now()` / `datetime.now(tz)`)"))),
    ErrorKind("python.zero_division", "ZeroDivisionError", r"ZeroDivisionError|division by zero|divide by zero|modulo by zero",
              (Shape(PY, "[(binary_operator operator: [\"/\" \"//\" \"%\"] right: (_) @object) "
                         "(augmented_assignment operator: [\"/=\" \"//=\" \"%=\"] right: (_) @object)] @hit",
                     check="divisor_can_be_zero", weight=2.0,
                     mechanism="{code_short} divides by `{object}` ({line}), which is zero for an empty input",
                     change="guard the division at {line} against `{object}` being zero (empty input)",
                     suggestion="... if {object} else 0"),)),
    ErrorKind("python.key_error", "KeyError", r"KeyError(?::\s*['\"]?(?P<name>[\w.-]+))?",
              (Shape(PY, "(subscript value: (_) @object subscript: [(string) (identifier) (attribute)] @name) @hit",
                     check="key_named", weight=1.5,
                     mechanism="`{object}[{name}]` at {line} looks the key up without a default, so a missing key "
                               "raises `KeyError`",
                     change="handle a missing key at {line} (a default or an explicit check)",
                     suggestion="{object}.get({name})"),)),
    ErrorKind("python.index_error", "IndexError", r"IndexError|list index out of range|index out of range|pop from empty",
              (Shape(PY, "(subscript value: (_) @object subscript: [(integer) (unary_operator) (identifier) "
                         "(binary_operator)] @name) @hit", weight=1.2,
                     mechanism="`{object}[{name}]` at {line} assumes the sequence is long enough, so an empty or "
                               "short one raises `IndexError`",
                     change="check the length of `{object}` before indexing at {line}"),
               Shape(PY, "(call function: (attribute object: (_) @object attribute: (identifier) @callee) "
                         "(#eq? @callee \"pop\")) @hit", weight=1.0,
                     mechanism="`{object}.pop()` at {line} fails on an empty sequence",
                     change="check that `{object}` is not empty before popping at {line}"))),
    ErrorKind("python.missing_attribute", "AttributeError (missing attribute)",
              r"(?:'(?!NoneType')[\w.]+' object|module '[\w.]+') has no attribute '(?P<name>\w+)'",
              (Shape(PY, _PY_ATTRIBUTE,
                     check="name_matches", weight=2.0,
                     mechanism="`{object}.{name}` at {line} reads `{name}`, which `{object}` does not have in the "
                               "reported case: it is set on some paths only, or under another name",
                     change="make sure `{name}` is set before {line} runs (where the object is built), or guard "
                            "the read at {line}",
                     suggestion="getattr({object}, \"{name}\", None)"),)),
    ErrorKind("python.none_attribute", "AttributeError on None",
              r"'NoneType' object has no attribute '(?P<name>\w+)'|NoneType'? object (?:is not|has no)|AttributeError",
              (Shape(PY, _PY_ATTRIBUTE,
                     check="attribute_named", weight=1.5,
                     mechanism="`{object}.{name}` at {line} is read without checking that `{object}` is set, and "
                               "it can be `None` here",
                     change="handle `{object}` being `None` before reading `.{name}` at {line}",
                     suggestion="if {object} is not None: ..."),)),
    ErrorKind("python.recursion", "RecursionError", r"RecursionError|maximum recursion depth",
              (Shape(PY, _PY_CALL, check="calls_enclosing", weight=2.0,
                     mechanism="`{callee}` calls itself at {line} with no case that stops the recursion for this input",
                     change="add the terminating case (or a guard against revisiting the same value) before the "
                            "recursive call at {line}"),)),
    ErrorKind("python.unicode", "UnicodeDecodeError / UnicodeEncodeError",
              r"Unicode(?:De|En)codeError|codec can't (?:de|en)code",
              (Shape(PY, _PY_CALL, check="codec_without_errors", weight=2.0,
                     mechanism="`{fn}(...)` at {line} uses {missing}, so bytes outside the codec raise",
                     change="pass an explicit encoding / `errors=` at {line}"),)),
    ErrorKind("python.unexpected_keyword", "TypeError (unexpected keyword argument)",
              r"got an unexpected keyword argument '(?P<name>\w+)'|unexpected keyword argument",
              (Shape(PY, "(keyword_argument name: (identifier) @name) @hit", check="name_matches", weight=2.0,
                     mechanism="`{name}=` is passed at {line} to a callee that does not accept it",
                     change="accept `{name}` in the callee's signature or stop passing it at {line}"),
               Shape(PY, "(dictionary_splat (_) @object) @hit", weight=0.8,
                     mechanism="`**{object}` at {line} forwards every keyword, including one the callee does not take",
                     change="filter the keywords forwarded at {line}"))),
    ErrorKind("python.none_operand", "TypeError on None",
              r"unsupported operand type\(s\) for \S{1,3}: (?:'NoneType' and|'[\w.]+' and 'NoneType')|"
              r"'NoneType' object is not (?:subscriptable|iterable|callable)|argument of type 'NoneType'",
              (Shape(PY, "[(subscript value: (_) @object) (for_statement right: (_) @object) "
                         "(binary_operator left: (_) @object)] @hit", check="value_can_be_none", weight=1.0,
                     mechanism="`{object}` is used at {line} as if it were set, and it can be `None` here",
                     change="handle `{object}` being `None` at {line}"),)),
    ErrorKind("python.operand_types", "TypeError (operand types)",
              r"unsupported operand type\(s\) for (?P<name>\S{1,3}): '(?!NoneType')[\w.]+' and '(?!NoneType')[\w.]+'",
              (Shape(PY, "(binary_operator left: (_) @object operator: _ @op right: (_) @arg) @hit",
                     check="operator_named", weight=1.5,
                     mechanism="`{object} {op} {arg}` at {line} applies `{op}` to its operands, and in the reported "
                               "case one of them is not of a type `{op}` accepts with the other",
                     change="convert the operand to the type the other expects at {line}, or correct where it is "
                            "set"),)),
    ErrorKind("python.not_subscriptable", "TypeError (not subscriptable)",
              r"'(?!NoneType')[\w.]+' object is not subscriptable",
              (Shape(PY, "(subscript value: (_) @object) @hit", check="value_can_be_none", weight=1.0,
                     mechanism="`{object}` is indexed at {line}, and in the reported case it is not a container",
                     change="check what `{object}` holds before indexing it at {line}, or correct where it is set"),)),
    ErrorKind("python.not_iterable", "TypeError (not iterable)",
              r"'(?!NoneType')[\w.]+' object is not iterable|cannot unpack non-iterable [\w.]+ object",
              (Shape(PY, "[(for_statement right: (_) @object) (assignment left: [(pattern_list) (tuple_pattern)] "
                         "right: (_) @object)] @hit", check="value_can_be_none", weight=1.0,
                     mechanism="`{object}` is iterated or unpacked at {line}, and in the reported case it is not "
                               "iterable",
                     change="check what `{object}` holds before iterating it at {line}, or correct where it is set"),)),
    ErrorKind("python.not_container", "TypeError (`in` on a non-container)",
              r"argument of type '(?!NoneType')[\w.]+' is not iterable",
              (Shape(PY, "(comparison_operator (_) [\"in\" \"not in\"] (_) @object) @hit", check="value_can_be_none",
                     weight=1.5,
                     mechanism="`{object}` is searched with `in` at {line}, and in the reported case it is not a "
                               "container (a string, a list or a dict)",
                     change="check that `{object}` is a container before the `in` test at {line}"),)),
    ErrorKind("js.undefined_property", "TypeError: Cannot read properties of undefined",
              r"Cannot read propert(?:y|ies) of (?:undefined|null)(?: \(reading '(?P<name>\w+)'\))?|"
              r"undefined is not an object|is not a function|is undefined",
              (Shape(JS, "[(member_expression object: (_) @object property: (property_identifier) @name) "
                         "(subscript_expression object: (_) @object index: (_) @name)] @hit",
                     check="attribute_named", weight=1.5,
                     mechanism="`{object}.{name}` at {line} is read without checking that `{object}` is defined",
                     change="guard `{object}` at {line} (optional chaining or an explicit check)",
                     suggestion="{object}?.{name}"),)),
    ErrorKind("java.npe", "NullPointerException", r"NullPointerException|Cannot invoke \"(?P<name>[\w.]+)",
              (Shape(JAVA, "[(method_invocation object: (_) @object name: (identifier) @name) "
                           "(field_access object: (_) @object field: (identifier) @name)] @hit",
                     check="attribute_named", weight=1.5,
                     mechanism="`{object}.{name}` at {line} dereferences `{object}`, which can be null here",
                     change="check `{object}` for null before `.{name}` at {line}",
                     suggestion="if ({object} != null) {{ ... }}"),
               Shape(KOTLIN, "(unary_expression argument: (_) @object operator: \"!!\") @hit", weight=2.0,
                     mechanism="`{object}!!` at {line} throws when `{object}` is null",
                     change="handle `{object}` being null at {line} (`?.`, `?:` or a check) instead of `!!`",
                     suggestion="{object}?."))),
    ErrorKind("java.class_cast", "ClassCastException", r"ClassCastException|cannot be cast to",
              (Shape(JAVA, "(cast_expression type: (_) @name value: (_) @object) @hit", weight=2.0,
                     mechanism="`{object}` is cast to `{name}` at {line} without checking its runtime type",
                     change="check the type with `instanceof` before the cast at {line}",
                     suggestion="if ({object} instanceof {name}) {{ ... }}"),)),
    ErrorKind("java.concurrent_modification", "ConcurrentModificationException", r"ConcurrentModificationException",
              (Shape(JAVA, "(enhanced_for_statement value: (_) @object body: (_ (expression_statement "
                           "(method_invocation object: (_) @target name: (identifier) @name)) @hit))",
                     check="modifies_iterated", weight=2.0,
                     mechanism="`{object}` is modified (`{name}`) at {line} while a for-each loop iterates over it",
                     change="collect the changes and apply them after the loop, or use the iterator's `remove()`, "
                            "at {line}"),)),
    ErrorKind("go.nil_dereference", "nil pointer dereference",
              r"nil pointer dereference|invalid memory address|SIGSEGV",
              (Shape(GO, "[(selector_expression operand: (identifier) @object field: (field_identifier) @name) "
                         "(unary_expression operator: \"*\" operand: (_) @object)] @hit",
                     check="not_package", weight=1.2,
                     mechanism="`{object}` is dereferenced at {line} without a nil check",
                     change="return early when `{object}` is nil before {line}",
                     suggestion="if {object} == nil {{ return ... }}"),)),
    ErrorKind("go.index_range", "index out of range", r"index out of range|slice bounds out of range",
              (Shape(GO, "[(index_expression operand: (_) @object index: (_) @name) "
                         "(slice_expression operand: (_) @object)] @hit", weight=1.2,
                     mechanism="`{object}` is indexed at {line} without checking its length",
                     change="check `len({object})` before indexing at {line}"),)),
    ErrorKind("rust.unwrap", "unwrap() on None / Err",
              r"called `(?:Option|Result)::(?:unwrap|expect)\(\)`|unwrap\(\)|on a `None` value|on an `Err` value",
              (Shape(RUST, "(call_expression function: (field_expression value: (_) @object field: (field_identifier) "
                           "@callee) (#match? @callee \"^(unwrap|expect)$\")) @hit", weight=2.0,
                     mechanism="`{object}.{callee}()` at {line} panics when the value is `None` / `Err`",
                     change="handle the `None` / `Err` case at {line} (`?`, `match`, or `unwrap_or`)",
                     suggestion="{object}?"),)),
    ErrorKind("rust.overflow", "arithmetic overflow", r"attempt to (?:add|subtract|multiply|negate|shift)[\w ]* overflow|overflow",
              (Shape(RUST, "[(binary_expression left: (_) @object [\"+\" \"-\" \"*\" \"<<\"]) "
                           "(compound_assignment_expr left: (_) @object [\"+=\" \"-=\" \"*=\"])] @hit",
                     weight=1.2,
                     mechanism="the arithmetic on `{object}` at {line} can overflow its integer type",
                     change="use checked or saturating arithmetic at {line}",
                     suggestion="{object}.checked_sub(...) / saturating_sub(...)"),)),
    ErrorKind("rust.index_bounds", "index out of bounds", r"index out of bounds|out of range for slice",
              (Shape(RUST, "(index_expression (_) @object (_) @name) @hit", weight=1.2,
                     mechanism="`{object}[{name}]` at {line} panics when the index is past the end",
                     change="use `.get({name})` and handle `None` at {line}",
                     suggestion="{object}.get({name})"),)),
    ErrorKind("c.segfault", "segmentation fault at a dereference",
              r"Segmentation fault|segfault|SIGSEGV|null pointer|NULL pointer|AddressSanitizer|use[- ]after[- ]free|"
              r"heap-buffer-overflow|crash(?:es|ed)?\b",
              (Shape(C, "[(field_expression argument: (_) @object operator: \"->\" field: (field_identifier) @name) "
                        "(pointer_expression operator: \"*\" argument: (_) @object)] @hit", weight=1.2,
                     mechanism="`{object}` is dereferenced at {line} without checking that it is non-NULL and valid",
                     change="check `{object}` before dereferencing it at {line}",
                     suggestion="if ({object} == NULL) return ...;"),
               Shape(C, "(subscript_expression argument: (_) @object) @hit", weight=1.0,
                     mechanism="`{object}[...]` at {line} is not bounds-checked",
                     change="check the index against the buffer's length at {line}"))),
    ErrorKind("csharp.null_reference", "NullReferenceException",
              r"NullReferenceException|Object reference not set to an instance of an object",
              (Shape(CSHARP, "(member_access_expression expression: (_) @object name: (identifier) @name) @hit",
                     check="attribute_named", weight=1.5,
                     mechanism="`{object}.{name}` at {line} dereferences `{object}`, which can be null here",
                     change="check `{object}` for null before `.{name}` at {line} (`?.` or a guard)",
                     suggestion="{object}?.{name}"),)),
    ErrorKind("csharp.index_range", "IndexOutOfRangeException",
              r"IndexOutOfRangeException|ArgumentOutOfRangeException|Index was outside the bounds of the array",
              (Shape(CSHARP, "(element_access_expression expression: (_) @object) @hit", weight=1.2,
                     mechanism="`{object}[...]` at {line} is read without checking its length",
                     change="check the index against `{object}`'s length at {line}"),)),
    ErrorKind("csharp.invalid_cast", "InvalidCastException", r"InvalidCastException|Unable to cast object of type",
              (Shape(CSHARP, "(cast_expression type: (_) @name value: (_) @object) @hit", weight=2.0,
                     mechanism="`{object}` is cast to `{name}` at {line} without checking its runtime type",
                     change="test the type with `is` (or use `as` and check for null) before the cast at {line}",
                     suggestion="if ({object} is {name} value) {{ ... }}"),)),
    ErrorKind("swift.force_unwrap", "force unwrap of nil",
              r"Unexpectedly found nil while (?:implicitly )?unwrapping an Optional value",
              (Shape(SWIFT, "(postfix_expression target: (_) @object operation: (bang)) @hit", weight=2.0,
                     mechanism="`{object}!` at {line} force-unwraps an Optional that is nil here",
                     change="unwrap `{object}` with `guard let` / `if let` or give it a default with `??` at {line}",
                     suggestion="guard let value = {object} else {{ return }}"),)),
    ErrorKind("swift.index_range", "Index out of range", r"Fatal error: Index out of range|Index out of range",
              (Shape(SWIFT, "(call_expression (_) @object (call_suffix (value_arguments \"[\"))) @hit", weight=1.2,
                     mechanism="`{object}[...]` at {line} is read without checking its count",
                     change="check the index against `{object}.indices` at {line}"),)),
    ErrorKind("php.null_method", "a member of null",
              r"(?:Call to a member function |Attempt to read property \")(?P<name>\w+)(?:\(\)|\") on null",
              (Shape(PHP, "[(member_call_expression object: (_) @object name: (name) @name) "
                          "(member_access_expression object: (_) @object name: (name) @name)] @hit",
                     check="attribute_named", weight=1.5,
                     mechanism="`{object}->{name}` at {line} is used on a value that can be null",
                     change="handle `{object}` being null at {line} (`?->` or a guard)",
                     suggestion="{object}?->{name}"),)),
    ErrorKind("php.undefined_key", "Undefined array key", r"Undefined (?:array key|index|offset)",
              (Shape(PHP, "(subscript_expression (_) @object) @hit", weight=1.2,
                     mechanism="`{object}[...]` at {line} reads a key that can be missing",
                     change="check the key with `isset()` / `array_key_exists()` or use `??` at {line}",
                     suggestion="{object}[...] ?? null"),)),
    ErrorKind("ruby.nil_method", "NoMethodError on nil",
              r"undefined method [`'](?P<name>\w+)' for nil|NoMethodError",
              (Shape(RUBY, "(call receiver: (_) @object method: (identifier) @name) @hit", check="attribute_named",
                     weight=1.5,
                     mechanism="`{object}.{name}` at {line} is called on a value that can be `nil`",
                     change="handle `{object}` being nil at {line} (`&.` or a guard)",
                     suggestion="{object}&.{name}"),)),
)
"""Every error kind, most specific first within a language."""
