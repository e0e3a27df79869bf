"""Every event the core publishes: one discriminated union.

An event's JSON form (``type`` is the class name) is the line format of the session log and of
``pheron-tui run --json``.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from pydantic_core import PydanticSerializationError

from pheron_tui.core.messages import Message, Purpose
from pheron_tui.core.rules import Action, Scope
from pheron_tui.core.safety import without_surrogates

Phase = Purpose
"""Which request of a turn an event came from (the request's own ``purpose``)."""
Decision = Literal["approved", "denied", "auto_approved"]
UserChoice = Literal["approve", "always", "deny"]
"""What a person may answer to a call that waits for them."""
Risk = Literal["read", "write", "execute", "dangerous"]
TurnStatus = Literal["finished", "failed", "cancelled", "denied"]
"""How a turn ended; ``denied`` when it stopped because its tool calls were not allowed."""
CallStatus = Literal["ok", "failed", "denied", "cancelled"]
McpState = Literal["starting", "ready", "failed", "stopped"]
"""An MCP server's state: starting, ready (its tools in the registry), failed, stopped."""
ErrorKind = Literal["load", "model", "tool_call", "critic", "internal"]
"""``load``: the model could not be loaded (the app cannot answer); ``model``: a reply went
wrong (a provider error, a loop cut off); ``tool_call``: a proposed call could not run;
``critic``: the review could not run; ``internal``: a bug of ours."""


class Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    turn_id: int
    """0 for events outside any turn (model loading)."""
    seq: int
    """Monotonic per session; assigned by the bus."""
    ts: float
    """Wall-clock seconds since the epoch."""


class TurnStarted(Event):
    type: Literal["TurnStarted"] = "TurnStarted"
    prompt: str
    attached: list[str] = Field(default_factory=list)
    """Files the user attached (``@path``); their text follows the prompt in the message."""


class IntentClassified(Event):
    type: Literal["IntentClassified"] = "IntentClassified"
    intent: Literal["chat", "task"]
    latency_ms: float
    method: Literal["scored", "generated", "rule", "workspace"]
    """How the intent was decided: label log-probabilities, a parsed reply, the fallback rule,
    or the message naming a file or folder of the workspace."""


class ThinkDelta(Event):
    type: Literal["ThinkDelta"] = "ThinkDelta"
    text: str
    phase: Phase
    step: int = 0
    """Planning cycle number, so the UI can start a new think block per cycle."""


class AnswerDelta(Event):
    type: Literal["AnswerDelta"] = "AnswerDelta"
    text: str


class AnswerSentBack(Event):
    """The answer streamed since the last call is not the turn's answer: the agent sent it
    back to the model with ``note`` (an echo of the request, a number no result shows…), and
    the model goes on."""

    type: Literal["AnswerSentBack"] = "AnswerSentBack"
    note: str


class ToolCallProposed(Event):
    type: Literal["ToolCallProposed"] = "ToolCallProposed"
    call_id: str
    tool: str
    arguments: dict[str, Any]
    ubid: str
    risk: Risk
    risk_reasons: list[str] = Field(default_factory=list)
    """Why a call is dangerous, in words a user can check against the arguments."""
    diff: str = ""
    """For a call that writes one text file: the unified diff of what it would change (a
    new file shows all its lines), computed before anyone is asked."""
    hunks: int = 0
    """How many hunks that diff has where a person may take some and leave others (an
    existing file with two or more); 0 where only the whole call can be decided."""


class ToolCallAwaitingDecision(Event):
    """A proposed call waits for a person's ``decide``; nothing runs until it is answered."""

    type: Literal["ToolCallAwaitingDecision"] = "ToolCallAwaitingDecision"
    call_id: str
    choices: list[UserChoice]
    """The answers that apply: ``always`` only where a standing rule can describe the call
    (never for a dangerous one)."""
    always: list[str] = Field(default_factory=list)
    """The rules ``always`` would add, described (``allow shell_exec `git log```)."""


class ToolCallDecided(Event):
    type: Literal["ToolCallDecided"] = "ToolCallDecided"
    call_id: str
    decision: Decision
    by: str
    """Who decided: ``user``, ``policy:<name>``, ``rule:<what>``, ``plan mode`` or
    ``workspace``."""
    hunks: list[int] | None = None
    """For a per-hunk review: the hunks taken (numbered from 1); the others were left out."""


class SavedFile(BaseModel):
    """One workspace path as it was before a tool changed it."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Relative to the workspace."""
    kind: Literal["file", "folder", "missing"]
    blob: str = ""
    """For a file: the sha256 of its bytes in the checkpoint store."""


class FilesCheckpointed(Event):
    """Before a call changed files: what they were, so a rewind can put them back."""

    type: Literal["FilesCheckpointed"] = "FilesCheckpointed"
    call_id: str
    tool: str
    files: list[SavedFile]
    complete: bool = True
    """False when some of it could not be saved (too big, unreadable), or when the tool's
    effects cannot be known beforehand (a shell command, an MCP tool: ``files`` empty)."""


class ConversationReplaced(Event):
    """The conversation the model sees was replaced: rewound to an earlier turn, or older
    turns compacted into a summary."""

    type: Literal["ConversationReplaced"] = "ConversationReplaced"
    messages: list[Message]
    reason: Literal["rewind", "compact"]
    kept_from: int
    """Where in the old conversation the part kept at the end of ``messages`` began (a
    rewind keeps nothing after its cut: ``kept_from`` is the old length)."""
    summarised: int = 0
    """Messages at the start of ``messages`` that stand for the old ones before
    ``kept_from`` (a compaction's summary); a rewind keeps the old ones as they were."""
    note: str = ""
    """What happened, in words for the user."""


class ToolCallStarted(Event):
    type: Literal["ToolCallStarted"] = "ToolCallStarted"
    call_id: str


class ToolOutputDelta(Event):
    type: Literal["ToolOutputDelta"] = "ToolOutputDelta"
    call_id: str
    text: str


class ToolCallFinished(Event):
    type: Literal["ToolCallFinished"] = "ToolCallFinished"
    call_id: str
    ok: bool
    observation: str
    duration_ms: float
    status: CallStatus = "ok"

    @model_validator(mode="before")
    @classmethod
    def _status_from_ok(cls, data: Any) -> Any:
        """Logs written before ``status`` existed: it follows ``ok``."""
        if isinstance(data, dict) and "status" not in data:
            data = {**data, "status": "ok" if data.get("ok") else "failed"}
        return data


class ClarifyRequested(Event):
    type: Literal["ClarifyRequested"] = "ClarifyRequested"
    question: str


class ReviewStarted(Event):
    """The critic started judging the task's answer (the answer is already shown)."""

    type: Literal["ReviewStarted"] = "ReviewStarted"


class CriticVerdict(Event):
    type: Literal["CriticVerdict"] = "CriticVerdict"
    verdict: Literal["PASS", "FAIL"]
    reason: str
    auto: bool


class Usage(Event):
    type: Literal["Usage"] = "Usage"
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    tokens_per_s: float
    ttft_ms: float
    purpose: Phase = "chat"
    mask_ms_per_token: float = 0.0
    estimated: bool = False
    """Counted from streamed chunks because the provider reported no usage."""


class PromptProgress(Event):
    """The engine is reading a long prompt: how far it has got (before the first token). At the
    first token, ``processed == total``: the reading is over."""

    type: Literal["PromptProgress"] = "PromptProgress"
    processed: int
    total: int
    phase: Phase = "chat"


class McpServerChanged(Event):
    """An MCP server started, failed, stopped or changed its tools."""

    type: Literal["McpServerChanged"] = "McpServerChanged"
    server: str
    state: McpState
    tools: list[str] = Field(default_factory=list)
    """Its tools as the model sees them (``server__tool``)."""
    spec_chars: int = 0
    """Characters its tool specs add to every planning prompt (about four per token)."""
    error: str = ""


class ModelLoading(Event):
    type: Literal["ModelLoading"] = "ModelLoading"
    progress: float | None
    """0..1, or None when the loader cannot tell."""
    message: str


class ModelReady(Event):
    type: Literal["ModelReady"] = "ModelReady"
    provider: str
    model: str
    context_window: int | None = None
    """Tokens a request and its reply may hold together, where known."""


class ErrorRaised(Event):
    type: Literal["ErrorRaised"] = "ErrorRaised"
    message: str
    recoverable: bool
    kind: ErrorKind = "model"


class RuleShown(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Action
    tool: str
    command: list[str] = Field(default_factory=list)
    """For shell_exec: the words a command must start with; empty means any command."""
    scope: Scope


class RulesChanged(Event):
    """The approval rules in force changed ("always", a revoke, a rule kept for later)."""

    type: Literal["RulesChanged"] = "RulesChanged"
    rules: list[RuleShown]
    """Every rule now in force, in the order they are checked."""


class MessageAdded(Event):
    type: Literal["MessageAdded"] = "MessageAdded"
    message: Message
    """A message the conversation gained, exactly as the model will see it next time."""


class TurnFinished(Event):
    type: Literal["TurnFinished"] = "TurnFinished"
    status: TurnStatus
    answer: str
    reason: str = ""
    """Why a turn failed or was cancelled; empty when it finished."""


AnyEvent = Annotated[
    TurnStarted
    | IntentClassified
    | ThinkDelta
    | AnswerDelta
    | AnswerSentBack
    | ToolCallProposed
    | ToolCallAwaitingDecision
    | ToolCallDecided
    | ToolCallStarted
    | FilesCheckpointed
    | ConversationReplaced
    | ToolOutputDelta
    | ToolCallFinished
    | ClarifyRequested
    | ReviewStarted
    | CriticVerdict
    | Usage
    | PromptProgress
    | McpServerChanged
    | ModelLoading
    | ModelReady
    | ErrorRaised
    | RulesChanged
    | MessageAdded
    | TurnFinished,
    Field(discriminator="type"),
]


@functools.cache
def _event_adapter() -> TypeAdapter[AnyEvent]:
    """Built on first use: building every event's validator at import delayed the first frame."""
    return TypeAdapter(AnyEvent)


#: Events whose text may be merged when a subscriber falls behind. Nothing else is ever merged
#: or dropped.
DELTA_TYPES = (ThinkDelta, AnswerDelta, ToolOutputDelta)


def event_to_json(event: Event) -> str:
    try:
        return event.model_dump_json()
    except PydanticSerializationError:
        # A lone surrogate somewhere (from argv, a file name, a JSON escape): write it as
        # U+FFFD rather than lose the line, or the whole log after it.
        return json.dumps(_replace_surrogates(event.model_dump(mode="json")), ensure_ascii=False)


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {without_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def event_from_json(line: str) -> Event:
    return _event_adapter().validate_json(line)
