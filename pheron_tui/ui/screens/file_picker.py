"""The ``@`` picker: workspace files (what .gitignore leaves), filtered fuzzily as you type."""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.fuzzy import Matcher
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from pheron_tui.core.safety import printable
from pheron_tui.runtime.mentions import workspace_files

SHOWN = 50


class FilePicker(ModalScreen[str | None]):
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.workspace = workspace
        self.files: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box", classes="modal-box"):
            yield Static("Attach a file · type to filter · Enter picks · Esc closes",
                         classes="modal-title")  # fmt: skip
            yield Input(placeholder="file name", id="picker-filter")
            yield OptionList(id="picker-list")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).loading = True
        self.list_files()

    @work(thread=True, exclusive=True)
    def list_files(self) -> None:
        files = workspace_files(self.workspace)
        self.app.call_from_thread(self._listed, files)

    def _listed(self, files: list[str]) -> None:
        self.files = files
        self.query_one(OptionList).loading = False
        self._filter(self.query_one(Input).value)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._filter(event.value)

    def _filter(self, query: str) -> None:
        listing = self.query_one(OptionList)
        listing.clear_options()
        if query:
            matcher = Matcher(query)
            scored = [(matcher.match(path), path) for path in self.files]
            ranked = [path for score, path in sorted(scored, key=lambda s: -s[0]) if score > 0]
        else:
            ranked = self.files
        for path in ranked[:SHOWN]:
            listing.add_option(Option(Content(printable(path)), id=path))
        if not ranked:
            listing.add_option(Option(Content("no file matches"), disabled=True))
        listing.highlighted = 0 if ranked else None

    def action_move(self, step: int) -> None:
        listing = self.query_one(OptionList)
        if step > 0:
            listing.action_cursor_down()
        else:
            listing.action_cursor_up()

    @on(Input.Submitted)
    def _picked_from_filter(self) -> None:
        listing = self.query_one(OptionList)
        if listing.highlighted is not None:
            self.dismiss(listing.get_option_at_index(listing.highlighted).id)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
