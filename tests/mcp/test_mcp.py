"""MCP servers as tools, against real servers: one written here with the official SDK (stdio
and streamable HTTP) and mcp-server-git from the package index."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pheron_tui.config import Settings
from pheron_tui.core.bus import EventBus
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.runtime import Runtime
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.mcp import McpTools, ServerSpec, parse_servers, risk_of

from ..command import run_scripted, tool_call
from ..processes import alive, running_with

SERVER = Path(__file__).with_name("server.py")
PROBE = f"probe={sys.executable} {SERVER}"


def probe_spec(**kw) -> ServerSpec:
    return ServerSpec(name="probe", command=(sys.executable, str(SERVER)), **kw)


async def agent_with(mcp: McpTools, workspace: Path, plan: list, policy="all"):
    provider = ScriptedProvider(
        Script.model_validate({"replies": {"classify": ["task"], "plan": plan, "critic": ["PASS"]}})
    )
    registry = default_registry()
    registry.add_source(mcp)
    bus = EventBus("t")
    events = bus.add_subscriber(maxsize=1_000_000)
    settings = AgentSettings(workspace=workspace, policy=policy)
    return Orchestrator(provider, registry, bus, settings), provider, events


async def running(*specs: ServerSpec, log_dir: Path, on_change=None) -> McpTools:
    """The servers, started and settled (ready or failed)."""
    mcp = McpTools(list(specs), log_dir, *([on_change] if on_change else []))
    mcp.start()
    await mcp.settled()
    return mcp


def last_plan(provider: ScriptedProvider):
    return [r for r in provider.requests if r.purpose == "plan"][-1]


def finished(events) -> list:
    return [e for e in events.drain() if type(e).__name__ == "ToolCallFinished"]


def test_each_bad_entry_is_named_and_the_others_still_run() -> None:
    specs, problems = parse_servers(
        {
            "git": {"command": "uvx", "args": ["mcp-server-git"]},
            "both": {"command": "x", "url": "http://h/mcp"},
            "typo": {"comand": "x"},
            "web": {"url": "ftp://nope"},
            "bad__name": {"command": "x"},
            "off": {"command": "x", "enabled": False},
        },
        ["quick=python3 -m my_server --flag", "nocommand="],
    )
    assert [s.name for s in specs] == ["git", "quick"]
    assert specs[1].command == ("python3", "-m", "my_server", "--flag")
    named = " | ".join(problems)
    for name in ("'both'", "'typo'", "'web'", "'bad__name'", "'nocommand='"):
        assert name in named


def test_a_broken_server_entry_does_not_stop_the_app(workspace: Path) -> None:
    settings = Settings(
        provider="scripted", workspace=workspace, mcp_servers={"broken": {"url": 3}}
    )
    runtime = Runtime.create(settings, "ask", provider=ScriptedProvider(Script()))
    assert any("MCP server 'broken'" in w for w in runtime.warnings())


def test_hints_inform_the_tier_and_no_hint_is_execute() -> None:
    class Hints:
        def __init__(self, read_only=None, destructive=None):
            self.read_only_hint, self.destructive_hint = read_only, destructive

    assert risk_of(None) == "execute"
    assert risk_of(Hints()) == "execute"
    assert risk_of(Hints(read_only=True)) == "read"
    assert risk_of(Hints(destructive=False)) == "write"
    assert risk_of(Hints(destructive=True)) == "dangerous"


async def test_stdio_server_tools_run_fail_and_stay_capped(workspace: Path, tmp_path: Path) -> None:
    mcp = await running(probe_spec(timeout_s=2), log_dir=tmp_path)
    server = mcp.servers["probe"]
    assert server.state == "ready", server.error
    assert {t.name: t.risk for t in server.tools}["probe__echo"] == "read"
    plan = [
        tool_call("probe__echo", text="hi"),
        tool_call("probe__fail"),
        tool_call("probe__slow", seconds=30),
        tool_call("probe__big"),
        tool_call("probe__echo", text=5),  # the server's schema says string
        "Done.",
    ]
    orchestrator, provider, events = await agent_with(mcp, workspace, plan)
    result = await orchestrator.submit("use the probe")
    await mcp.aclose()
    assert result.status == "finished"
    calls = finished(events)
    echo, fail, slow, big = calls[:4]
    assert (echo.status, echo.observation) == ("ok", "echo: hi")
    assert fail.status == "failed" and "Error executing tool fail" in fail.observation
    assert slow.status == "failed" and "no result in 2 s" in slow.observation
    assert big.status == "ok" and "characters cut from the middle" in big.observation
    assert len(big.observation) < 17_000  # the user's output cap, as for any tool
    sent = last_plan(provider).messages
    assert any("invalid arguments for probe__echo" in (m.content or "") for m in sent)


async def test_forged_calls_in_a_result_reach_the_model_defused(
    workspace: Path, tmp_path: Path
) -> None:
    mcp = await running(probe_spec(), log_dir=tmp_path)
    orchestrator, provider, events = await agent_with(
        mcp, workspace, [tool_call("probe__forge"), "Nothing to do."]
    )
    await orchestrator.submit("forge")
    await mcp.aclose()
    [result] = [m for m in last_plan(provider).messages if m.role == "tool"]
    assert "<tool_call>" not in result.content and "<|im_start|>" not in result.content
    started = [e for e in events.drain() if type(e).__name__ == "ToolCallStarted"]
    assert len(started) == 1  # the forged call never ran


async def test_a_changed_tool_list_counts_from_the_next_step(
    workspace: Path, tmp_path: Path
) -> None:
    mcp = await running(probe_spec(), log_dir=tmp_path)
    plan = [tool_call("probe__grow"), tool_call("probe__extra", x=21), "42."]
    orchestrator, provider, events = await agent_with(mcp, workspace, plan)
    await orchestrator.submit("grow")
    await mcp.aclose()
    grow, extra = finished(events)
    assert grow.status == "ok" and (extra.status, extra.observation) == ("ok", "42")
    assert "probe__extra" in {t.function.name for t in last_plan(provider).tools}


async def test_a_server_that_dies_mid_call_fails_the_call_not_the_app(
    workspace: Path, tmp_path: Path
) -> None:
    changes: list[tuple[str, str]] = []
    mcp = await running(
        probe_spec(), log_dir=tmp_path, on_change=lambda s: changes.append((s.spec.name, s.state))
    )
    plan = [tool_call("probe__die"), tool_call("probe__echo", text="again"), "It died."]
    orchestrator, provider, events = await agent_with(mcp, workspace, plan)
    result = await orchestrator.submit("die")
    assert result.status == "finished"
    died = finished(events)[0]
    assert died.status == "failed" and "probe__die" not in str(finished(events)[1:])
    # Gone from the registry, its tools are unknown to the next step, said as such.
    assert "unknown tool 'probe__echo'" in last_plan(provider).messages[-1].content
    assert ("probe", "failed") in changes
    assert mcp.restart_failed() == ["probe"]  # ctrl+g in the TUI
    await mcp.settled()
    assert mcp.servers["probe"].state == "ready"
    await mcp.aclose()
    assert mcp.servers["probe"].state == "stopped"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_streamable_http_server(workspace: Path, tmp_path: Path, monkeypatch) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "streamable-http", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(100):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.1)
        monkeypatch.setenv("PROBE_TOKEN", "Bearer secret")
        url = f"http://127.0.0.1:{port}/mcp"
        specs, problems = parse_servers(
            {
                "web": {"url": url, "headers_env": {"Authorization": "PROBE_TOKEN"}},
                "nokey": {"url": url, "headers_env": {"Authorization": "UNSET_TOKEN_VAR"}},
            }
        )
        assert not problems
        mcp = await running(*specs, log_dir=tmp_path)
        assert mcp.servers["web"].state == "ready", mcp.servers["web"].error
        nokey = mcp.servers["nokey"]
        assert nokey.state == "failed" and "UNSET_TOKEN_VAR" in nokey.error
        orchestrator, _provider, events = await agent_with(
            mcp, workspace, [tool_call("web__echo", text="over http"), "ok"]
        )
        await orchestrator.submit("echo")
        await mcp.aclose()
        [call] = finished(events)
        assert (call.status, call.observation) == ("ok", "echo: over http")
    finally:
        server.terminate()
        server.wait(timeout=10)


async def test_mcp_server_git_from_the_package_index(workspace: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    spec = ServerSpec(
        name="git", command=(sys.executable, "-m", "mcp_server_git", "--repository", str(repo))
    )
    mcp = await running(spec, log_dir=tmp_path)
    server = mcp.servers["git"]
    assert server.state == "ready", server.error
    names = {t.name for t in server.tools}
    assert "git__git_status" in names
    plan = [tool_call("git__git_status", repo_path=str(repo)), "One untracked file."]
    orchestrator, _provider, events = await agent_with(mcp, workspace, plan)
    await orchestrator.submit("git status")
    await mcp.aclose()
    [status] = finished(events)
    assert status.status == "ok" and "a.txt" in status.observation


def test_headless_call_through_approval_and_no_server_left_after(workspace: Path) -> None:
    marker = str(SERVER)
    plan = [tool_call("probe__note", path="n.md", text="hello"), "Noted."]
    replies = {"classify": ["task"], "plan": plan, "critic": ["PASS: noted"]}
    denied, events = run_scripted(workspace, replies, "--json", "--mcp", PROBE)
    decided = [e for e in events if e["type"] == "ToolCallDecided"]
    assert decided[0]["decision"] == "denied"  # a write: headless has nobody to ask
    assert "--approve" in denied.stderr
    done, events = run_scripted(workspace, replies, "--json", "--approve", "all", "--mcp", PROBE)
    assert done.returncode == 0, done.stderr
    [call] = [e for e in events if e["type"] == "ToolCallFinished"]
    assert call["status"] == "ok" and "noted 5 characters" in call["observation"]
    states = [e["state"] for e in events if e["type"] == "McpServerChanged"]
    assert states[:2] == ["starting", "ready"] and states[-1] == "stopped"
    time.sleep(0.5)
    assert running_with(marker) == []


def test_a_server_does_not_outlive_an_app_killed_with_sigkill(tmp_path: Path) -> None:
    holder = tmp_path / "hold.py"
    holder.write_text(
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from pheron_tui.tools.mcp import McpTools, ServerSpec\n"
        "async def main():\n"
        f"    spec = ServerSpec(name='probe', command=(sys.executable, {str(SERVER)!r}, 'x'))\n"
        f"    mcp = McpTools([spec], Path({str(tmp_path)!r}))\n"
        "    mcp.start()\n"
        "    await mcp.settled()\n"
        "    print(mcp.servers['probe'].state, flush=True)\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    app = subprocess.Popen([sys.executable, str(holder)], stdout=subprocess.PIPE, text=True)
    assert app.stdout is not None and app.stdout.readline().strip() == "ready"
    servers = running_with(f"{SERVER} x")
    assert servers
    app.send_signal(signal.SIGKILL)
    app.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in servers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in servers)


def test_mcp_list_command_shows_tools_and_tiers(workspace: Path) -> None:
    from ..command import pheron

    done = pheron("mcp", "list", "--mcp", PROBE, "--workspace", str(workspace))
    assert done.returncode == 0, done.stderr
    assert "probe: ready, 8 tools" in done.stdout and "tokens of specs" in done.stdout
    assert "probe__echo  (read)" in done.stdout and "probe__slow  (execute)" in done.stdout
    bad = pheron("mcp", "list", "--mcp", "nope=/nonexistent/server", "--workspace", str(workspace))
    assert bad.returncode == 1 and "nope: failed" in bad.stdout
    assert "No such file" in bad.stdout  # the server's own words, from its log


def test_rules_may_name_mcp_tools(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[rules]]\naction = "deny"\ntool = "git__git_commit"\n')
    from pheron_tui.config import load_settings

    assert load_settings(config_path=config, environ={}).rules[0].tool == "git__git_commit"


async def test_an_mcp_call_waits_for_approval_in_the_tui(workspace: Path) -> None:
    from pheron_tui.ui.app import PheronApp
    from pheron_tui.ui.widgets.status import StatusBar
    from pheron_tui.ui.widgets.tool_log import ToolCard

    from ..ui.helpers import idle, send, wait_for

    replies = {
        "classify": ["task"],
        "plan": [tool_call("probe__slow", seconds=0.1), "It was slow."],
        "critic": ["PASS: it waited"],
    }
    settings = Settings(provider="scripted", workspace=workspace, mcp=[PROBE])
    provider = ScriptedProvider(Script.model_validate({"replies": replies}))
    app = PheronApp(Runtime.create(settings, "ask", provider=provider))
    app.DECISION_GUARD_S = 0.0
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "MCP 1/1" in str(app.query_one(StatusBar).render()), 30)
        await send(pilot, "be slow for 0.1 seconds")
        await wait_for(pilot, lambda: bool(app.orchestrator.gate.pending), 10)
        card = app.query_one(ToolCard)
        assert (card.tool, card.risk, card.status) == ("probe__slow", "execute", "pending")
        await pilot.press("y")
        await wait_for(pilot, lambda: idle(app) and card.status == "ok", 10)
        await pilot.press("ctrl+q")
    assert app.runtime.mcp.servers["probe"].state == "stopped"
    assert running_with(str(SERVER)) == []
