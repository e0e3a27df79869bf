"""The session picker: every recorded session, newest first; Enter resumes the one selected."""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from pheron_tui.core.safety import printable
from pheron_tui.session.store import (
    LoadedSession,
    SessionError,
    first_prompt,
    list_sessions,
    session_line,
)


def describe(path: Path, loaded: LoadedSession | SessionError) -> Content:
    """One line a user can recognise a session by; always literal (prompts are user text)."""
    if isinstance(loaded, SessionError):
        return Content(printable(f"{path.stem}  unreadable: {loaded}"))
    first = first_prompt(loaded, 60, "(no messages)")
    line = f"{session_line(path, loaded)}  {first}\n    {loaded.header.workspace}"
    return Content(printable(line))


class SessionList(OptionList):
    BINDINGS = [Binding("enter", "select", "Resume")]


class SessionPicker(ModalScreen[LoadedSession | None]):
    """Lists sessions (read in a thread: every log is parsed) and returns the one chosen."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, current_session_id: str, folder: Path | None = None) -> None:
        super().__init__()
        self.current_session_id = current_session_id
        self.folder = folder
        self.sessions: dict[str, LoadedSession] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box"):
            yield Static("Sessions · Enter resumes · Esc closes", id="sessions-title")
            yield SessionList(id="sessions-list")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).loading = True
        self.load_sessions()

    @work(thread=True, exclusive=True)
    def load_sessions(self) -> None:
        rows = list_sessions(self.folder)
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[tuple[Path, LoadedSession | SessionError]]) -> None:
        options = self.query_one(OptionList)
        options.loading = False
        empty = [
            path
            for path, loaded in rows
            if isinstance(loaded, LoadedSession)
            and not loaded.prompts
            and path.stem != self.current_session_id
        ]
        rows = [row for row in rows if row[0] not in empty]  # nothing in them to carry on
        if empty:
            self.query_one("#sessions-title", Static).update(
                f"Sessions · Enter resumes · Esc closes · {len(empty)} without messages hidden"
            )
        for path, loaded in rows:
            current = path.stem == self.current_session_id
            usable = isinstance(loaded, LoadedSession) and not current
            if isinstance(loaded, LoadedSession) and not current:
                self.sessions[path.stem] = loaded
            label = describe(path, loaded)
            if current:
                label = label + Content("  (this session)")
            options.add_option(Option(label, id=path.stem, disabled=not usable))
        if not rows:
            options.add_option(Option("No sessions recorded yet.", disabled=True))
        resumable = [i for i, (path, _) in enumerate(rows) if path.stem in self.sessions]
        if resumable:
            options.highlighted = resumable[0]
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id in self.sessions:
            self.dismiss(self.sessions[event.option.id])

    def action_close(self) -> None:
        self.dismiss(None)
