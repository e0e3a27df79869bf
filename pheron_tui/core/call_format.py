"""How tool calls travel between us and a model: native or legacy.

``native``: the tools go through the model's own chat template, calls come back as
``<tool_call>`` (or the server's tool-call deltas) and results go in as tool messages.
``legacy``: the tools are described in the system prompt, the model writes
``CALL(tool) WITH {…}`` and results go in as user messages. Everything that differs between
the two lives here, so the turn itself never asks which one it speaks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pheron_tui.core.grounding import names_a_tool, options_named
from pheron_tui.core.messages import CompletionRequest, Message, ToolCall, ToolSpec
from pheron_tui.core.parsing import LEGACY_CALL_START
from pheron_tui.core.prompts import (
    RESULT_MARKERS,
    legacy_planning_system,
    native_planning_system,
    with_instructions,
)
from pheron_tui.core.provider import ChoiceScorer, OptionsUnlikely, Provider, ScoringUnavailable
from pheron_tui.core.tools import ubid

ToolChoice = Literal["auto", "required", "none"]


@dataclass(frozen=True)
class CallFormat:
    name: Literal["native", "legacy"]

    @property
    def legacy(self) -> bool:
        return self.name == "legacy"

    def system_prompt(
        self, workspace: Path, specs: Sequence[ToolSpec], several: bool = True
    ) -> str:
        if self.legacy:
            ubids = {spec.function.name: ubid(spec.function.name) for spec in specs}
            return legacy_planning_system(workspace, list(specs), ubids, several)
        return native_planning_system(workspace)

    def tool_choice(self, step: int, answer_now: bool, must_call: bool) -> ToolChoice:
        """``none`` when the answer is due. A legacy model is asked for a call outright on the
        first step (small ones otherwise describe the answer instead of looking it up; see
        ``first_call_needed`` for when that is lifted) and whenever it asked the request back
        or said nothing; a native one is told in words, since a forced native call can run on
        and on."""
        if answer_now:
            return "none"
        if self.legacy and (must_call or step == 1):
            return "required"
        return "auto"

    def assistant_message(
        self, answer: str, prose: str, think: str, calls: list[ToolCall]
    ) -> Message:
        """The model's reply as the history keeps it: legacy keeps the CALL text as written,
        native keeps the prose and the structured calls."""
        return Message(
            role="assistant",
            content=answer if self.legacy else prose,
            reasoning_content=think or None,
            tool_calls=[] if self.legacy else calls,
        )

    def written_calls(self, prose: str, calls: Sequence[ToolCall]) -> str:
        """A reply as if the model had written only ``calls`` after ``prose``: the text a
        legacy history keeps (a native one keeps the calls beside the prose)."""
        if not self.legacy:
            return prose
        lines = [
            f"{LEGACY_CALL_START}{c.name}) WITH {json.dumps(c.arguments, ensure_ascii=False)}"
            for c in calls
        ]
        return "\n".join(part for part in (prose.strip(), *lines) if part)

    def result_message(self, call_id: str, tool: str, content: str) -> Message:
        """A call's result. Native results are tool messages even for a call that could not
        run: a user message would start a new "query" for Qwen-style templates, which then
        drop the loop's reasoning and with it the prompt cache."""
        if self.legacy:
            return Message(role="user", content=content)
        return Message(role="tool", content=content, tool_call_id=call_id, name=tool)

    def call_error(self, problem: str) -> str:
        """What the model is told about a call that could not be run, with the form to use."""
        form = (
            'CALL(tool_name) WITH {"argument": "value"}'
            if self.legacy
            else '<tool_call>{"name": "tool_name", "arguments": {...}}</tool_call>'
        )
        return f"Your tool call could not be run: {problem}. Fix it and try again, using {form}."


NATIVE = CallFormat("native")
LEGACY = CallFormat("legacy")


def call_format(provider: Provider) -> CallFormat:
    """The format this provider speaks now (a server that rejects ``tools`` switches)."""
    return NATIVE if provider.native_tools else LEGACY


def with_named_options(specs: list[ToolSpec], request: str) -> list[ToolSpec]:
    """The specs with each optional parameter the request names an option of made required
    (``grounding.options_named``): the prompt lists it so and the call's grammar holds the
    model to setting it."""
    tightened = []
    for spec in specs:
        parameters = spec.function.parameters or {}
        named = options_named(parameters, request)
        if named:
            required = [*(parameters.get("required") or []), *named]
            function = spec.function.model_copy(
                update={"parameters": {**parameters, "required": required}}
            )
            spec = spec.model_copy(update={"function": function})
        tightened.append(spec)
    return tightened


