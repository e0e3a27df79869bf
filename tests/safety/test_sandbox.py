"""shell_exec inside bubblewrap: the system read-only, the workspace writable, no network.

Skipped only where bubblewrap cannot run (not installed, or no user namespaces).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from pheron_tui.core.tools import ToolContext
from pheron_tui.tools import bubblewrap
from pheron_tui.tools.bubblewrap import bubblewrap_problem, choose_sandbox
from pheron_tui.tools.shell_exec import ShellExec

from ..processes import running_with

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or bubblewrap_problem(BWRAP, Path("/tmp")) is not None,
    reason=f"bubblewrap cannot run here: {BWRAP and bubblewrap_problem(BWRAP, Path('/tmp'))}",
)


async def sh(workspace: Path, command: str, network: bool = False, timeout: float = 20):
    sandbox = choose_sandbox("require", workspace, network)
    assert sandbox.prefix is not None, sandbox.refusal
    context = ToolContext(workspace=workspace, shell_prefix=sandbox.prefix, shell_timeout_s=timeout)
    return await ShellExec().run(ShellExec.Args(command=command), context)


@needs_bwrap
async def test_the_workspace_is_writable(workspace: Path) -> None:
    result = await sh(workspace, "echo made > made.txt && cat made.txt")
    assert result.ok and "made" in result.observation
    assert (workspace / "made.txt").read_text() == "made\n"


@needs_bwrap
async def test_writes_outside_the_workspace_fail(workspace: Path) -> None:
    # Not next to the workspace: that is under /tmp here, which the sandbox replaces.
    for outside in (Path("/etc/pheron-sandbox-probe"), Path.home() / "pheron-sandbox-probe"):
        try:
            result = await sh(workspace, f"echo pwned > {outside}")
            assert not result.ok and "Read-only file system" in result.observation
            assert not outside.exists()
        finally:
            outside.unlink(missing_ok=True)


@needs_bwrap
async def test_tmp_is_private(workspace: Path) -> None:
    result = await sh(workspace, "echo x > /tmp/pheron-private-probe && ls /tmp")
    assert result.ok
    assert not Path("/tmp/pheron-private-probe").exists()


@needs_bwrap
async def test_no_network_unless_allowed(workspace: Path) -> None:
    """A server on this machine's loopback cannot be reached from inside the sandbox."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); "
        "print('connected')\""
    )
    try:
        closed = await sh(workspace, probe)
        assert not closed.ok and "connected" not in closed.observation
        opened = await sh(workspace, probe, network=True)
        assert opened.ok and "connected" in opened.observation
    finally:
        server.close()


@pytest.fixture
def fake_home(monkeypatch: pytest.MonkeyPatch):
    """A home directory outside /tmp (the sandbox has its own /tmp)."""
    home = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="pheron-home-"))
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(home)


@needs_bwrap
async def test_secret_folders_of_home_are_hidden(workspace: Path, fake_home: Path) -> None:
    (fake_home / ".ssh").mkdir()
    (fake_home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY")
    (fake_home / ".netrc").write_text("machine x password hunter2")
    (fake_home / "notes.txt").write_text("ordinary")
    result = await sh(workspace, "cat ~/notes.txt; cat ~/.ssh/id_ed25519 ~/.netrc")
    assert "ordinary" in result.observation
    assert "PRIVATE-KEY" not in result.observation and "hunter2" not in result.observation


@needs_bwrap
async def test_timeout_leaves_no_process_behind(workspace: Path) -> None:
    result = await sh(workspace, "sleep 71.5 & sleep 70.5", timeout=1)
    assert "timed out" in result.observation
    for _ in range(60):
        if not running_with("71.5") and not running_with("70.5"):
            break
        await asyncio.sleep(0.05)
    assert not running_with("71.5") and not running_with("70.5")


@needs_bwrap
async def test_cancel_leaves_no_process_behind(workspace: Path) -> None:
    task = asyncio.create_task(sh(workspace, "sleep 72.5 & sleep 73.5"))
    for _ in range(200):
        if running_with("sleep 72.5") and running_with("sleep 73.5"):
            break
        await asyncio.sleep(0.05)
    assert running_with("sleep 72.5")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(60):
        if not running_with("72.5") and not running_with("73.5"):
            break
        await asyncio.sleep(0.05)
    assert not running_with("72.5") and not running_with("73.5")


def test_require_refuses_shell_commands_without_bubblewrap(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda _name: None)
    monkeypatch.setattr(bubblewrap.os, "access", lambda *_args: False)
    required = choose_sandbox("require", workspace, network=False)
    assert required.prefix is None and "bubblewrap is not installed" in required.refusal
    context = ToolContext(workspace=workspace, shell_refusal=required.refusal)
    result = asyncio.run(ShellExec().run(ShellExec.Args(command="echo hi > x"), context))
    assert not result.ok and result.observation.startswith("Refused: shell commands need")
    assert not (workspace / "x").exists()
    auto = choose_sandbox("auto", workspace, network=False)
    assert auto.prefix is None and auto.refusal is None
    assert auto.label == "no sandbox (bubblewrap is not installed)"
    assert choose_sandbox("off", workspace, network=False).label == "sandbox off"
