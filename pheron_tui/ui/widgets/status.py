"""The status bar: model, provider, state, speed, cache use and time to first token."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from pheron_tui.core import events as ev
from pheron_tui.core.messages import Usage
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

    def show_usage(self, usage: Usage | ev.Usage) -> None:
        rate, ttft = usage.tokens_per_s, f"ttft {usage.ttft_ms:.0f} ms"
        if usage.estimated:  # no usage from the provider: chunks counted, prompt unknown
            speed = f"~{rate:.0f} chunks/s (estimate)" if rate else "– chunks/s"
            self.usage = f"{speed}  ·  {ttft}"
            return
        speed = f"{rate:.1f} tok/s" if rate else "– tok/s"
        prompt = (
            f"prompt {usage.cached_tokens} cached / {usage.prompt_tokens - usage.cached_tokens} new"
        )
        self.usage = f"{speed}  ·  {prompt}  ·  {ttft}"
