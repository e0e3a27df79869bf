"""Sessions on disk: every event, as the JSON lines ``run --json`` prints, after a header.

Each line is flushed as it is written and the file is fsynced at the end of every turn, so a
killed process loses at most the line it was writing. Loading tolerates a truncated or corrupt
last line (reported once) and refuses a file from a newer format with a clear message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import platformdirs
from pydantic import BaseModel, Field, ValidationError

from pheron_tui import __version__
from pheron_tui.core import events as ev
from pheron_tui.core.bus import EventBus
from pheron_tui.core.errors import PheronError
from pheron_tui.core.messages import Message

FORMAT_VERSION = 1


class SessionHeader(BaseModel):
    type: str = "SessionHeader"
    format_version: int = FORMAT_VERSION
    app_version: str = __version__
    session_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
    """Names the log file: letters, digits, ``-`` and ``_`` only, so it stays in its folder."""
    provider: str
    model: str
    workspace: str
    started: float


class SessionError(PheronError, ValueError):
    """A session file that cannot be used; the message says why."""


def sessions_dir() -> Path:
    return Path(platformdirs.user_data_dir("pheron-tui")) / "sessions"


class SessionStore:
    """Appends every event on the bus to ``<sessions>/<session id>.jsonl``."""

    def __init__(self, bus: EventBus, header: SessionHeader, folder: Path | None = None) -> None:
        self.bus = bus
        self.folder = folder or sessions_dir()
        self.path = self.folder / f"{header.session_id}.jsonl"
        self.header = header
        self._file: IO[str] | None = None
        self._task: asyncio.Task[None] | None = None

    def open(self) -> None:
        # Logs hold file contents and command output: only their owner may read them.
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(self.folder, 0o700)
        resuming = self.path.exists() and self.path.stat().st_size > 0
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.fchmod(fd, 0o600)
        self._file = open(fd, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        if not resuming:  # a resumed session goes on in its own file, under its first header
            self._file.write(self.header.model_dump_json() + "\n")
            self._file.flush()

    def write(self, event: ev.Event) -> None:
        assert self._file is not None
        self._file.write(ev.event_to_json(event) + "\n")
        self._file.flush()
        if isinstance(event, ev.TurnFinished):
            os.fsync(self._file.fileno())

    def start(self) -> None:
        """Open the file and follow the bus until ``close``."""
        self.open()
        subscription = self.bus.add_subscriber(maxsize=1_000_000)

        async def follow() -> None:
            async for event in subscription:
                self.write(event)

        self._task = asyncio.get_running_loop().create_task(follow())
        self._subscription = subscription

    async def close(self) -> None:
        """Write what is queued, then close; safe to call twice and from another loop."""
        if self._task is not None:
            self.bus.remove_subscriber(self._subscription)
            if self._task.get_loop() is asyncio.get_running_loop():
                await self._task
            else:  # the loop that followed the bus is gone: write what it left queued
                for event in self._subscription.drain():
                    self.write(event)
            self._task = None
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None


@dataclass
class LoadedSession:
    header: SessionHeader
    events: list[ev.Event] = field(default_factory=list)
    damage: str = ""
    """What could not be read (a truncated last line), or empty."""

    @property
    def prompts(self) -> list[str]:
        return [e.prompt for e in self.events if isinstance(e, ev.TurnStarted)]

    @property
    def last_turn_id(self) -> int:
        return max((e.turn_id for e in self.events), default=0)

    @property
    def last_seq(self) -> int:
        return max((e.seq for e in self.events), default=0)

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"

    def conversation(self) -> list[Message]:
        """The conversation as the model saw it. A turn a crash cut short is closed where it
        stood: its unanswered calls answered "interrupted" and a note that it was cut."""
        history: list[Message] = []
        unanswered: dict[str, str] = {}  # call id -> tool name
        open_turn = False

        def close(interrupted: bool) -> None:
            for call_id, name in unanswered.items():
                history.append(
                    Message(role="tool", content="interrupted", tool_call_id=call_id, name=name)
                )
            unanswered.clear()
            if interrupted:
                # An empty reply closes the turn; words here would be copied by the model as
                # if it had said them (the log keeps what happened).
                history.append(Message(role="assistant", content=""))

        for event in self.events:
            if isinstance(event, ev.TurnStarted):
                if open_turn:
                    close(interrupted=True)
                open_turn = True
            elif isinstance(event, ev.TurnFinished):
                close(interrupted=False)
                open_turn = False
            elif isinstance(event, ev.ConversationReplaced):
                history[:] = event.messages  # a rewind or a compaction
                unanswered.clear()
            elif isinstance(event, ev.MessageAdded):
                message = event.message
                history.append(message)
                unanswered.update({call.id: call.name for call in message.tool_calls})
                if message.role == "tool":
                    unanswered.pop(message.tool_call_id or "", None)
        if open_turn:
            close(interrupted=True)
        return history

    @property
    def status(self) -> str:
        """How the newest turn ended: its TurnFinished status, or interrupted when it has none."""
        started = [e.turn_id for e in self.events if isinstance(e, ev.TurnStarted)]
        if not started:
            return "empty"
        finished = [
            e for e in self.events if isinstance(e, ev.TurnFinished) and e.turn_id == started[-1]
        ]
        return finished[-1].status if finished else "interrupted"


def load_session(path: Path) -> LoadedSession:
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the read forever
            raise SessionError(f"{path} is not a regular file")
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror}") from None
    if not lines:
        raise SessionError(f"{path} is empty")
    try:
        raw = json.loads(lines[0])
        version = int(raw.get("format_version", 0))
    except (ValueError, AttributeError, TypeError, OverflowError, RecursionError):
        raise SessionError(f"{path} has no session header") from None
    if version > FORMAT_VERSION:
        raise SessionError(
            f"{path} was written by a newer pheron-tui (session format {version}; this version "
            f"reads up to {FORMAT_VERSION}); upgrade pheron-tui to open it"
        )
    try:
        header = SessionHeader.model_validate(raw)
    except ValidationError as exc:
        raise SessionError(f"{path}: bad session header: {exc.errors()[0]['msg']}") from None
    session = LoadedSession(header=header)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            session.events.append(ev.event_from_json(line))
        except (ValidationError, ValueError, RecursionError):
            where = "last line" if number == len(lines) else f"line {number}"
            session.damage = f"{path.name}: {where} could not be read and was skipped"
    return session


def list_sessions(folder: Path | None = None) -> list[tuple[Path, LoadedSession | SessionError]]:
    """Every session in the folder, newest first by when it started (unreadable ones last)."""
    folder = folder or sessions_dir()
    found: list[tuple[Path, LoadedSession | SessionError]] = []
    for path in folder.glob("*.jsonl"):
        try:
            found.append((path, load_session(path)))
        except SessionError as exc:
            found.append((path, exc))

    def started(item: tuple[Path, LoadedSession | SessionError]) -> float:
        loaded = item[1]
        return loaded.header.started if isinstance(loaded, LoadedSession) else float("-inf")

    return sorted(found, key=started, reverse=True)


def session_line(path: Path, loaded: LoadedSession) -> str:
    """A session as lists show it: id, start, turns, how it ended (then each list adds the
    workspace and first prompt its own way)."""
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(loaded.header.started))
    turns = len(loaded.prompts)
    return (
        f"{path.stem}  {started}  {turns:>3} turn{'s' if turns != 1 else ' '}  {loaded.status:<11}"
    )


def first_prompt(loaded: LoadedSession, limit: int, empty: str = "") -> str:
    return (loaded.prompts[0] if loaded.prompts else empty).replace("\n", " ")[:limit]


def to_markdown(session: LoadedSession) -> str:
    """A readable transcript: prompts, answers, tool calls with results, verdicts."""
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(session.header.started))
    out = [
        f"# pheron-tui session {session.header.session_id}",
        "",
        f"{started} · {session.header.provider}: {session.header.model} · "
        f"workspace `{session.header.workspace}`",
    ]
    answer: list[str] = []
    calls: dict[str, ev.ToolCallProposed] = {}
    denied_by: dict[str, str] = {}

    def flush_answer() -> None:
        if "".join(answer).strip():
            out.extend(["", "".join(answer).strip()])
        answer.clear()

    for event in session.events:
        match event:
            case ev.TurnStarted(prompt=prompt):
                flush_answer()
                out.extend(["", "## You", "", prompt, "", "## Agent"])
            case ev.AnswerDelta(text=text):
                answer.append(text)
            case ev.AnswerSentBack(note=note):
                flush_answer()
                out.extend(["", f"*Sent back to the model: {note}*"])
            case ev.ToolCallProposed(call_id=call_id):
                flush_answer()
                calls[call_id] = event
            case ev.ToolCallDecided(call_id=call_id, decision="denied", by=by):
                denied_by[call_id] = by
                if call_id not in calls:  # a damaged log: say what is known
                    out.extend(["", f"- `(unknown call)` denied ({by})"])
            case ev.ToolCallFinished(call_id=call_id, status=call_status, observation=observation):
                call = calls.get(call_id)
                if call is None:
                    continue
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                status: str = call_status
                if call_id in denied_by:
                    status = f"denied ({denied_by[call_id]})"
                out.extend(
                    [
                        "",
                        f"- `{call.tool}` {arguments} → {status}",
                        "",
                        "  ```",
                        *[f"  {line}" for line in observation.splitlines()[:40]],
                        "  ```",
                    ]
                )
            case ev.ClarifyRequested(question=question):
                out.extend(["", f"**Question:** {question}"])
            case ev.CriticVerdict(verdict=verdict, reason=reason, auto=auto):
                flush_answer()
                out.extend(["", f"*Critic: {verdict}{' (automatic)' if auto else ''}: {reason}*"])
            case ev.TurnFinished(status=status, reason=reason) if status != "finished":
                flush_answer()
                out.extend(["", f"*Turn {status}: {reason}*"])
    flush_answer()
    if session.damage:
        out.extend(["", f"*{session.damage}*"])
    return "\n".join(out) + "\n"
