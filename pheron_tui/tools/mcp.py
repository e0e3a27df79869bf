"""MCP servers as tools: the user's servers join the registry as ``server__tool``.

A server is a command the app starts (stdio) or a URL (streamable HTTP). Each runs in a task
of its own that holds the connection; its tools are listed into the registry before every
planning step (a changed list counts from the next step), and every call goes through the same
risk tiers, approvals, output caps and prompt-injection defusing as a built-in tool's. A server
that cannot start or dies is reported and its tools leave the registry; the app carries on.

A stdio server runs under a small launcher that asks the kernel to signal it when the app dies
(``PR_SET_PDEATHSIG``) and then ends the server's whole process group: not even ``kill -9`` of
the app leaves a server behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pheron_tui.core.events import McpState, Risk
from pheron_tui.core.safety import shorten
from pheron_tui.core.tool_schema import repaired
from pheron_tui.core.tools import Tool, ToolCallError, ToolContext, ToolRegistry, ToolResult

log = logging.getLogger("pheron_tui.mcp")

SEPARATOR = "__"
"""Between the server's name and the tool's: ``git__git_status``."""
START_TIMEOUT_S = 30.0
LIST_TIMEOUT_S = 5.0

# Runs the server as its child, in the process group the SDK gave the launcher; when the app
# dies (the kernel's parent-death signal) or the SDK ends the launcher, the group goes too.
LAUNCHER = r"""
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
def end(*_):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.killpg(0, signal.SIGKILL)
signal.signal(signal.SIGTERM, end)
if os.getppid() == 1:
    end()
child = os.fork()
if child == 0:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    except OSError as exc:
        print(f"cannot start {sys.argv[1]}: {exc}", file=sys.stderr)
        os._exit(127)
_, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")


class _Entry(BaseModel):
    """One ``[mcp_servers.NAME]`` table of the config file."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)
    """Names of the app's environment variables the server may see (secrets stay out of the
    file); the server otherwise gets the SDK's minimal environment."""
    url: str | None = None
    headers_env: dict[str, str] = Field(default_factory=dict)
    """HTTP header → the environment variable holding its value."""
    timeout_s: float = Field(60.0, gt=0, le=3600)
    tools: list[str] | None = None
    """Only these of the server's tools (all when absent): fewer specs for a small model."""
    enabled: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> _Entry:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a server to start) or url, not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r} must start with http:// or https://")
        return self


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[str, ...] = ()
    headers_env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 60.0
    tools: tuple[str, ...] | None = None


def parse_servers(
    table: dict[str, Any], flags: Iterable[str] = ()
) -> tuple[list[ServerSpec], list[str]]:
    """The servers to run, and a problem per bad entry (naming it): one bad entry never
    keeps the others, or the app, from starting. ``flags`` are ``--mcp NAME=COMMAND``."""
    specs: dict[str, ServerSpec] = {}
    problems: list[str] = []
    for name, raw in table.items():
        if not _NAME.match(name) or SEPARATOR in name:
            problems.append(f"MCP server {name!r}: a name is letters, digits, - and _ (no __)")
            continue
        try:
            entry = _Entry.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"MCP server {name!r}: {where + ': ' if where else ''}{first['msg']}")
            continue
        if not entry.enabled:
            continue
        assert entry.command is not None or entry.url is not None
        specs[name] = ServerSpec(
            name=name,
            command=(entry.command, *entry.args) if entry.command else (),
            url=entry.url,
            env=tuple(entry.env),
            headers_env=dict(entry.headers_env),
            timeout_s=entry.timeout_s,
            tools=tuple(entry.tools) if entry.tools is not None else None,
        )
    for flag in flags:
        name, _, command = flag.partition("=")
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            problems.append(f"--mcp {flag!r}: {exc}")
            continue
        if not _NAME.match(name) or SEPARATOR in name or not argv:
            problems.append(f"--mcp {flag!r}: expected NAME=COMMAND")
            continue
        specs[name] = ServerSpec(name=name, command=tuple(argv))
    return list(specs.values()), problems


