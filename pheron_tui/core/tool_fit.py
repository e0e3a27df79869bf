"""Whether a tool the model reached for is made to do what the user asked: the fit check.

Made to call on a first step, a small model calls the nearest tool it has: a lawyer search
for a security guard, a currency converter for a flight's duration, with values the request
does give, so the value check lets them through. Asked about the tool alone (its name and
purpose beside the request, nothing else in the prompt), the same model tells some of these
apart: on BFCL, a share of "yes" under one half for 12 of the 53 calls to a tool that does not
fit and for none of the 208 right calls to a tool the request did not name; a boiling-point
tool for a freezing point still scores 0.54 (``bench/bfcl.py``).
"""

from __future__ import annotations

import math

from pheron_tui.core.intent import classify_text
from pheron_tui.core.messages import CompletionRequest, FunctionSpec, Message
from pheron_tui.core.prompts import FIT_SYSTEM, fit_question
from pheron_tui.core.provider import ChoiceScorer, Provider, ScoringUnavailable

FIT_MIN_SHARE = 0.55
"""Below this share of "yes", a tool is taken not to do what was asked. Weighed on the shares
the last full BFCL runs stored: of 692 right calls the check judged, one scored under 0.55
(0.539) and none under 0.5; of the calls made to a tool that answers none of the irrelevance
questions, 7 scored from 0.50 to 0.55 (a boiling-point tool for a freezing point, 0.54).
Chosen on the even-numbered cases (5 more irrelevance answers right, no right call lost), it
gave 2 and cost 1 on the odd-numbered ones."""

FIT_SURE_SHARE = 0.8
"""The share a call the model was made to make against its own judgement needs (its chance
of a call under 15 %, ``call_format.FIRST_CALL_UNSURE_PROBABILITY``): on BFCL the right calls
there scored 0.84–0.95, the calls to tools made for something else mostly under 0.8."""

FIT_DESCRIPTION_CHARS = 1_000
"""A tool's description shown to the check, at most (an MCP server writes its own)."""


def fit_request(text: str, tool: FunctionSpec) -> CompletionRequest:
    """The question, with a long request's start and end only (as the classifier reads it):
    a prompt of its own, read in full on every check."""
    description = tool.description[:FIT_DESCRIPTION_CHARS]
    question = fit_question(tool.name, description, classify_text(text))
    return CompletionRequest(
        messages=[
            Message(role="system", content=FIT_SYSTEM),
            Message(role="user", content=question),
        ],
        max_tokens=1,
        purpose="classify",
    )


async def fit_share(provider: Provider, text: str, tool: FunctionSpec) -> float | None:
    """The model's share of "yes" to whether ``tool`` does what ``text`` asks; None where it
    cannot be scored (no logprobs, or neither answer among its likely first tokens)."""
    if not isinstance(provider, ChoiceScorer):
        return None
    try:
        scores = await provider.score_choices(fit_request(text, tool), ("yes", "no"))
    except ScoringUnavailable:
        return None
    yes, no = math.exp(scores["yes"]), math.exp(scores["no"])
    return yes / (yes + no) if yes + no > 0 else None


def least_share(sure: bool) -> float:
    """The share of "yes" a tool needs to fit (``sure``: to fit clearly)."""
    return FIT_SURE_SHARE if sure else FIT_MIN_SHARE


async def does_not_fit(
    provider: Provider, text: str, tool: FunctionSpec, sure: bool = False
) -> bool:
    """Whether the model judges ``tool`` not made for ``text`` (``sure``: not clearly made
    for it); a tool it cannot judge fits."""
    share = await fit_share(provider, text, tool)
    return share is not None and share < least_share(sure)
