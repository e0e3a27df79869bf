"""CriticAgent: judges a finished task PASS or FAIL.

A clarify turn passes automatically without a model call: asking the user back is the right
move when the request is unclear, and there is no answer yet to judge. Otherwise the
verdict is the higher-scored of PASS and FAIL where the provider can score, then a one-sentence
reason is generated; elsewhere the model's reply is parsed for the verdict and reason.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from pheron_tui.core.messages import CompletionRequest, Message
from pheron_tui.core.prompts import CRITIC_SYSTEM, critic_user
from pheron_tui.core.provider import ChoiceScorer, Provider, ScoringUnavailable

Verdict = Literal["PASS", "FAIL"]
NO_OBSERVATION = "No observation found."
CRITIC_MAX_TOKENS = 96

_VERDICT_RE = re.compile(r"\b(PASS|FAIL)(?:ED)?\b\W*(.*)", re.IGNORECASE | re.DOTALL)


@dataclass
class Review:
    verdict: Verdict
    reason: str
    auto: bool


def is_clarify_turn(answer: str, last_observation: str) -> bool:
    """Block 2b: the reply asks (``CLARIFY(`` or ends with ``?``) and nothing was observed."""
    asks = "CLARIFY(" in answer or answer.rstrip().endswith("?")
    observed = last_observation.strip() not in ("", NO_OBSERVATION)
    return asks and not observed


def parse_verdict(reply: str) -> tuple[Verdict, str] | None:
    match = _VERDICT_RE.search(reply)
    if match is None:
        return None
    verdict: Verdict = "PASS" if match.group(1).upper() == "PASS" else "FAIL"
    reason = match.group(2).strip().splitlines()[0].strip() if match.group(2).strip() else ""
    return verdict, reason


class CriticAgent:
    def __init__(
        self, provider: Provider, generate: Callable[[CompletionRequest], Awaitable[str]]
    ) -> None:
        self.provider = provider
        self.generate = generate

    def _request(
        self, request_text: str, observations: list[str], answer: str
    ) -> CompletionRequest:
        return CompletionRequest(
            messages=[
                Message(role="system", content=CRITIC_SYSTEM),
                Message(
                    role="user",
                    content=critic_user(
                        request_text, observations, answer, self.provider.special_tokens
                    ),
                ),
            ],
            enable_thinking=False,
            max_tokens=CRITIC_MAX_TOKENS,
            purpose="critic",
        )

    async def review(self, request_text: str, answer: str, observations: list[str]) -> Review:
        last = observations[-1] if observations else NO_OBSERVATION
        if is_clarify_turn(answer, last):
            return Review("PASS", "the agent asked a clarifying question; nothing ran", auto=True)
        request = self._request(request_text, observations, answer)
        if isinstance(self.provider, ChoiceScorer):
            try:
                scores = await self.provider.score_choices(request, ("PASS", "FAIL"))
            except ScoringUnavailable:
                scores = None  # a server without logprobs: generate and parse instead
            if scores is not None:
                return await self._scored_review(request, scores)
        reply = await self.generate(request)
        parsed = parse_verdict(reply)
        if parsed is None:
            # An unreadable verdict is not a pass: we could not confirm the work.
            shown = reply.strip()[:120] or "(empty)"
            return Review("FAIL", f"the critic gave no verdict (it said: {shown})", auto=False)
        verdict, reason = parsed
        return Review(verdict, reason or "(no reason given)", auto=False)

    async def _scored_review(self, request: CompletionRequest, scores: dict[str, float]) -> Review:
        verdict: Verdict = "PASS" if scores["PASS"] >= scores["FAIL"] else "FAIL"
        reason_request = request.model_copy(
            update={
                "messages": [
                    *request.messages,
                    Message(role="assistant", content=f"{verdict}:"),
                    Message(role="user", content="Give the reason in one short sentence."),
                ]
            }
        )
        reason = (await self.generate(reason_request)).strip().splitlines()
        return Review(verdict, reason[0] if reason else "", auto=False)
