"""Per-hunk review of a file change: take some hunks, leave the others.

Space toggles the highlighted hunk, Enter applies those taken (the model is told exactly which
were applied and which were not), Esc goes back to the card without deciding.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, SelectionList, Static
from textual.widgets.selection_list import Selection

from pheron_tui.core.diffs import split_hunks
from pheron_tui.ui.widgets.diff_view import diff_content


class HunkList(SelectionList[int]):
    BINDINGS = [Binding("enter", "screen.apply", "Apply the taken hunks")]


class HunkReview(ModalScreen[list[int] | None]):
    BINDINGS = [
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
            yield HunkList(
                *(
                    Selection(
                        Content.assemble(
                            Content.styled(f"hunk {n + 1}\n", "bold"), diff_content(hunk)
                        ),
                        n,
                        True,
                    )
                    for n, hunk in enumerate(hunks)
                ),
                id="hunks-list",
            )
        yield Footer()

    def action_all(self, take: bool) -> None:
        listing = self.query_one(HunkList)
        if take:
            listing.select_all()
        else:
            listing.deselect_all()

    def action_apply(self) -> None:
        self.dismiss(sorted(self.query_one(HunkList).selected))
