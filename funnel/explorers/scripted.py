"""SCRIPTED STAND-IN, NOT AN INVESTIGATOR: a fixed FunctionModel script that exercises the whole funnel.

It lists the root, searches for the most distinctive identifier in the report, deep-dives into the first match,
and writes a report citing exactly the lines it read. It reasons about nothing; it exists so the harness, the
service and the CLI can run end to end without a model. Its reports say so in their summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from funnel.explorers.protocol import ExplorerContext
from funnel.phases import ControlTool, phase_of_tools
from schemas.enums import Phase, ToolName

__all__ = ("ScriptedExplorer", "pick_identifier")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_MATCH = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): ", re.MULTILINE)
_NUMBERED = re.compile(r"^[^\S\n]*(?P<n>\d+)\| (?P<text>.*)$", re.MULTILINE)
_COMMON = frozenset(
    "this that with when then from have error when what after before should would could expected actual "
    "traceback file line return none true false self python version using used work works working".split()
)


def pick_identifier(text: str) -> str | None:
    """The most distinctive identifier in a text: prefers snake_case/CamelCase words, then the longest word."""
    words = [w for w in _IDENT.findall(text) if w.lower() not in _COMMON]
    if not words:
        return None
    code_like = [w for w in words if "_" in w or (w[0].isupper() and any(c.islower() for c in w[1:]) and any(c.isupper() for c in w[1:]))]
    pool = code_like or words
    return max(pool, key=lambda w: (len(w), -pool.index(w)))


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


@dataclass
class ScriptedExplorer:
    """Builds the scripted FunctionModel (labelled `scripted` in traces and diagnoses)."""

    name: str = "scripted"
    """Explorer name."""

    def build_model(self, ctx: ExplorerContext) -> Model:
        """A FunctionModel following the fixed script for this report."""
        ident = pick_identifier(ctx.report.text) or "main"

        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            phase = phase_of_tools(t.name for t in info.function_tools)
            done = _returns(messages)
            names = [p.tool_name for p in done]
            hit = _best_hit(done, ident)
            if phase == Phase.explore:
                if ToolName.list_dir not in names:
                    return ModelResponse(parts=[ToolCallPart(ToolName.list_dir, {"path": ".", "depth": 1})])
                if ToolName.search not in names:
                    return ModelResponse(parts=[ToolCallPart(ToolName.search, {"pattern": ident, "fixed_strings": True})])
                if hit is None:
                    return ModelResponse(parts=[ToolCallPart(ControlTool.request_info, {"questions": [
                        f"Which file or function is involved? `{ident}` does not occur in the repository."]})])  # fmt: skip
                return ModelResponse(parts=[ToolCallPart(ControlTool.begin_deep_dive, {"suspects": [hit["path"]]})])
            if phase == Phase.deep_dive:
                if ToolName.read_range not in names[names.index(ControlTool.begin_deep_dive):] and hit is not None:
                    line = int(hit["line"])
                    return ModelResponse(parts=[ToolCallPart(ToolName.read_range, {"path": hit["path"], "start": max(1, line - 3), "end": line + 3})])  # fmt: skip
                return ModelResponse(parts=[ToolCallPart(ControlTool.finish_deep_dive, {})])
            return ModelResponse(parts=[TextPart(_report(ident, hit, done))], finish_reason="stop")

        return FunctionModel(script, model_name="scripted")


def _best_hit(done: list[ToolReturnPart], ident: str) -> re.Match[str] | None:
    """The first search match defining the identifier, else the first match."""
    hits = [m for p in done if p.tool_name == ToolName.search for m in _MATCH.finditer(str(p.content))]
    defining = re.compile(rf"\b(def|class|func|fn|function)\s+{re.escape(ident)}\b")
    return next((m for m in hits if defining.search(m.string[m.end() : m.string.find("\n", m.end())])), None) or (
        hits[0] if hits else None
    )


def _report(ident: str, hit: re.Match[str] | None, done: list[ToolReturnPart]) -> str:
    reads = [str(p.content) for p in done if p.tool_name == ToolName.read_range]
    quoted, line = "", None
    if hit is not None and reads:
        for m in _NUMBERED.finditer(reads[-1]):
            if ident in m["text"]:
                quoted, line = m["text"], int(m["n"])
                break
    if hit is None or line is None:
        return (
            "## Summary\nScripted stand-in (not an investigator): nothing located.\n\n"
            f"## Root cause\nNot analysed: `{ident}` was not found in what was read.\n\n"
            "## Affected files\nNone.\n\n## Confidence\n0.0\n\n## Open questions\n- Which code is involved?\n"
        )
    path = hit["path"]
    return (
        f"## Summary\nScripted stand-in (not an investigator): the report names `{ident}`, which occurs at "
        f"`{path}:{line}`.\n\n"
        f"## Root cause\nNot analysed: the scripted explorer only locates the first occurrence of `{ident}`.\n\n"
        f"- Evidence: `{path}:{line}` contains `{ident}`.\n\n"
        f"## Affected files\n1. `{path}:{line}-{line}` (related)\n   ```\n   {quoted}\n   ```\n\n"
        "## Confidence\n0.1\n\n## Open questions\n- None.\n"
    )
