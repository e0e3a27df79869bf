"""Classifying a message as chat or task.

Where the provider can score fixed answers, the label with the higher log-probability right
after the prompt wins: one forward pass, no decoding. Otherwise the model generates a short
reply that is searched for either word. A reply that says neither falls back to ``rule_intent``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
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


_SKIP = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache"}
_NAME_LIKE = re.compile(r"[\w.\-/]+")


def workspace_names(workspace: Path, limit: int = 5000) -> set[str]:
    """The names of the files and folders in the workspace (and their paths relative to it),
    for telling a question about one of them from a general one."""
    names: set[str] = set()
    root = str(workspace)
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".")]
        for name in (*dirs, *files):
            names.add(name)
            names.add(os.path.relpath(os.path.join(folder, name), root))
        if len(names) >= limit:
            break
    return names


def names_a_workspace_entry(text: str, names: Iterable[str]) -> bool:
    """Whether the message mentions a file or folder that exists here by its name or path
    (``What does calc.py do?`` needs calc.py). Short plain words are not enough: a folder
    named ``test`` must not turn every message with that word into a task."""
    wanted = set(names)
    for word in _NAME_LIKE.findall(text):
        word = word.strip(".,;:!?/").removeprefix("./")
        if word in wanted and ("." in word or "/" in word or len(word) > 12):
            return True
    return False


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
    method: Literal["scored", "generated", "rule", "workspace"]


async def classify(
    provider: Provider,
    text: str,
    generate: Callable[[CompletionRequest], Awaitable[str]],
    workspace_entries: Iterable[str] = (),
) -> Classification:
    """Chat or task for the message on its own (the conversation does not sway it). A message
    that names a file or folder of the workspace is a task whatever the model thinks: small
    models take "What does calc.py do?" for a general question."""
    if names_a_workspace_entry(text, workspace_entries):
        return Classification(intent="task", method="workspace")
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
