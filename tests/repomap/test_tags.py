"""Definitions (names, qualified names, kinds, line spans, signatures) and references of every language."""

from __future__ import annotations

import os

import pytest

from repomap import DefKind, RefKind, build_repo_map
from repomap.tags import extract_tags
from tests.repomap.conftest import POLYGLOT, write_tree

EXPECTED_DEFS: dict[str, list[tuple[str, str, int, int]]] = {
    "app/models.py": [
        ("MAX_NAME", "constant", 4, 4),
        ("Base", "class", 7, 9),
        ("Base.save", "method", 8, 9),
        ("User", "class", 13, 21),
        ("User.greet", "method", 16, 17),
        ("User.Meta", "class", 19, 21),
        ("User.Meta.label", "method", 20, 21),
    ],
    "app/service.py": [
        ("registered", "function", 5, 6),
        ("make_user", "function", 10, 13),
        ("Admin", "class", 16, 18),
        ("Admin.promote", "method", 17, 18),
    ],
    "web/client.js": [
        ("ApiClient", "class", 3, 7),
        ("ApiClient.fetchUser", "method", 4, 6),
        ("makeClient", "function", 9, 11),
        ("handler", "function", 13, 13),
    ],
    "web/types.ts": [
        ("Account", "interface", 1, 4),
        ("Id", "type", 6, 6),
        ("Role", "enum", 8, 11),
        ("Store", "class", 13, 17),
        ("Store.load", "method", 14, 16),
    ],
    "web/App.tsx": [("App", "function", 3, 6)],
    "cmd/main.go": [
        ("Shape", "interface", 5, 7),
        ("Shape.Area", "method", 6, 6),
        ("Square", "struct", 9, 11),
        ("Square.Area", "method", 13, 15),
        ("main", "function", 17, 20),
    ],
    "src/Main.java": [
        ("Main", "class", 5, 14),
        ("Main.run", "method", 6, 9),
        ("Main.helper", "method", 11, 13),
        ("Greeter", "interface", 16, 18),
        ("Greeter.greet", "method", 17, 17),
    ],
    "src/lib.rs": [
        ("Point", "struct", 3, 5),
        ("Area", "trait", 7, 9),
        ("Area.area", "method", 8, 8),
        ("Point.area", "method", 12, 14),
        ("helper", "function", 17, 19),
        ("Color", "enum", 22, 24),
    ],
    "native/vec.h": [("VEC_MAX", "constant", 1, 1), ("vec", "struct", 2, 4)],
    "native/vec.c": [("vec_len", "function", 3, 5), ("twice", "function", 7, 7)],
    "native/shape.cpp": [
        ("geo", "module", 3, 8),
        ("geo.Shape", "class", 4, 7),
        ("geo.Shape.area", "method", 6, 6),
        ("geo.Shape.area", "method", 10, 12),
    ],
    "lib/greeter.rb": [
        ("Greeting", "module", 3, 15),
        ("Greeting.Greeter", "class", 4, 14),
        ("Greeting.Greeter.hello", "method", 7, 9),
        ("Greeting.Greeter.build", "method", 11, 13),
    ],
}


@pytest.fixture(scope="module")
def polyglot_map(tmp_path_factory):
    base = tmp_path_factory.mktemp("tags")
    return build_repo_map(write_tree(base / "repo", POLYGLOT), cache_dir=base / "cache")


@pytest.mark.parametrize("path", sorted(EXPECTED_DEFS))
def test_definitions_have_qualified_names_kinds_and_end_lines_per_language(polyglot_map, path):
    got = [(d.qualname, d.kind.value, d.start_line, d.end_line) for d in polyglot_map.definitions(path)]
    assert got == EXPECTED_DEFS[path]


def test_signatures_are_headers_without_bodies(polyglot_map):
    sigs = {d.qualname: d.signature for p in EXPECTED_DEFS for d in polyglot_map.definitions(p)}
    assert sigs["User.greet"] == 'def greet(self, other: "User") -> str'
    assert sigs["make_user"] == "def make_user(name: str) -> User"
    assert sigs["Square.Area"] == "func (s *Square) Area() float64"
    assert sigs["Square"] == "type Square struct"
    assert sigs["Store.load"] == "load(id: Id): Account"
    assert sigs["Point.area"] == "fn area(&self) -> i32"
    assert sigs["vec_len"] == "int vec_len(struct vec *v)"
    assert sigs["geo.Shape"] == "class Shape : public Base"
    assert sigs["Greeting.Greeter"] == "class Greeter < Base"


