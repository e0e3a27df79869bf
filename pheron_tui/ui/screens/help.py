"""The help screen: every key, and how turns and approvals behave."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown

HELP = """\
# pheron-tui

*Press `escape`, `f1` or `q` to close this help.*

Type a message and press **Enter**. pheron-tui decides whether it is *chat* (answered directly)
or a *task* (planned with tools). Each tool call appears in the **Tool calls** pane and, under
the `ask` policy, waits for you.

## Keys

| key | what it does |
| --- | --- |
| `enter` | send the message in the input line |
| `y` | approve the waiting tool call once |
| `a` | approve it and allow the same for the session (not offered for a dangerous call) |
| `n` | deny the waiting tool call (the model is told it was denied) |
| `escape` | interrupt the running turn: stops generation, kills a running command |
| `ctrl+t` | hide or show the thinking pane |
| `ctrl+r` | approval rules: revoke (`d`), keep for this project (`p`) or everywhere (`u`) |
| `ctrl+o` | sessions: pick a recorded session and carry it on (not during a turn) |
| `ctrl+g` | restart the MCP servers that failed (shown only then) |
| `f1` | this help |
| `ctrl+q` | quit (asks first while a turn is running) |

## While a call waits

The input line is locked and the waiting card takes the focus, so `y`, `a` and `n` can never
be typed into your message by accident. The keys show in the footer only while a call waits.
A card ignores keys for its first 0.3 s (its hint reads "keys count in a moment", dimmed), so
a key meant for something else cannot approve a call you have not seen yet; once the hint
lights up, the keys count.

## While a turn runs

The status bar says what runs and for how long. While the model plans or a tool runs,
sending another message is refused with a notice: press `escape` to interrupt first. Once
the answer is shown and the critic reviews it, you may type the next message: it is sent
when the review ends. One sent while the model is still loading is sent when it is ready.

## Sessions

Every session is written to disk as it happens. `ctrl+o` lists them, newest first; `enter`
resumes the one highlighted: its conversation is shown and the model sees it all again. The
session you leave stays on disk and can be resumed the same way.

## Rules

`a` allows the tool from now on, or for a shell command its program and subcommand
(`git status`, `pytest`, `python -m pytest`): `git status; rm -rf ~` is still asked about,
because `rm` has no rule. `ctrl+r` lists the rules in force; session rules can be kept in the
config file for this project or for every project. Deny rules are written there by hand:

    [[rules]]
    action = "deny"
    tool = "shell_exec"
    command = "git push"

## Safety

Every call carries a risk tier on its card: read, write, execute or **dangerous** (deleting many
files, privilege escalation, running downloaded code, writing outside the workspace, using the
network), with the reasons. A dangerous call always asks, whatever the rules say. Shell
commands run inside bubblewrap when it is installed (status bar: system read-only, workspace
writable, no network). Text from the model and from tools is always shown literally: markup and
terminal control sequences are displayed, never interpreted. File tools refuse any path outside
the workspace before anyone is asked.
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
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
