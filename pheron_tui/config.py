"""Settings: a TOML file in the user config directory, then PHERON_* variables, then flags.

A broken or mistyped setting gives one ``ConfigError`` naming where it came from (the file, the
variable or the flag), the key and the problem.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from pheron_tui.core.approval import Policy
from pheron_tui.core.errors import PheronError
from pheron_tui.core.limits import (
    DEFAULT_MAX_STEPS,
    DEFAULT_OUTPUT_CAP_CHARS,
    DEFAULT_SHELL_TIMEOUT_S,
)
from pheron_tui.tools.bubblewrap import SandboxMode
from pheron_tui.tools.builtin import builtin_tools
from pheron_tui.tools.mcp import SEPARATOR as MCP_SEPARATOR

APP_NAME = "pheron-tui"
ENV_PREFIX = "PHERON_"

ProviderName = Literal["auto", "mlx", "llamacpp", "openai", "scripted"]
ToolMode = Literal["auto", "native", "legacy"]
TOOL_NAMES = tuple(tool.name for tool in builtin_tools())
"""What a rule may name: the registry's own list, so a new tool cannot be missing here (and
any ``server__tool`` of an MCP server)."""


class RuleConfig(BaseModel):
    """One persistent approval rule, as written in the config file's ``[[rules]]`` tables."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["allow", "deny"]
    tool: str
    command: str = ""
    """shell_exec only: the words a command must start with (``git status``); empty: any."""
    workspace: str | None = None
    """A project rule: only in this workspace. Without it the rule applies everywhere."""

    @model_validator(mode="after")
    def _known_tool(self) -> RuleConfig:
        if self.tool not in TOOL_NAMES and MCP_SEPARATOR not in self.tool.strip(MCP_SEPARATOR):
            raise ValueError(
                f"unknown tool {self.tool!r}; the tools are {', '.join(TOOL_NAMES)}, and an MCP "
                f"server's as server{MCP_SEPARATOR}tool"
            )
        if self.command and self.tool != "shell_exec":
            raise ValueError("a command prefix only applies to shell_exec")
        try:
            shlex.split(self.command)
        except ValueError as exc:  # an unbalanced quote
            raise ValueError(f"command {self.command!r} cannot be split: {exc}") from None
        return self


