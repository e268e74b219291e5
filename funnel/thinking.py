"""Reasoning a plain server leaves in a reply's text, moved out of it (`split_thinking`).

A reasoning model's chat template often opens its thinking in the prompt (`<think>\\n`), so a server that does not
parse reasoning out passes the thought on as text that ends in a lone `</think>` (DeepSeek-R1 and its distils, Qwen3's
thinking models, on vLLM, SGLang or llama.cpp without a reasoning parser). Others write it in tags PydanticAI does
not read as thinking (`<thinking>`, `<reasoning>`, Magistral's `[THINK]`, Kimi's `◁think▷`) or in gpt-oss's analysis
channel. Read as text, the thought became part of the report: a drafted "Affected files" section named a file the
model then rejected, and its first sentences became the summary. The thought is the model's, not its answer: it
becomes a `ThinkingPart`, as the reasoning a server does parse out. A tag quoted as code (in backticks or a fence)
is the answer's, and stays.
"""

from __future__ import annotations

import dataclasses
import logging
import re

from pydantic_ai.messages import ModelResponse, ModelResponsePart, TextPart, ThinkingPart

__all__ = ("split_thinking", "thinking_in_text")

_log = logging.getLogger(__name__)

_OPEN = r"<(?:think|thinking|reasoning)>|\[THINK\]|◁think▷"
_CLOSE = r"</(?:think|thinking|reasoning)>|\[/THINK\]|◁/think▷"
_TAG = re.compile(rf"(?P<open>{_OPEN})|(?P<close>{_CLOSE})", re.I)
_HARMONY_FINAL = "<|channel|>final<|message|>"
_HARMONY_ANALYSIS = re.compile(r"<\|channel\|>analysis<\|message\|>(.*?)(?=<\|end\|>|<\|start\|>|<\|channel\|>|\Z)", re.S)
_HARMONY_TOKEN = re.compile(r"<\|[a-z_]+\|>(?:analysis|final|assistant)?")


class _Code:
    """Whether positions of a text, asked in increasing order, lie in a fenced block or an inline code span, or are
    quoted (`'</think>'`); each character is read once, so a reply of many tags costs no more than a long one."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = self.line_start = self.ticks = 0
        self.fenced = False

    def __call__(self, at: int) -> bool:
        chunk = self.text[self.pos : at]
        if "\n" in chunk:
            *ended, current = self.text[self.line_start : at].split("\n")
            self.fenced ^= sum(line.lstrip().startswith(("```", "~~~")) for line in ended) % 2 == 1
            self.line_start, self.ticks = at - len(current), current.count("`")
        else:
            self.ticks += chunk.count("`")
        self.pos = at
        return self.fenced or self.ticks % 2 == 1 or self.text[at - 1 : at] in ("'", '"')


def thinking_in_text(text: str) -> tuple[list[str], str]:
    """The thoughts written into a reply's text, and the answer left around them (the text itself when no thinking
    tag closes in it): blocks between a thinking tag and its close; what precedes a close no tag opened (the template
    opened it); gpt-oss's analysis channel (before its final one, or beside a call on its commentary one). A tag nothing
    closes opens no thought: a report after it is still the answer."""
    if _HARMONY_FINAL in text:
        thought, _, answer = text.partition(_HARMONY_FINAL)
        thought = _HARMONY_TOKEN.sub("\n", thought).strip()
        answer = re.sub(r"<\|(?:return|end)\|>\s*$", "", answer)
        return ([thought] if thought else []), answer
    if "<|channel|>analysis<|message|>" in text:  # analysis, then a call on the commentary channel (no final one)
        thoughts = [t.strip() for t in _HARMONY_ANALYSIS.findall(text) if t.strip()]
        return thoughts, _HARMONY_ANALYSIS.sub("", text)
    thoughts: list[str] = []
    answer: list[str] = []
    pos, opened, closed = 0, None, False
    in_code = _Code(text)
    for m in _TAG.finditer(text):
        if in_code(m.start()):
            continue
        if m.group("open") and opened is None:
            answer.append(text[pos : m.start()])
            opened, pos = m.end(), m.end()
        elif m.group("close"):
            if opened is None:  # the template opened it: all the answer so far was thought
                thoughts.append("".join(answer) + text[pos : m.start()])
                answer = []
            else:
                thoughts.append(text[opened : m.start()])
            opened, pos, closed = None, m.end(), True
    answer.append(text[pos:])
    if not closed:
        return [], text
    return [t.strip() for t in thoughts if t.strip()], "".join(answer).strip()


def split_thinking(response: ModelResponse) -> ModelResponse:
    """`response` with the thinking written into its text parts made `ThinkingPart`s (the same response when its
    text holds none)."""
    parts: list[ModelResponsePart] = []
    changed = False
    for part in response.parts:
        if isinstance(part, TextPart) and (found := thinking_in_text(part.content)) and found[1] != part.content:
            thoughts, answer = found
            _log.info("read %d thought(s) written in the reply's text as thinking", len(thoughts))
            parts += [ThinkingPart(content=t) for t in thoughts]
            if answer:
                parts.append(TextPart(content=answer))
            changed = True
            continue
        parts.append(part)
    return dataclasses.replace(response, parts=parts) if changed else response
