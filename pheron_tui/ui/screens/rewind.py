"""/rewind (and Esc Esc on an empty message box): go back to before an earlier turn.

Each turn shows the files its tools changed and, in warning colour, the tools whose effects a
checkpoint cannot hold (shell commands, MCP tools): putting files back does not undo those.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from pheron_tui.core.checkpoints import TurnRecord
from pheron_tui.core.safety import printable, shorten

WARN = "$text-warning"
MUTED = "$text-muted"


@dataclass(frozen=True)
class RewindChoice:
    turn_id: int
    files: bool
    conversation: bool


def describe(record: TurnRecord) -> Content:
    changed = sorted({state.path for state in record.saved})
    files = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
    lines = [
        Content.styled(f"Turn {record.turn_id}", "bold"),
        Content("  " + printable(shorten(record.prompt.replace("\n", " "), 70))),
    ]
    body = [Content.assemble(*lines)]
    body.append(Content("    files: " + printable(files or "none changed")))
    if record.untracked:
        ran = ", ".join(record.untracked)
        body.append(Content.styled(f"    ran {printable(ran)}: not undone by a rewind", WARN))
    if not record.complete:
        body.append(Content.styled("    some files could not be saved before they changed", WARN))
    if record.history_start is None:
        body.append(Content.styled("    compacted: only its files can be put back", MUTED))
    return Content("\n").join(body)


class RewindScreen(ModalScreen[RewindChoice | None]):
    BINDINGS = [
        Binding("b", "choose(True, True)", "Files and conversation"),
        Binding("c", "choose(False, True)", "Conversation only"),
        Binding("f", "choose(True, False)", "Files only"),
        Binding("escape", "dismiss(None)", "Close"),
    ]

    def __init__(self, records: list[TurnRecord]) -> None:
        super().__init__()
        self.records = {record.turn_id: record for record in records}

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-box", classes="modal-box"):
            yield Static(
                "Rewind to before a turn · b files and conversation · c conversation only · "
                "f files only · Esc closes",
                classes="modal-title",
                markup=False,
            )
            listing = OptionList(id="rewind-list")
            for record in reversed(list(self.records.values())):
                listing.add_option(Option(describe(record), id=str(record.turn_id)))
            if not self.records:
                listing.add_option(Option(Content("No turns yet."), disabled=True))
            yield listing
        yield Footer()

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        listing.focus()
        if self.records:
            listing.highlighted = 0  # the latest turn

    def action_choose(self, files: bool, conversation: bool) -> None:
        listing = self.query_one(OptionList)
        if listing.highlighted is None:
            return
        option_id = listing.get_option_at_index(listing.highlighted).id
        if option_id is None:
            return
        record = self.records[int(option_id)]
        if conversation and record.history_start is None:
            self.notify("That turn was compacted: only its files can be put back (f).",
                        severity="warning")  # fmt: skip
            return
        self.dismiss(RewindChoice(record.turn_id, files, conversation))
