"""InProcessEngine: what the MLX and llama.cpp providers share.

One worker thread for every engine call (neither engine's state is thread-safe), loading once
under a lock, the display name, per-request logits processors, and constrained tool calls:
deciding when a request is constrained, building the llguidance token table once per model,
and falling back to free generation for a schema no grammar can express.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import Any

from pheron_tui.core.messages import Chunk, CompletionRequest, Usage
from pheron_tui.providers.constrain import ToolCallConstraint, build_constraint
from pheron_tui.providers.grammar import CallFormat
from pheron_tui.providers.models import Progress, display_name
from pheron_tui.providers.threaded import Emit, stream_on_thread


class InProcessEngine(ABC):
    name: str
    engine_reason = ""

    def __init__(self, model: str, constrained: bool) -> None:
        self.model = model
        self.constrained = constrained
        """Tool calls constrained to the tools' grammar (llguidance) when tools are offered."""
        self.progress: Progress = lambda _p, _m: None
        self.last_usage: Usage | None = None
        self.logits_processors: Callable[[CompletionRequest], list[Any]] | None = None
        """Per-request logits processors (forced replies in tests), before the constraint."""
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=self.name)
        self._load_lock = asyncio.Lock()
        self._lltokenizer: Any = None
        self._special: tuple[str, ...] | None = None

    @property
    def display_model(self) -> str:
        return display_name(self.model)

    @property
    def special_tokens(self) -> tuple[str, ...]:
        """The texts the tokenizer reads as control tokens (``<|im_end|>``, ``<tool_call>``):
        tool output that contains one is defused before it enters a prompt."""
        if self._special is None and self._loaded:
            self._special = tuple(sorted(set(self._list_special_tokens()) - {""}))
        return self._special or ()

    async def _on_thread(self, function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._thread, function, *args)

    async def load(self, progress: Progress | None = None) -> None:
        async with self._load_lock:
            if self._loaded:
                return
            if progress is not None:
                self.progress = progress
            await self._on_thread(self._load_sync)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[Chunk]:
        await self.load()
        async for chunk in stream_on_thread(self._thread, partial(self._generate, request)):
            yield chunk

    async def score_choices(
        self, request: CompletionRequest, options: Sequence[str]
    ) -> dict[str, float]:
        await self.load()
        return await self._on_thread(self._score_sync, request, list(options))

    # -- what each engine provides -------------------------------------------------------------
    @property
    @abstractmethod
    def _loaded(self) -> bool: ...

    @abstractmethod
    def _load_sync(self) -> None: ...

    @abstractmethod
    def _generate(self, request: CompletionRequest, emit: Emit, stop: threading.Event) -> None:
        """On the engine thread: generate, emitting chunks, checking ``stop`` every token."""

    @abstractmethod
    def _score_sync(self, request: CompletionRequest, options: list[str]) -> dict[str, float]: ...

    @abstractmethod
    def _make_lltokenizer(self) -> Any:
        """llguidance's token table for the loaded model."""

    @abstractmethod
    def _list_special_tokens(self) -> list[str]:
        """The text of every control or added token of the loaded model."""

    @abstractmethod
    def _call_format(self) -> CallFormat: ...

    @abstractmethod
    def _encode(self, text: str) -> list[int]:
        """Tokens for ``text``, special tokens recognised (as the model would write it)."""

    @abstractmethod
    def _decode(self, token: int) -> str: ...

    @abstractmethod
    def _eos(self) -> int: ...

    # -- constrained decoding ------------------------------------------------------------------
    def _constraint(self, request: CompletionRequest) -> ToolCallConstraint | None:
        """The tool-call constraint for a planning request that offers tools, if on."""
        if not (self.constrained and request.tools and request.purpose == "plan"):
            return None
        if self._lltokenizer is None:  # about a second for a big vocabulary: once per model
            self._lltokenizer = self._make_lltokenizer()
        try:
            return build_constraint(
                self._lltokenizer,
                self._call_format(),
                request.tools,
                request.tool_choice,
                self._encode,
                self._eos(),
                self._decode,
                several=request.parallel_tool_calls,
            )
        except ValueError:
            return None  # a schema the grammar cannot express: generate unconstrained

    def _processors(
        self, request: CompletionRequest
    ) -> tuple[list[Any], ToolCallConstraint | None]:
        """The request's logits processors, the constraint's mask last."""
        processors = self.logits_processors(request) if self.logits_processors else []
        constraint = self._constraint(request)
        if constraint is not None:
            processors = [*processors, self._mask_processor(constraint)]
        return processors, constraint

    @staticmethod
    @abstractmethod
    def _mask_processor(constraint: ToolCallConstraint) -> Callable[[Any, Any], Any]: ...


def mask_ms_per_token(constraint: ToolCallConstraint | None) -> float:
    if constraint is None or not constraint.masked_tokens:
        return 0.0
    return constraint.mask_seconds * 1000 / constraint.masked_tokens
