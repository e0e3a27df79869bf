"""The chat pane: user messages, streamed Markdown answers, questions and notes."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from pheron_tui.core.safety import printable, shorten

SENT_BACK_NOTE_CHARS = 240


class UserMessage(Static):
    def __init__(self, text: str) -> None:
        super().__init__(Content(printable(text)), classes="message user")


class AssistantMessage(Markdown):
    """An answer streamed as Markdown. Links are never opened: the text is the model's."""

    def __init__(self) -> None:
        super().__init__("", classes="message assistant", open_links=False)
        self._stream: MarkdownStream | None = None
        self.text = ""

    async def add_text(self, text: str) -> None:
        # Not ``append``: that is Markdown's own method, which the stream calls.
        self.text += text
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(printable(text))

    async def finish(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


class Note(Static):
    """A question, error or status line in the conversation; always literal text."""

    def __init__(self, text: str, kind: str) -> None:
        super().__init__(Content(printable(text)), classes=f"message note -{kind}")


class ChatPane(VerticalScroll):
    """The conversation; stays pinned to the newest text unless the user scrolls up."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._answer: AssistantMessage | None = None
        self.border_title = "Chat"
        self.turn_id = 0
        """The turn whose messages are being added (a rewind removes them by turn)."""

    async def _add(self, widget: Static | Markdown) -> None:
        widget.add_class(f"turn-{self.turn_id}")
        await self.mount(widget)

    async def remove_turns(self, first: int) -> None:
        """Take away what turn ``first`` and every later one added (a rewind)."""
        await self.end_answer()
        gone = [
            child
            for child in self.children
            for name in child.classes
            if name.startswith("turn-") and int(name[5:]) >= first
        ]
        await self.remove_children(gone)

    def on_mount(self) -> None:
        self.anchor()

    async def add_user(self, text: str) -> None:
        await self.end_answer()
        await self._add(UserMessage(text))

    async def add_answer_text(self, text: str) -> None:
        if self._answer is None:
            self._answer = AssistantMessage()
            await self._add(self._answer)
        await self._answer.add_text(text)

    async def end_answer(self) -> None:
        if self._answer is not None:
            await self._answer.finish()
            self._answer = None

    async def send_back_answer(self, note: str) -> None:
        """The answer shown since the last call was sent back to the model: shown dimmed,
        with the note it was answered with, and the next reply starts its own block."""
        if self._answer is not None:
            self._answer.add_class("-sent-back")
        await self.add_note(
            f"↩ sent back to the model: {shorten(note, SENT_BACK_NOTE_CHARS)}", "info"
        )

    async def clear(self) -> None:
        await self.end_answer()
        await self.remove_children()

    async def add_note(self, text: str, kind: str) -> None:
        await self.end_answer()
        await self._add(Note(text, kind))
