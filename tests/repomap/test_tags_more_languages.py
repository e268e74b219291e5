"""C#, Kotlin, PHP, Swift and Scala are parsed by their tree-sitter grammars: definitions with qualified names and
kinds, and references of every kind, as the other languages have."""

from __future__ import annotations

import pytest

from repomap import build_repo_map
from repomap.tags import extract_tags

CSHARP = b"""using System.Text;
namespace Shop.Pricing {
  public interface IPricer { int Apply(int cents); }
  public record Point(int X, int Y);
  public enum Kind { A, B }
  public struct Money { public int Cents; }
  public delegate void Handler(int x);
  public class Discount : Base, IPricer {
    public const int Max = 10;
    public int Percent { get; set; }
    public Discount(int p) { Percent = p; }
    public int Apply(int cents) { var b = new StringBuilder(); Helper.Log(cents); return Compute(cents); }
    [Obsolete] int Compute(int c) { int Local(int z) => z; return c / Local(10); }
  }
}
"""
KOTLIN = b"""package shop.pricing

import kotlin.math.max

interface Pricer {
  fun apply(cents: Int): Int
}

enum class Kind { A, B }

object Registry {
  fun get(): Int = 1
}

typealias Cents = Int

class Discount(val percent: Int) : Base(), Pricer {
  val label: String = "x"

  override fun apply(cents: Int): Int {
    val b = StringBuilder()
    Helper.log(cents)
    return compute(cents)
  }

  private fun compute(c: Int) = c / 10
}

@Deprecated("x")
fun top() = max(1, 2)

fun Int.twice(): Int = this * 2
"""
PHP = b"""<?php
namespace Shop\\Pricing;
use Shop\\Base;
interface Pricer { public function apply(int $cents): int; }
trait Loggable { public function log() {} }
class Discount extends Base implements Pricer {
  const LIMIT = 5;
  public function apply(int $cents): int { $b = new Builder(); Helper::log($cents); return $this->compute($cents); }
  private static function compute($c) { return $c / 10; }
}
function compute_total($x) { return $x; }
"""
SWIFT = b"""import Foundation

protocol Pricer {
    func apply(_ cents: Int) -> Int
}

struct Money {
    let cents: Int
}

class Discount: Base, Pricer {
    let percent: Int

    init(percent: Int) {
        self.percent = percent
    }

    func apply(_ cents: Int) -> Int {
        let b = Builder()
        Helper.log(cents)
        return compute(cents)
    }

    @discardableResult
    private static func compute(_ c: Int) -> Int {
        return c / 10
    }
}

extension Money {
    func twice() -> Int { cents * 2 }
}
"""
SCALA = b"""package shop.pricing

import scala.math.max

trait Pricer {
  def apply(cents: Int): Int
}

object Registry {
  def get(): Int = 1
}

class Discount(val percent: Int) extends Base with Pricer {
  val label: String = "x"

  def apply(cents: Int): Int = {
    val b = new Builder()
    Helper.log(cents)
    compute(cents)
  }

  @deprecated private def compute(c: Int) = c / 10
}
"""

