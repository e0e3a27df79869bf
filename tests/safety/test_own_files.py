"""A model cannot grant itself rights or read the user's secrets, even with the workspace at
the home folder (hostile review, class 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pheron_tui.config import app_paths
from pheron_tui.core.tools import ToolContext
from pheron_tui.tools.bubblewrap import bubblewrap_argv, secret_paths
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.shell_risk import assess_shell

from ..command import run_scripted, tool_call

RULE = '[[rules]]\naction = "allow"\ntool = "shell_exec"\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder that is also the workspace, with the app's config and an ssh key in it."""
    home = tmp_path / "home"
    (home / ".config" / "pheron-tui").mkdir(parents=True)
    (home / ".config" / "pheron-tui" / "config.toml").write_text("max_steps = 5\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MATERIAL")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("AWS-SECRET-MATERIAL")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    return home


def context(home: Path) -> ToolContext:
    return ToolContext(workspace=home, protected=app_paths() + secret_paths())


async def call(ctx: ToolContext, name: str, **arguments):
    prepared = default_registry().prepare(name, arguments)
    return await prepared.tool.run(prepared.args, ctx)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (
            "write_file",
            {"path": ".config/pheron-tui/config.toml", "content": RULE, "mode": "overwrite"},
        ),
        (
            "write_file",
            {"path": ".config/pheron-tui/other.toml", "content": RULE, "mode": "overwrite"},
        ),
        ("edit_file", {"path": ".config/pheron-tui/config.toml", "old": "5", "new": "9"}),
        ("read_file", {"path": ".ssh/id_rsa"}),
        ("read_file", {"path": ".aws/credentials"}),
        ("list_dir", {"path": ".ssh"}),
        (
            "write_file",
            {
                "path": ".local/share/pheron-tui/sessions/x.jsonl",
                "content": "{}",
                "mode": "overwrite",
            },
        ),
    ],
)
async def test_file_tools_refuse_the_apps_own_files_and_secrets(
    home: Path, tool: str, arguments: dict
) -> None:
    result = await call(context(home), tool, **arguments)
    assert not result.ok and "Refused" in result.observation
    assert "PRIVATE-KEY" not in result.observation and "AWS-SECRET" not in result.observation
    assert (home / ".config" / "pheron-tui" / "config.toml").read_text() == "max_steps = 5\n"


async def test_search_skips_secrets(home: Path) -> None:
    result = await call(context(home), "search_files", pattern="MATERIAL", path=".")
    assert "PRIVATE-KEY" not in result.observation and "AWS-SECRET" not in result.observation


def test_shell_writes_to_the_apps_files_are_dangerous(home: Path) -> None:
    line = f"echo '{RULE}' >> .config/pheron-tui/config.toml"
    risk = assess_shell(line, home, app_paths())
    assert risk.tier == "dangerous"
    assert any("pheron-tui's own settings" in r for r in risk.reasons)


def test_the_sandbox_hides_secrets_over_the_workspace_bind(home: Path) -> None:
    argv = bubblewrap_argv("bwrap", home, network=False, protected=app_paths())
    bind = argv.index("--bind")
    hidden = argv.index(str(home / ".ssh"))
    config = argv.index(str(home / ".config" / "pheron-tui"))
    assert bind < hidden and bind < config  # later mounts cover earlier ones


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_sandboxed_commands_cannot_read_secrets_or_write_rules_from_home(home: Path) -> None:
    commands = [
        "cat ~/.ssh/id_rsa ~/.aws/credentials",
        f"printf '{RULE}' >> ~/.config/pheron-tui/config.toml",
    ]
    plan = [tool_call("shell_exec", command=c) for c in commands] + ["done"]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    done, events = run_scripted(
        home, replies, "--json", "--approve", "all", "--sandbox", "require", env=env
    )
    assert done.returncode == 0, done.stderr
    finished = [e for e in events if e["type"] == "ToolCallFinished"]
    assert len(finished) == 2  # both ran (in the sandbox), neither got through
    assert "PRIVATE-KEY" not in done.stdout and "AWS-SECRET" not in done.stdout
    assert (home / ".config" / "pheron-tui" / "config.toml").read_text() == "max_steps = 5\n"
    assert "The workspace is" in done.stderr and "--workspace" in done.stderr


def test_a_workspace_at_home_or_root_is_warned_about(home: Path) -> None:
    replies = {"classify": ["chat"], "chat": ["hi"]}
    done, _ = run_scripted(home, replies, env={"HOME": str(home)})
    assert done.returncode == 0
    assert f"The workspace is {home.resolve()}" in done.stderr
    elsewhere = home / "project"
    elsewhere.mkdir()
    done, _ = run_scripted(elsewhere, replies, env={"HOME": str(home)})
    assert "The workspace is" not in done.stderr
