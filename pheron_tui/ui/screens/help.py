"""The help screen: every key, and how turns and approvals behave."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown

from pheron_tui.ui.slash import COMMANDS

_HELP = """\
# pheron-tui

*Press `escape`, `f1` or `q` to close this help.*

Type a message and press **Enter**. pheron-tui decides whether it is *chat* (answered directly)
or a *task* (planned with tools). Each tool call appears in the **Tool calls** pane and, under
the `ask` policy, waits for you.

## Keys

| key | what it does |
| --- | --- |
| `enter` | send the message (`ctrl+j` or `shift+enter`: a new line; a paste stays one block) |
| `/` | commands (below): the matching ones are listed as you type, `tab` completes |
| `@` | attach a workspace file: a picker opens, filtered as you type |
| `y` | approve the waiting tool call once |
| `a` | approve it and allow the same for the session (not offered for a dangerous call) |
| `n` | deny the waiting tool call (the model is told it was denied) |
| `h` | review a waiting edit hunk by hunk: take some, leave the others |
| `escape` | interrupt the running turn: stops generation, kills a running command |
| `escape` `escape` | on an empty message box: rewind to an earlier turn |
| `ctrl+c` | interrupt the running turn (or copy a selection); twice on an idle app, quit |
| `shift+tab` | plan mode: read-only tools run without asking; the model answers with a plan |
| `ctrl+n` | a fresh conversation (`/new`) |
| `ctrl+p` | the command palette: every command and its key |
| `ctrl+t` | hide or show the thinking pane |
| `ctrl+r` | approval rules: revoke (`d`), keep for this project (`p`) or everywhere (`u`) |
| `ctrl+o` | sessions: pick a recorded session and carry it on (not during a turn) |
| `ctrl+g` | restart the MCP servers that failed (shown only then) |
| `f1` | this help |
| `ctrl+q` | quit (asks first while a turn is running) |

{commands}

## Edits

A `write_file` or `edit_file` card shows the diff of what it would change (a new file shows all
of it). With two hunks or more, `h` opens the hunk review: `space` takes or leaves a hunk,
`enter` applies those taken, and the model is told exactly which were applied. Before any tool
changes a file, the file is saved (outside the workspace), so `/rewind` can put it back.
Shell commands and MCP tools cannot be undone that way: the rewind screen names the turns that
ran them.

## Context

The status bar shows the tokens the last request used against the model's window, and
`AGENTS.md` when the project's instructions (the workspace's AGENTS.md and those above it up to
the repository root) are in the system prompt. Near the window, older turns are summarised by
the model into a note that replaces them; the chat says so and what was kept. Nothing is cut
silently. `/context` shows what the model sees, part by part.

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


def _commands() -> str:
    rows = "\n".join(f"| `{c.usage}` | {c.help} |" for c in COMMANDS)
    return (
        "## Commands\n\nA message starting with `/` is a command, never sent to the model "
        "(start it with `//` to send a slash). An unknown command is an error.\n\n"
        f"| command | what it does |\n| --- | --- |\n{rows}"
    )


HELP = _HELP.replace("{commands}", _commands())


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
