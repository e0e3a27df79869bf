"""Per-hunk review of a file change: take some hunks, leave the others.

Each hunk shows its diff under a checkbox: space takes or leaves the one focused, up and down
move, Enter applies those taken (the model is told exactly which were applied and which were
not), Esc goes back to the card without deciding.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Footer, Static

from pheron_tui.core.diffs import split_hunks
from pheron_tui.ui.widgets.diff_view import diff_content


class HunkCheck(Checkbox, inherit_bindings=False):
    BINDINGS = [
        Binding("space", "toggle_button", "Take or leave"),
        Binding("down", "app.focus_next", "Next", show=False),
        Binding("up", "app.focus_previous", "Previous", show=False),
    ]

    def __init__(self, number: int) -> None:
        super().__init__(f"hunk {number + 1}", value=True)
        self.number = number


class HunkReview(ModalScreen[list[int] | None]):
    BINDINGS = [
        Binding("enter", "apply", "Apply those taken", priority=True),
        Binding("a", "all(True)", "Take all"),
        Binding("r", "all(False)", "Leave all"),
        Binding("escape", "dismiss(None)", "Back"),
    ]

    def __init__(self, path: str, diff: str) -> None:
        super().__init__()
        self.path = path
        self.diff = diff

    def compose(self) -> ComposeResult:
        hunks = split_hunks(self.diff)
        with Vertical(id="hunks-box", classes="modal-box"):
            yield Static(
                f"{self.path}: {len(hunks)} hunks · space takes or leaves one · "
                "Enter applies those taken · Esc goes back",
                classes="modal-title",
                markup=False,
            )
            with VerticalScroll(id="hunks-list"):
                for number, hunk in enumerate(hunks):
                    yield HunkCheck(number)
                    yield Static(diff_content(hunk), classes="hunk-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.query(HunkCheck).first().focus()

    def action_all(self, take: bool) -> None:
        for check in self.query(HunkCheck):
            check.value = take

    def action_apply(self) -> None:
        self.dismiss([check.number for check in self.query(HunkCheck) if check.value])
