"""The tool-call log: one card per call, from proposal to result."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from pheron_tui.core.safety import printable

PREVIEW_LINES = 12
OUTPUT_KEEP_CHARS = 8000


def literal(text: str) -> Content:
    return Content(printable(text))


class ToolCard(Vertical, can_focus=True):
    """A proposed call. Focusable, so the approval keys reach the app while it waits."""

    STATUS_LABELS = {
        "pending": "WAITING FOR YOU",
        "approved": "approved",
        "auto_approved": "auto-approved",
        "denied": "denied",
        "running": "running…",
        "ok": "ok",
        "failed": "failed",
        "cancelled": "cancelled",
    }

    def __init__(self, call_id: str, tool: str, arguments: dict, risk: str) -> None:
        super().__init__(classes=f"tool-card -risk-{risk}")
        self.call_id = call_id
        self.tool = tool
        self.risk = risk
        self.status = "pending"
        self.duration_ms: float | None = None
        self.by = ""
        self._output = ""
        self._header = Static(classes="tool-header")
        self._arguments = Static(
            literal(json.dumps(arguments, indent=2, ensure_ascii=False)), classes="tool-arguments"
        )
        self._hint = Static(literal("y approve · a always · n deny"), classes="tool-hint")
        self._preview = Static(classes="tool-preview")

    def compose(self) -> ComposeResult:
        yield self._header
        yield VerticalScroll(self._arguments, classes="tool-arguments-box")
        yield self._hint
        yield self._preview

    def on_mount(self) -> None:
        self.set_status("pending")

    def set_status(self, status: str, by: str = "") -> None:
        self.status = status
        if by:
            self.by = by
        for name in self.STATUS_LABELS:
            self.set_class(name == status, f"-{name}")
        label = self.STATUS_LABELS[status]
        who = f" by {self.by}" if self.by and self.by != "user" and status != "pending" else ""
        took = f" · {self.duration_ms / 1000:.1f} s" if self.duration_ms is not None else ""
        self._header.update(literal(f"{self.tool} · {self.risk} · {label}{who}{took}"))
        self._hint.display = status == "pending"

    def add_output(self, text: str) -> None:
        self._output = (self._output + text)[-OUTPUT_KEEP_CHARS:]
        self._show(self._output)

    def finish(self, ok: bool, observation: str, duration_ms: float) -> None:
        if self.status != "denied":  # a denied call never ran: no duration to show
            self.duration_ms = duration_ms
        if self.status == "denied":
            self.set_status("denied")
        elif observation == "cancelled by the user":
            self.set_status("cancelled")
        else:
            self.set_status("ok" if ok else "failed")
        self._show(observation)

    def _show(self, text: str) -> None:
        lines = text.rstrip("\n").splitlines()
        shown = lines[-PREVIEW_LINES:] if self.status == "running" else lines[:PREVIEW_LINES]
        more = len(lines) - len(shown)
        preview = "\n".join(shown)
        if more > 0:
            preview += f"\n[… {more} more lines]" if self.status != "running" else ""
        self._preview.update(literal(preview))


class ToolLog(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Tool calls"
        self.cards: dict[str, ToolCard] = {}

    def on_mount(self) -> None:
        self.anchor()

    async def clear(self) -> None:
        self.cards.clear()
        await self.remove_children()

    async def add_card(self, call_id: str, tool: str, arguments: dict, risk: str) -> ToolCard:
        card = ToolCard(call_id, tool, arguments, risk)
        self.cards[call_id] = card
        await self.mount(card)
        return card
