"""What the slash commands do: the app's actions behind ``/new``, ``/model``, ``/plan``,
``/rewind``, ``/compact``, ``/context`` and ``/export`` (``/help``, ``/sessions``, ``/rules``
and ``/quit`` are the app's own key actions).

Each talks to the agent only through the runtime's commands; what it changed is said in the
chat, and what cannot be done is an error notice, never a crash.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App

from pheron_tui.core import events as ev
from pheron_tui.core.context import message_tokens
from pheron_tui.core.errors import PheronError
from pheron_tui.core.orchestrator import Orchestrator
from pheron_tui.core.safety import shorten
from pheron_tui.runtime import Runtime
from pheron_tui.session.store import load_session, to_markdown
from pheron_tui.ui.slash import SlashError, parse
from pheron_tui.ui.widgets.chat import ChatPane
from pheron_tui.ui.widgets.prompt import PromptInput
from pheron_tui.ui.widgets.status import StatusBar


class CommandActions(App[None]):
    """PheronApp's base: one action per command, so keys, the palette and ``/word`` all run
    the same code."""

    runtime: Runtime
    model_ready: bool
    _waiting: dict[str, list[ev.UserChoice]]
    _proposed: dict[str, ev.ToolCallProposed]
    _last_prompt_tokens: int | None
    _plan_answered: bool

    @property
    def orchestrator(self) -> Orchestrator:
        """The command surface: ``submit``, ``decide``, ``cancel`` and ``busy``."""
        return self.runtime.orchestrator

    def pump(self) -> Any:
        """Read the (current) bus onto the screen; the app's worker."""
        raise NotImplementedError

    def run_turn(self, text: str) -> Any:
        raise NotImplementedError

    async def _clear_panes(self) -> None:
        raise NotImplementedError

    async def run_slash(self, text: str) -> None:
        try:
            command, argument = parse(text)
        except SlashError as exc:
            self.notify(str(exc), title="Not a command", severity="error")
            return
        if not self.check_action(command.action, ()):
            self.notify(f"/{command.name} cannot run now (a turn is running?)", severity="warning")
            return
        action = command.action
        if argument:
            await self.run_action(f"{action}({argument!r})")
        else:
            await self.run_action(action)

    def action_prefill(self, text: str) -> None:
        prompt = self.query_one("#prompt", PromptInput)
        prompt.value = text
        prompt.focus()

    def _model_label(self) -> str:
        provider = self.runtime.provider
        engine = (
            f"{provider.name} ({provider.engine_reason})"
            if provider.engine_reason
            else provider.name
        )
        return f"{engine}: {provider.display_model}"

    def _show_instructions(self) -> None:
        instructions = self.runtime.instructions
        self.query_one(StatusBar).project = "AGENTS.md" if instructions.files else ""

    def _estimate_context(self) -> None:
        """After the conversation changed without a request (rewind, compact, new)."""
        used = message_tokens(self.orchestrator.history)
        self.query_one(StatusBar).show_context(used, estimated=True)

    # -- conversation ----------------------------------------------------------------------------
    async def action_new(self) -> None:
        await self.runtime.new_session()
        await self._clear_panes()
        self.pump()  # the new session's bus
        self._show_instructions()
        self._estimate_context()
        chat = self.query_one(ChatPane)
        await chat.add_note(f"New conversation (session {self.runtime.bus.session_id}).", "info")

    async def action_compact(self) -> None:
        self.query_one(StatusBar).state = "compacting"
        self._compact()

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _compact(self) -> None:
        try:
            await self.orchestrator.compact()
        except PheronError as exc:
            self.notify(str(exc), severity="warning")
        finally:
            if self.model_ready:
                self.query_one(StatusBar).state = "idle"

    def action_rewind(self) -> None:
        from pheron_tui.ui.screens.rewind import RewindChoice, RewindScreen

        async def chosen(choice: RewindChoice | None) -> None:
            if choice is not None:
                await self._rewind(choice.turn_id, choice.files, choice.conversation)

        self.push_screen(RewindScreen(self.runtime.rewind_points()), chosen)

    async def _rewind(self, turn_id: int, files: bool, conversation: bool) -> None:
        try:
            report = await asyncio.to_thread(self.runtime.rewind, turn_id, files, conversation)
        except PheronError as exc:
            self.notify(str(exc), title="Rewind", severity="error")
            return
        chat = self.query_one(ChatPane)
        if conversation:
            await chat.remove_turns(turn_id)
        said = [f"Rewound to before turn {turn_id}."]
        if files:
            done = report.files
            said.append(
                f"Files restored: {', '.join(done.restored) or 'none'}; removed: "
                f"{', '.join(done.removed) or 'none'}."
            )
            if done.failed:
                said.append(f"Could not restore: {'; '.join(done.failed)}.")
            if report.untracked:
                said.append(
                    f"Not undone: what {', '.join(report.untracked)} did (no checkpoint holds "
                    "a command's effects)."
                )
            if report.incomplete:
                said.append("Some files could not be saved before they changed.")
        if conversation:
            said.append(f"The conversation lost {report.messages_removed} messages.")
        await chat.add_note(" ".join(said), "info")
        self._estimate_context()

    # -- modes and model -------------------------------------------------------------------------
    async def action_plan(self) -> None:
        on = not self.orchestrator.settings.plan_mode
        self.orchestrator.set_plan_mode(on)
        if on:
            self._plan_answered = False
        self.query_one(StatusBar).mode = "PLAN MODE" if on else ""
        chat = self.query_one(ChatPane)
        if on:
            await chat.add_note(
                "Plan mode: only read-only tools run; the model answers with a plan. "
                "shift+tab or /plan leaves it.",
                "info",
            )
            return
        await chat.add_note("Plan mode off: tools may change files again (with approval).", "info")
        if self._last_turn_planned():
            from pheron_tui.ui.screens.confirm import ConfirmScreen

            def answered(go: bool | None) -> None:
                if go:
                    self.run_turn("Carry out the plan above, step by step.")

            self.push_screen(ConfirmScreen("Carry out the plan now?"), answered)

    def _last_turn_planned(self) -> bool:
        """Whether a turn finished in plan mode (there is a plan to carry out)."""
        planned, self._plan_answered = self._plan_answered, False
        return planned

    def action_model(self, name: str) -> None:
        self._switch_model(name)

    @work(exclusive=True, group="model", exit_on_error=False)
    async def _switch_model(self, name: str) -> None:
        self.notify(f"Loading {name} in the background; the current model answers meanwhile.")
        try:
            await self.runtime.switch_model(name)
        except PheronError as exc:
            self.notify(str(exc), title="Model not switched", severity="error")
            return
        await self.query_one(ChatPane).add_note(f"Now using {self._model_label()}.", "info")

    # -- what the model sees ---------------------------------------------------------------------
    @work(exclusive=True, group="context", exit_on_error=False)
    async def action_context(self) -> None:
        from pheron_tui.ui.screens.context import ContextScreen

        instructions = self.runtime.instructions
        note = f"AGENTS.md: {instructions.summary}." if instructions.files else "No AGENTS.md."
        await self.push_screen(
            ContextScreen(
                await self.orchestrator.context_parts(),
                self.runtime.provider.context_window,
                self._last_prompt_tokens,
                note,
            )
        )

    async def action_export(self, file: str = "") -> None:
        store = self.runtime.store
        if store is None:
            self.notify("This session is not recorded (record_sessions is off).", severity="error")
            return
        workspace = self.runtime.settings.workspace
        target = (
            Path(file).expanduser() if file else workspace / f"pheron-{store.header.session_id}.md"
        )
        if not target.is_absolute():
            target = workspace / target
        try:
            text = to_markdown(await asyncio.to_thread(load_session, store.path))
            await asyncio.to_thread(target.write_text, text, encoding="utf-8")
        except (OSError, PheronError) as exc:
            self.notify(f"Could not export: {shorten(str(exc), 200)}", severity="error")
            return
        self.notify(f"Exported the conversation to {target}")

    def action_review_hunks(self) -> None:
        from pheron_tui.ui.screens.hunks import HunkReview

        if not self._waiting:
            return
        call_id = next(iter(self._waiting))
        proposed = self._proposed.get(call_id)
        if proposed is None:
            return
        path = str(proposed.arguments.get("path", "the file"))

        def reviewed(taken: list[int] | None) -> None:
            if taken is None or call_id not in self._waiting:
                return
            if taken:
                self.orchestrator.decide(call_id, "approve", taken)
            else:
                self.orchestrator.decide(call_id, "deny")

        self.push_screen(HunkReview(path, proposed.diff), reviewed)
