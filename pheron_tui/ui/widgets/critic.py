"""The critic pane: one card per verdict."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from pheron_tui.core.safety import printable


class VerdictCard(Static):
    def __init__(self, turn_id: int, verdict: str, reason: str, auto: bool) -> None:
        how = "automatic" if auto else "model"
        text = f"{verdict} · turn {turn_id} · {how}\n{reason}"
        super().__init__(Content(printable(text)), classes=f"verdict -{verdict.lower()}")


class CriticPane(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Critic"

    def on_mount(self) -> None:
        self.anchor()

    async def clear(self) -> None:
        await self.remove_children()

    async def add_verdict(self, turn_id: int, verdict: str, reason: str, auto: bool) -> None:
        # Older verdicts fold to their first line, so the newest reason has the room.
        for older in self.query(VerdictCard):
            older.add_class("-folded")
        await self.mount(VerdictCard(turn_id, verdict, reason, auto))