def planning_request(
    fmt: CallFormat,
    workspace: Path,
    specs: list[ToolSpec],
    history: Sequence[Message],
    *,
    max_tokens: int,
    step: int = 1,
    answer_now: bool = False,
    must_call: bool = False,
    instructions: str = "",
    request: str = "",
    several: bool = True,
) -> CompletionRequest:
    """One planning request. Legacy prompts describe the tools in the system prompt; the specs
    still travel so an engine can constrain the CALL to them. ``instructions`` (the project's
    AGENTS.md, plan mode) follow the system prompt. On the first step the user's ``request``
    makes the options it names required (``with_named_options``). ``several``: a reply may
    hold several calls (``parallel_tool_calls``)."""
    if step == 1 and request:
        specs = with_named_options(specs, request)
    system = with_instructions(fmt.system_prompt(workspace, specs, several), instructions)
    return CompletionRequest(
        messages=[
            Message(role="system", content=system),
            *history,
        ],
        tools=specs,
        tool_choice=fmt.tool_choice(step, answer_now, must_call),
        parallel_tool_calls=several,
        # A small model writes the result of its own call after it; what follows is its guess.
        stop=list(RESULT_MARKERS),
        enable_thinking=True,
        max_tokens=max_tokens,
        purpose="plan",
    )


FIRST_CALL_MIN_PROBABILITY = 0.15
"""Below this chance of starting its reply with a call, the model is not made to call on the
first step. A forced call is always *some* call: asked "What is the capital of France?" with
only a triangle-area tool, a forced model computes an area. Qwen2.5-Coder-1.5B, BFCL, every
8th case, the prompt telling it to answer itself when no tool fits: 0.15 or more for 16 of 30
questions no tool fits, against 49 of 50 simple_python, 29 of 33 live_simple and 23 of 25
multiple questions a tool fits (at 0.1: 19, 50, 31, 24 of 25; at 0.2: 13, 47, 28, 23).
Requests about the workspace's own files often score low too; those are forced whatever the
score (``about_workspace`` in the orchestrator)."""

FIRST_CALL_UNSURE_PROBABILITY = 0.05
"""From this chance up to ``FIRST_CALL_MIN_PROBABILITY`` the first step is made to call all
the same, and the call runs only if the model then judges its tool clearly made for the
request (``tool_fit.FIT_SURE_SHARE``): under 0.15 it answered "the area and perimeter of a
7 by 10 rectangle" and "when was the Treaty of Lisbon signed?" itself (0.12, 0.12) with a
tool for each offered."""


async def first_call_chance(provider: Provider, request: CompletionRequest) -> float | None:
    """The model's own chance of starting its reply to ``request``, left free, with a call;
    None where it cannot be scored. Scored on the request as it stands, so the prompt read here
    is the one the planning step then reuses from the cache."""
    if not isinstance(provider, ChoiceScorer):
        return None
    free = request.model_copy(update={"tool_choice": "auto"})
    try:
        scores = await provider.score_choices(free, [LEGACY_CALL_START])
    except OptionsUnlikely:
        return 0.0  # not even among the likely first tokens
    except ScoringUnavailable:
        return None
    return math.exp(scores[LEGACY_CALL_START])


def first_call_needed(chance: float | None) -> bool:
    """Whether the first planning step may be forced to a call: unless the model itself all
    but rules a call out. Where scoring is impossible, the call stays forced as before. (A
    model that thinks first scores low here and is left to decide after its reasoning.)"""
    return chance is None or chance >= FIRST_CALL_MIN_PROBABILITY


FirstCall = Literal["forced", "named", "unsure", "free"]
"""How a first planning step treats a call: ``forced`` (the model's own chance of one is high
enough, or unscored), ``named`` (forced though the model would rather answer itself, because
the request names a tool: "Solve a quadratic equation where a=2, b=6, c=5" with a
solve_quadratic_equation tool scores 0.08; such a call's values are checked strictly, as a
call the model did not choose), ``unsure`` (forced at a low chance, the call run only if its
tool clearly fits) or ``free`` (the model decides)."""


def first_call(chance: float | None, named: bool) -> FirstCall:
    if first_call_needed(chance):
        return "forced"
    if named:
        return "named"
    unsure = chance is not None and chance >= FIRST_CALL_UNSURE_PROBABILITY
    return "unsure" if unsure else "free"


@dataclass(frozen=True)
class FirstStep:
    """A first planning step's request, how it treats a call, and the model's chance of one
    (None where it was not scored)."""

    request: CompletionRequest
    call: FirstCall
    chance: float | None = None


async def first_step_request(
    provider: Provider, request: CompletionRequest, text: str, nameable: Iterable[str] = ()
) -> FirstStep:
    """A first planning step's request for the user's ``text``, its forced call left free
    when the model all but rules a call out and ``text`` names none of the ``nameable``
    tools (``first_call``). Only tools whose values the request must give are nameable: the
    strict check of their values is what keeps a call the model did not choose honest."""
    if request.tool_choice != "required":
        return FirstStep(request, "free")
    named = names_a_tool(text, nameable)
    chance = await first_call_chance(provider, request)
    how = first_call(chance, named)
    if how == "free":
        request = request.model_copy(update={"tool_choice": "auto"})
    return FirstStep(request, how, chance)
