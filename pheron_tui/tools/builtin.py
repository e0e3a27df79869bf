"""The built-in tools, as one list and as the registry a session starts with."""

from __future__ import annotations

from pheron_tui.core.tools import Tool, ToolRegistry
from pheron_tui.tools.moving import CopyPath, DeletePath, MakeDir, MovePath
from pheron_tui.tools.reading import ListDir, ReadFile, SearchFiles
from pheron_tui.tools.shell_exec import ShellExec
from pheron_tui.tools.writing import EditFile, WriteFile


def builtin_tools() -> list[Tool]:
    return [
        ReadFile(),
        ListDir(),
        SearchFiles(),
        WriteFile(),
        EditFile(),
        CopyPath(),
        MovePath(),
        MakeDir(),
        DeletePath(),
        ShellExec(),
    ]


def default_registry() -> ToolRegistry:
    return ToolRegistry(builtin_tools())