def risk_of(annotations: Any) -> Risk:
    """A tool's tier from the server's hints: read-only is ``read``, explicitly not
    destructive is ``write``, destructive is ``dangerous``, and no hint at all ``execute``.
    Deny rules still stop any of them; an allow rule never approves a dangerous one."""
    if annotations is None:
        return "execute"
    if getattr(annotations, "read_only_hint", None):
        return "read"
    destructive = getattr(annotations, "destructive_hint", None)
    if destructive is False:
        return "write"
    return "dangerous" if destructive else "execute"


def result_text(result: Any) -> tuple[bool, str]:
    """A tool result for the model: text as it is, structured content as JSON when there is
    no text, images, audio and resources by type and size."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '?')}, about {size:,} bytes]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(f"[resource {resource.uri}]\n{text}")
            else:
                size = len(getattr(resource, "blob", "") or "") * 3 // 4
                mime = getattr(resource, "mime_type", None) or "?"
                parts.append(f"[resource {resource.uri}: {mime}, about {size:,} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(p and not p.startswith("[") for p in parts):
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    text = "\n".join(parts) or "(the tool returned nothing)"
    return not bool(getattr(result, "is_error", False)), text


class _AnyArgs(BaseModel):
    """Arguments of an MCP tool: checked against the server's JSON schema, kept as given."""

    model_config = ConfigDict(extra="allow")


def _clean(schema: Any) -> dict[str, Any]:
    """The server's input schema as an object schema, its self-contradicting options read as
    meant (``tool_schema.repaired``): validation and the call's grammar then agree with the
    values the server takes."""
    cleaned = repaired(dict(schema)) if isinstance(schema, dict) else {}
    cleaned.setdefault("type", "object")
    cleaned.setdefault("properties", {})
    cleaned.setdefault("required", [])
    cleaned.pop("$schema", None)
    cleaned.pop("title", None)
    return cleaned


class McpTool(Tool):
    Args = _AnyArgs

    def __init__(self, server: McpServer, definition: Any) -> None:
        self.server = server
        self.remote_name: str = definition.name
        self.name = f"{server.spec.name}{SEPARATOR}{definition.name}"
        about = definition.description or getattr(definition, "title", None) or ""
        self.description = f"{shorten(about, 1000)} (from MCP server {server.spec.name})".strip()
        self.schema = _clean(getattr(definition, "input_schema", None))
        self.risk = risk_of(getattr(definition, "annotations", None))

    def parameters(self) -> dict[str, Any]:
        return self.schema

    def validate(self, arguments: dict[str, Any]) -> _AnyArgs:
        import jsonschema  # with the MCP SDK; only needed once a call is made

        try:
            jsonschema.validate(arguments, self.schema)
        except jsonschema.ValidationError as exc:
            where = ".".join(str(p) for p in exc.absolute_path) or "arguments"
            raise ToolCallError(
                f"invalid arguments for {self.name}: {where}: {shorten(exc.message, 200)}"
            ) from None
        except jsonschema.SchemaError:
            pass  # the server's schema is broken: let the server judge the arguments
        return _AnyArgs.model_validate(arguments)

    async def run(self, args: _AnyArgs, ctx: ToolContext) -> ToolResult:
        return await self.server.call(self.remote_name, args.model_dump())


