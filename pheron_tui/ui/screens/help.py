"""The help screen: every key, and how turns and approvals behave."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# pheron-tui

Type a message and press **Enter**. pheron-tui decides whether it is *chat* (answered directly)
or a *task* (planned with tools). Each tool call appears in the **Tool calls** pane and, under
the `ask` policy, waits for you.

## Keys

| key | what it does |
| --- | --- |
| `enter` | send the message in the input line |
| `y` | approve the waiting tool call once |
| `a` | approve it and always allow this tool for the rest of the session |
| `n` | deny the waiting tool call (the model is told it was denied) |
| `escape` | interrupt the running turn: stops generation, kills a running command |
| `ctrl+t` | hide or show the thinking pane |
| `ctrl+o` | sessions: pick a recorded session and carry it on (not during a turn) |
| `f1` | this help |
| `ctrl+q` | quit (asks first while a turn is running) |

## While a call waits

The input line is locked and the waiting card takes the focus, so `y`, `a` and `n` can never
be typed into your message by accident. The keys show in the footer only while a call waits.

## While a turn runs

Sending another message is refused with a notice until the turn ends: press `escape` to
interrupt it first. Messages are not queued, so nothing runs that you did not see start.

## Sessions

Every session is written to disk as it happens. `ctrl+o` lists them, newest first; `enter`
resumes the one highlighted: its conversation is shown and the model sees it all again. The
session you leave stays on disk and can be resumed the same way.

## Safety

Text from the model and from tools is always shown literally: markup and terminal control
sequences are displayed, never interpreted. Tools can only touch files inside the workspace.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close help"),
        Binding("f1", "close", "Close help", show=False),
        Binding("q", "close", "Close help", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP, open_links=False)

    def action_close(self) -> None:
        self.dismiss(None)
