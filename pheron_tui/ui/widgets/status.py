"""The status bar: model, provider, state, speed, cache use and time to first token."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from pheron_tui.core.safety import printable


class StatusBar(Static):
    state: reactive[str] = reactive("loading")
    model: reactive[str] = reactive("")
    usage: reactive[str] = reactive("")
    sandbox: reactive[str] = reactive("")

    def render(self) -> Content:
        parts = [self.model, self.sandbox, self.state]
        if self.usage:
            parts.append(self.usage)
        return Content(printable("  ·  ".join(p for p in parts if p)))

    def show_usage(self, tokens_per_s: float, prompt: int, cached: int, ttft_ms: float) -> None:
        speed = f"{tokens_per_s:.1f} tok/s" if tokens_per_s else "– tok/s"
        self.usage = (
            f"{speed}  ·  prompt {cached} cached / {prompt - cached} new  ·  ttft {ttft_ms:.0f} ms"
        )