class McpServer:
    """One server: its connection, held by a task of its own, and its tools."""

    def __init__(self, spec: ServerSpec, log_dir: Path, on_change: Callable[[McpServer], None]):
        self.spec = spec
        self.state: McpState = "stopped"
        self.error = ""
        self.tools: list[McpTool] = []
        self._log_dir = log_dir
        self._on_change = on_change
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._lost = ""
        """Why the connection is gone, found by a call or a listing (the SDK does not say)."""
        self._run = 0
        """Which start this is: an old connection closing late must not report."""

    def _set(self, state: McpState, error: str = "") -> None:
        self.state, self.error = state, error
        if state != "starting":
            self._settled.set()
        self._on_change(self)

    def start(self) -> None:
        """Start the server, or start it again after it failed (once the old connection
        has closed)."""
        previous = self._task
        if previous is not None and not previous.done() and self.state != "failed":
            return
        self._run += 1
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._lost = ""
        self.tools = []
        self._set("starting")
        self._task = asyncio.create_task(
            self._after(previous, self._run), name=f"mcp-{self.spec.name}"
        )

    async def _after(self, previous: asyncio.Task[None] | None, run: int) -> None:
        if previous is not None and not previous.done():
            with contextlib.suppress(BaseException):
                await previous
        await self._hold(run)

    async def settled(self, timeout: float) -> None:
        """Wait until the server is ready or has failed (or ``timeout`` passes)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout)

    async def _hold(self, run: int) -> None:
        from mcp import Client

        def report(state: McpState, error: str = "") -> None:
            if run == self._run:  # a restarted server's old connection says nothing
                self.tools = []
                self._set(state, error)

        stop = self._stop
        try:
            with self._errlog() as errlog:
                transport = self._transport(errlog)
                async with asyncio.timeout(START_TIMEOUT_S):
                    client = Client(transport, read_timeout_seconds=self.spec.timeout_s)
                    await client.__aenter__()
                try:
                    self._client = client
                    self.tools = await self._list()
                    self._set("ready")
                    await stop.wait()
                finally:
                    if run == self._run:
                        self._client = None
                    with contextlib.suppress(Exception):
                        await client.__aexit__(None, None, None)
        except asyncio.CancelledError:
            report("stopped")
            raise
        except BaseException as exc:  # a server's trouble is reported, not raised
            if not self._lost:
                report("failed", _describe(exc, self._log_path()))
            return
        if not self._lost:  # a lost server was reported when it was found gone
            report("stopped")

    def _log_path(self) -> Path:
        return self._log_dir / f"mcp-{self.spec.name}.log"

    @contextlib.contextmanager
    def _errlog(self):
        """The server's stderr goes to a log file (this run only): never onto the screen."""
        self._log_dir.mkdir(parents=True, exist_ok=True)
        with open(self._log_path(), "w", encoding="utf-8", errors="replace") as errlog:
            yield errlog

    def _transport(self, errlog: Any) -> Any:
        if self.spec.url is not None:
            return self._http_transport()
        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = {name: os.environ[name] for name in self.spec.env if name in os.environ}
        command, *args = self.spec.command
        if sys.platform.startswith("linux"):
            command, args = sys.executable, ["-c", LAUNCHER, command, *args]
        params = StdioServerParameters(
            command=command, args=args, env=env, encoding_error_handler="replace"
        )
        return stdio_client(params, errlog=errlog)

    def _http_transport(self) -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        missing = [v for v in self.spec.headers_env.values() if v not in os.environ]
        if missing:
            raise RuntimeError(f"environment variable {missing[0]} (for a header) is not set")
        headers = {header: os.environ[var] for header, var in self.spec.headers_env.items()}
        client = httpx2.AsyncClient(headers=headers, timeout=self.spec.timeout_s)
        assert self.spec.url is not None
        return streamable_http_client(self.spec.url, http_client=client)

    async def _list(self) -> list[McpTool]:
        client = self._client
        if client is None:
            return []
        async with asyncio.timeout(LIST_TIMEOUT_S):  # "refresh": a changed list is seen
            listed = await client.list_tools(cache_mode="refresh")
        wanted = self.spec.tools
        return [
            McpTool(self, definition)
            for definition in listed.tools
            if wanted is None or definition.name in wanted
        ]

    async def relist(self) -> None:
        """Pick up a changed tool list (``notifications/tools/list_changed`` or not)."""
        if self.state != "ready":
            return
        try:
            self.tools = await self._list()
        except Exception as exc:  # reported; the old list stays unless the server is gone
            log.warning("MCP %s: listing tools failed: %s", self.spec.name, exc)
            await self._check_alive(exc)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        client = self._client
        if client is None or self.state != "ready":
            why = self.error or self.state
            return ToolResult(False, f"MCP server {self.spec.name} is not running ({why})")
        try:
            async with asyncio.timeout(self.spec.timeout_s):
                result = await client.call_tool(name, arguments)
        except TimeoutError:
            return ToolResult(
                False,
                f"MCP server {self.spec.name}: {name} gave no result in {self.spec.timeout_s:g} s",
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the server's failure is the call's, not the app's
            await self._check_alive(exc)
            return ToolResult(
                False, f"MCP server {self.spec.name}: {name} failed: {_describe(exc)}"
            )
        ok, text = result_text(result)
        return ToolResult(ok, text)

    async def _check_alive(self, exc: BaseException) -> None:
        """After a failure: a server that no longer answers a ping is gone; say so and let
        its holder close the connection (its tools leave the registry)."""
        client = self._client
        try:
            if client is None:
                raise RuntimeError("not connected")
            async with asyncio.timeout(2):  # a fresh listing: ping is gone from the protocol
                await client.list_tools(cache_mode="bypass")
        except asyncio.CancelledError:
            raise
        except Exception:
            self._lost = f"the server stopped answering ({_describe(exc, self._log_path())})"
            self.tools = []
            self._set("failed", self._lost)  # at once: its tools leave the registry now
            self._stop.set()  # and its holder closes what is left of the connection

    async def stop(self) -> None:
        task = self._task
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            return  # never started, over, or its loop is gone (the process ends it then)
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _describe(exc: BaseException, log_path: Path | None = None) -> str:
    """An exception (the SDK raises groups) as one line a user can act on."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        text = f"no answer within {START_TIMEOUT_S:g} s"
    else:
        text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if log_path is None:
        return shorten(text, 300)
    last = _last_line(log_path)
    said = f"; it said: {shorten(last, 200)}" if last else ""
    return f"{shorten(text, 300)}{said} (its output: {log_path})"


def _last_line(path: Path) -> str:
    """The last thing a server wrote on stderr (why it would not start, usually)."""
    try:
        with open(path, "rb") as log_file:
            log_file.seek(max(log_file.seek(0, os.SEEK_END) - 2000, 0))
            lines = log_file.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return next((line.strip() for line in reversed(lines) if line.strip()), "")


class McpTools:
    """Every configured server; a tool source for the registry."""

    def __init__(
        self,
        specs: list[ServerSpec],
        log_dir: Path,
        on_change: Callable[[McpServer], None] = lambda _server: None,
    ) -> None:
        self.on_change = on_change
        """Told of every server's change (the runtime publishes it); may be replaced."""
        self.servers = {spec.name: McpServer(spec, log_dir, self._changed) for spec in specs}

    def _changed(self, server: McpServer) -> None:
        self.on_change(server)

    def start(self) -> None:
        for server in self.servers.values():
            server.start()

    async def settled(self, timeout: float = START_TIMEOUT_S) -> None:
        await asyncio.gather(*(s.settled(timeout) for s in self.servers.values()))

    def restart_failed(self) -> list[str]:
        failed = [s for s in self.servers.values() if s.state == "failed"]
        for server in failed:
            server.start()
        return [s.spec.name for s in failed]

    async def refresh(self, registry: ToolRegistry) -> None:
        await asyncio.gather(*(s.relist() for s in self.servers.values()))
        self.sync(registry)

    def sync(self, registry: ToolRegistry) -> None:
        """The registry holds exactly the tools of the servers that are ready."""
        current = {t.name: t for s in self.servers.values() if s.state == "ready" for t in s.tools}
        for tool in list(registry):
            if isinstance(tool, McpTool) and tool.name not in current:
                registry.unregister(tool.name)
        for tool in current.values():
            registry.register(tool)

    def spec_chars(self, server: McpServer, registry: ToolRegistry) -> int:
        """How much room a server's tool specs take in every planning prompt."""
        return sum(len(json.dumps(registry.spec(t).model_dump())) for t in server.tools)

    async def aclose(self) -> None:
        await asyncio.gather(*(s.stop() for s in self.servers.values()))
