"""The message box: multi-line input with slash-command completion and ``@`` file mentions.

Enter sends; shift+enter or ctrl+j starts a new line; a paste arrives as one block, never
sent line by line. While the text is a ``/word``, the matching commands are listed above the
box: up and down choose, tab completes.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from pheron_tui.ui.slash import completions

NEWLINE_KEYS = ("shift+enter", "ctrl+j")


class CommandCompletion(OptionList, can_focus=False):
    """The slash commands the typed text could become."""


class PromptInput(TextArea):
    BINDINGS = [
        Binding("ctrl+j", "newline", "New line", show=False),
        Binding("tab", "complete", "Complete", show=False),
    ]

    @dataclass
    class Submitted(Message):
        prompt: PromptInput
        text: str

    @dataclass
    class MentionStarted(Message):
        """``@`` was typed where a mention can start: the app offers the file picker."""

        prompt: PromptInput

    def __init__(self, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            highlight_cursor_line=False,
            placeholder=placeholder,
            compact=True,
        )
        self.completion: CommandCompletion | None = None

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        completion = self.completion
        listing = completion is not None and completion.display
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if listing and self._complete(only_if_partial=True):
                return  # "/he" Enter → "/help ", like tab; Enter again runs it
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        if listing and event.key in ("up", "down") and completion is not None:
            event.stop()
            event.prevent_default()
            if event.key == "up":
                completion.action_cursor_up()
            else:
                completion.action_cursor_down()
            return
        if event.character == "@" and self._at_word_start():
            await super()._on_key(event)
            self.post_message(self.MentionStarted(self))
            return
        await super()._on_key(event)

    def _at_word_start(self) -> bool:
        row, column = self.cursor_location
        line = self.document[row]
        return column == 0 or line[column - 1].isspace()

    def action_newline(self) -> None:
        start, end = self.selection
        self._replace_via_keyboard("\n", start, end)

    def action_complete(self) -> None:
        if not self._complete():
            self.screen.focus_next()

    def _complete(self, only_if_partial: bool = False) -> bool:
        """Replace the typed ``/wo`` with the highlighted command; False when nothing to do."""
        completion = self.completion
        if completion is None or not completion.display or completion.highlighted is None:
            return False
        name = completion.get_option_at_index(completion.highlighted).id
        if name is None:
            return False
        if only_if_partial and self.text.strip() == f"/{name}":
            return False
        self.value = f"/{name} "
        return True


class PromptBar(Vertical):
    """The completion list over the message box."""

    def __init__(self, placeholder: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.completion = CommandCompletion(id="completion")
        self.completion.display = False
        self.input = PromptInput(placeholder, id="prompt")
        self.input.completion = self.completion

    def compose(self) -> ComposeResult:
        yield self.completion
        yield self.input

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        matches = completions(event.text_area.text)
        self.completion.clear_options()
        for command in matches:
            label = Content.assemble((command.usage, "bold"), "  ", (command.help, "dim"))
            self.completion.add_option(Option(label, id=command.name))
        self.completion.display = bool(matches)
        if matches:
            self.completion.highlighted = 0
