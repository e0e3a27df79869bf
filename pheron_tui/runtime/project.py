"""The project around the workspace: its AGENTS.md instructions, and the checkpointer that
keeps files before tools change them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from pheron_tui.core import events as ev
from pheron_tui.core.tools import ToolContext
from pheron_tui.session.blobs import BlobStore
from pheron_tui.tools.checkpoint import snapshot

INSTRUCTIONS_FILE = "AGENTS.md"
INSTRUCTIONS_CHARS = 8000
"""All AGENTS.md files together are cut to this (about 2,000 tokens), the nearest kept whole."""


@dataclass
class Instructions:
    text: str = ""
    files: list[Path] = field(default_factory=list)
    cut: int = 0
    """Characters left out to stay under the cap."""

    @property
    def summary(self) -> str:
        if not self.files:
            return ""
        names = ", ".join(str(p) for p in self.files)
        cut = f", {self.cut:,} characters cut" if self.cut else ""
        return f"{len(self.text):,} characters from {names}{cut}"


def _folders_up_to_repository(workspace: Path) -> list[Path]:
    """The workspace and its parents up to the repository root (the folder holding .git),
    outermost first; only the workspace when it is in no repository."""
    here = workspace.resolve()
    chain = [here]
    for parent in here.parents:
        if (chain[-1] / ".git").exists():
            break
        chain.append(parent)
    else:
        chain = [here]  # reached / without a repository
    return list(reversed(chain))


def load_instructions(workspace: Path, limit: int = INSTRUCTIONS_CHARS) -> Instructions:
    """Every AGENTS.md from the repository root down to the workspace, outer first (inner
    files are more specific and come last, nearest the conversation)."""
    found = Instructions()
    parts: list[str] = []
    for folder in _folders_up_to_repository(workspace):
        path = folder / INSTRUCTIONS_FILE
        try:
            # Only a regular file, and only as much as could be kept: a FIFO would block the
            # start-up and a link to something huge would fill the memory.
            if not path.is_file():
                continue
            with path.open("rb") as handle:
                text = handle.read(limit * 4).decode("utf-8", errors="replace").strip()
        except OSError:
            continue
        if text:
            found.files.append(path)
            parts.append(f"Instructions from {path}:\n{text}")
    if not parts:
        return found
    text = "\n\n".join(parts)
    if len(text) > limit:
        # Keep the end: the workspace's own file, the most specific, comes last.
        found.cut = len(text) - limit
        text = "[…start of the project instructions cut…]\n" + text[-limit:]
    found.text = "The project's instructions (AGENTS.md); follow them:\n" + text
    return found


class WorkspaceCheckpointer:
    """The core's Checkpointer: files read from the workspace, bytes kept in a BlobStore."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store

    async def save(self, paths: list[str], ctx: ToolContext) -> tuple[list[ev.SavedFile], bool]:
        return await asyncio.to_thread(
            snapshot, ctx.workspace, ctx.protected, paths, self.store.put
        )
