"""ToolRegistry: tools by name and by UBID, their specs, and argument validation."""

from __future__ import annotations

import hashlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ValidationError

from pheron_tui.core.diffs import FileChange
from pheron_tui.core.errors import PheronError
from pheron_tui.core.events import Risk
from pheron_tui.core.limits import DEFAULT_OUTPUT_CAP_CHARS, DEFAULT_SHELL_TIMEOUT_S
from pheron_tui.core.messages import FunctionSpec, ToolSpec
from pheron_tui.core.rules import CommandFacts
from pheron_tui.core.safety import shorten

log = logging.getLogger("pheron_tui.tools")


def ubid(name: str) -> str:
    """A tool's stable id for the legacy ``CALL(UBID)`` form: the same for a name everywhere."""
    return "U" + hashlib.sha256(name.encode()).hexdigest()[:6].upper()


@dataclass
class ToolContext:
    workspace: Path
    shell_timeout_s: float = DEFAULT_SHELL_TIMEOUT_S
    output_cap_chars: int = DEFAULT_OUTPUT_CAP_CHARS
    on_output: Callable[[str], object] = field(default=lambda _text: None)
    shell_prefix: list[str] | None = None
    """An argv that wraps shell commands (the sandbox), or None to run them directly."""
    shell_refusal: str | None = None
    """Why shell commands may not run at all (a sandbox was required but is missing)."""
    protected: tuple[Path, ...] = ()
    """Places no tool may read or write even inside the workspace: pheron-tui's own config,
    data and cache, and secret folders such as ~/.ssh."""
    seen: dict[Path, tuple[int, int]] = field(default_factory=dict)
    """Files whose text the model has been shown this session (read, or written by a tool),
    each with its (mtime_ns, size) then. Adding to a file or replacing it needs it seen as it
    is now: written blind, a small model appended a second copy of a function, or a script,
    to a file it had never looked at."""
    kept: tuple[str, ...] = ()
    """Files the turn keeps as they are (paths from the workspace root): the check script a
    request names to pass. A change another file needs is refused for good when it is one of
    these, since its use could never be changed after."""
    warned: set[tuple[str, ...]] = field(default_factory=set)
    """Calls the model was warned about once (an overwrite that drops most of a file), each
    as a key its tool makes: the same call made again goes ahead."""


@dataclass
class RiskAssessment:
    tier: Risk
    reasons: list[str] = field(default_factory=list)
    commands: list[CommandFacts] | None = None
    """For shell commands: every simple command, as approval rules match it."""


LIKELY_MEANT = " did you mean "
"""How a tool result names the entry a missing path likely meant ("old_folder does not exist;
did you mean old/?"): a correction the model is sent back to make (``send_back``)."""


@dataclass
class ToolResult:
    ok: bool
    observation: str
    unchanged: tuple[str, ...] = ()
    """The files a command named to write and left as they were (every one it named): it
    changed nothing, though it ran."""


class Tool(ABC):
    name: str
    description: str
    Args: ClassVar[type[BaseModel]]
    risk: Risk = "read"
    values_said: ClassVar[bool] = True
    """Whether the values a call needs come from what was said (names, ids, numbers), so
    that a first call filled with ones nobody said is a guess (``grounding.guessed_values``).
    False where the model writes them itself: a command line, a file's text."""
    options_said: ClassVar[bool] = True
    """Whether an optional argument shows in the request's own words when it was asked for, so
    that one nobody spoke of can be left out on a first step (``grounding.unasked_options``).
    False where an option reads the request's verbs instead: write_file's ``append`` for
    "add a line"."""
    fails_whole: ClassVar[bool] = False
    """Whether a call that fails has changed nothing: it checks everything before it writes,
    and writes at once. A failed shell command may have written half of what it meant to."""
    on_workspace: ClassVar[bool] = False
    """Whether the tool works on the workspace (files, folders, commands): the model may call
    it to look around before answering whatever was asked, so its purpose is not judged
    against the request (``tool_fit``). A tool made for one job (an MCP server's) is."""

    def assess(self, args: Any, ctx: ToolContext) -> RiskAssessment:
        """The risk of this particular call; tools that can do more than their tier override it."""
        return RiskAssessment(self.risk)

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as the model is shown it."""
        parameters = _clean_schema(self.Args.model_json_schema())
        parameters.setdefault("properties", {})
        parameters.setdefault("required", [])
        parameters.pop("additionalProperties", None)
        return parameters

    def validate(self, arguments: dict[str, Any]) -> BaseModel:
        """The arguments checked; raises ToolCallError saying, for the model, what is wrong."""
        try:
            return self.Args.model_validate(arguments)
        except ValidationError as exc:
            raise ToolCallError(
                f"invalid arguments for {self.name}: {_describe_validation(exc)}"
            ) from None

    def refusal(self, args: Any, ctx: ToolContext) -> str | None:
        """Why this call cannot run whoever approves it (a path outside the workspace), for
        the model; checked before anyone is asked. None when it may be asked about."""
        return None

    async def preview(self, args: Any, ctx: ToolContext) -> FileChange | ToolResult | None:
        """The text change this call would make to one file, for the approval card's diff and
        per-hunk review; the failed result when the call cannot work (nobody is asked about
        it); None for tools that do not write one text file."""
        return None

    async def write_reviewed(self, change: FileChange, text: str, ctx: ToolContext) -> ToolResult:
        """Write ``text`` (the change with only the hunks a person took) instead of running
        the call. Only tools whose ``preview`` returns changes implement it."""
        raise NotImplementedError

    def touches(self, args: Any, ctx: ToolContext) -> list[str]:
        """The workspace paths this call may create, change or remove, as given; recorded
        before it runs so a rewind can put them back. Empty for tools that change no file, or
        whose effects cannot be known beforehand (shell commands, MCP tools)."""
        return []

    def named_writes(self, args: Any, ctx: ToolContext) -> list[str]:
        """The workspace paths this call names to write, as given, for checks made before it
        runs (the script of the check a fix must pass is not to be changed). Unlike
        ``touches`` a best guess is enough: a shell command's redirections and ``sed -i``."""
        return self.touches(args, ctx)

    @abstractmethod
    async def run(self, args: Any, ctx: ToolContext) -> ToolResult: ...


