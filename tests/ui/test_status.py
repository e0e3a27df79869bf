"""The status bar and the waits it explains: state first at every width, a clock while
something runs, and messages typed during a wait kept and sent when the agent is free."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from pheron_tui.core import events as ev
from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.ui.widgets.chat import UserMessage
from pheron_tui.ui.widgets.status import StatusBar

from .helpers import idle, make_app, send, wait_for

STATES = [
    "loading", "idle", "classifying", "planning", "thinking", "answering", "running tool",
    "waiting for your approval", "reviewing", "interrupting", "model failed to load",
]  # fmt: skip


class BarOnly(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar()


def fill(bar: StatusBar, state: str) -> None:
    bar.state = state
    bar.model = "llamacpp (auto: fastest here): qwen2.5-coder-1.5b-instruct-q4_k_m"
    bar.sandbox = "sandboxed, no network"
    bar.show_usage(ev.Usage.model_construct(
        tokens_per_s=31.4, prompt_tokens=1200, cached_tokens=1100, ttft_ms=420.0, estimated=False,
        completion_tokens=40, purpose="plan",
    ))  # fmt: skip


@pytest.mark.parametrize("width", [40, 80, 120])
@pytest.mark.parametrize("state", STATES)
async def test_the_state_shows_first_at_every_width(state: str, width: int) -> None:
    app = BarOnly()
    async with app.run_test(size=(width, 3)) as pilot:
        bar = app.query_one(StatusBar)
        fill(bar, state)
        await pilot.pause()
        line = str(bar.render())
        assert len(line) <= width
        first, *details = line.split("  ·  ")
        assert state in first
        whole = {bar.model, bar.context, bar.speed, bar.sandbox, bar.cache, bar.ttft}
        assert set(details) <= whole  # details are dropped whole, never cut


async def test_narrow_bars_drop_details_least_important_first() -> None:
    app = BarOnly()
    async with app.run_test(size=(60, 3)) as pilot:
        bar = app.query_one(StatusBar)
        fill(bar, "planning")
        bar.model = "llamacpp: qwen2.5-coder-1.5b"
        await pilot.pause()
        line = str(bar.render())
        assert "qwen2.5-coder-1.5b" in line and "ctx 1.2k" in line
        assert "ttft" not in line and "cached" not in line


async def test_a_running_phase_shows_a_spinner_and_its_seconds(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(StatusBar, "clock", staticmethod(lambda: now[0]))
    app = BarOnly()
    async with app.run_test(size=(80, 3)):
        bar = app.query_one(StatusBar)
        bar.state = "planning"
        now[0] += 12.3
        assert bar.state_text()[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" and bar.state_text().endswith("planning 12 s")
        bar.state = "idle"
        now[0] += 5
        assert bar.state_text() == "idle"  # nothing runs: no spinner, no clock


def slow_critic(workspace: Path):
    verdict = ["PASS", ": ", *["the answer is fine "] * 40]
    script = {
        "replies": {"classify": ["task", "chat"], "plan": ["Done."], "critic": [verdict],
                    "chat": ["Second answer."]},
        "delay_s": 0.05,
    }  # fmt: skip
    return make_app(workspace, provider=ScriptedProvider(Script.model_validate(script)))


async def test_a_message_typed_while_the_critic_runs_is_sent_after_it(workspace: Path) -> None:
    app = slow_critic(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "do the thing")
        await wait_for(pilot, lambda: app.query_one(StatusBar).state == "reviewing")
        await send(pilot, "thanks")
        assert app._queued == "thanks" and app.query_one("#prompt").value == ""
        await wait_for(pilot, lambda: len(app.query(UserMessage)) == 2, timeout=15)
        await wait_for(
            pilot, lambda: idle(app) and "Second answer." in app.orchestrator.history[-1].content
        )
        assert app.query(".verdict")  # the review was not cut short


class SlowLoad(ScriptedProvider):
    """A model that loads when the test says so (a fixed sleep raced the typing on a busy
    machine: the message arrived after the load and was never queued)."""

    def __init__(self, script: Script) -> None:
        super().__init__(script)
        self.loaded = asyncio.Event()

    async def load(self, progress=None) -> None:
        await self.loaded.wait()


async def test_a_message_sent_while_the_model_loads_is_kept(workspace: Path) -> None:
    provider = SlowLoad(Script.model_validate({"replies": {"classify": ["chat"], "chat": ["Hi!"]}}))
    app = make_app(workspace, provider=provider)
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.model_ready
        await send(pilot, "hello")
        assert app._queued == "hello"
        provider.loaded.set()
        await wait_for(
            pilot, lambda: app.model_ready and idle(app) and len(app.orchestrator.history) == 2
        )
        assert app.orchestrator.history[0].content == "hello"


async def test_reading_a_long_prompt_shows_how_far_it_got(workspace: Path) -> None:
    app = make_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.model_ready)
        bar = app.query_one(StatusBar)
        bar.state = "planning"
        progress = ev.PromptProgress(
            session_id="s", turn_id=1, seq=1, ts=0.0, processed=2048, total=6421, phase="plan"
        )
        await app.handle_event(progress)
        assert bar.state_text().endswith("planning · reading the prompt 2,048/6,421")
        bar.state = "thinking"  # the first token: the reading is over
        assert "reading" not in bar.state_text()
        # The critic generates without showing anything, so its state stays "reviewing": the
        # read-to-the-end progress at its first token clears the detail.
        bar.state = "reviewing"
        await app.handle_event(progress)
        done = progress.model_copy(update={"processed": 6421})
        await app.handle_event(done)
        assert bar.state_text().endswith("reviewing")


async def test_the_context_used_shows_against_the_window() -> None:
    app = BarOnly()
    async with app.run_test(size=(120, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.window = 8192
        fill(bar, "planning")
        await pilot.pause()
        assert "ctx 1.2k/8.2k (15%)" in str(bar.render())
        bar.show_usage(ev.Usage.model_construct(
            tokens_per_s=9.0, prompt_tokens=300, cached_tokens=0, ttft_ms=1.0, estimated=False,
            completion_tokens=2, purpose="critic",
        ))  # fmt: skip
        assert "ctx 1.2k/8.2k" in str(bar.render())  # the critic's request is not the conversation
