"""CappedOutput: a bounded view of text too long to keep whole (tool output, observations)."""

from __future__ import annotations

from collections import deque


class CappedOutput:
    """Keeps the head and the tail of a stream of text, and counts what was cut between."""

    def __init__(self, cap_chars: int) -> None:
        self.cap = max(cap_chars, 64)
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        half = self.cap // 2
        if self._head_len < half:
            take = text[: half - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take) :]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len > half and self._tail:
            excess = self._tail_len - half
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
                self.dropped += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess
                self.dropped += excess

    def text(self) -> str:
        head, tail = "".join(self._head), "".join(self._tail)
        if not self.dropped:
            return head + tail
        return f"{head}\n[… {self.dropped} characters cut from the middle of the output …]\n{tail}"