EXPECTED_REFS: list[tuple[str, str, RefKind, int]] = [
    ("app/service.py", "app.models", RefKind.import_, 1),
    ("app/service.py", "User", RefKind.import_, 1),
    ("app/service.py", "registered", RefKind.decorator, 9),
    ("app/service.py", "User", RefKind.annotation, 10),
    ("app/service.py", "User", RefKind.call, 11),
    ("app/service.py", "save", RefKind.call, 12),
    ("app/service.py", "Base", RefKind.base, 16),
    ("app/models.py", "dataclass", RefKind.decorator, 12),
    ("web/client.js", "./base", RefKind.import_, 1),
    ("web/client.js", "BaseClient", RefKind.base, 3),
    ("web/client.js", "ApiClient", RefKind.call, 10),
    ("web/types.ts", "Repo", RefKind.base, 13),
    ("web/types.ts", "Id", RefKind.annotation, 14),
    ("web/App.tsx", "Props", RefKind.annotation, 3),
    ("cmd/main.go", "fmt", RefKind.import_, 3),
    ("cmd/main.go", "Println", RefKind.call, 19),
    ("src/Main.java", "Override", RefKind.decorator, 6),
    ("src/Main.java", "Runnable", RefKind.base, 5),
    ("src/Main.java", "String", RefKind.annotation, 11),
    ("src/lib.rs", "Area", RefKind.base, 11),
    ("src/lib.rs", "derive", RefKind.decorator, 21),
    ("src/lib.rs", "helper", RefKind.call, 13),
    ("native/vec.c", "vec.h", RefKind.import_, 1),
    ("native/vec.c", "vec_len", RefKind.call, 7),
    ("native/shape.cpp", "Base", RefKind.base, 4),
    ("lib/greeter.rb", "Base", RefKind.base, 4),
    ("lib/greeter.rb", "Comparable", RefKind.base, 5),
    ("lib/greeter.rb", "json", RefKind.import_, 1),
]


@pytest.mark.parametrize("path,name,kind,line", EXPECTED_REFS)
def test_references_of_every_kind_are_extracted(polyglot_map, path, name, kind, line):
    refs = {(r.name, r.kind, r.line) for r in polyglot_map.references_of(path)}
    assert (name, kind, line) in refs


def test_all_reference_kinds_occur_in_python(polyglot_map):
    kinds = {r.kind for p in ("app/models.py", "app/service.py") for r in polyglot_map.references_of(p)}
    assert kinds == set(RefKind)


def test_syntax_errors_still_yield_what_parses(polyglot_map):
    names = [d.qualname for d in polyglot_map.definitions("app/broken.py")]
    assert names[0] == "ok" and "AfterError" in names
    assert polyglot_map.stats.parse_errors >= 1


def test_invalid_utf8_is_decoded_with_replacement(polyglot_map):
    (d,) = polyglot_map.definitions("app/latin1.py")
    assert (d.name, d.kind, d.signature) == ("encoded", DefKind.function, "def encoded(x)")


def test_long_signatures_are_trimmed():
    src = b"def f(" + b", ".join(b"arg%d" % i for i in range(200)) + b"):\n    pass\n"
    tags = extract_tags(src, "python", max_signature_chars=80)
    (d,) = tags.definitions("x.py")
    assert len(d.signature) <= 80 and d.signature.endswith("…")


def test_trailing_comments_are_not_part_of_signatures():
    tags = extract_tags(b"def f(a):  # explain\n    return a\n", "python")
    assert tags.definitions("x.py")[0].signature == "def f(a)"


