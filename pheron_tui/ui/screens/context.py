"""/context: what the model sees on the next step, part by part, against its window."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from pheron_tui.core.context import CHARS_PER_TOKEN, ContextPart


class ContextScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(
        self, parts: list[ContextPart], window: int | None, last_prompt: int | None, note: str
    ) -> None:
        super().__init__()
        self.parts = parts
        self.window = window
        self.last_prompt = last_prompt
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="context-box", classes="modal-box"):
            yield Static("Context · what the model sees next · Esc closes", classes="modal-title")
            yield DataTable(id="context-table", cursor_type="none", zebra_stripes=True)
            yield Static(self._summary(), id="context-summary", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        estimated = any(part.estimated for part in self.parts)
        table.add_columns(
            "part", "tokens (estimated)" if estimated else "tokens", "share of window"
        )
        for part in self.parts:
            share = f"{part.tokens / self.window:.0%}" if self.window else "—"
            table.add_row(part.name, f"{part.tokens:,}", share)
        total = sum(part.tokens for part in self.parts)
        share = f"{total / self.window:.0%}" if self.window else "—"
        table.add_row("total", f"{total:,}", share)

    def _summary(self) -> str:
        window = f"{self.window:,} tokens" if self.window else "not known for this model"
        lines = [f"Context window: {window}."]
        if self.last_prompt:
            lines.append(
                f"The last request's prompt, as the engine counted it: {self.last_prompt:,}."
            )
        if any(part.estimated for part in self.parts):
            lines.append(f"Estimated at about {CHARS_PER_TOKEN} characters per token.")
        else:
            lines.append("Counted with the model's own tokenizer (template markers not included).")
        lines.append(
            "Near the window, older turns are summarised (/compact does it now); nothing is "
            "cut silently."
        )
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)