class ToolCallError(PheronError, ValueError):
    """A call that cannot run; the message is written for the model to correct itself."""


@dataclass
class PreparedCall:
    tool: Tool
    args: BaseModel

    @property
    def arguments(self) -> dict[str, Any]:
        return self.args.model_dump(mode="json", exclude_unset=True)


def _clean_schema(schema: Any) -> Any:
    """Pydantic's JSON schema without the titles, which only add noise to a small model's prompt."""
    if isinstance(schema, dict):
        return {k: _clean_schema(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_clean_schema(v) for v in schema]
    return schema


_PROBLEMS_SHOWN = 6
"""A call with 20,000 made-up keys had a 500 KB message, sent to the model and shown."""


def _describe_validation(error: ValidationError) -> str:
    parts = []
    problems = error.errors()
    for item in problems[:_PROBLEMS_SHOWN]:
        where = shorten(".".join(str(p) for p in item["loc"]), 60) or "arguments"
        if item["type"] == "extra_forbidden":
            parts.append(f"{where}: no such parameter")
        elif item["type"] == "missing":
            parts.append(f"{where}: required but missing")
        else:
            parts.append(f"{where}: {item['msg']} (got {item.get('input')!r:.60})")
    if len(problems) > _PROBLEMS_SHOWN:
        parts.append(f"and {len(problems) - _PROBLEMS_SHOWN:,} more")
    return "; ".join(parts)


class ToolSource(Protocol):
    """Tools that come and go while the app runs (an MCP server's)."""

    async def refresh(self, registry: ToolRegistry) -> None: ...


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._by_name: dict[str, Tool] = {}
        self._by_ubid: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._by_name[tool.name] = tool
        self._by_ubid[ubid(tool.name)] = tool

    def __iter__(self):
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> list[str]:
        return list(self._by_name)

    def get(self, name_or_ubid: str) -> Tool | None:
        key = name_or_ubid.strip().strip("[]")
        return self._by_name.get(key) or self._by_ubid.get(key.upper())

    def unknown(self, name: str) -> str:
        """What to tell a model that names no tool of this registry."""
        shown = shorten(name, 60) if name else "(no name)"
        return f"unknown tool {shown!r}; the tools are: {', '.join(self._by_name)}"

    def unregister(self, name: str) -> None:
        self._by_name.pop(name, None)
        self._by_ubid.pop(ubid(name), None)

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    async def refresh(self) -> None:
        """Let every source bring its tools up to date (an MCP server's list may change);
        called before each planning step. A source's trouble is its own: never raised here."""
        for source in self._sources:
            try:
                await source.refresh(self)
            except Exception:  # a source must not stop a turn
                log.exception("refreshing a tool source failed")

    def spec(self, tool: Tool) -> ToolSpec:
        return ToolSpec(
            function=FunctionSpec(
                name=tool.name, description=tool.description, parameters=tool.parameters()
            )
        )

    def specs(self) -> list[ToolSpec]:
        return [self.spec(tool) for tool in self._by_name.values()]

    def schemas(self) -> dict[str, dict[str, Any]]:
        """Parameter schemas by tool name, for typing XML call values."""
        return {spec.function.name: spec.function.parameters for spec in self.specs()}

    def prepare(self, name: str, arguments: Any) -> PreparedCall:
        """Look the tool up and validate the arguments; raise ToolCallError saying what is wrong."""
        tool = self.get(name) if name else None
        if tool is None:
            raise ToolCallError(self.unknown(name))
        if not isinstance(arguments, dict):
            raise ToolCallError(f"arguments for {tool.name} must be a JSON object")
        return PreparedCall(tool=tool, args=tool.validate(arguments))
