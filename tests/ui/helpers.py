"""Building the app on scripted replies for Pilot and snapshot tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from pheron_tui.config import Settings
from pheron_tui.core.approval import Policy
from pheron_tui.core.provider import ProviderError
from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.runtime import Runtime
from pheron_tui.tools.bubblewrap import Sandbox
from pheron_tui.ui.app import PheronApp
from pheron_tui.ui.widgets.prompt import PromptInput

Input.cursor_blink = False  # a blinking cursor makes screenshots differ
TextArea.cursor_blink = False


class BrokenProvider(ScriptedProvider):
    async def load(self, progress=None) -> None:
        raise ProviderError("model folder /models/missing has no config.json")


def make_app(
    workspace: Path,
    policy: Policy = "ask",
    provider: ScriptedProvider | None = None,
    sandbox: Sandbox | None = None,
    **replies: list[Any],
) -> PheronApp:
    provider = provider or ScriptedProvider(Script.model_validate({"replies": replies}))
    settings = Settings(provider="scripted", workspace=workspace)
    runtime = Runtime.create(settings, default_policy=policy, provider=provider, sandbox=sandbox)
    app = PheronApp(runtime)
    app.DECISION_GUARD_S = 0.0  # tests press keys at once; the guard has its own test
    return app


async def wait_for(pilot: Pilot, condition, timeout: float = 5.0) -> None:
    """Let the app run until ``condition()`` holds (frames are paced, so poll)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)
    await pilot.pause()


async def send(pilot: Pilot, text: str) -> None:
    prompt = pilot.app.query_one("#prompt", PromptInput)
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")


def idle(app: PheronApp) -> bool:
    """No turn runs and every reader of the bus (the screen's bridge, the session log) has
    taken all there is."""
    return not app.orchestrator.busy and all(len(s) == 0 for s in app.runtime.bus._subscribers)


def slow_chat_provider() -> ScriptedProvider:
    """A chat answer paced like a real model (100 tokens/s for a minute): a turn that stays busy."""
    words = [f"word{i} " if i % 12 else "\n\n" for i in range(6000)]
    return ScriptedProvider(
        Script.model_validate({"replies": {"classify": ["chat"], "chat": [words]}, "delay_s": 0.01})
    )
