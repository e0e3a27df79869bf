"""The thinking pane: one foldable block per answer or planning cycle, streamed live."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static

from pheron_tui.core.safety import printable

MAX_CHARS_PER_BLOCK = 20_000
"""A block keeps its newest text; older text is cut so a long think cannot grow without bound."""


class ThinkBlock(Collapsible):
    def __init__(self, title: str) -> None:
        self.body = Static(classes="think-text")
        self.text = ""
        super().__init__(self.body, title=title, collapsed=False)

    def write(self, text: str) -> None:
        self.text += printable(text)
        if len(self.text) > MAX_CHARS_PER_BLOCK:
            self.text = "[…] " + self.text[-MAX_CHARS_PER_BLOCK:]
        self.body.update(Content(self.text))


class ThinkingPane(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Thinking"
        self._blocks: dict[tuple[int, str, int], ThinkBlock] = {}

    def on_mount(self) -> None:
        self.anchor()

    async def clear(self) -> None:
        self._blocks.clear()
        await self.remove_children()

    async def add_text(self, turn_id: int, phase: str, step: int, text: str) -> None:
        key = (turn_id, phase, step)
        block = self._blocks.get(key)
        if block is None:
            for older in self._blocks.values():
                older.collapsed = True  # keep the newest block open, fold the rest
            title = f"turn {turn_id} · {phase}" + (f" step {step}" if step else "")
            block = ThinkBlock(title)
            self._blocks[key] = block
            await self.mount(block)
        block.write(text)

    async def note_no_thinking(self, turn_id: int, chat: bool) -> None:
        """Say why the pane stayed empty for a turn, so nobody waits for thoughts to come."""
        why = (
            "thinking is off for chat answers"
            if chat
            else "the model wrote no thinking (not every model has a thinking mode)"
        )
        await self.mount(Static(Content(f"turn {turn_id} · {why}"), classes="think-note"))
