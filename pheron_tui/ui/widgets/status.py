"""The status bar: what the agent is doing first, then model, speed, sandbox and cache.

The state always shows, with a spinner and the seconds it has lasted while something runs;
the details after it are dropped whole, least important first, when the line is too narrow.
"""

from __future__ import annotations

import time

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from pheron_tui.core import events as ev
from pheron_tui.core.messages import Usage
from pheron_tui.core.safety import printable

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
RESTING = frozenset({"idle", "model failed to load", "replay finished", "display stopped"})
"""States in which nothing runs: no spinner, no clock."""
WAITING = "waiting for your approval"
"""Nothing runs either, but the clock says how long the agent has waited."""
SEPARATOR = "  ·  "


class StatusBar(Static):
    state: reactive[str] = reactive("loading")
    detail: reactive[str] = reactive("")
    """More about the state, after its clock: what is loading, how much of a prompt is read.
    Cleared when the state changes."""
    model: reactive[str] = reactive("")
    sandbox: reactive[str] = reactive("")
    mcp: reactive[str] = reactive("")
    speed: reactive[str] = reactive("")
    cache: reactive[str] = reactive("")
    ttft: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    """``PLAN MODE`` while only read-only tools run."""
    context: reactive[str] = reactive("")
    """Tokens the last request used against the model's window."""
    project: reactive[str] = reactive("")
    """``AGENTS.md`` when the project's instructions were loaded."""

    window: int | None = None
    """The model's context window in tokens, where known."""

    clock = staticmethod(time.monotonic)
    """Where elapsed time comes from (snapshots stop it)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._since = self.clock()

    def watch_state(self, old: str, new: str) -> None:
        if old != new:
            self._since = self.clock()
            self.detail = ""
        # Redraw on a timer only while the spinner and the clock move.
        self.auto_refresh = None if new in RESTING else 1 / 8

    def state_text(self) -> str:
        """The state with a spinner and the seconds it has lasted, then its detail, e.g.
        ``⠹ planning 12 s · reading the prompt 512/3,922``."""
        name = self.state
        detail = f" · {self.detail.removeprefix(name + ' ')}" if self.detail else ""
        if name in RESTING:
            return name + detail
        elapsed = max(self.clock() - self._since, 0.0)
        clock = f" {elapsed:.0f} s" if elapsed >= 1 else ""
        mark = "●" if name == WAITING else SPINNER[int(elapsed * 8) % len(SPINNER)]
        return f"{mark} {name}{clock}{detail}"

    def render(self) -> Content:
        width = self.content_region.width or self.size.width
        state = self.state_text()
        if self.mode:
            state = f"{self.mode}{SEPARATOR}{state}"
        line = state if len(state) <= width else state[: max(width - 1, 0)] + "…"
        # In order of importance; each is dropped whole when it does not fit.
        parts = (
            self.model,
            self.context,
            self.speed,
            self.project,
            self.sandbox,
            self.mcp,
            self.cache,
            self.ttft,
        )
        for part in parts:
            if part and len(line) + len(SEPARATOR) + len(part) <= width:
                line += SEPARATOR + part
        return Content(printable(line))

    def show_usage(self, usage: Usage | ev.Usage) -> None:
        rate = usage.tokens_per_s
        self.ttft = f"ttft {usage.ttft_ms:.0f} ms"
        if usage.estimated:  # no usage from the provider: chunks counted, prompt unknown
            self.speed = f"~{rate:.0f} chunks/s (estimate)" if rate else "– chunks/s"
            self.cache = ""
            return
        self.speed = f"{rate:.1f} tok/s" if rate else "– tok/s"
        new = usage.prompt_tokens - usage.cached_tokens
        self.cache = f"prompt {usage.cached_tokens} cached / {new} new"
        if getattr(usage, "purpose", "chat") in (
            "chat",
            "plan",
        ):  # the conversation's size, not a side request's
            used = usage.prompt_tokens + usage.completion_tokens
            self.show_context(used)

    def show_context(self, used: int, estimated: bool = False) -> None:
        mark = "~" if estimated else ""
        if not self.window and not used:
            self.context = ""  # nothing to say yet
        elif self.window:
            self.context = f"ctx {mark}{_k(used)}/{_k(self.window)} ({used / self.window:.0%})"
        else:
            self.context = f"ctx {mark}{_k(used)}"


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
