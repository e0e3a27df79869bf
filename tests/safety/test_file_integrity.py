"""File tools never lose data, never escape through a race, and never leave half a file
(hostile review, classes 4, 5 and 6)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pheron_tui.core.tools import ToolContext
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.files import PathRefused, read_bytes, write_atomic


async def call(workspace: Path, name: str, **arguments):
    """Run a call as a model that read the file first: what is tested here are the guards
    that hold even then, not the rule that a file is read before it is replaced."""
    registry = default_registry()
    context = ToolContext(workspace=workspace)
    if name == "write_file":
        reading = registry.prepare("read_file", {"path": arguments["path"]})
        await reading.tool.run(reading.args, context)
    prepared = registry.prepare(name, arguments)
    return await prepared.tool.run(prepared.args, context)


# -- class 4: edit_file destroys data -----------------------------------------------------------
async def test_edit_file_refuses_a_file_it_cannot_read_whole(workspace: Path) -> None:
    big = workspace / "big.txt"
    big.write_bytes(b"needle\n" + b"x" * 16_500_000 + b"\nend\n")
    before = big.read_bytes()
    result = await call(workspace, "edit_file", path="big.txt", old="needle", new="pin")
    assert not result.ok and "unchanged" in result.observation
    assert big.read_bytes() == before


async def test_edit_file_keeps_every_byte_of_a_large_file(workspace: Path) -> None:
    big = workspace / "big.txt"
    body = b"line of text\n" * 250_000  # 3,250,000 bytes: above read_file's 2 MB window
    big.write_bytes(b"head\n" + body + b"tail\n")
    result = await call(workspace, "edit_file", path="big.txt", old="tail", new="TAIL")
    assert result.ok, result.observation
    assert big.read_bytes() == b"head\n" + body + b"TAIL\n"


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "utf-16"])
async def test_edit_file_refuses_text_that_is_not_utf8(workspace: Path, encoding: str) -> None:
    legacy = workspace / "legacy.txt"
    legacy.write_bytes("café crème brûlée\n".encode(encoding))
    before = legacy.read_bytes()
    result = await call(workspace, "edit_file", path="legacy.txt", old="caf", new="CAF")
    assert not result.ok and ("UTF-8" in result.observation or "binary" in result.observation)
    assert legacy.read_bytes() == before


async def test_read_file_says_when_text_is_not_utf8_or_cut(workspace: Path) -> None:
    (workspace / "legacy.txt").write_bytes("café\n".encode("latin-1"))
    result = await call(workspace, "read_file", path="legacy.txt")
    assert result.ok and "not valid UTF-8" in result.observation
    (workspace / "big.txt").write_bytes(b"y\n" * 1_500_000)
    result = await call(workspace, "read_file", path="big.txt", offset=1, limit=1)
    assert "only the first 2,000,000 of 3,000,000 bytes" in result.observation


async def test_edit_keeps_crlf_and_a_byte_order_mark(workspace: Path) -> None:
    path = workspace / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    result = await call(workspace, "edit_file", path="win.txt", old="two", new="2")
    assert result.ok
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n"


# -- class 5: symlink swap race and hard links ----------------------------------------------------
def _flipper(target: Path, outside: Path, stop: threading.Event) -> None:
    """Flip ``target`` between a file and a link to ``outside`` as fast as possible."""
    while not stop.is_set():
        try:
            tmp = target.with_suffix(".swap")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(outside)
            os.replace(tmp, target)
            tmp.write_text("inside")
            os.replace(tmp, target)
        except OSError:
            pass


async def test_a_flipping_symlink_never_leaks_or_overwrites_outside(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("OUTSIDE-SECRET")
    target = workspace / "f.txt"
    target.write_text("inside")
    stop = threading.Event()
    flipper = threading.Thread(target=_flipper, args=(target, outside, stop), daemon=True)
    flipper.start()
    refused = 0
    try:
        for i in range(300):
            read = await call(workspace, "read_file", path="f.txt")
            assert "OUTSIDE-SECRET" not in read.observation
            refused += not read.ok
            await call(
                workspace, "write_file", path="f.txt", content=f"written {i}", mode="overwrite"
            )
            await call(workspace, "edit_file", path="f.txt", old="inside", new="edited")
            assert outside.read_text() == "OUTSIDE-SECRET"
    finally:
        stop.set()
        flipper.join()
    assert outside.read_text() == "OUTSIDE-SECRET" and not outside.is_symlink()
    assert refused > 0  # the race was really run: some reads met the link


async def test_a_folder_swapped_for_a_link_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE")
    (workspace / "sub").mkdir()
    checked = (workspace / "sub" / "f.txt").resolve()
    # Between the check (resolve_path) and the use, sub becomes a link out.
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)
    with pytest.raises(PathRefused):
        read_bytes(workspace, checked, 1000)
    with pytest.raises(PathRefused):
        write_atomic(workspace, checked, b"pwned")
    assert (outside / "f.txt").read_text() == "OUTSIDE"


async def test_a_file_with_other_hard_links_is_not_written(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original")
    os.link(outside, workspace / "linked.txt")
    for tool, arguments in (
        ("write_file", {"content": "changed", "mode": "overwrite"}),
        ("edit_file", {"old": "original", "new": "changed"}),
    ):
        result = await call(workspace, tool, path="linked.txt", **arguments)
        assert not result.ok and "hard links" in result.observation
    assert outside.read_text() == "original"


# -- class 6: writes are atomic ------------------------------------------------------------------
async def test_a_write_that_fails_halfway_leaves_the_old_file(workspace: Path) -> None:
    path = workspace / "keep.txt"
    path.write_text("old content\n")
    os.chmod(path, 0o640)
    script = (
        "import asyncio, resource, sys\n"
        "from pathlib import Path\n"
        "from pheron_tui.tools.builtin import default_registry\n"
        "from pheron_tui.core.tools import ToolContext\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
        "ws = Path(sys.argv[1])\n"
        "p = default_registry().prepare('write_file', {'path': 'keep.txt', 'content': 'x' * 5000, 'mode': 'overwrite'})\n"
        "ctx = ToolContext(workspace=ws)\n"
        "r = default_registry().prepare('read_file', {'path': 'keep.txt'})\n"
        "asyncio.run(r.tool.run(r.args, ctx))\n"
        "r = asyncio.run(p.tool.run(p.args, ctx))\n"
        "print(r.ok, r.observation)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(workspace)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.startswith("False"), done.stdout + done.stderr
    assert "unchanged" in done.stdout
    assert path.read_text() == "old content\n"
    assert [p.name for p in workspace.iterdir() if "pheron-tmp" in p.name] == []


async def test_a_write_keeps_the_files_mode(workspace: Path) -> None:
    path = workspace / "run.sh"
    path.write_text("echo old\n")
    os.chmod(path, 0o750)
    result = await call(
        workspace, "write_file", path="run.sh", content="echo new\n", mode="overwrite"
    )
    assert result.ok
    assert (path.stat().st_mode & 0o777, path.read_text()) == (0o750, "echo new\n")


def test_killed_writers_never_leave_a_partial_file(workspace: Path) -> None:
    """SIGKILL a process in the middle of large writes, many times: the file is always one of
    the complete versions."""
    path = workspace / "data.bin"
    versions = {bytes([65 + i]) * 3_000_000 for i in range(4)}
    path.write_bytes(b"A" * 3_000_000)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pheron_tui.tools.files import write_atomic\n"
        "ws = Path(sys.argv[1])\n"
        "i = 0\n"
        "while True:\n"
        "    write_atomic(ws, ws / 'data.bin', bytes([65 + i % 4]) * 3_000_000)\n"
        "    i += 1\n"
    )
    for _ in range(20):
        writer = subprocess.Popen([sys.executable, "-c", script, str(workspace.resolve())])
        time.sleep(0.3 + (_ % 5) * 0.05)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        assert path.read_bytes() in versions


async def test_readers_never_see_half_a_file(workspace: Path) -> None:
    path = workspace / "data.txt"
    versions = {"a" * 150_000, "b" * 150_000}
    path.write_text("a" * 150_000)
    stop = False

    async def writer() -> None:
        i = 0
        while not stop:
            await call(
                workspace,
                "write_file",
                path="data.txt",
                content="ab"[i % 2] * 150_000,
                mode="overwrite",
            )
            i += 1

    task = asyncio.create_task(writer())
    try:
        for _ in range(200):
            data = await asyncio.to_thread(path.read_text)
            assert data in versions
            await asyncio.sleep(0)
    finally:
        stop = True
        await task
