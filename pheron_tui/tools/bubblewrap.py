"""The shell sandbox: bubblewrap (``bwrap``) around every shell_exec command.

Inside: the whole system read-only, the workspace writable, a private /tmp, no network unless
allowed, well-known secret folders of the home directory hidden, a new session (no terminal
to inject keys into), and everything killed when the command's wrapper dies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SandboxMode = Literal["auto", "require", "off"]

# Hidden inside the sandbox even though the rest of the home directory stays readable.
SECRET_PATHS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".npmrc",
    ".config/gh",
    ".config/gcloud",
    ".cache/huggingface/token",
)


def secret_paths() -> tuple[Path, ...]:
    """The user's secret files and folders (``~/.ssh`` …): hidden from sandboxed commands, and
    refused to the file tools even when the workspace is the home folder."""
    home = Path.home()
    return tuple(home / relative for relative in SECRET_PATHS)


@dataclass(frozen=True)
class Sandbox:
    prefix: list[str] | None
    """The argv that wraps each shell command, or None to run commands directly."""
    refusal: str | None
    """Why shell commands may not run at all, or None."""
    label: str
    """What the status bar says."""


def bubblewrap_argv(
    bwrap: str, workspace: Path, network: bool, protected: Sequence[Path] = ()
) -> list[str]:
    """The bwrap argv. Mount order matters: later mounts cover earlier ones, so the secrets and
    the app's own files (``protected``) are mounted over the writable workspace, not under it
    (a workspace that is the home folder must not uncover ``~/.ssh``)."""
    root = str(workspace.resolve())
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
    ]
    if network:
        argv.append("--share-net")
    argv += ["--bind", root, root]
    for secret in secret_paths():
        if Path(root).is_relative_to(secret) or not secret.exists():
            continue
        if secret.is_dir():
            argv += ["--tmpfs", str(secret)]
        else:
            argv += ["--ro-bind", "/dev/null", str(secret)]
    for place in protected:
        if place.exists() and not Path(root).is_relative_to(place):
            argv += ["--ro-bind", str(place), str(place)]
    argv += ["--chdir", root, "--setenv", "TMPDIR", "/tmp", "--"]
    return argv


def bubblewrap_problem(bwrap: str, workspace: Path) -> str | None:
    """Why bubblewrap cannot run here (no user namespaces, say), or None when it can."""
    try:
        done = subprocess.run(
            [*bubblewrap_argv(bwrap, workspace, network=False), "/bin/true"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "it failed"
    return None


def choose_sandbox(
    mode: SandboxMode, workspace: Path, network: bool, protected: Sequence[Path] = ()
) -> Sandbox:
    if mode == "off":
        return Sandbox(None, None, "sandbox off")
    bwrap = shutil.which("bwrap") or (
        "/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None
    )
    problem = "bubblewrap is not installed" if bwrap is None else None
    if bwrap is not None:
        problem = bubblewrap_problem(bwrap, workspace)
        if problem:
            problem = f"bubblewrap cannot run here: {problem}"
    if problem is None and bwrap is not None:
        label = "sandboxed" + (", network on" if network else ", no network")
        return Sandbox(bubblewrap_argv(bwrap, workspace, network, protected), None, label)
    if mode == "require":
        refusal = (
            f"shell commands need the sandbox (--sandbox require) and {problem}; install "
            "bubblewrap or run with --sandbox auto"
        )
        return Sandbox(None, refusal, "no sandbox: shell refused")
    return Sandbox(None, None, f"no sandbox ({problem})")
