"""The Provider protocol: everything the orchestrator needs from a model backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol, runtime_checkable

from pheron_tui.core.errors import PheronError
from pheron_tui.core.messages import Chunk, CompletionRequest

Progress = Callable[[float | None, str], None]
"""Loading progress: a fraction (or None when unknown) and what is happening. May be called
from any thread."""


class ProviderError(PheronError, RuntimeError):
    """A provider could not answer; the message is shown to the user as it is."""


class ToolsRejected(ProviderError):
    """The server refused the ``tools`` parameter; the provider now uses the legacy format,
    and the same request should be made again."""


class ScoringUnavailable(ProviderError):
    """``score_choices`` cannot work here (no logprobs); generate and parse instead."""


class OptionsUnlikely(ScoringUnavailable):
    """None of the options is among the tokens the model would likely start with, so none
    could be scored: to a caller that only asks "how likely is this one", all are unlikely."""


@runtime_checkable
class Provider(Protocol):
    name: str
    """Short provider name for the status bar (``mlx``, ``openai``, ``scripted``)."""
    model: str
    """What the user asked for, as they named it."""
    engine_reason: str
    """Why this engine runs the model when the user left the choice to us (``auto: Apple
    Silicon``); empty when they chose it."""

    @property
    def display_model(self) -> str:
        """The model as the status bar names it (a file's name, ``model @ host``)."""
        ...

    @property
    def native_tools(self) -> bool:
        """Whether tools go through the model's own template (otherwise the legacy prompt)."""
        ...

    @property
    def special_tokens(self) -> Sequence[str]:
        """The texts the model's tokenizer reads as control tokens, where known (empty before
        loading and for remote models); tool output has them defused."""
        ...

    @property
    def context_window(self) -> int | None:
        """How many tokens a request and its reply may hold together, where known."""
        ...

    async def load(self, progress: Progress | None = None) -> None:
        """Make the model ready; a no-op for remote providers. Raises ProviderError."""
        ...

    def stream(self, request: CompletionRequest) -> AsyncIterator[Chunk]:
        """Stream a reply. Cancelling the consuming task stops generation promptly."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class TokenCounter(Protocol):
    """Optional: providers that can count tokens with the model's own tokenizer."""

    async def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


@runtime_checkable
class ChoiceScorer(Protocol):
    """Optional: providers that can score fixed answers without generating text."""

    async def score_choices(
        self, request: CompletionRequest, options: Sequence[str]
    ) -> dict[str, float]:
        """The log-probability of each option as the reply to ``request``."""
        ...
