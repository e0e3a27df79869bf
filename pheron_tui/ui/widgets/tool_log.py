"""The tool-call log: one card per call, from proposal to result."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from pheron_tui.core import events as ev
from pheron_tui.core.safety import printable
from pheron_tui.ui.widgets.diff_view import diff_content

DIFF_SHOWS = ("content", "old", "new")
"""Arguments whose text the diff shows already."""
PREVIEW_LINES = 12
OUTPUT_KEEP_CHARS = 8000


def literal(text: str) -> Content:
    return Content(printable(text))


class ToolCard(Vertical, can_focus=True):
    """A proposed call. Focusable, so the approval keys reach the app while it waits."""

    STATUS_LABELS = {
        "proposed": "proposed",
        "pending": "WAITING FOR YOU",
        "approved": "approved",
        "auto_approved": "auto-approved",
        "denied": "denied",
        "running": "running…",
        "ok": "ok",
        "failed": "failed",
        "cancelled": "cancelled",
    }

    status: reactive[str] = reactive("proposed", init=False)
    armed: reactive[bool] = reactive(False, init=False)
    """Whether decision keys count yet: a card ignores them for its first moment on screen."""

    def __init__(self, proposed: ev.ToolCallProposed) -> None:
        super().__init__(classes=f"tool-card -risk-{proposed.risk} -proposed")
        self.diff = proposed.diff
        self.hunks = proposed.hunks
        """How many hunks a person may take or leave one by one (0: the whole call only)."""
        arguments = proposed.arguments
        if self.diff:
            # The diff shows the text; the arguments keep only what it does not (path, mode).
            arguments = {k: v for k, v in arguments.items() if k not in DIFF_SHOWS}
        reasons = proposed.risk_reasons
        self.call_id = proposed.call_id
        self.tool = proposed.tool
        self.risk = proposed.risk
        self.duration_ms: float | None = None
        self.by = ""
        self._output = ""
        self._choices = "y approve · a always · n deny"
        self._header = Static(classes="tool-header")
        self._arguments = Static(
            literal(json.dumps(arguments, indent=2, ensure_ascii=False)), classes="tool-arguments"
        )
        self._reasons = Static(
            literal("\n".join(f"⚠ {reason}" for reason in reasons)), classes="tool-reasons"
        )
        self._reasons.display = bool(reasons)
        self._hint = Static(classes="tool-hint")
        self._hint.display = False
        self._preview = Static(classes="tool-preview")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._reasons
        yield VerticalScroll(self._arguments, classes="tool-arguments-box")
        if self.diff:
            yield VerticalScroll(Static(diff_content(self.diff)), classes="tool-diff")
        yield self._hint
        yield self._preview

    def on_mount(self) -> None:
        self._show_header()

    def watch_status(self, old: str, new: str) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")
        self._hint.display = new == "pending"
        self._show_header()

    def watch_armed(self, armed: bool) -> None:
        self.set_class(armed, "-armed")
        self._show_hint()

    def set_status(self, status: str, by: str = "") -> None:
        if by:
            self.by = by
        self.status = status
        self._show_header()  # ``by`` may change without the status

    def _show_header(self) -> None:
        label = self.STATUS_LABELS[self.status]
        shown_by = self.by and self.by != "user" and self.status not in ("proposed", "pending")
        who = f" by {self.by}" if shown_by else ""
        took = f" · {self.duration_ms / 1000:.1f} s" if self.duration_ms is not None else ""
        self._header.update(literal(f"{self.tool} · {self.risk} · {label}{who}{took}"))

    def await_decision(self, allows: list[str], dangerous: bool) -> None:
        """Wait for the user: say what "always" would allow from now on, or why it is not
        offered. The keys count once ``armed`` is set."""
        if allows:
            self._choices = f"y approve · a always ({', '.join(allows)}, this session) · n deny"
        elif dangerous:
            self._choices = 'y approve once · n deny · (no "always" for a dangerous call)'
        else:
            self._choices = "y approve once · n deny · (no rule could describe this call)"
        if self.hunks:
            self._choices += f" · h review {self.hunks} hunks one by one"
        self.status = "pending"
        self._show_hint()

    def _show_hint(self) -> None:
        prefix = "" if self.armed else "(keys count in a moment) "
        self._hint.update(literal(prefix + self._choices))

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

    async def add_card(self, proposed: ev.ToolCallProposed) -> ToolCard:
        card = ToolCard(proposed)
        self.cards[proposed.call_id] = card
        await self.mount(card)
        self.show(card)
        return card
