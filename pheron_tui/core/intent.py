"""Classifying a message as chat or task.

Where the provider can score fixed answers, the label with the higher log-probability right
after the prompt wins: one forward pass, no decoding. Otherwise the model generates a short
reply that is searched for either word. A reply that says neither falls back to ``rule_intent``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from pheron_tui.core.messages import CompletionRequest, Intent, Message
from pheron_tui.core.prompts import CLASSIFY_SYSTEM
from pheron_tui.providers.base import ChoiceScorer, Provider, ScoringUnavailable

CLASSIFY_MAX_TOKENS = 64
LABELS: tuple[Intent, Intent] = ("chat", "task")

# Verbs and nouns that mean "do something on this machine". Used only when the model's own
# classification is unavailable or unreadable.
_TASK_WORDS = re.compile(
    r"\b(list|read|open|write|create|make|edit|change|modify|delete|remove|rename|move|copy|"
    r"run|execute|install|build|compile|test|fix|search|find|grep|count|show|summari[sz]e|"
    r"file|files|folder|folders|directory|directories|dir|repo|repository|script|command|"
    r"shell|code|\.py|\.md|\.txt|\.json|readme)\b",
    re.IGNORECASE,
)


def rule_intent(text: str) -> Intent:
    """The documented fallback: a message that mentions files, folders, commands or an action
    verb on them is a task; anything else is chat."""
    return "task" if _TASK_WORDS.search(text) else "chat"


def parse_intent(reply: str) -> Intent | None:
    """The first of the two labels the reply says, or None."""
    match = re.search(r"\b(chat|task)\b", reply, re.IGNORECASE)
    return match.group(1).lower() if match else None  # type: ignore[return-value]


def classify_request(text: str) -> CompletionRequest:
    return CompletionRequest(
        messages=[
            Message(role="system", content=CLASSIFY_SYSTEM),
            Message(role="user", content=text),
        ],
        enable_thinking=False,
        max_tokens=CLASSIFY_MAX_TOKENS,
        purpose="classify",
    )


@dataclass
class Classification:
    intent: Intent
    method: Literal["scored", "generated", "rule"]


async def classify(
    provider: Provider,
    text: str,
    generate: Callable[[CompletionRequest], Awaitable[str]],
) -> Classification:
    request = classify_request(text)
    if isinstance(provider, ChoiceScorer):
        try:
            scores = await provider.score_choices(request, LABELS)
        except ScoringUnavailable:
            pass  # a server without logprobs: generate and parse instead
        else:
            best = max(LABELS, key=lambda label: scores[label])
            return Classification(intent=best, method="scored")
    reply = await generate(request)
    intent = parse_intent(reply)
    if intent is None:
        return Classification(intent=rule_intent(text), method="rule")
    return Classification(intent=intent, method="generated")