class ConfigError(PheronError, ValueError):
    """A setting that cannot be used; the message names its source, key and problem."""


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def app_paths(config_path: Path | None = None) -> tuple[Path, ...]:
    """Where pheron-tui keeps its own files: config (with the approval rules), data (sessions),
    cache (models) and state, plus a config file given elsewhere. No tool may touch them."""
    places = [
        platformdirs.user_config_dir(APP_NAME),
        platformdirs.user_data_dir(APP_NAME),
        platformdirs.user_cache_dir(APP_NAME),
        platformdirs.user_state_dir(APP_NAME),
    ]
    if config_path is not None:
        places.append(str(config_path))
    return tuple(dict.fromkeys(Path(p).expanduser().resolve() for p in places))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", validate_default=True)

    provider: ProviderName = "auto"
    """Which engine runs the model; auto picks mlx on Apple Silicon, else llamacpp when it is
    installed, else mlx."""
    model: str = "default"
    """``default`` (the engine's default model), a catalogue name (``pheron-tui models
    list``), a .gguf file, a local MLX folder or a Hugging Face repo id."""
    script: Path | None = None
    """Replies for the scripted provider."""
    workspace: Path = Field(default_factory=Path.cwd)
    """The folder tools may read and write."""
    approve: Policy | None = None
    """Tool approval policy; None means the mode's default (ask in the TUI, none headless)."""
    max_steps: int = Field(DEFAULT_MAX_STEPS, ge=1, le=100)
    """Planning cycles before a task gives up."""
    shell_timeout_s: float = Field(DEFAULT_SHELL_TIMEOUT_S, gt=0, le=86_400)
    output_cap_chars: int = Field(DEFAULT_OUTPUT_CAP_CHARS, ge=256, le=10_000_000)
    record_sessions: bool = True
    """Write every session to the user data folder (``pheron-tui sessions`` lists them)."""
    chat_max_tokens: int = Field(1024, ge=1)
    plan_max_tokens: int = Field(2048, ge=1)
    base_url: str = "https://openrouter.ai/api/v1"
    """For --provider openai: the server's OpenAI-compatible base URL (ends in /v1)."""
    api_key_env: str | None = None
    """The variable holding the API key; default OPENROUTER_API_KEY for OpenRouter, else
    OPENAI_API_KEY. Local servers need none."""
    tool_mode: ToolMode = "auto"
    """For --provider openai: native function calling, the prompted legacy format, or native
    falling back to legacy when the server rejects tools."""
    max_retries: int = Field(3, ge=0, le=10)
    """Retries on 429, 5xx and dropped connections, with exponential backoff."""
    connect_timeout_s: float = Field(10.0, gt=0, le=600)
    read_timeout_s: float = Field(120.0, gt=0, le=3600)
    constrained: bool = True
    """In-process engines constrain tool calls to the tools' grammar (llguidance)."""
    sandbox: SandboxMode = "auto"
    """Run shell commands in bubblewrap: when installed (auto), always (require), never (off)."""
    sandbox_network: bool = False
    """Let sandboxed shell commands reach the network."""
    rules: list[RuleConfig] = Field(default_factory=list)
    """Persistent approval rules (``[[rules]]`` tables)."""
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    """MCP servers (``[mcp_servers.NAME]`` tables), each checked on its own when it starts, so
    a bad entry is reported without keeping the app from starting."""
    mcp: list[str] = Field(default_factory=list)
    """``--mcp NAME=COMMAND`` for this run."""
    notify: bool = True
    """TUI only: ring the bell and send a desktop notification (OSC 9 and OSC 777) when a
    call waits for approval or a long turn ends, and show the state in the window title."""
    notify_after_s: float = Field(15.0, ge=0)
    """A turn that ends is announced only when it took at least this long."""
    context_window: int | None = Field(None, ge=512)
    """For --provider openai: the model's context window in tokens (servers do not say);
    in-process engines know their own."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # ``load_settings`` reads and layers file, environment and flags itself so that each
        # error can name its source; all of it arrives here as init arguments.
        return (init_settings,)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None


def _first_problem(error: ValidationError, source: Callable[[str], str]) -> ConfigError:
    item = error.errors()[0]
    key = ".".join(str(p) for p in item["loc"]) or "(top level)"
    if item["type"] == "extra_forbidden":
        problem = "unknown setting"
    else:
        problem = f"{item['msg']} (got {item.get('input')!r})"
    return ConfigError(f"{source(key)}: {key}: {problem}")


def load_settings(
    flags: dict[str, Any] | None = None,
    config_path: Path | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Build the settings; raise ConfigError naming the file, variable or flag at fault.

    Each layer is validated on top of the ones below it, so an error is blamed on the layer
    that introduced it.
    """
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    path = config_path or default_config_path()
    file_values: dict[str, Any] = {}
    if config_path is not None or path.exists():
        if not path.exists():
            raise ConfigError(f"{path}: no such config file")
        file_values = _read_toml(path)
        try:
            Settings.model_validate(file_values)
        except ValidationError as exc:
            raise _first_problem(exc, lambda _key: str(path)) from None

    env = os.environ if environ is None else environ
    env_values = {
        name[len(ENV_PREFIX) :].lower(): value
        for name, value in env.items()
        if name.startswith(ENV_PREFIX) and name != f"{ENV_PREFIX}CONFIG"
    }
    for key in sorted(env_values):
        if key not in Settings.model_fields:
            raise ConfigError(f"environment: {ENV_PREFIX}{key.upper()}: unknown setting")
    layered = {**file_values, **env_values}
    try:
        Settings.model_validate(layered)
    except ValidationError as exc:
        raise _first_problem(
            exc,
            lambda key: (
                f"environment ({ENV_PREFIX}{key.upper()})" if key in env_values else str(path)
            ),
        ) from None
    try:
        return Settings(**{**layered, **flags})
    except ValidationError as exc:
        raise _first_problem(exc, lambda key: f"command line (--{key.replace('_', '-')})") from None
