"""The reference graph and the personalization of PageRank."""

from __future__ import annotations

import numpy as np

from repomap import Focus, build_repo_map
from repomap.rank import build_graph, pagerank, personalization
from repomap.tags import extract_tags
from tests.repomap.conftest import write_tree


def _graph(files: dict[str, str]):
    paths = sorted(files)
    tags = [extract_tags(files[p].encode(), "python") for p in paths]
    return build_graph(paths, tags, ["python"] * len(paths))


def _edges(graph) -> set[tuple[str, str]]:
    return {(graph.paths[s], graph.paths[d]) for s, d in zip(graph.src.tolist(), graph.dst.tolist())}


def test_references_become_edges_to_the_defining_file():
    graph = _graph({"a.py": "def helper():\n    pass\n", "b.py": "from a import helper\nhelper()\n"})
    assert _edges(graph) == {("b.py", "a.py")}


def test_bare_calls_do_not_point_at_methods_but_attribute_calls_do():
    graph = _graph(
        {
            "coll.py": "class Bag:\n    def items(self):\n        pass\n",
            "plain.py": "x = items()\n",
            "member.py": "x = bag.items()\n",
        }
    )
    assert _edges(graph) == {("member.py", "coll.py")}


def test_imports_of_module_paths_link_to_the_module_file():
    graph = _graph({"pkg/__init__.py": "", "pkg/util.py": "X = 1\n", "main.py": "import pkg.util\n"})
    assert ("main.py", "pkg/util.py") in _edges(graph)


def test_names_do_not_link_across_language_families(tmp_path):
    root = write_tree(
        tmp_path / "r",
        {"lib.rs": "fn helper() {}\n", "Main.java": "class Main { void run() { helper(); } }\n", "x.py": "helper()\n"},
    )
    repo_map = build_repo_map(root, cache_dir=tmp_path / "cache")
    graph = repo_map._corpus.graph
    assert _edges(graph) == set()


def test_pagerank_is_a_distribution_and_follows_edges():
    src, dst, w = np.array([0, 1]), np.array([2, 2]), np.array([1.0, 1.0])
    r = pagerank(3, src, dst, w, np.ones(3))
    assert abs(r.sum() - 1.0) < 1e-9
    assert r[2] > r[0] and r[2] > r[1]


def test_prose_words_only_point_at_module_level_definitions():
    graph = _graph(
        {
            "parser.py": "class Parser:\n    def units(self):\n        pass\n",
            "measure.py": "def units():\n    pass\n",
        }
    )
    p, _ = personalization(graph, Focus.from_text("the units are wrong"))
    assert p[graph.paths.index("measure.py")] > 0
    assert p[graph.paths.index("parser.py")] == 0


def test_a_dotted_module_mention_does_not_boost_same_named_definitions():
    graph = _graph(
        {
            "pkg/__init__.py": "",
            "pkg/units.py": "X = 1\n",
            "grammar.py": "class G:\n    def units(self):\n        pass\n",
        }
    )
    p, _ = personalization(graph, Focus.from_text("importing `pkg.units` fails"))
    assert p[graph.paths.index("pkg/units.py")] > 0
    assert p[graph.paths.index("grammar.py")] == 0


def test_the_innermost_frame_weighs_most_in_either_printed_order():
    graph = _graph({"src/jv.c": "int jv_free(int j) {\n  return j;\n}\n",
                    "src/main.c": "int main(void) {\n  return 0;\n}\n"})
    gdb = ("#0  0x0000555555 in jv_free (j=...) at src/jv.c:2\n"
           "#1  0x0000555556 in main () at src/main.c:2\n")
    p, _ = personalization(graph, Focus.from_text(gdb))
    assert p[graph.paths.index("src/jv.c")] > p[graph.paths.index("src/main.c")] > 0
    python = _graph({"app/views.py": "def index():\n    pass\n", "app/models.py": "def save():\n    pass\n"})
    trace = ('Traceback (most recent call last):\n  File "/srv/app/views.py", line 2, in index\n'
             '  File "/srv/app/models.py", line 2, in save\n')
    p, _ = personalization(python, Focus.from_text(trace))
    assert p[python.paths.index("app/models.py")] > p[python.paths.index("app/views.py")] > 0


def test_library_frames_are_ignored_and_repository_frames_weigh_most():
    graph = _graph({"app/views.py": "def index():\n    pass\n", "app/models.py": "def save():\n    pass\n"})
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/django/core/handlers.py", line 47, in inner\n'
        '  File "/srv/project/app/views.py", line 2, in index\n'
    )
    p, mentioned = personalization(graph, Focus.from_text(trace))
    assert p[graph.paths.index("app/views.py")] >= 10
    assert "index" in mentioned
