from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from pheron_tui.core.approval import Policy
from pheron_tui.core.bus import EventBus, Subscription
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.providers.scripted import ScriptedProvider
from pheron_tui.tools.builtin import default_registry

# Property tests run a quick pass by default; HYPOTHESIS_PROFILE=deep digs before a release
# (10,000 cases each: the turn fuzz alone then takes ~5 minutes).
settings.register_profile("quick", max_examples=400, deadline=None)
settings.register_profile("deep", max_examples=10_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


@pytest.fixture(autouse=True)
def _isolated_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never read the developer's own config or PHERON_* variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    for name in list(os.environ):
        if name.startswith("PHERON_"):
            monkeypatch.delenv(name)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("# Notes\nbuy milk\n")
    (ws / "main.py").write_text("print('hello')\n")
    return ws


class Agent:
    """An orchestrator on a scripted provider, with every event it published."""

    def __init__(self, provider: ScriptedProvider, workspace: Path, policy: Policy, **kw) -> None:
        self.provider = provider
        self.bus = EventBus("test")
        self.events_sub: Subscription = self.bus.add_subscriber(maxsize=1_000_000)
        self.orchestrator = Orchestrator(
            provider,
            default_registry(),
            self.bus,
            AgentSettings(workspace=workspace, policy=policy, **kw),
        )
        self.events: list = []

    def collect(self) -> list:
        self.events.extend(self.events_sub.drain())
        return self.events

    def of(self, name: str) -> list:
        return [e for e in self.collect() if type(e).__name__ == name]


@pytest.fixture
def make_agent(workspace: Path):
    def make(policy: Policy = "all", native_tools: bool = True, **replies) -> Agent:
        keys = ("max_steps", "plan_mode", "instructions", "checkpointer")
        settings = {k: replies.pop(k) for k in keys if k in replies}
        window = replies.pop("context_window", None)
        provider = ScriptedProvider.from_replies(native_tools=native_tools, **replies)
        provider.script.context_window = window
        return Agent(provider, workspace, policy, **settings)

    return make
