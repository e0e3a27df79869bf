"""Separating think text from answer text.

``ThinkGuard`` does it on a stream, one chunk at a time: tags may be split at any character,
text on both sides of a tag in one chunk is kept, the prompt may already have opened the think
block (Qwen3.5), a block may be left open at the end, and a reply may use the plain-text style
("Thinking Process:" … "Final Answer:") instead of tags.
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal["think", "answer"]
Segment = tuple[Kind, str]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
PLAIN_HEADER = "thinking process:"

# A line that ends plain-text thinking ("Final Answer:", "**Answer:**", "## Conclusion:", …).
_CONCLUSION_WORDS = ("final answer", "final response", "answer", "response", "conclusion")
CONCLUSION_RE = re.compile(
    r"^[ \t>#*_]*(?:" + "|".join(_CONCLUSION_WORDS) + r")[ \t*_]*:[ \t*_]*",
    re.IGNORECASE | re.MULTILINE,
)
_MARKUP = " \t>#*_"
_LONGEST_MARKER = max(len(word) for word in _CONCLUSION_WORDS) + 12


def partial_suffix(text: str, *tags: str) -> int:
    """Length of the longest tail of ``text`` that is a proper prefix of one of ``tags``."""
    best = 0
    for tag in tags:
        for n in range(min(len(tag) - 1, len(text)), best, -1):
            if text.endswith(tag[:n]):
                best = n
                break
    return best


def _could_be_conclusion(line: str) -> bool:
    """True while an unfinished line may still turn into a conclusion marker."""
    if len(line) > _LONGEST_MARKER:
        return False
    core = line.lstrip(_MARKUP).lower()
    return any(word.startswith(core) or core.startswith(word) for word in _CONCLUSION_WORDS)


class ThinkGuard:
    """Splits a streamed reply into think and answer segments."""

    def __init__(self, starts_in_think: bool = False, detect_plain: bool = True) -> None:
        self._mode: Literal["answer", "think", "plain"] = "think" if starts_in_think else "answer"
        self._held = ""
        self._undecided = detect_plain and not starts_in_think
        """At the start of an answer: may this still be a "Thinking Process:" reply?"""
        self._line_is_prose = False
        """In plain mode: the current line is known not to be a conclusion marker."""
        self._strip: Kind | None = "think" if starts_in_think else "answer"
        self._answered = False
        """Has any answer text been emitted yet?"""

    @property
    def in_think(self) -> bool:
        return self._mode != "answer"

    # -- public -----------------------------------------------------------------------------
    def feed(self, chunk: str) -> list[Segment]:
        if not self._held and not self._undecided and "<" not in chunk:
            if self._mode == "answer" and self._strip is None:
                return [("answer", chunk)] if chunk else []
            if self._mode == "think" and self._strip is None:
                return [("think", chunk)] if chunk else []
        out: list[Segment] = []
        self._process(self._held + chunk, out)
        return out

    def finish(self) -> list[Segment]:
        """Flush what is held back; call once at the end of the stream."""
        out: list[Segment] = []
        held, self._held = self._held, ""
        self._undecided = False
        if held:
            self._emit(out, "answer" if self._mode == "answer" else "think", held)
        return out

    # -- internals --------------------------------------------------------------------------
    def _emit(self, out: list[Segment], kind: Kind, text: str) -> None:
        if self._strip == kind:
            text = text.lstrip()
            if not text:
                return
            self._strip = None
        elif not text:
            return
        if kind == "answer":
            self._answered = True
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))

    def _enter(self, mode: Literal["answer", "think", "plain"]) -> None:
        self._mode = mode
        self._strip = "answer" if mode == "answer" else "think"
        self._line_is_prose = False

    def _process(self, buf: str, out: list[Segment]) -> None:
        self._held = ""
        while buf:
            if self._mode == "answer":
                buf = self._answer(buf, out)
            elif self._mode == "think":
                buf = self._think(buf, out)
            else:
                buf = self._plain(buf, out)

    def _answer(self, buf: str, out: list[Segment]) -> str:
        if self._undecided:
            core = buf.lstrip(_MARKUP + "\n\r").lower()
            if len(core) < len(PLAIN_HEADER) and PLAIN_HEADER.startswith(core):
                self._held = buf
                return ""
            self._undecided = False
            if core.startswith(PLAIN_HEADER):
                rest = buf[buf.lower().index(PLAIN_HEADER) + len(PLAIN_HEADER) :]
                self._enter("plain")
                return rest.lstrip("*_")
        opening = buf.find(THINK_OPEN)
        closing = buf.find(THINK_CLOSE)
        if opening >= 0 and (closing < 0 or opening < closing):
            self._emit(out, "answer", buf[:opening])
            self._enter("think")
            return buf[opening + len(THINK_OPEN) :]
        if closing >= 0:
            # A close tag with no open tag: the prompt opened the block without saying so.
            # If nothing was shown as answer yet, what came before was thinking; text already
            # shown cannot be recalled. The tag itself never reaches the answer.
            self._emit(out, "answer" if self._answered else "think", buf[:closing])
            self._strip = "answer"
            return buf[closing + len(THINK_CLOSE) :]
        keep = partial_suffix(buf, THINK_OPEN, THINK_CLOSE)
        self._emit(out, "answer", buf[: len(buf) - keep])
        self._held = buf[len(buf) - keep :]
        return ""

    def _think(self, buf: str, out: list[Segment]) -> str:
        closing = buf.find(THINK_CLOSE)
        if closing >= 0:
            self._emit(out, "think", buf[:closing])
            self._enter("answer")
            return buf[closing + len(THINK_CLOSE) :]
        keep = partial_suffix(buf, THINK_CLOSE)
        self._emit(out, "think", buf[: len(buf) - keep])
        self._held = buf[len(buf) - keep :]
        return ""

    def _plain(self, buf: str, out: list[Segment]) -> str:
        """Plain-text thinking: line by line until a conclusion marker or a close tag."""
        closing = buf.find(THINK_CLOSE)
        newline = buf.find("\n")
        if closing >= 0 and (newline < 0 or closing < newline):
            self._emit(out, "think", buf[:closing])
            self._enter("answer")
            return buf[closing + len(THINK_CLOSE) :]
        if newline >= 0:
            line, rest = buf[: newline + 1], buf[newline + 1 :]
            if not self._line_is_prose and (match := CONCLUSION_RE.match(line)):
                self._enter("answer")
                return line[match.end() :] + rest
            self._emit(out, "think", line)
            self._line_is_prose = False
            return rest
        # An unfinished line: switch now if it already holds a marker; hold it while it may
        # still become one.
        if not self._line_is_prose and (match := CONCLUSION_RE.match(buf)):
            self._enter("answer")
            return buf[match.end() :]
        if not self._line_is_prose and _could_be_conclusion(buf):
            self._held = buf
            return ""
        self._line_is_prose = True
        keep = partial_suffix(buf, THINK_CLOSE)
        self._emit(out, "think", buf[: len(buf) - keep])
        self._held = buf[len(buf) - keep :]
        return ""
