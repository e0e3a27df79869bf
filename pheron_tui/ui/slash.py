"""Slash commands: what the user may type as ``/word``, and what each one does.

A message starting with ``/`` is never sent to the model: it is a command, or an error that
names the closest one. The same commands are in the command palette (``ui/palette.py``) with
their key bindings, so each is one place: its name, its argument, its help and its action.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str
    help: str
    action: str
    """The app action it runs (``action_<name>``); the argument, if any, is passed on."""
    argument: str = ""
    """What it takes, as the help shows it (``NAME``, ``[FILE]``); empty for nothing."""
    required: bool = False

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument}".rstrip()


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "Show the keys and commands", "help"),
    SlashCommand("new", "Start a fresh conversation (the old one stays in /sessions)", "new"),
    SlashCommand("model", "Switch model; it loads in the background", "model", "NAME", True),
    SlashCommand("plan", "Plan mode on or off: only read-only tools, a plan to review", "plan"),
    SlashCommand("rewind", "Go back to an earlier turn: files, conversation or both", "rewind"),
    SlashCommand("compact", "Summarise older turns to free the context window", "compact"),
    SlashCommand("context", "What the model sees, with token counts", "context"),
    SlashCommand("sessions", "Resume an earlier session", "sessions"),
    SlashCommand("rules", "The approval rules in force", "rules"),
    SlashCommand("export", "Save this conversation as Markdown", "export", "[FILE]"),
    SlashCommand("quit", "Quit pheron-tui", "quit"),
)
BY_NAME = {command.name: command for command in COMMANDS}


class SlashError(ValueError):
    """A ``/word`` that is no command, or a command used wrongly; the message says which."""


def is_command(text: str) -> bool:
    """``/word``: a command. ``//…`` sends the text from its second slash (a path, say)."""
    return text.startswith("/") and not text.startswith("//")


def parse(text: str) -> tuple[SlashCommand, str]:
    """The command and its argument; SlashError for an unknown word or a missing argument."""
    word, _, argument = text[1:].strip().partition(" ")
    command = BY_NAME.get(word.lower())
    if command is None:
        close = difflib.get_close_matches(word.lower(), BY_NAME, n=1)
        hint = f" Did you mean /{close[0]}?" if close else ""
        raise SlashError(
            f"Unknown command /{word}.{hint} Type / to see the commands; start a message with "
            "// to send a slash to the model."
        )
    argument = argument.strip()
    if command.required and not argument:
        raise SlashError(f"/{command.name} needs {command.argument}: {command.usage}")
    if not command.argument and argument:
        raise SlashError(f"/{command.name} takes nothing after it")
    return command, argument


def completions(text: str) -> list[SlashCommand]:
    """The commands the input could become: those starting with what is typed after ``/``."""
    if not is_command(text) or " " in text or "\n" in text:
        return []
    typed = text[1:].lower()
    return [command for command in COMMANDS if command.name.startswith(typed)]