EXPECTED = {
    "csharp": (CSHARP, [("IPricer", "interface", 3), ("IPricer.Apply", "method", 3), ("Point", "class", 4),
                        ("Kind", "enum", 5), ("Money", "struct", 6), ("Handler", "type", 7), ("Discount", "class", 8),
                        ("Discount.Percent", "method", 10), ("Discount.Discount", "method", 11),
                        ("Discount.Apply", "method", 12), ("Discount.Compute", "method", 13),
                        ("Discount.Compute.Local", "function", 13)]),
    "kotlin": (KOTLIN, [("Pricer", "interface", 5), ("Pricer.apply", "method", 6), ("Kind", "enum", 9),
                        ("Registry", "class", 11), ("Registry.get", "method", 12), ("Cents", "type", 15),
                        ("Discount", "class", 17), ("Discount.label", "constant", 18), ("Discount.apply", "method", 20),
                        ("Discount.compute", "method", 26), ("top", "function", 30), ("Int.twice", "method", 32)]),
    "php": (PHP, [("Pricer", "interface", 4), ("Pricer.apply", "method", 4), ("Loggable", "trait", 5),
                  ("Loggable.log", "method", 5), ("Discount", "class", 6), ("Discount.LIMIT", "constant", 7),
                  ("Discount.apply", "method", 8), ("Discount.compute", "method", 9), ("compute_total", "function", 11)]),
    "swift": (SWIFT, [("Pricer", "interface", 3), ("Pricer.apply", "method", 4), ("Money", "struct", 7),
                      ("Money.cents", "constant", 8), ("Discount", "class", 11), ("Discount.percent", "constant", 12),
                      ("Discount.init", "method", 14), ("Discount.apply", "method", 18),
                      ("Discount.compute", "method", 24), ("Money.twice", "method", 31)]),
    "scala": (SCALA, [("Pricer", "trait", 5), ("Pricer.apply", "method", 6), ("Registry", "class", 9),
                      ("Registry.get", "method", 10), ("Discount", "class", 13), ("Discount.label", "constant", 14),
                      ("Discount.apply", "method", 16), ("Discount.compute", "method", 22)]),
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_definitions_have_qualified_names_and_kinds(language):
    source, expected = EXPECTED[language]
    tags = extract_tags(source, language)
    assert [(d.qualname, d.kind.value, d.start_line) for d in tags.definitions("x")] == expected


@pytest.mark.parametrize("language, expected", [
    ("csharp", {("System.Text", "import"), ("Base", "base"), ("IPricer", "base"), ("StringBuilder", "call"),
                ("Log", "call"), ("Compute", "call"), ("Obsolete", "decorator")}),
    ("kotlin", {("kotlin.math.max", "import"), ("Base", "base"), ("Pricer", "base"), ("StringBuilder", "call"),
                ("log", "call"), ("compute", "call"), ("Deprecated", "decorator"), ("String", "annotation")}),
    ("php", {("Shop\\Base", "import"), ("Base", "base"), ("Pricer", "base"), ("Builder", "call"), ("log", "call"),
             ("compute", "call")}),
    ("swift", {("Foundation", "import"), ("Base", "base"), ("Pricer", "base"), ("Builder", "call"), ("log", "call"),
               ("compute", "call"), ("discardableResult", "decorator"), ("Int", "annotation")}),
    ("scala", {("Base", "base"), ("Pricer", "base"), ("Builder", "call"), ("log", "call"), ("compute", "call"),
               ("deprecated", "decorator"), ("String", "annotation")}),
])  # fmt: skip
def test_references_of_every_kind_are_extracted(language, expected):
    tags = extract_tags(EXPECTED[language][0], language)
    assert expected <= {(r.name, r.kind.value) for r in tags.references("x")}


def test_the_map_shows_csharp_kotlin_php_swift_and_scala_files_with_their_definitions(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    for name, (source, _) in {"Discount.cs": EXPECTED["csharp"], "Discount.kt": EXPECTED["kotlin"],
                              "discount.php": EXPECTED["php"], "Discount.swift": EXPECTED["swift"],
                              "Discount.scala": EXPECTED["scala"]}.items():
        (root / name).write_bytes(source)
    repo_map = build_repo_map(root, cache_dir=tmp_path / "cache", token_budget=4000)
    assert sorted(f.path for f in repo_map.files) == ["Discount.cs", "Discount.kt", "Discount.scala", "Discount.swift",
                                                      "discount.php"]
    assert "public int Apply(int cents)" in repo_map.text and "fun Int.twice(): Int" in repo_map.text
    assert "private static function compute($c)" in repo_map.text and "func twice() -> Int" in repo_map.text


@pytest.mark.parametrize("language, source", [
    ("csharp", b'class A {\n  [HttpGet("{id}")]\n  [Authorize]\n  public int Get(int id) {\n    return id;\n  }\n}\n'),
    ("php", b'<?php\nclass A {\n  #[Route("/x")]\n  public function get(int $id) { return $id; }\n}\n'),
])  # fmt: skip
def test_attributes_keep_their_lines_in_the_definition_but_not_its_signature(language, source):
    method = extract_tags(source, language).definitions("x")[1]
    assert method.signature in ("public int Get(int id)", "public function get(int $id)")
    assert method.start_line == (2 if language == "csharp" else 3)
