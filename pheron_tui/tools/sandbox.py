"""Running shell commands: process groups, timeouts, output caps and a clean environment.

Each command runs with ``/bin/sh -c`` in its own process group with stdin closed, an
environment without secrets, a timeout and a cap on captured output. When the shell exits,
what it left running in the background gets a moment to finish its output and is then killed
with the whole group; so is everything on timeout and on cancel. A child that left the group
(``setsid``) is found by a marker in its environment, or, if it cleared that too, as an orphan
handed to this process (a child subreaper), and killed as well: nothing a command starts
outlives its call.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ctypes
import os
import re
import secrets
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pheron_tui.core.capped import CappedOutput

MARKER_VAR = "PHERON_SHELL_CALL"
# Seconds the output of a command's background children is still read after the shell exits.
BACKGROUND_GRACE_S = 0.3

# Words of a variable name that mark a secret (GIT_AUTHOR_NAME is not one: AUTHOR is a word).
_SECRET_WORDS = {
    "KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD",
    "PASS", "PWD", "CREDENTIAL", "CREDENTIALS", "CREDS", "COOKIE", "COOKIES", "AUTH", "DSN",
    "PAT", "PRIVATE", "SESSION", "SIGNATURE", "CERT", "PASSPHRASE", "OTP",
}  # fmt: skip
_SECRET_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL", "PRIVATEKEY")
_HARMLESS_NAMES = {"PWD", "OLDPWD", MARKER_VAR}
# Values that are secrets whatever their name: credentials in a URL, well-known token shapes.
# A URL's scheme is bounded: unbounded, a long run of letters took seconds to search.
_SECRET_VALUE = re.compile(
    r"[a-z][a-z0-9+.-]{0,63}://[^/\s@]++@"  # scheme://user[:password]@host, scheme bounded
    r"|\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{16,}|xox[abposr]-[\w-]{8,}"
    r"|sk-[\w-]{16,}|[sr]k_(live|test)_\w{16,}|A[KS]IA[0-9A-Z]{16}|AIza[\w-]{30,}"
    r"|hf_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{30,}|pypi-[\w-]{30,}|SG\.[\w-]{16,}\.[\w-]{16,}"
    r"|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----",
    re.IGNORECASE,
)


def is_secret(name: str, value: str) -> bool:
    """Whether a variable looks like a secret, by its name's words or by its value's shape."""
    upper = name.upper()
    if upper in _HARMLESS_NAMES:
        return False
    words = set(re.split(r"[^A-Z0-9]+", upper))
    if words & _SECRET_WORDS or any(part in upper for part in _SECRET_PARTS):
        return True
    return bool(_SECRET_VALUE.search(value))


def scrubbed_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without anything that looks like a secret."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if not is_secret(k, v)}


_environment_hidden = False


def hide_own_environment() -> None:
    """Blank the secrets in this process's C environment, which ``/proc/<pid>/environ`` shows
    to any process of the same user (an unsandboxed command reading ``/proc/$PPID/environ``).

    Python's ``os.environ`` is a copy taken at start-up and keeps the values, so the app itself
    still reads them; subprocesses started here get an explicit environment."""
    global _environment_hidden
    if _environment_hidden or not sys.platform.startswith("linux"):
        return
    _environment_hidden = True
    with contextlib.suppress(OSError, ValueError, AttributeError):
        libc = ctypes.CDLL(None)
        environ = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
        i = 0
        while environ[i] is not None:
            entry: bytes = environ[i]
            name, _, value = entry.partition(b"=")
            if is_secret(name.decode(errors="replace"), value.decode(errors="replace")):
                address = ctypes.cast(environ, ctypes.POINTER(ctypes.c_void_p))[i]
                if address:
                    ctypes.memset(address + len(name) + 1, ord("*"), len(value))
            i += 1


@dataclass
class ShellResult:
    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


_subreaper = False


def _become_subreaper() -> None:
    """Orphans of our commands become our children rather than init's, so they can be found."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return
    _subreaper = True
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _boot_ticks() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK")


def _kill_escaped(marker: str, since_ticks: float, keep: int) -> None:
    """Kill what a command started outside its process group: processes carrying its marker,
    and orphans handed to us (as subreaper) that were started during the call."""
    me = os.getpid()
    needle = f"{MARKER_VAR}={marker}".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in (me, keep):
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[-1].split()
            parent, started = int(fields[1]), int(fields[19])
        except (OSError, ValueError, IndexError):
            continue
        orphan = parent == me and started >= since_ticks
        if not orphan:
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if needle not in handle.read():
                        continue
            except OSError:
                continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        if parent == me:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)  # ours now: reap it, or it stays a zombie


async def run_shell(
    command: str,
    cwd: Path,
    timeout_s: float,
    cap_chars: int,
    on_output: Callable[[str], object] | None = None,
    argv_prefix: list[str] | None = None,
) -> ShellResult:
    """Run ``command`` with ``/bin/sh -c`` in a new process group; kill the group when done.

    ``argv_prefix`` wraps the shell (for example a bubblewrap invocation). ``on_output`` gets
    the output as it arrives, up to ``cap_chars`` (a flood is not streamed to the screen and
    the session log, only counted).
    """
    if argv_prefix is None:
        hide_own_environment()
    _become_subreaper()
    marker = secrets.token_hex(8)
    environment = scrubbed_environment()
    environment[MARKER_VAR] = marker
    since = _boot_ticks() - 1
    argv = [*(argv_prefix or []), "/bin/sh", "-c", command]
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=environment,
        start_new_session=True,
    )
    output = CappedOutput(cap_chars)
    stream = _StreamCap(on_output, cap_chars)
    stdout = process.stdout
    assert stdout is not None

    async def pump() -> None:
        # Incremental: a character cut between two reads is decoded whole, not as two U+FFFD.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while data := await stdout.read(65536):
            text = decoder.decode(data)
            output.add(text)
            stream.add(text)
        rest = decoder.decode(b"", final=True)
        output.add(rest)
        stream.add(rest)

    async def exited() -> None:
        # Not process.wait(): that also waits for the pipe to close, which a background child
        # holding it open would put off until the timeout.
        while process.returncode is None:
            await asyncio.sleep(0.02)

    reader = asyncio.ensure_future(pump())
    waiter = asyncio.ensure_future(exited())
    timed_out = False
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout_s)
        timed_out = not done
        if not timed_out:
            # The shell is done; background children may still hold the pipe open.
            await asyncio.wait({reader}, timeout=BACKGROUND_GRACE_S)
    finally:
        # Finished, timed out or cancelled: nothing the command started may outlive it.
        _kill_group(process.pid)
        _kill_escaped(marker, since, keep=process.pid)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wait({reader}, timeout=2.0))
        for task in (reader, waiter):
            if not task.done():
                task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wait_for(process.wait(), timeout=2.0))
    return ShellResult(
        exit_code=None if timed_out else process.returncode,
        output=output.text(),
        timed_out=timed_out,
        truncated=output.dropped > 0,
    )


class _StreamCap:
    """Passes output on as it arrives until ``cap`` characters, then says once that the rest
    is only kept in the capped result."""

    def __init__(self, sink: Callable[[str], object] | None, cap: int) -> None:
        self.sink, self.left, self.told = sink, max(cap, 64), False

    def add(self, text: str) -> None:
        if self.sink is None or not text:
            return
        if self.left > 0:
            piece = text[: self.left]
            self.left -= len(piece)
            self.sink(piece)
        elif not self.told:
            self.told = True
            self.sink("\n[… more output, not shown as it arrives; the result keeps its end …]\n")
