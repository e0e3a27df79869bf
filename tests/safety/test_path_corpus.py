"""Hostile paths: none escapes the workspace, and each gets a clear observation.

Every case goes through the ToolExecutor (the way a model's call runs) under the ``all``
policy, so nothing but the path checks stands between the call and the file system.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pheron_tui.core.approval import ApprovalGate
from pheron_tui.core.bus import EventBus
from pheron_tui.core.execution import ToolExecutor
from pheron_tui.core.orchestrator import AgentSettings
from pheron_tui.core.tools import ToolCallError
from pheron_tui.tools.builtin import default_registry

SECRET = "TOPSECRET-4711"
CLEAR = (
    "Refused:",
    "does not exist",
    "is not a regular file",
    "is a directory",
    "is not a directory",
    "is a file, not a folder",
    "is empty",
    "no matches",
    "cannot be resolved",
    "cannot be read",
    "could not write",
    "invalid arguments",
)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace full of traps, next to an outside folder holding a secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "inner.txt").write_text("inside\n")
    links = {
        "link_out": outside,
        "file_link": outside / "secret.txt",
        "rel_link": Path("../outside/secret.txt"),
        "etc_link": Path("/etc/passwd"),
        "root_link": Path("/"),
        "dangling_out": outside / "new.txt",
        "zero_link": Path("/dev/zero"),
        "chain_a": Path("chain_b"),
        "loop_a": Path("loop_b"),
        "loop_b": Path("loop_a"),
        "self_loop": Path("self_loop"),
        "inner_link": Path("sub/inner.txt"),
    }
    for name, target in links.items():
        (ws / name).symlink_to(target)
    (ws / "chain_b").symlink_to(Path("link_out"))  # in -> in -> out
    os.mkfifo(ws / "fifo")
    return ws, outside


def hostile_reads(outside: Path) -> list[tuple[str, str]]:
    paths = [
        "../outside/secret.txt",
        "../../../../../../etc/passwd",
        "sub/../../outside/secret.txt",
        "./../outside/secret.txt",
        "sub/./../../outside/secret.txt",
        "..",
        "../",
        "../" * 64 + "etc/passwd",
        "/etc/passwd",
        "/etc/shadow",
        "//etc//passwd",
        "/proc/self/environ",
        "/proc/self/mem",
        "/dev/zero",
        "/dev/random",
        "/",
        str(outside / "secret.txt"),
        str(outside),
        "~/.bashrc",
        "~root/.bashrc",
        "~/../../etc/passwd",
        "link_out/secret.txt",
        "link_out",
        "file_link",
        "rel_link",
        "etc_link",
        "root_link/etc/passwd",
        "chain_a/secret.txt",
        "sub/../link_out/secret.txt",
        "zero_link",
        "loop_a",
        "self_loop",
        "fifo",
        "a" * 300,
        "a/" * 3000,
        "secret\x00.txt",
        "．．/outside/secret.txt",  # fullwidth full stops: a name, not a parent
        "\u2024\u2024/outside/secret.txt",  # one-dot leaders
        "..\u2215outside\u2215secret.txt",  # division slashes
        "\u202e..txt",
        "file:///etc/passwd",
        "$HOME/.bashrc",
        "C:\\Windows\\win.ini",
        " ",
        "",
    ]
    cases = []
    for path in paths:
        cases.append(("read_file", path))
    for path in ("..", "/", "link_out", "root_link", "../outside", "loop_a", "/proc"):
        cases.append(("list_dir", path))
    for path in ("..", "/etc", "link_out", "chain_a"):
        cases.append(("search_files", path))
    return cases


HOSTILE_WRITES = [
    "../outside/pwned.txt",
    "../outside/secret.txt",
    "link_out/pwned.txt",
    "file_link",
    "rel_link",
    "dangling_out",
    "chain_a/pwned.txt",
    "sub/../../outside/pwned.txt",
    "loop_a",
    "fifo",
    "a" * 300,
]


def executor(ws: Path) -> tuple[ToolExecutor, EventBus]:
    bus = EventBus("corpus")
    settings = AgentSettings(workspace=ws, policy="all")
    return ToolExecutor(bus, ApprovalGate("all"), settings), bus


async def run(ws: Path, tool: str, **arguments: object) -> tuple[bool, str]:
    """As the orchestrator runs a call: invalid arguments never reach the tool."""
    ex, _bus = executor(ws)
    try:
        call = default_registry().prepare(tool, arguments)
    except ToolCallError as exc:
        return False, str(exc)
    outcome = await ex.run(1, "c1", call)
    return outcome.ok, outcome.observation


def outside_state(outside: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(outside.iterdir())}


async def test_the_corpus_is_big_enough(layout: tuple[Path, Path]) -> None:
    assert len(hostile_reads(layout[1])) + 2 * len(HOSTILE_WRITES) >= 50


async def test_no_read_escapes(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    before = outside_state(outside)
    for tool, path in hostile_reads(outside):
        arguments = {"path": path} if tool != "search_files" else {"path": path, "pattern": "T"}
        ok, observation = await run(ws, tool, **arguments)
        assert SECRET not in observation, (tool, path)
        assert "root:" not in observation, (tool, path)  # /etc/passwd
        assert any(phrase in observation for phrase in CLEAR), (tool, path, observation)
        assert len(observation) < 600, (tool, path)  # a huge name is not echoed back whole
        escaped = "outside" in path or path.startswith(("/", "~", "..")) or "link" in path
        if escaped and "inner" not in path:
            assert not ok, (tool, path, observation)
    assert outside_state(outside) == before


async def test_no_write_or_edit_escapes(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    before = outside_state(outside)
    for path in HOSTILE_WRITES:
        ok, observation = await run(ws, "write_file", path=path, content="PWNED", mode="overwrite")
        assert any(phrase in observation for phrase in CLEAR), (path, observation)
        ok_edit, edit_observation = await run(ws, "edit_file", path=path, old="T", new="PWNED")
        assert not ok_edit and any(p in edit_observation for p in CLEAR), (path, edit_observation)
        if path != "a" * 300:
            assert not ok, (path, observation)
        if path not in ("a" * 300, "fifo"):  # both lie inside: removing or moving is fine
            for tool, arguments in (
                ("delete_path", {"path": path}),
                ("move_path", {"source": path, "destination": "stolen"}),
                ("move_path", {"source": "sub/inner.txt", "destination": path}),
                ("copy_path", {"source": path, "destination": "stolen"}),
                ("copy_path", {"source": "sub/inner.txt", "destination": path}),
                ("make_dir", {"path": path}),
            ):
                ok_other, other = await run(ws, tool, **arguments)
                assert not ok_other, (tool, path, other)
    assert outside_state(outside) == before
    assert not (outside / "new.txt").exists() and not (outside / "pwned.txt").exists()
    assert (ws / "sub" / "inner.txt").exists()


async def test_searching_the_workspace_never_follows_links_out(layout: tuple[Path, Path]) -> None:
    ws, _outside = layout
    ok, observation = await run(ws, "search_files", pattern="TOPSECRET|inside", path=".")
    assert ok and "sub/inner.txt:1: inside" in observation
    assert SECRET not in observation


async def test_links_that_stay_inside_still_work(layout: tuple[Path, Path]) -> None:
    ws, _outside = layout
    ok, observation = await run(ws, "read_file", path="inner_link")
    assert ok and "inside" in observation


async def test_a_refused_path_is_not_put_to_the_user(layout: tuple[Path, Path]) -> None:
    """Under ``ask`` a call the tool would refuse anyway is refused at once, not asked."""
    ws, _outside = layout
    bus = EventBus("corpus")
    events = bus.add_subscriber()
    ex = ToolExecutor(bus, ApprovalGate("ask"), AgentSettings(workspace=ws, policy="ask"))
    call = default_registry().prepare("write_file", {"path": "../x", "content": "y"})
    outcome = await ex.run(1, "c1", call)
    assert outcome.status == "denied" and outcome.observation.startswith("Refused:")
    decided = [e for e in events.drain() if e.type == "ToolCallDecided"]
    assert [(d.decision, d.by) for d in decided] == [("denied", "workspace")]
