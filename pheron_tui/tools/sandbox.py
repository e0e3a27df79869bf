"""Keeping tools inside the workspace: path confinement and shell processes.

Paths: every path a model names is resolved (symlinks followed) and must land inside the
workspace. Shell: each command runs in its own process group with stdin closed, a scrubbed
environment, a timeout and a cap on captured output; the whole group is killed on timeout,
on cancel and when the command ends (so no background child outlives it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class PathRefused(ValueError):
    """A path that leaves the workspace or cannot be used; the message is for the model."""


def shorten(text: str, limit: int = 120) -> str:
    """A path short enough to quote back: a 6,000-character name helps nobody."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


def resolve_path(workspace: Path, raw: str) -> Path:
    """Resolve ``raw`` against the workspace, refusing anything that ends up outside it."""
    if not isinstance(raw, str) or not raw.strip():
        raise PathRefused("the path is empty")
    if "\x00" in raw:
        raise PathRefused("the path contains a NUL byte")
    root = workspace.resolve()
    candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops, names too long
        raise PathRefused(f"the path {shorten(raw)!r} cannot be resolved: {exc}") from None
    if resolved != root and not resolved.is_relative_to(root):
        raise PathRefused(
            f"the path {shorten(raw)!r} is outside the workspace {str(root)!r}; "
            "only paths inside the workspace can be used"
        )
    return resolved


def display_path(workspace: Path, path: Path) -> str:
    """A path as the model should see it: relative to the workspace."""
    try:
        relative = path.relative_to(workspace.resolve())
    except ValueError:
        return shorten(str(path))
    return shorten(str(relative)) or "."


_SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|COOKIE|SESSION|AUTH)", re.IGNORECASE
)


def scrubbed_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without anything that looks like a secret."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if not _SECRET_NAME.search(k)}


class CappedOutput:
    """Keeps the head and the tail of a stream of text, and counts what was cut between."""

    def __init__(self, cap_chars: int) -> None:
        self.cap = max(cap_chars, 64)
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        half = self.cap // 2
        if self._head_len < half:
            take = text[: half - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take) :]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail_len > half and self._tail:
            excess = self._tail_len - half
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
                self.dropped += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess
                self.dropped += excess

    def text(self) -> str:
        head, tail = "".join(self._head), "".join(self._tail)
        if not self.dropped:
            return head + tail
        return f"{head}\n[… {self.dropped} characters cut from the middle of the output …]\n{tail}"


@dataclass
class ShellResult:
    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def run_shell(
    command: str,
    cwd: Path,
    timeout_s: float,
    cap_chars: int,
    on_output: Callable[[str], None] | None = None,
    argv_prefix: list[str] | None = None,
) -> ShellResult:
    """Run ``command`` with ``/bin/sh -c`` in a new process group; kill the group when done.

    ``argv_prefix`` wraps the shell (for example a bubblewrap invocation).
    """
    argv = [*(argv_prefix or []), "/bin/sh", "-c", command]
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=scrubbed_environment(),
        start_new_session=True,
    )
    output = CappedOutput(cap_chars)
    assert process.stdout is not None

    async def pump() -> None:
        decoder_errors = "replace"
        while True:
            data = await process.stdout.read(4096)  # type: ignore[union-attr]
            if not data:
                break
            text = data.decode("utf-8", errors=decoder_errors)
            output.add(text)
            if on_output is not None:
                on_output(text)

    timed_out = False
    try:
        try:
            await asyncio.wait_for(pump(), timeout=timeout_s)
        except TimeoutError:
            timed_out = True
        if timed_out:
            _kill_group(process.pid)
        exit_code = await process.wait()
    finally:
        # Cancelled or finished: nothing the command started may outlive it.
        _kill_group(process.pid)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(Exception):
                await asyncio.shield(process.wait())
    return ShellResult(
        exit_code=None if timed_out else exit_code,
        output=output.text(),
        timed_out=timed_out,
        truncated=output.dropped > 0,
    )
