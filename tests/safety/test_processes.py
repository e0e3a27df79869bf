"""Headless runs never wait for a person, the user's timeout is a ceiling, and nothing a
command starts outlives its call (hostile review, classes 12, 15 and 16)."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path

import pytest

from pheron_tui.core.tools import ToolContext
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.sandbox import run_shell

from ..command import pheron, run_scripted, tool_call
from ..processes import running_with


# -- class 12: headless without a person ---------------------------------------------------------
@pytest.mark.parametrize("policy", ["read-only", "none"])
def test_headless_runs_deny_what_needs_a_person_instead_of_hanging(
    workspace: Path, policy: str
) -> None:
    plan = [
        tool_call("list_dir", path="."),
        tool_call("write_file", path="new.txt", content="x"),
        tool_call("shell_exec", command="touch made.txt"),
        "I could only look.",
    ]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    started = time.monotonic()
    _done, events = run_scripted(workspace, replies, "--json", "--approve", policy, timeout=30)
    assert time.monotonic() - started < 20
    decided = [(e["decision"], e["by"]) for e in events if e["type"] == "ToolCallDecided"]
    first = "auto_approved" if policy == "read-only" else "denied"
    assert [d for d, _ in decided] == [first, "denied", "denied"]
    if policy == "read-only":
        assert "nobody to ask" in decided[1][1]
        told = [e for e in events if e["type"] == "ToolCallFinished"][1]["observation"]
        assert "no one to ask" in told
    assert not (workspace / "new.txt").exists() and not (workspace / "made.txt").exists()


def test_headless_help_offers_only_what_works() -> None:
    done = pheron("run", "--help")
    assert done.returncode == 0
    assert "{none,read-only,all}" in done.stdout and "ask," not in done.stdout
    assert pheron("run", "--approve", "ask", "x").returncode == 2


def test_ask_from_the_config_file_does_not_hang_a_headless_run(
    workspace: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('approve = "ask"\n')
    plan = [tool_call("list_dir", path="."), "done"]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: ok"]}
    done, events = run_scripted(workspace, replies, "--json", "--config", str(config), timeout=30)
    assert done.returncode == 0
    [decided] = [e for e in events if e["type"] == "ToolCallDecided"]
    assert decided["decision"] == "denied" and "nobody to ask" in decided["by"]


# -- class 15: the user's timeout is a ceiling ---------------------------------------------------
async def test_the_model_cannot_raise_the_users_timeout(workspace: Path) -> None:
    prepared = default_registry().prepare("shell_exec", {"command": "sleep 30", "timeout_s": 3600})
    started = time.monotonic()
    result = await prepared.tool.run(
        prepared.args, ToolContext(workspace=workspace, shell_timeout_s=1)
    )
    assert time.monotonic() - started < 5
    assert not result.ok and "timed out after 1 s" in result.observation


async def test_the_model_may_ask_for_less_time(workspace: Path) -> None:
    prepared = default_registry().prepare("shell_exec", {"command": "sleep 30", "timeout_s": 0.5})
    started = time.monotonic()
    await prepared.tool.run(prepared.args, ToolContext(workspace=workspace, shell_timeout_s=60))
    assert time.monotonic() - started < 5


# -- class 16: nothing outlives its call -----------------------------------------------------------
@pytest.mark.parametrize(
    "template",
    [
        "setsid {sleeper} &",
        "nohup {sleeper} > /dev/null 2>&1 &",
        "(setsid {sleeper} &)",
        "env -i setsid {sleeper} &",
        "{sleeper} & disown",
        "setsid sh -c '{sleeper} & sleep 1' &",
    ],
)
async def test_children_that_leave_the_group_are_killed_with_the_call(
    workspace: Path, template: str
) -> None:
    marker = f"mark{uuid.uuid4().hex[:8]}"
    # A long-lived process whose command line carries the marker.
    sleeper = f'{sys.executable} -c "import time; time.sleep(300)" {marker}'
    line = template.format(sleeper=sleeper)
    result = await run_shell(line, workspace, timeout_s=10, cap_chars=1000)
    assert not result.timed_out
    for _ in range(20):
        if not running_with(marker):
            break
        await asyncio.sleep(0.1)
    assert running_with(marker) == [], line


async def test_a_background_child_does_not_make_the_call_time_out(workspace: Path) -> None:
    started = time.monotonic()
    result = await run_shell("sleep 30 & echo hi", workspace, timeout_s=10, cap_chars=1000)
    assert time.monotonic() - started < 3
    assert (result.timed_out, result.exit_code, result.output.strip()) == (False, 0, "hi")


def test_a_headless_run_leaves_no_process_and_no_noise(workspace: Path) -> None:
    marker = f"mark{uuid.uuid4().hex[:8]}"
    command = f'setsid {sys.executable} -c "import time; time.sleep(300)" {marker} & echo started'
    replies = {
        "classify": ["task"],
        "plan": [tool_call("shell_exec", command=command), "done"],
        "critic": ["PASS: ok"],
    }
    done, _ = run_scripted(workspace, replies, "--approve", "all", "--sandbox", "off")
    assert done.returncode == 0
    assert running_with(marker) == []
    assert "Event loop is closed" not in done.stderr and "Traceback" not in done.stderr
