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

    def __init__(
        self, call_id: str, tool: str, arguments: dict, risk: str, reasons: list[str] = ()
    ) -> None:
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
        self._reasons = Static(
            literal("\n".join(f"⚠ {reason}" for reason in reasons)), classes="tool-reasons"
        )
        self._reasons.display = bool(reasons)
        self._hint = Static(literal("y approve · a always · n deny"), classes="tool-hint")
        self._preview = Static(classes="tool-preview")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._reasons
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

    def offer_always(self, allows: list[str]) -> None:
        """Say what "always" would allow from now on, or that it is not offered."""
        if allows:
            text = f"y approve · a always ({', '.join(allows)}, this session) · n deny"
        else:
            text = 'y approve once · n deny · (no "always" for a dangerous call)'
        self._hint.update(literal(text))

    def add_output(self, text: str) -> None:
        self._output = (self._output + text)[-OUTPUT_KEEP_CHARS:]
        self._show(self._output)

    def finish(self, status: str, observation: str, duration_ms: float) -> None:
        if status != "denied":  # a denied call never ran: no duration to show
            self.duration_ms = duration_ms
        self.set_status(status)
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

    def show(self, card: ToolCard) -> None:
        """Bring a card's header into view once it is laid out. Not an anchored log: a card
        can be taller than the pane, and its header (tool, risk, status) is what matters."""
        self.call_after_refresh(card.scroll_visible, top=True, animate=False, immediate=True)

    async def clear(self) -> None:
        self.cards.clear()
        await self.remove_children()

    async def add_card(
        self, call_id: str, tool: str, arguments: dict, risk: str, reasons: list[str] = ()
    ) -> ToolCard:
        card = ToolCard(call_id, tool, arguments, risk, list(reasons))
        self.cards[call_id] = card
        await self.mount(card)
        self.show(card)
        return card
