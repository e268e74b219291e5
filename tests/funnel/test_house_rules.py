"""The house rules of `funnel/`, checked on the source: small functions and files, imports at module level
(a lazy one says why in a `# lazy:` comment), and imports going one way between the rooms."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FUNNEL = Path(__file__).resolve().parents[2] / "funnel"
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 400
LAYERS = {"errors": 0, "limits": 0, "counts": 0, "cancel": 0, "phases": 0, "retry": 0, "tool_calls": 0, "written_calls": 0, "thinking": 0, "completions": 0, "classify": 0, "inline": 0, "tools": 1, "localize": 2, "report": 3, "explorers": 4, "run": 5}
"""`errors`/`limits`/`cancel`/`phases`/`retry`/`thinking`/`written_calls`/`tool_calls`/`classify`/`inline` <- `tools` <- `localize` <- `report` <- `explorers` <- `run`."""

SOURCES = sorted(FUNNEL.rglob("*.py"))


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "funnel" else None


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _module_imports(tree: ast.Module) -> list[str]:
    """Modules imported at run time at module level (not under `if TYPE_CHECKING:`)."""
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
            out.extend(f"{node.module}.{a.name}" for a in node.names if node.module == "funnel")
        elif isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
    return out


def _name(path: Path) -> str:
    return str(path.relative_to(FUNNEL.parent))


def test_the_funnel_sources_are_found():
    assert len(SOURCES) > 30


def oversized(path: Path) -> list[str]:
    """What in a source file breaks the size rules: each function over `MAX_FUNCTION_LINES`, and the file itself
    over `MAX_FILE_LINES`."""
    text = path.read_text()
    found = [f"{f.name} ({f.end_lineno - f.lineno + 1} lines)" for f in _functions(ast.parse(text))
             if f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES]  # fmt: skip
    lines = len(text.splitlines())
    return found + ([f"the file ({lines} lines)"] if lines > MAX_FILE_LINES else [])


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_functions_and_files_stay_small(path):
    assert oversized(path) == []


def unexplained_imports(path: Path) -> list[str]:
    """The imports inside functions of a source file with no `# lazy:` comment on their line or the three before."""
    text = path.read_text()
    lines = text.splitlines()
    unexplained: list[str] = []
    for f in _functions(ast.parse(text)):
        for node in ast.walk(f):
            if isinstance(node, ast.Import | ast.ImportFrom):
                before = lines[max(0, node.lineno - 4) : node.lineno]
                found = f"line {node.lineno}: {ast.unparse(node)}"
                if not any("# lazy:" in line for line in before) and found not in unexplained:
                    unexplained.append(found)  # a nested function's import is walked once per enclosing one
    return unexplained


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_imports_inside_functions_state_why(path):
    assert unexplained_imports(path) == []


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_imports_go_one_way_between_the_rooms(path):
    own = _room("funnel." + ".".join(path.relative_to(FUNNEL).with_suffix("").parts))
    if own is None or own == "__init__":
        return
    upward = [m for m in _module_imports(ast.parse(path.read_text()))
              if (room := _room(m)) in LAYERS and LAYERS[room] > LAYERS[own]]  # fmt: skip
    assert upward == []
