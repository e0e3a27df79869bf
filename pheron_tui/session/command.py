"""``pheron-tui sessions`` and ``pheron-tui export``."""

from __future__ import annotations

import sys
from pathlib import Path

from pheron_tui.core.safety import printable
from pheron_tui.session.store import (
    SessionError,
    first_prompt,
    list_sessions,
    load_session,
    session_line,
    sessions_dir,
    to_markdown,
)


def find_session(key: str) -> Path:
    """A session file by id, by the start of its id, or ``last``."""
    found = [path for path, _ in list_sessions()]
    if key == "last" and found:
        return found[0]
    matches = [p for p in found if p.stem == key] or [p for p in found if p.stem.startswith(key)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionError(f"no session {key!r} in {sessions_dir()}")
    raise SessionError(f"{key!r} matches {len(matches)} sessions; give more of the id")


def run_sessions() -> int:
    rows = list_sessions()
    if not rows:
        print(f"no sessions yet in {sessions_dir()}")
        return 0
    for path, loaded in rows:
        if isinstance(loaded, SessionError):
            print(printable(f"{path.stem}  (unreadable: {loaded})"))
            continue
        first = first_prompt(loaded, 50)
        print(printable(f"{session_line(path, loaded)}  {loaded.header.workspace}  {first}"))
        if loaded.damage:
            print(printable(f"    {loaded.damage}"))
    return 0


def run_export(key: str) -> int:
    try:
        session = load_session(find_session(key))
    except SessionError as exc:
        print(printable(f"pheron-tui: {exc}"), file=sys.stderr)
        return 2
    if session.damage:
        print(printable(f"pheron-tui: {session.damage}"), file=sys.stderr)
    # Escape sequences from files and prompts are shown, never sent to the terminal.
    sys.stdout.write(printable(to_markdown(session)))
    return 0
