"""The orchestrator: classify → chat | plan → approve → execute → observe … → critic.

The UI and the headless runner talk to it through three calls only: ``submit(text)``,
``decide(call_id, choice)`` and ``cancel()``. Everything it does is published on the bus.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pheron_tui.core import events as ev
from pheron_tui.core.approval import ApprovalGate, Policy, shown_rules
from pheron_tui.core.bus import EventBus
from pheron_tui.core.call_format import (
    FirstStep,
    call_format,
    first_step_request,
    planning_request,
)
from pheron_tui.core.checkpoints import Checkpointer, TurnRecords
from pheron_tui.core.context import (
    ContextPart,
    breakdown,
    needs_compaction,
    request_tokens,
    summarise,
)
from pheron_tui.core.critic import CriticAgent
from pheron_tui.core.errors import PheronError
from pheron_tui.core.execution import ToolExecutor
from pheron_tui.core.intent import classify, speaks_of_the_workspace
from pheron_tui.core.limits import (
    DEFAULT_MAX_STEPS,
    DEFAULT_OUTPUT_CAP_CHARS,
    DEFAULT_SHELL_TIMEOUT_S,
)
from pheron_tui.core.messages import CompletionRequest, Message, ToolSpec
from pheron_tui.core.parsing import (
    ParsedCall,
    decode_arguments,
    distinct_calls,
    parse_reply,
    typed_calls,
)
from pheron_tui.core.prompts import (
    CHAT_SYSTEM,
    PLAN_MODE_SYSTEM,
    defuse,
    with_attachments,
    with_instructions,
)
from pheron_tui.core.provider import Provider, ProviderError, TokenCounter, ToolsRejected
from pheron_tui.core.removal_order import ordered_removed
from pheron_tui.core.reply_calls import CallRunner
from pheron_tui.core.rules import Rule, RuleBook
from pheron_tui.core.safety import without_surrogates
from pheron_tui.core.send_back import SendBack, before_answer, before_question, undeleted_now
from pheron_tui.core.streaming import StreamedReply, stream_reply
from pheron_tui.core.task_notes import unsummarised_answer
from pheron_tui.core.task_start import start_task
from pheron_tui.core.task_state import TaskEnded, TaskState
from pheron_tui.core.tools import ToolRegistry

log = logging.getLogger("pheron_tui.orchestrator")


@dataclass
class AgentSettings:
    workspace: Path
    policy: Policy = "ask"
    max_steps: int = DEFAULT_MAX_STEPS
    shell_timeout_s: float = DEFAULT_SHELL_TIMEOUT_S
    output_cap_chars: int = DEFAULT_OUTPUT_CAP_CHARS
    shell_prefix: list[str] | None = None
    shell_refusal: str | None = None
    rules: RuleBook = field(default_factory=RuleBook)
    chat_max_tokens: int = 1024
    plan_max_tokens: int = 2048
    protected_paths: tuple[Path, ...] = ()
    """Places tools may not touch even inside the workspace (the app's own files, secrets)."""
    can_ask: bool = True
    """False headless: calls that need a person are denied instead of waiting forever."""
    plan_mode: bool = False
    """Only read-only tools run, and the model is asked for a plan instead of changes."""
    checkpointer: Checkpointer | None = None
    """Saves files before a tool changes them (None: no rewind of files)."""
    instructions: str = ""
    """The project's own instructions (AGENTS.md), added to every system prompt."""


@dataclass
class TurnResult:
    status: ev.TurnStatus
    answer: str = ""
    reason: str = ""


class TurnInProgress(PheronError, RuntimeError):
    """``submit`` was called while a turn is still running."""


class RewindError(PheronError, ValueError):
    """A rewind or compaction that cannot be done; the message says why."""


@dataclass(frozen=True)
class _StepShape:
    """What one planning step may do, decided before it is asked."""

    answer_now: bool = False
    """The answer is due: no tool is offered."""
    must_call: bool = False
    free_start: bool = False
    """A first step whose call would be forced is left free when the model all but rules a
    call out and the request (``text``) names no tool (``first_call``)."""
    no_writes: bool = False
    """The request asks for no change (only a question, or only a run): no tool that writes
    is offered."""
    text: str = ""
    act_with: tuple[ev.Risk, ...] = ()
    """Only tools of these tiers are offered (``TaskState.act_with``)."""
    several: bool = True
    """A reply may hold several calls. Not on a task about the workspace: offered several,
    the 1.5B model read a file, listed the folder, searched every line of every file and
    wrote the file it had not seen yet, all in its first reply; one step at a time, each
    call follows from the last result."""


class Orchestrator:
    def __init__(
        self,
        provider: Provider,
        registry: ToolRegistry,
        bus: EventBus,
        settings: AgentSettings,
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.bus = bus
        self.settings = settings
        self.gate = ApprovalGate(settings.policy, settings.rules, settings.can_ask)
        self.executor = ToolExecutor(bus, self.gate, settings)
        self.history: list[Message] = []
        self.critic = CriticAgent(provider, self._generate_quietly)
        self._turn_ids = itertools.count(1)
        self.calls = CallRunner(provider, registry, self.executor, bus)
        self._turn_id = 0
        self._task: asyncio.Task[TurnResult] | None = None
        self.turns = TurnRecords()
        """Each turn's start in the history and the files it changed, for a rewind."""
        bus.watch(lambda event: self.turns.add(event))

    def _remember(self, message: Message) -> None:
        """Add to the conversation and publish it, so a session log can rebuild it exactly."""
        self.history.append(message)
        self.bus.emit(ev.MessageAdded, self._turn_id, message=message)

    def restore(
        self, history: list[Message], last_turn_id: int, events: Sequence[ev.Event] = ()
    ) -> None:
        """Continue a recorded conversation (``--resume``); ``events`` rebuild its turns."""
        self.history = list(history)
        self.executor.forget_files()
        self._turn_ids = itertools.count(last_turn_id + 1)
        self.turns = TurnRecords()
        for event in events:
            self.turns.add(event)
        self.turns.sync(len(self.history))

    # -- the command surface -------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    async def submit(self, text: str, attachments: Sequence[tuple[str, str]] = ()) -> TurnResult:
        """Run one turn to its end and return how it ended. Never raises for model output.
        ``attachments``: (path, text) of files the user attached to the message."""
        if self.busy:
            raise TurnInProgress("a turn is already running")
        self._turn_id = next(self._turn_ids)
        self._task = asyncio.create_task(self._run_turn(self._turn_id, text, attachments))
        return await self._task

    def decide(
        self, call_id: str, choice: ev.UserChoice, hunks: Iterable[int] | None = None
    ) -> bool:
        """Answer a waiting call; ``hunks`` (from 0) approves only those hunks of its diff."""
        return self.gate.decide(call_id, choice, hunks)

    def set_plan_mode(self, on: bool) -> None:
        """Plan mode: only read-only tools run and the model is asked for a plan."""
        self.settings.plan_mode = on

    def rewind_conversation(self, turn_id: int) -> int:
        """Take the conversation back to just before ``turn_id``; how many messages went.
        Raises RewindError when that turn is no longer in it (compacted)."""
        if self.busy:
            raise TurnInProgress("a turn is running")
        record = self.turns.get(turn_id)
        if record is None or record.history_start is None:
            raise RewindError(f"turn {turn_id} is no longer in the conversation")
        old = len(self.history)
        self.history = self.history[: record.history_start]
        self.executor.forget_files()
        self.bus.emit(
            ev.ConversationReplaced,
            0,
            messages=self.history,
            reason="rewind",
            kept_from=old,
            note=f"The conversation was rewound to before turn {turn_id}.",
        )
        return old - len(self.history)

    async def compact(self, keep_turns: int = 1) -> str:
        """Replace every turn but the last ``keep_turns`` with a summary the model writes;
        what happened, for the user. Raises RewindError when there is nothing older."""
        if self.busy:
            raise TurnInProgress("a turn is running")
        return await self._compact(0, keep_turns)

    async def context_parts(self) -> list[ContextPart]:
        """What the model sees on the next planning step, part by part (counted by the
        model's tokenizer where the provider has one)."""
        fmt = call_format(self.provider)
        specs = self._specs()
        system = fmt.system_prompt(self.settings.workspace.resolve(), specs)
        counter = self.provider.count_tokens if isinstance(self.provider, TokenCounter) else None
        return await breakdown(
            system, self._instructions(), specs, self.history, fmt.legacy, counter
        )

    def rules(self) -> list[Rule]:
        """The approval rules in force, in the order they are checked."""
        return list(self.gate.rules.rules)

    def replace_rule(self, old: Rule | None, new: Rule | None) -> None:
        """Revoke ``old`` and/or add ``new`` (a session rule kept for later is both), and
        publish the rules now in force."""
        if old is not None:
            self.gate.rules.remove(old)
        if new is not None:
            self.gate.rules.add(new)
        turn_id = self._turn_id if self.busy else 0
        self.bus.emit(ev.RulesChanged, turn_id, rules=shown_rules(self.gate.rules))

    def cancel(self) -> bool:
        """Stop the running turn (generation or tool); False when nothing runs."""
        if not self.busy:
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    async def cancel_and_wait(self, timeout_s: float = 5.0) -> None:
        """Cancel the running turn and give it up to ``timeout_s`` to wind down (quitting)."""
        task = self._task
        if self.cancel() and task is not None:
            await asyncio.wait([task], timeout=timeout_s)

    # -- a turn --------------------------------------------------------------------------------
    async def _run_turn(
        self, turn_id: int, text: str, attachments: Sequence[tuple[str, str]] = ()
    ) -> TurnResult:
        self.bus.emit(
            ev.TurnStarted, turn_id, prompt=text, attached=[path for path, _ in attachments]
        )
        mark = len(self.history)
        self._remember(Message(role="user", content=with_attachments(text, attachments)))
        try:
            result = await self._dispatch(turn_id, text)
        except asyncio.CancelledError:
            result = TurnResult("cancelled", reason="cancelled by the user")
        except TaskEnded as ended:
            result = TurnResult(ended.status, reason=str(ended))
        except ProviderError as exc:
            self.bus.emit(ev.ErrorRaised, turn_id, message=str(exc), recoverable=True, kind="model")
            result = TurnResult("failed", reason=str(exc))
        except Exception as exc:  # the app must survive its own bugs too
            log.exception("turn %s failed", turn_id)
            message = f"internal error: {type(exc).__name__}: {exc}"
            self.bus.emit(
                ev.ErrorRaised, turn_id, message=message, recoverable=True, kind="internal"
            )
            result = TurnResult("failed", reason=message)
        if result.status != "finished":
            self._close_history(mark, result)
        self.bus.emit(
            ev.TurnFinished,
            turn_id,
            status=result.status,
            answer=result.answer,
            reason=result.reason,
        )
        return result

    def _close_history(self, mark: int, result: TurnResult) -> None:
        """Leave a well-formed history after a failed or cancelled turn: every call answered."""
        answered = {m.tool_call_id for m in self.history[mark:] if m.role == "tool"}
        for message in list(self.history[mark:]):
            for call in message.tool_calls:
                if call.id not in answered:
                    self._remember(
                        Message(
                            role="tool", content=result.status, tool_call_id=call.id, name=call.name
                        )
                    )
        # An empty reply closes the turn. A note such as "(this turn was cancelled)" written
        # as the model's own words is copied by small models into later answers; what
        # happened is in the log's TurnFinished, not in the model's mouth.
        self._remember(Message(role="assistant", content=""))

    async def _dispatch(self, turn_id: int, text: str) -> TurnResult:
        started = time.perf_counter()
        classification = await classify(
            self.provider, text, self._generate_quietly, self.settings.workspace
        )
        self.bus.emit(
            ev.IntentClassified,
            turn_id,
            intent=classification.intent,
            latency_ms=(time.perf_counter() - started) * 1000,
            method=classification.method,
        )
        if classification.intent == "chat":
            return await self._chat(turn_id)
        about_workspace = classification.method == "workspace" or speaks_of_the_workspace(text)
        start = await start_task(
            text,
            self.settings.workspace,
            about_workspace=about_workspace,
            can=self._can,
            special_tokens=self.provider.special_tokens,
        )
        for note in start.notes:
            self._remember(Message(role="user", content=note))
        return await self._run_task(turn_id, start.state)

    async def _generate_quietly(self, request: CompletionRequest) -> str:
        """Generate without showing the answer (classifier, critic)."""
        reply = await stream_reply(
            self.provider, self.bus, self._turn_id, request, show_answer=False
        )
        return reply.answer

    # -- chat ----------------------------------------------------------------------------------
    def _chat_request(self) -> CompletionRequest:
        system = with_instructions(CHAT_SYSTEM, self.settings.instructions)
        return CompletionRequest(
            messages=[Message(role="system", content=system), *self.history],
            enable_thinking=False,
            max_tokens=self.settings.chat_max_tokens,
            purpose="chat",
        )

    async def _chat(self, turn_id: int) -> TurnResult:
        request = await self._fitted(turn_id, self._chat_request)
        reply = await stream_reply(self.provider, self.bus, turn_id, request)
        self._remember(Message(role="assistant", content=reply.answer))
        return TurnResult("finished", answer=reply.answer)

    # -- task ----------------------------------------------------------------------------------
    async def _run_task(self, turn_id: int, state: TaskState) -> TurnResult:
        for step in range(1, self.settings.max_steps + 1):
            answer_now, state.answer_now = state.answer_now, False
            must_call, state.must_call = state.must_call, False
            act_with, state.act_with = state.act_with, ()
            await self.registry.refresh()  # tools that came or went (MCP) count from this step
            schemas = self.registry.schemas()
            shape = _StepShape(
                answer_now=answer_now,
                must_call=must_call,
                free_start=step == 1 and not state.about_workspace,
                no_writes=state.writes_refused is not None,
                text=state.request,
                act_with=act_with,
                several=not state.about_workspace,
            )
            reply, start = await self._plan_step(turn_id, step, shape)
            fmt = call_format(self.provider)
            parsed = parse_reply(reply.answer, schemas)
            if answer_now and (parsed.kind == "tool_calls" or not parsed.text):
                # Asked for the answer, the model still only repeats the call (small models
                # do): the result it keeps asking for is the answer, said plainly as such.
                return await self._finish_task(
                    turn_id, state, reply, unsummarised_answer(state.last_result)
                )
            if sent := await before_question(state, parsed, self.settings.workspace):
                self._send_back(turn_id, state, reply, sent)
                continue
            if parsed.kind == "clarify":
                return await self._clarify(turn_id, state, reply, parsed.text)
            calls = typed_calls(
                [self._provider_call(c.name, c.arguments) for c in reply.provider_calls], schemas
            )
            if parsed.kind == "tool_calls":
                calls.extend(parsed.calls)
            calls = distinct_calls(calls)
            if calls:
                # On the first step, what was said before the reply's calls (its reasoning,
                # not the calls themselves): where their values must come from.
                said = [*(m.content for m in self.history), reply.think] if step == 1 else []
                await self.calls.run(
                    turn_id,
                    state,
                    reply,
                    parsed.text,
                    calls,
                    fmt,
                    self._remember,
                    said="\n".join(said),
                    start=start,
                )
                continue
            undeleted = (
                []
                if answer_now
                else await asyncio.to_thread(undeleted_now, state, self.settings.workspace)
            )
            if sent := before_answer(state, parsed.text, answer_now, undeleted):
                self._send_back(turn_id, state, reply, sent)
                continue
            return await self._finish_task(turn_id, state, reply, parsed.text)
        raise TaskEnded(
            f"stopped after {self.settings.max_steps} planning steps without a final answer"
        )

    def _send_back(
        self, turn_id: int, state: TaskState, reply: StreamedReply, sent: SendBack
    ) -> None:
        """Keep a reply that does not move the task (as ``sent`` says), answer it with
        ``sent.note``, and make the next step call a tool (unless not ``sent.call``). The user
        is told, so the answer shown so far is not read as the turn's, nor run into the next."""
        self.bus.emit(ev.AnswerSentBack, turn_id, note=sent.note)
        content = reply.answer if sent.said is None else sent.said
        self._remember(
            Message(role="assistant", content=content, reasoning_content=reply.think or None)
        )
        # A note may quote a tool's output (a setting, a printed line).
        self._remember(
            Message(role="user", content=defuse(sent.note, self.provider.special_tokens))
        )
        state.must_call = sent.call

    async def _plan_step(
        self, turn_id: int, step: int, shape: _StepShape
    ) -> tuple[StreamedReply, FirstStep | None]:
        """One planning request, shaped by ``shape``; when a server turns out not to take
        ``tools``, the same step is asked again in the legacy CALL format (the provider has
        switched). Also returned: how a free start was left (None unless ``free_start``)."""
        fmt = call_format(self.provider)

        def build() -> CompletionRequest:
            return planning_request(
                fmt,
                self.settings.workspace.resolve(),
                self._specs(shape.no_writes, shape.act_with),
                self.history,
                max_tokens=self.settings.plan_max_tokens,
                step=step,
                answer_now=shape.answer_now,
                must_call=shape.must_call,
                instructions=self._instructions(),
                request=shape.text,
                several=shape.several,
            )

        request = await self._fitted(turn_id, build)
        start = None
        if shape.free_start:
            offered = {spec.function.name for spec in request.tools or ()}
            nameable = [t.name for t in self.registry if t.values_said and t.name in offered]
            start = await first_step_request(self.provider, request, shape.text, nameable)
            request = start.request
        try:
            reply = await stream_reply(
                self.provider,
                self.bus,
                turn_id,
                request,
                step=step,
                hold_markup=True,
            )
        except ToolsRejected as exc:
            if call_format(self.provider) == fmt:  # it did not switch: do not loop
                raise
            self.bus.emit(ev.ErrorRaised, turn_id, message=str(exc), recoverable=True)
            return await self._plan_step(turn_id, step, shape)
        return reply, start

    def _specs(self, no_writes: bool = False, act_with: tuple[ev.Risk, ...] = ()) -> list[ToolSpec]:
        """The tools the model is offered: in plan mode, only those that only read; for a
        request that only asks, or only orders a run, all but those that write. A small model
        offered edit_file for "Which function reverses a string?" proposes a rename, and
        answers with the name it made up; a tool it is not shown it does not reach for. (A
        write it names anyway is still refused, ``TaskState.writes_refused``.)"""
        if self.settings.plan_mode:
            return [self.registry.spec(tool) for tool in self.registry if tool.risk == "read"]
        acting = [self.registry.spec(tool) for tool in self.registry if tool.risk in act_with]
        if acting:
            return acting
        if no_writes:
            return [self.registry.spec(tool) for tool in self.registry if tool.risk != "write"]
        return self.registry.specs()

    def _can(self, *risks: str) -> bool:
        """Whether a tool of one of these risks is offered (none that changes in plan mode)."""
        if self.settings.plan_mode:
            return False
        return any(tool.risk in risks for tool in self.registry)

    def _instructions(self) -> str:
        parts = [self.settings.instructions]
        if self.settings.plan_mode:
            parts.append(PLAN_MODE_SYSTEM)
        return "\n\n".join(part for part in parts if part)

    async def _fitted(
        self, turn_id: int, build: Callable[[], CompletionRequest]
    ) -> CompletionRequest:
        """The request ``build`` makes, after compacting older turns if it would crowd the
        model's window; ContextFull (the turn fails with a clear message) when even the
        latest turn alone cannot fit."""
        request = build()
        window = self.provider.context_window
        if window is None or not needs_compaction(request, window):
            return request
        if self.turns.start_of_last(1):
            await self._compact(turn_id, keep_turns=1)
            request = build()
        if request_tokens(request) > window:
            raise TaskEnded(
                f"this turn alone is ~{request_tokens(request):,} tokens (its message, attached "
                f"files and tool results) and the model's context window holds {window:,}: "
                "shorten the message or the files attached, ask for less at once, or use a "
                "model with a larger window"
            )
        return request

    async def _compact(self, turn_id: int, keep_turns: int) -> str:
        cut = self.turns.start_of_last(keep_turns)
        if cut <= 0:
            raise RewindError("there is nothing older than the last turn to compact")
        old = self.history[:cut]
        window = self.provider.context_window
        summary = await summarise(old, self._generate_quietly, window)
        kept = len(self.history) - cut
        self.history = [*summary, *self.history[cut:]]
        self.executor.forget_files()
        note = (
            f"Compacted {len(old)} older messages into a summary written by the model; the "
            f"system prompt, the tools and the last {kept} messages are kept as they were."
        )
        self.bus.emit(
            ev.ConversationReplaced,
            turn_id,
            messages=self.history,
            reason="compact",
            kept_from=cut,
            summarised=len(summary),
            note=note,
        )
        return note

    @staticmethod
    def _provider_call(name: str, arguments: dict[str, Any] | str) -> ParsedCall:
        decoded, error = decode_arguments(arguments)
        return ParsedCall(
            name=without_surrogates(name), arguments=decoded, form="provider", error=error
        )

    async def _clarify(
        self, turn_id: int, state: TaskState, reply: StreamedReply, question: str
    ) -> TurnResult:
        self.bus.emit(ev.ClarifyRequested, turn_id, question=question)
        self._remember(
            Message(role="assistant", content=reply.answer, reasoning_content=reply.think or None)
        )
        await self._review(turn_id, state, f'CLARIFY("{question}")')
        return TurnResult("finished", answer=question)

    async def _finish_task(
        self, turn_id: int, state: TaskState, reply: StreamedReply, answer: str
    ) -> TurnResult:
        if answer not in reply.shown:
            # The answer sat inside <final>…</final>, which the stream held back.
            self.bus.emit(
                ev.AnswerDelta, turn_id, text=("\n\n" if reply.shown.strip() else "") + answer
            )
        self._remember(
            Message(role="assistant", content=reply.answer, reasoning_content=reply.think or None)
        )
        await self._review(turn_id, state, answer)
        return TurnResult("finished", answer=answer)

    async def _review(self, turn_id: int, state: TaskState, answer: str) -> None:
        """The critic's verdict; a critic that cannot run is reported, not fatal to the turn."""
        self.bus.emit(ev.ReviewStarted, turn_id)
        undeleted = await asyncio.to_thread(ordered_removed, state.request, self.settings.workspace)
        try:
            review = await self.critic.review(
                state.request,
                answer,
                state.steps,
                question_only=state.only_to_know,
                check=state.check,
                undeleted=undeleted,
            )
        except ProviderError as exc:
            self.bus.emit(
                ev.ErrorRaised, turn_id, message=f"critic: {exc}", recoverable=True, kind="critic"
            )
            return
        self.bus.emit(
            ev.CriticVerdict,
            turn_id,
            verdict=review.verdict,
            reason=review.reason,
            auto=review.auto,
        )