def test_tags_are_the_same_on_every_parse_of_a_file_with_syntax_errors():
    # C parsing C++ templates: error recovery yields many captures, which py-tree-sitter returns in varying order
    source = b"".join(
        b"template <class T, unsigned Size> class pod_auto_array%d {\n"
        b"  public:\n    typedef T value_type;\n    typedef pod_auto_array%d<T, Size> self_type;\n"
        b"    const T& operator [] (unsigned i) const { return m_array[i]; }\n"
        b"    T value_at(unsigned i) const { return m_array[i]; }\n  private:\n    T m_array[Size];\n};\n" % (i, i)
        for i in range(40)
    )
    first = extract_tags(source, "c")
    assert first.defs
    assert all(extract_tags(source, "c") == first for _ in range(10))


CPP_HEADER = b"""#pragma once
namespace geo {
class Shape {
 public:
  virtual double area() const = 0;
};
template <typename T> T twice(T x) { return x + x; }
}  // namespace geo
"""
C_HEADER = b"""#ifndef VEC_H
#define VEC_H
#ifdef __cplusplus
using namespace std;
extern "C" {
#endif
struct vec { int len; };
static inline int vec_len(struct vec *v, const char *template) { return v->len; }
#ifdef __cplusplus
}
#endif
#endif
"""


def test_a_header_written_in_cpp_is_cpp_and_one_written_in_c_is_c():
    from repomap.languages import language_for

    assert language_for("include/shape.h", CPP_HEADER).name == "cpp"
    assert language_for("include/vec.h", C_HEADER).name == "c"
    assert language_for("include/shape.h").name == "c", "without its bytes a header is taken for C"


@pytest.mark.parametrize("second", ["cold", "warm"])
def test_the_map_tags_a_cpp_header_with_the_cpp_grammar_cold_and_warm(tmp_path, second):
    root = write_tree(tmp_path / "r", {"include/shape.h": CPP_HEADER.decode(), "include/vec.h": C_HEADER.decode()})
    old = os.path.getmtime(root) - 10
    for name in ("shape.h", "vec.h"):  # old enough for the stat pre-check to trust them without reading
        os.utime(root / "include" / name, (old, old))
    repo_map = build_repo_map(root, cache_dir=tmp_path / "cache")
    if second == "warm":
        repo_map = build_repo_map(root, cache_dir=tmp_path / "cache")
        assert repo_map.stats.cache_hits == 2
        assert repo_map.stats.files_hashed == 0, "the languages come from the content keys, no file is read"
    assert repo_map.stats.languages == {"c": 1, "cpp": 1}
    shape = {(d.qualname, d.kind.value) for d in repo_map.definitions("include/shape.h")}
    assert {("geo.Shape", "class"), ("geo.Shape.area", "method"), ("geo.twice", "function")} <= shape
    assert "vec_len" in {d.name for d in repo_map.definitions("include/vec.h")}


def _qualnames(source: bytes, language: str) -> list[tuple[str, int]]:
    return [(d.qualname, d.start_line) for d in extract_tags(source, language).definitions("x")]


def test_a_default_exported_anonymous_function_is_the_definition_default():
    source = b"import x from './x.js';\n\nexport default async (req, res) => {\n  res.send(x);\n};\n"
    assert _qualnames(source, "javascript") == [("default", 3)]
    assert _qualnames(source, "typescript") == [("default", 3)]


def test_a_named_function_expression_passed_as_an_argument_or_listed_is_a_definition():
    source = (b"defineGetter(req, 'host', function host() {\n  return this.get('Host');\n});\n"
              b"const defaults = { transformRequest: [function transformRequest(data) { return data; }] };\n")
    assert _qualnames(source, "javascript") == [("host", 1), ("transformRequest", 4)]


def test_typescript_reads_member_assignments_and_object_members_as_javascript_does():
    source = b"req.header = function header(name: string) { return name; };\nconst o = { parse: (s: string) => s };\n"
    assert _qualnames(source, "typescript") == _qualnames(source, "javascript") == [("header", 1), ("parse", 2)]


def test_a_template_specialization_is_a_definition_whose_members_it_qualifies():
    source = b"template <typename Char> struct formatter<weekday, Char> {\n  auto parse(int x) { return x; }\n};\n"
    assert _qualnames(source, "cpp") == [("formatter", 1), ("formatter.parse", 2)]


