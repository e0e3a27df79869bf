"""Checkpoints: what the files a tool is about to change were, so a rewind can put them back.

The core asks a ``Checkpointer`` (the runtime's, which reads the workspace and keeps the bytes
in a content-addressed store outside it) before a call runs, and publishes what was saved as
``FilesCheckpointed``. ``TurnRecord``\\s, kept live by the orchestrator and rebuilt from a
session's events the same way, say what each turn changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from pheron_tui.core import events as ev
from pheron_tui.core.tools import ToolContext


class Checkpointer(Protocol):
    async def save(self, paths: list[str], ctx: ToolContext) -> tuple[list[ev.SavedFile], bool]:
        """Each path (and, for a folder, what is in it) as it is now; True when all of it
        was saved."""
        ...


@dataclass
class TurnRecord:
    """One turn, as a rewind needs it."""

    turn_id: int
    prompt: str
    history_start: int | None
    """How many messages the conversation had before this turn; None once the turn was
    compacted into a summary (its files can still be put back, its conversation not)."""
    saved: list[ev.SavedFile] = field(default_factory=list)
    """Every path a tool changed in this turn, as it was before each change."""
    complete: bool = True
    untracked: list[str] = field(default_factory=list)
    """Tools that ran whose effects no checkpoint holds (shell commands, MCP tools)."""


class TurnRecords:
    """The turns of a conversation, fed with its events (live or from a log)."""

    def __init__(self) -> None:
        self.turns: list[TurnRecord] = []
        self._history = 0

    def add(self, event: ev.Event) -> None:
        match event:
            case ev.TurnStarted(turn_id=turn_id, prompt=prompt):
                self.turns.append(TurnRecord(turn_id, prompt, self._history))
            case ev.MessageAdded():
                self._history += 1
            case ev.ConversationReplaced():
                self._replaced(event)
            case ev.FilesCheckpointed(turn_id=turn_id, tool=tool, files=files, complete=done):
                record = self.get(turn_id)
                if record is None:
                    return
                record.saved.extend(files)
                if not files and not done:  # its effects could not be known beforehand
                    if tool not in record.untracked:
                        record.untracked.append(tool)
                else:
                    record.complete = record.complete and done

    def sync(self, history_length: int) -> None:
        """Line up with a conversation rebuilt from a log (an interrupted turn's closing
        messages are added there, not published)."""
        self._history = history_length

    def get(self, turn_id: int) -> TurnRecord | None:
        return next((r for r in self.turns if r.turn_id == turn_id), None)

    def _replaced(self, event: ev.ConversationReplaced) -> None:
        self._history = len(event.messages)
        if event.reason == "rewind":
            # The turns after the cut are gone from the conversation, and from the list.
            self.turns = [
                r for r in self.turns if r.history_start is None or r.history_start < self._history
            ]
            return
        shift = event.summarised - event.kept_from
        for record in self.turns:
            if record.history_start is None:
                continue
            if record.history_start < event.kept_from:
                record.history_start = None
            else:
                record.history_start += shift

    def start_of_last(self, keep_turns: int) -> int:
        """Where the last ``keep_turns`` turns start in the history; 0 when nothing is older
        (what a compaction may summarise ends there)."""
        starts = [r.history_start for r in self.turns if r.history_start is not None]
        if len(starts) <= keep_turns:
            return 0
        return starts[-keep_turns] if keep_turns > 0 else self._history

    def since(self, turn_id: int) -> list[TurnRecord]:
        return [r for r in self.turns if r.turn_id >= turn_id]


def states_before(records: Iterable[TurnRecord]) -> dict[str, ev.SavedFile]:
    """Each path changed in ``records`` (oldest first) as it was before the first change."""
    first: dict[str, ev.SavedFile] = {}
    for record in records:
        for state in record.saved:
            first.setdefault(state.path, state)
    return first
