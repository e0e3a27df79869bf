"""PheronApp: the four panes, the input line, the status bar and the keys.

The app never calls a provider. It reads the core's events through the bridge and talks back
only through commands: the orchestrator's ``submit``, ``decide`` and ``cancel``, and the
runtime's rule and session commands. It never reads a core object's insides.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from pheron_tui.core import events as ev
from pheron_tui.core.bus import coalesce
from pheron_tui.runtime import Runtime
from pheron_tui.session.store import LoadedSession
from pheron_tui.ui.attention import notify_desktop, set_window_title
from pheron_tui.ui.bridge import BusEvents, pump_events
from pheron_tui.ui.commands import CommandActions
from pheron_tui.ui.palette import SlashCommands
from pheron_tui.ui.screens.confirm import ConfirmScreen
from pheron_tui.ui.slash import is_command
from pheron_tui.ui.widgets.chat import ChatPane
from pheron_tui.ui.widgets.critic import CriticPane
from pheron_tui.ui.widgets.prompt import PromptBar, PromptInput
from pheron_tui.ui.widgets.status import StatusBar
from pheron_tui.ui.widgets.thinking import ThinkingPane
from pheron_tui.ui.widgets.tool_log import ToolCard, ToolLog


def _styles_path() -> Path:
    """styles/ sits at the top of a checkout and inside the package in a wheel."""
    packaged = Path(__file__).resolve().parent.parent / "styles" / "app.tcss"
    if packaged.exists():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "styles" / "app.tcss"


log = logging.getLogger("pheron_tui.ui")

STATE_LABELS = {"chat": "answering", "task": "planning"}
WORKER_ROLES = {
    "bus": "The display of the agent's events",
    "load": "Loading the model",
    "replay": "The replay",
    "turn": "The turn",
}


class PheronApp(CommandActions):
    CSS_PATH = _styles_path()
    TITLE = "pheron-tui"
    COMMANDS = App.COMMANDS | {SlashCommands}
    BINDINGS = [
        Binding("y", "decide('approve')", "Approve", id="approve"),
        Binding("a", "decide('always')", "Always allow", id="always"),
        Binding("n", "decide('deny')", "Deny", id="deny"),
        Binding("h", "review_hunks", "Review hunks", id="review-hunks"),
        Binding("escape", "interrupt", "Interrupt", id="interrupt"),
        Binding("escape", "rewind_on_second_escape", "Rewind (Esc Esc)", show=False),
        Binding(
            "ctrl+c",
            "interrupt_or_quit",
            "Interrupt · twice quits",
            priority=True,
            show=False,
            id="ctrl-c",
        ),
        Binding("shift+tab", "plan", "Plan mode", id="plan-mode", priority=True),
        Binding("ctrl+t", "toggle_thinking", "Thinking pane", id="toggle-thinking"),
        Binding("ctrl+n", "new", "New", id="new", show=False),
        Binding("ctrl+o", "sessions", "Sessions", id="sessions"),
        Binding("ctrl+r", "rules", "Rules", id="rules"),
        Binding("ctrl+g", "restart_mcp", "Restart MCP", id="restart-mcp"),
        Binding("f1", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
    ]

    DOUBLE_PRESS_S = 1.5
    """Esc Esc and ctrl+c ctrl+c: the second press counts within this long."""

    DECISION_GUARD_S = 0.3
    """A waiting card ignores decision keys this long, so a double-tap cannot approve a call
    that nobody has read yet."""

    def __init__(
        self,
        runtime: Runtime,
        load_model: bool = True,
        replay: LoadedSession | None = None,
        replay_speed: float = 1.0,
    ) -> None:
        super().__init__()
        self.runtime = runtime
        self.replay = replay
        self.replay_speed = replay_speed
        self._load_model = load_model and replay is None
        self.model_ready = False
        self.load_error = ""
        self._waiting: dict[str, list[ev.UserChoice]] = {}
        """Calls waiting for the user's decision, oldest first, with the answers that apply
        (from ``ToolCallAwaitingDecision``)."""
        self._armed: set[str] = set()
        self._drawing_history = False
        self._reviewing = False
        self._thought: set[int] = set()
        """Turns whose thinking reached the pane (the others get a line saying why not)."""
        self._chat_turns: set[int] = set()
        self._mcp: dict[str, str] = {}
        """Each MCP server's state, from McpServerChanged."""
        self._queued: str | None = None
        """A message typed while the model loaded or the critic ran, sent when free."""
        """True while a resumed session's events are drawn: nothing in them waits any more."""
        self._quitting = False
        """Set once quitting starts: late events from the core must not mount widgets."""
        self._pressed: dict[str, float] = {}
        """When Esc and ctrl+c were last pressed, for the double presses."""
        self._turn_started = 0.0
        self._proposed: dict[str, ev.ToolCallProposed] = {}
        """Waiting calls whose diff can be reviewed hunk by hunk."""
        self._last_prompt_tokens: int | None = None
        self._attach_notes: list[str] = []
        self._plan_answered = False
        """A turn finished in plan mode: leaving it offers to carry the plan out."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            yield ChatPane(id="chat")
            with Vertical(id="side"):
                yield ThinkingPane(id="thinking")
                yield ToolLog(id="tools")
                yield CriticPane(id="critic")
        yield PromptBar(
            "Message · Enter sends · ctrl+j new line · / commands · @ files", id="prompt-bar"
        )
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        status = self.query_one(StatusBar)
        status.model = self._model_label()
        status.window = self.runtime.provider.context_window
        self.watch(status, "state", self._state_changed, init=False)
        self.pump()
        if self.replay is not None:
            prompt = self.query_one("#prompt", PromptInput)
            prompt.placeholder = "Replay: no model and no tools; ctrl+q to quit"
            prompt.disabled = True
            status.model = f"replay of {self.replay.header.session_id}"
            self.play_back()
            return
        status.sandbox = self.runtime.sandbox.label
        self._show_instructions()
        if self.runtime.warnings():
            self.call_later(self._warn)
        self.runtime.start_recording()
        if self.runtime.resumed is not None:
            self.call_later(self._show_resumed, self.runtime.resumed)
        self.call_after_refresh(self.runtime.start_mcp)  # after the first frame
        if self._load_model:
            self.load_model()
        else:
            self.model_ready = True
            status.state = "idle"
        self.query_one("#prompt", PromptInput).focus()

    async def _warn(self) -> None:
        for warning in self.runtime.warnings():
            await self.query_one(ChatPane).add_note(warning, "error")
            self.notify(warning, title="Warning", severity="error", timeout=10)

    async def _show_resumed(self, session: LoadedSession) -> None:
        """Draw a resumed conversation with the same code that drew it live."""
        history = [e for e in session.events if e.turn_id != 0]  # not its model loading
        self._drawing_history = True
        try:
            await self.on_bus_events(BusEvents(coalesce(history)))
        finally:
            self._drawing_history = False
        chat = self.query_one(ChatPane)
        turns = len(session.prompts)
        plural = "s" if turns != 1 else ""
        await chat.add_note(
            f"Resumed session {session.header.session_id} ({turns} turn{plural}).", "info"
        )
        if session.interrupted:
            await chat.add_note(
                "Its last turn was interrupted; the model has been told.", "cancelled"
            )
        here = str(self.runtime.settings.workspace.resolve())
        if session.header.workspace != here:
            await chat.add_note(
                f"It was recorded in {session.header.workspace}; tools now work in {here}.",
                "info",
            )

    # -- workers ---------------------------------------------------------------------------------
    @work(exclusive=True, group="bus", exit_on_error=False)
    async def pump(self) -> None:
        await pump_events(self.runtime.bus, self.post_message)

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load_model(self) -> None:
        await self.runtime.load_model()

    @work(exclusive=True, group="replay", exit_on_error=False)
    async def play_back(self) -> None:
        """Publish a recorded session's events at its own pace (pauses capped at 2 s)."""
        assert self.replay is not None
        previous: float | None = None
        for event in self.replay.events:
            if previous is not None:
                await asyncio.sleep(min(max(event.ts - previous, 0.0) / self.replay_speed, 2.0))
            previous = event.ts
            self.runtime.bus.publish(event)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, text: str) -> None:
        attached = await asyncio.to_thread(self.runtime.attach, text)
        self._attach_notes = attached.notes  # shown under the message when the turn starts
        await self.orchestrator.submit(text, attached.files)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that dies says so: without the bus pump the screen would just stop."""
        if event.state != WorkerState.ERROR or self._quitting:
            return
        error = event.worker.error
        what = WORKER_ROLES.get(event.worker.group, event.worker.name)
        message = f"{what} stopped: {type(error).__name__}: {error}"
        self.notify(message, title="Internal error", severity="error", timeout=30)
        await self.query_one(ChatPane).add_note(f"Error: {message}", "error")
        if event.worker.group == "bus":
            status = self.query_one(StatusBar)
            status.state = "display stopped"
            status.detail = "restart the app"

    # -- actions ---------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide":
            if not self._waiting or self.screen is not self.screen_stack[0]:
                return False  # no call waits, or a dialog is over the card being decided
            choices = next(iter(self._waiting.values()))
            return parameters[0] in choices  # "always" only where a rule can describe it
        if action == "interrupt":
            return self.orchestrator.busy
        if action == "rewind_on_second_escape":
            return not self.orchestrator.busy and self.replay is None
        if action == "review_hunks":
            if not self._waiting or self.screen is not self.screen_stack[0]:
                return False
            proposed = self._proposed.get(next(iter(self._waiting)))
            return proposed is not None and proposed.hunks > 0
        if action in ("sessions", "new", "rewind", "compact", "model"):
            return self.replay is None and not self.orchestrator.busy
        if action == "plan":
            return self.replay is None
        if action == "rules":
            return self.replay is None
        if action == "restart_mcp":
            return "failed" in self._mcp.values()
        return True

    def action_decide(self, choice: ev.UserChoice) -> None:
        if not self._waiting:
            return
        call_id = next(iter(self._waiting))
        if call_id not in self._armed:
            self.bell()  # too soon to be a decision about this card
            return
        self.orchestrator.decide(call_id, choice)

    def action_interrupt(self) -> None:
        if self.orchestrator.cancel():
            self.query_one(StatusBar).state = "interrupting"

    def _second_press(self, key: str) -> bool:
        """Whether this press of ``key`` follows another one closely (and resets it)."""
        now = time.monotonic()
        previous = self._pressed.get(key)
        self._pressed[key] = now
        if previous is not None and now - previous <= self.DOUBLE_PRESS_S:
            self._pressed.pop(key)
            return True
        return False

    async def action_interrupt_or_quit(self) -> None:
        """ctrl+c: copy a selection in the message box; else interrupt a running turn; on an
        idle app, a second press quits."""
        prompt = self.query_one("#prompt", PromptInput)
        if prompt.has_focus and prompt.selected_text:
            prompt.action_copy()
            return
        if self.orchestrator.busy:
            self.action_interrupt()
            self._pressed.pop("ctrl+c", None)
            return
        if self._second_press("ctrl+c"):
            await self._shut_down()
            return
        self.notify("Press ctrl+c again to quit.", timeout=self.DOUBLE_PRESS_S + 0.5)

    def action_rewind_on_second_escape(self) -> None:
        """Esc Esc on an empty message box opens the rewind screen."""
        if self.query_one("#prompt", PromptInput).text.strip():
            return
        if self._second_press("escape"):
            self.action_rewind()

    def action_toggle_thinking(self) -> None:
        pane = self.query_one(ThinkingPane)
        pane.display = not pane.display

    def action_help(self) -> None:
        from pheron_tui.ui.screens.help import HelpScreen  # Markdown: not before the first frame

        self.push_screen(HelpScreen())

    def action_rules(self) -> None:
        from pheron_tui.ui.screens.rules import RulesScreen

        self.push_screen(RulesScreen(self.runtime))

    def action_sessions(self) -> None:
        async def chosen(session: LoadedSession | None) -> None:
            if session is not None:
                await self.switch_session(session)

        from pheron_tui.ui.screens.sessions import SessionPicker

        self.push_screen(SessionPicker(self.runtime.bus.session_id), chosen)

    async def switch_session(self, session: LoadedSession) -> None:
        """Leave this session (its log is closed, the model stays loaded) and carry on
        ``session`` exactly as ``--resume`` would."""
        if self.orchestrator.busy:
            self.notify("A turn is running. Press Esc to interrupt it first.", severity="warning")
            return
        await self.runtime.switch_to(session)
        await self._clear_panes()
        self.pump()  # exclusive: the worker on the old bus is cancelled
        await self._show_resumed(session)
        if self.model_ready:
            self.query_one(StatusBar).state = "idle"
        self.query_one("#prompt", PromptInput).focus()

    async def _clear_panes(self) -> None:
        self._waiting.clear()
        self._armed.clear()
        self._proposed.clear()
        await self.query_one(ChatPane).clear()
        await self.query_one(ThinkingPane).clear()
        await self.query_one(ToolLog).clear()
        await self.query_one(CriticPane).clear()
        self._show_instructions()

    async def action_quit(self) -> None:
        if not self.orchestrator.busy:
            await self._shut_down()
            return

        async def answered(quit_now: bool | None) -> None:
            if quit_now:
                await self._shut_down()

        self.push_screen(ConfirmScreen("A turn is still running. Quit anyway?"), answered)

    async def _shut_down(self) -> None:
        """Stop the turn and the answer stream while the app can still refresh, then exit.

        A Markdown stream left running appends into a widget that shutdown is removing, and
        shutdown then never finishes.
        """
        self._quitting = True
        await self.orchestrator.cancel_and_wait()
        await self.query_one(ChatPane).end_answer()
        try:
            # The model's connections belong to this event loop: close them on it.
            await self.runtime.aclose()
        except Exception:  # quitting must not fail on a provider that closes badly
            log.exception("closing the runtime failed")
        finally:
            self.exit()

    # -- input -----------------------------------------------------------------------------------
    @on(PromptInput.Submitted)
    async def submit(self, event: PromptInput.Submitted) -> None:
        text = event.text.strip()
        if not text:
            return
        if is_command(text):
            event.prompt.value = ""
            await self.run_slash(text)
            return
        text = text.removeprefix("/")  # "//path" sends "/path"
        if self.load_error:
            self.notify(self.load_error, severity="error")
            return
        waits_for = (
            "the model is ready"
            if not self.model_ready
            else "the review ends"
            if self.orchestrator.busy and self._reviewing
            else None
        )
        if self.orchestrator.busy and waits_for is None:
            self.notify("A turn is running. Press Esc to interrupt it first.", severity="warning")
            return
        if waits_for is not None:
            # The answer is on screen (or the model is on its way): keep the message and send
            # it when the agent is free, rather than making the user wait to type it.
            if self._queued is not None:
                self.notify("A message is already waiting to be sent.", severity="warning")
                return
            self._queued = text
            event.prompt.value = ""
            self.notify(f"Your message will be sent when {waits_for}.")
            return
        event.prompt.value = ""
        self.run_turn(text)

    @on(PromptInput.MentionStarted)
    def _pick_file(self, event: PromptInput.MentionStarted) -> None:
        from pheron_tui.ui.screens.file_picker import FilePicker

        def picked(path: str | None) -> None:
            prompt = event.prompt
            if path is not None:
                prompt.insert(path + " ")
            prompt.focus()

        self.push_screen(FilePicker(self.runtime.settings.workspace), picked)

    def _send_queued(self) -> None:
        if self._queued is None or not self.model_ready or self._quitting:
            return
        if self.orchestrator.busy:  # TurnFinished is drawn just before the turn's task ends
            self.set_timer(0.05, self._send_queued)
            return
        text, self._queued = self._queued, None
        self.run_turn(text)

    # -- events from the core --------------------------------------------------------------------
    async def on_bus_events(self, message: BusEvents) -> None:
        if self._quitting:
            return
        with self.batch_update():
            for event in message.events:
                await self.handle_event(event)
            if self.replay is not None and message.events[-1].seq == self.replay.last_seq:
                self.query_one(StatusBar).state = "replay finished"
        self.refresh_bindings()

    async def handle_event(self, event: ev.Event) -> None:
        chat = self.query_one(ChatPane)
        status = self.query_one(StatusBar)
        tools = self.query_one(ToolLog)
        match event:
            case ev.TurnStarted(turn_id=turn_id, prompt=prompt, attached=attached):
                chat.turn_id = turn_id
                self._turn_started = event.ts
                await chat.add_user(prompt)
                if attached and self._drawing_history:
                    await chat.add_note(f"attached: {', '.join(attached)}", "info")
                for note in self._attach_notes:
                    await chat.add_note(note, "info")
                self._attach_notes = []
                self._reviewing = False
                status.state = "classifying"
            case ev.IntentClassified(turn_id=turn_id, intent=intent):
                status.state = STATE_LABELS[intent]
                if intent == "chat":
                    self._chat_turns.add(turn_id)
            case ev.ThinkDelta(turn_id=turn_id, phase=phase, step=step, text=text):
                status.state = "thinking"
                self._thought.add(turn_id)
                await self.query_one(ThinkingPane).add_text(turn_id, phase, step, text)
            case ev.AnswerDelta(text=text):
                status.state = "answering"
                await chat.add_answer_text(text)
            case ev.AnswerSentBack(note=note):
                status.state = "planning"
                await chat.send_back_answer(note)
            case ev.ToolCallProposed(call_id=call_id, hunks=hunks):
                await chat.end_answer()
                await tools.add_card(event)
                if hunks:
                    self._proposed[call_id] = event
            case ev.ToolCallAwaitingDecision(call_id=call_id, choices=choices, always=always):
                card = tools.cards.get(call_id)
                if card is not None and self.replay is None and not self._drawing_history:
                    self._waiting[call_id] = choices
                    card.await_decision(always, dangerous=card.risk == "dangerous")
                    self._wait_for_decision(card)
                    self._attention("A tool call waits for your approval", card.tool)
            case ev.ToolCallDecided(call_id=call_id, decision=decision, by=by, hunks=hunks):
                if card := tools.cards.get(call_id):
                    numbers = ", ".join(map(str, hunks or ()))
                    card.set_status(decision, by + (f" (hunks {numbers})" if hunks else ""))
                self._proposed.pop(call_id, None)
                self._decision_made(call_id)
                if decision == "denied" and not self._waiting:
                    status.state = "planning"  # the model is told and plans again
            case ev.ToolCallStarted(call_id=call_id):
                status.state = "running tool"
                if card := tools.cards.get(call_id):
                    card.set_status("running")
            case ev.ToolOutputDelta(call_id=call_id, text=text):
                if card := tools.cards.get(call_id):
                    card.add_output(text)
            case ev.ToolCallFinished(
                call_id=call_id, status=call_status, observation=obs, duration_ms=ms
            ):
                if card := tools.cards.get(call_id):
                    card.finish(call_status, obs, ms)
                    tools.show(card)
                self._decision_made(call_id)
                if not self._waiting:
                    status.state = "planning"  # the result goes back to the model
            case ev.ClarifyRequested(question=question):
                await chat.add_note(question, "clarify")
            case ev.ReviewStarted():
                self._reviewing = True
                status.state = "reviewing"
            case ev.CriticVerdict(turn_id=turn_id, verdict=verdict, reason=reason, auto=auto):
                await self.query_one(CriticPane).add_verdict(turn_id, verdict, reason, auto)
            case ev.Usage() as usage:
                status.show_usage(usage)
                if usage.purpose in ("chat", "plan"):
                    self._last_prompt_tokens = usage.prompt_tokens
            case ev.PromptProgress(processed=done, total=total):
                # Until the first token: a long prompt can take a while on a CPU. A quiet
                # request (the critic's) changes no state at its first token: this clears it.
                status.detail = f"reading the prompt {done:,}/{total:,}" if done < total else ""
            case ev.ModelLoading(message=text, progress=progress):
                shown = f" {progress:.0%}" if progress is not None else ""
                status.state = "loading"
                status.detail = f"{text}{shown}"
            case ev.McpServerChanged() as change:
                await self._mcp_changed(change)
            case ev.ModelReady(context_window=window):
                self.model_ready = True
                status.state = "idle"
                status.window = window
                status.model = self._model_label()
                self._estimate_context()
                self.call_later(self._send_queued)
            case ev.ConversationReplaced(reason=reason, note=note):
                if reason == "compact" or self._drawing_history:  # a rewind reports itself
                    await chat.add_note(note, "info")
                self._estimate_context()
            case ev.ErrorRaised(message=text, kind=kind):
                await chat.add_note(f"Error: {text}", "error")
                if kind == "load":
                    self.load_error = f"The model could not be loaded: {text}"
                    status.state = "model failed to load"
            case ev.TurnFinished(turn_id=turn_id, status=turn_status, reason=reason):
                await chat.end_answer()
                if turn_id not in self._thought and turn_status != "cancelled":
                    chat_turn = turn_id in self._chat_turns
                    await self.query_one(ThinkingPane).note_no_thinking(turn_id, chat_turn)
                if turn_status != "finished":
                    await chat.add_note(f"Turn {turn_status}: {reason}", turn_status)
                elif self.orchestrator.settings.plan_mode and not self._drawing_history:
                    self._plan_answered = True
                status.state = "idle" if self.model_ready else status.state
                self._reviewing = False
                self.call_later(self._send_queued)
                self._waiting.clear()  # a turn that ended waits for nothing
                self._armed.clear()
                self._decision_made()
                if self.replay is None:
                    self.query_one("#prompt", PromptInput).focus()
                if not self._drawing_history and self.replay is None:
                    took = event.ts - self._turn_started
                    if took >= self.runtime.settings.notify_after_s:
                        self._attention(f"Turn {turn_status}", f"after {took:.0f} s")

    async def _mcp_changed(self, change: ev.McpServerChanged) -> None:
        self._mcp[change.server] = change.state
        ready = sum(state == "ready" for state in self._mcp.values())
        failed = [name for name, state in self._mcp.items() if state == "failed"]
        shown = f"MCP {ready}/{len(self._mcp)}"
        self.query_one(StatusBar).mcp = shown + (f" ({', '.join(failed)} failed)" if failed else "")
        if change.state == "failed":
            await self.query_one(ChatPane).add_note(
                f"MCP server {change.server} failed: {change.error}. Press ctrl+g to restart it.",
                "error",
            )
        elif change.state == "ready":
            tokens = change.spec_chars // 4
            self.notify(
                f"MCP {change.server}: {len(change.tools)} tools, ~{tokens:,} tokens of specs"
            )
        self.refresh_bindings()

    def action_restart_mcp(self) -> None:
        restarted = self.runtime.restart_failed_mcp()
        if restarted:
            self.notify(f"Restarting MCP: {', '.join(restarted)}")

    def _wait_for_decision(self, card: ToolCard) -> None:
        """Lock the input and focus the card, so approval keys cannot land in the message."""
        prompt = self.query_one("#prompt", PromptInput)
        prompt.disabled = True
        if self.DECISION_GUARD_S > 0:
            self.set_timer(self.DECISION_GUARD_S, lambda: self._arm(card))
        else:
            self._arm(card)
        self.query_one("#side").add_class("-waiting")
        card.focus(scroll_visible=False)
        self.query_one(ToolLog).show(card)
        self.query_one(StatusBar).state = "waiting for your approval"

    def _arm(self, card: ToolCard) -> None:
        if card.call_id in self._waiting:
            self._armed.add(card.call_id)
            card.armed = True

    def _decision_made(self, call_id: str | None = None) -> None:
        """Unlock the input once nothing waits. Focus stays on the card until the turn ends,
        so keys pressed right after a decision land nowhere rather than in the message."""
        if call_id is not None:
            self._waiting.pop(call_id, None)
            self._armed.discard(call_id)
        if self.replay is None and not self._waiting:
            self.query_one("#prompt", PromptInput).disabled = False
            self.query_one("#side").remove_class("-waiting")

    # -- attention -------------------------------------------------------------------------------
    def _attention(self, title: str, body: str) -> None:
        """Bell and desktop notification, unless turned off or drawing the past."""
        if self.runtime.settings.notify and not self._drawing_history and self.replay is None:
            notify_desktop(self, f"pheron-tui: {title}", body)

    def _state_changed(self, state: str) -> None:
        if self.runtime.settings.notify and not self._quitting:
            set_window_title(self, f"pheron-tui · {state}")
