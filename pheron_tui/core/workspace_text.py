"""A workspace file's text, read only when it is plainly one of the workspace's files."""

from __future__ import annotations

from pathlib import Path


def workspace_text(workspace: Path, relative: str, limit: int) -> str | None:
    """The text of the file ``relative`` below ``workspace`` (undecodable bytes replaced), or
    None when it is no regular file of the workspace: missing, a folder, a link (whose target
    may be anywhere), outside it, larger than ``limit`` bytes, or unreadable. For the guards
    and hints that look at a file the message names before any tool call does."""
    path = workspace / relative
    try:
        if (
            path.is_symlink()
            or not path.resolve().is_relative_to(workspace.resolve())
            or not path.is_file()
            or path.stat().st_size > limit
        ):
            return None
        return path.read_text(errors="replace")
    except (OSError, ValueError):
        return None