def test_a_cpp_function_returning_a_pointer_or_a_reference_or_specializing_a_template_is_a_definition():
    source = (b"template <typename Char>\nconst Char* parse_format(const Char* begin) {\n  return begin;\n}\n"
              b"std::ostream& operator<<(std::ostream& os, Tag t) { return os; }\n"
              b"int& Foo::get() { return x_; }\n"
              b"char** table() { return 0; }\n"
              b"struct S {\n  S& self();\n  T& ref() { return t; }\n};\n"
              b"template <> constexpr auto num_bits<int128>() -> int { return 128; }\n")
    assert _qualnames(source, "cpp") == [("parse_format", 2), ("operator<<", 5), ("Foo.get", 6), ("table", 7),
                                         ("S", 8), ("S.self", 9), ("S.ref", 10), ("num_bits", 12)]


def test_a_method_of_a_class_template_defined_out_of_line_is_named_by_itself_and_qualified_by_its_class():
    source = (b"template <typename Char> void parse_context<Char>::check_arg_id(int id) { use(id); }\n"
              b"template <typename T> typename ns::D<std::pair<int, T>>::size_type ns::D<std::pair<int, T>>::size() {\n"
              b"  return 0;\n}\n")
    assert _qualnames(source, "cpp") == [("parse_context.check_arg_id", 1), ("ns.D.size", 2)]


def test_a_cpp_conversion_operator_is_a_definition_named_up_to_its_parameters():
    source = (b"struct B {\n  operator bool() const { return ok; }\n  explicit operator int() const;\n};\n"
              b"ns::B::operator const std::string&() const { return s; }\n"
              b"template <class T> B::operator T*() { return 0; }\n")
    assert _qualnames(source, "cpp") == [("B", 1), ("B.operator bool", 2), ("B.operator int", 3),
                                         ("ns.B.operator const std::string&", 5), ("B.operator T*", 6)]


def test_constructors_destructors_operators_and_member_templates_declared_in_a_cpp_class_are_its_methods():
    source = (b"class B {\n public:\n  B();\n  ~B();\n  bool operator==(const B&) const;\n"
              b"  const T& operator[](size_t i) const;\n  template <typename U> U as() const;\n  int x_;\n};\n"
              b"int prototype(int);\n")
    assert _qualnames(source, "cpp") == [("B", 1), ("B.B", 3), ("B.~B", 4), ("B.operator==", 5), ("B.operator[]", 6),
                                         ("B.as", 7)]


def test_a_class_field_holding_a_function_and_a_private_method_are_methods_of_the_class():
    js = b"class A {\n  handler = (e) => { return e; };\n  #priv() {}\n  count = 0;\n}\n"
    ts = b"class B {\n  private onClick = (e: Event): void => {};\n  static readonly make = function () {};\n}\n"
    assert _qualnames(js, "javascript") == [("A", 1), ("A.handler", 2), ("A.#priv", 3)]
    assert _qualnames(ts, "typescript") == [("B", 1), ("B.onClick", 2), ("B.make", 3)]


def test_a_name_bound_to_a_function_value_is_a_function_by_use_in_python_and_go():
    python = b"handler = lambda x: x + 1\nclass A:\n    key = lambda self: self.rank\n"
    go = b"package x\n\nvar handler = func(w int) {}\n\nvar count, name = 1, \"x\"\n"
    assert _qualnames(python, "python") == [("handler", 1), ("A", 2), ("A.key", 3)]
    assert _qualnames(go, "go") == [("handler", 3)]


def test_a_java_records_compact_constructor_is_a_method_of_the_record():
    source = b"record Point(int x) {\n  Point {\n    if (x < 0) throw new IllegalArgumentException();\n  }\n}\n"
    assert _qualnames(source, "java") == [("Point", 1), ("Point.Point", 2)]


def test_a_lambda_bound_inside_a_python_function_stays_part_of_the_function():
    source = b"def outer(items):\n    key = lambda item: item.rank\n    return sorted(items, key=key)\n"
    assert _qualnames(source, "python") == [("outer", 1)]
