"""MLXProvider: models run in-process with mlx-lm.

All MLX work happens on one dedicated thread: MLX streams belong to the thread that made them,
and a second thread fails with "There is no Stream(cpu, 0) in current thread". Tokens cross to
the event loop with ``call_soon_threadsafe``; cancelling sets a flag the thread checks after
every token (and between prefill chunks), so a stop takes at most one token.

mlx and mlx_lm are imported on that thread when the model loads, never on the path that draws
the first screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from pheron_tui.core.messages import (
    CompletionRequest,
    DoneChunk,
    StartChunk,
    TextChunk,
    Usage,
    UsageChunk,
)
from pheron_tui.core.provider import ProviderError, ScoringUnavailable
from pheron_tui.providers.constrain import ToolCallConstraint
from pheron_tui.providers.engine import InProcessEngine, mask_ms_per_token
from pheron_tui.providers.forced_lead import LeadHold, forced_start
from pheron_tui.providers.grammar import CallFormat, detect_format
from pheron_tui.providers.models import ModelError, catalogue_entry, local_model_path
from pheron_tui.providers.stop_strings import StopStrings
from pheron_tui.providers.threaded import Cancelled

PREFILL_STEP = 512
"""Prefill chunk size: small enough that a cancel during a long prompt is noticed quickly."""
CACHE_ENTRIES = 8


class MLXProvider(InProcessEngine):
    name = "mlx"

    def __init__(self, model: str = "default", constrained: bool = True) -> None:
        super().__init__(model, constrained)
        self._model: Any = None
        self._tok: Any = None
        self._cache: Any = None

    @property
    def _loaded(self) -> bool:
        return self._model is not None

    @property
    def native_tools(self) -> bool:
        """The template takes tools, unless the catalogue measured the prompted format better
        for this model (as on llama.cpp)."""
        entry = catalogue_entry(self.model, "mlx")
        if entry is not None and entry.tool_mode == "legacy":
            return False
        return bool(self._tok is not None and self._tok.has_tool_calling)

    @property
    def context_window(self) -> int | None:
        """The model's trained length (its config's ``max_position_embeddings``), once loaded."""
        args = getattr(self._model, "args", None)
        value = getattr(args, "max_position_embeddings", None)
        return value if isinstance(value, int) else None

    async def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Counted by the model's own tokenizer."""
        if self._tok is None:
            raise ProviderError("the model is not loaded")
        return [len(self._tok.encode(text, add_special_tokens=False)) for text in texts]

    @property
    def tokenizer(self) -> Any:
        return self._tok

    # -- loading -------------------------------------------------------------------------------
    def _load_sync(self) -> None:
        try:
            path = local_model_path(self.model, self.progress)
        except (ModelError, ValueError) as exc:  # GGUFError is a ValueError
            raise ProviderError(str(exc)) from None
        self.progress(0.95, f"loading {self.display_model}")
        try:
            import mlx.core as mx
            from mlx_lm import load
            from mlx_lm.models.cache import LRUPromptCache

            loaded = load(path)
            model, tok = loaded[0], loaded[1]
        except Exception as exc:  # missing files, corrupt weights, unknown architectures
            raise ProviderError(
                f"could not load model {self.model!r}: {type(exc).__name__}: {exc}"
            ) from None
        if mx.default_device().type == mx.DeviceType.cpu:
            # fp16/bf16 activations are 8-40x slower on MLX's CPU kernels.
            model.set_dtype(mx.float32)
        self._model, self._tok = model, tok
        self._cache = LRUPromptCache(max_size=CACHE_ENTRIES)

    async def aclose(self) -> None:
        # Release MLX's streams on the thread that made them, then join it: otherwise MLX's
        # per-thread state is torn down at interpreter exit and the process can abort with
        # "terminate called without an active exception" (mlx issue #3126, API from #3395).
        if self._model is not None:
            with contextlib.suppress(Exception):
                await self._on_thread(self._release_streams)
        await asyncio.to_thread(self._thread.shutdown, True, cancel_futures=True)

    @staticmethod
    def _release_streams() -> None:
        import mlx.core as mx

        mx.synchronize()
        mx.clear_streams()

    # -- prompts -------------------------------------------------------------------------------
    def _render(self, request: CompletionRequest, generation: bool, thinking: bool) -> list[int]:
        messages = [m.to_chat_dict() for m in request.messages]
        tools = (
            [t.model_dump() for t in request.tools] if request.tools and self.native_tools else None
        )
        try:
            return self._tok.apply_chat_template(
                messages, tools=tools, add_generation_prompt=generation, enable_thinking=thinking
            )
        except Exception as exc:  # template errors are the model's rules, not our crash
            raise ProviderError(
                f"the model's chat template rejected the conversation: {exc}"
            ) from None

    def _prefill(self, cache: list[Any], tokens: list[int], stop: threading.Event | None) -> None:
        import mlx.core as mx

        for start in range(0, len(tokens), PREFILL_STEP):
            if stop is not None and stop.is_set():
                raise Cancelled
            self._model(mx.array(tokens[start : start + PREFILL_STEP])[None], cache=cache)
            mx.eval([c.state for c in cache])

    def _cached_prefix(self, prompt: list[int]) -> tuple[list[Any], int]:
        """The nearest cached prefix of ``prompt`` (always leaving one token to feed)."""
        from mlx_lm.models.cache import make_prompt_cache

        cache, rest = self._cache.fetch_nearest_cache(self.model, prompt[:-1])
        if cache is None:
            return make_prompt_cache(self._model), 0
        return cache, len(prompt) - 1 - len(rest)

    def _checkpoint(self, cache: list[Any], tokens: list[int]) -> None:
        self._cache.insert_cache(self.model, list(tokens), copy.deepcopy(cache))

    # -- generation ----------------------------------------------------------------------------
    def _generate(
        self, request: CompletionRequest, emit: Callable[[Any], None], stop: threading.Event
    ) -> None:
        from mlx_lm import stream_generate
        from mlx_lm.sample_utils import make_sampler

        tok = self._tok
        started = time.perf_counter()
        processors, constraint = self._processors(request)
        prompt = self._render(request, generation=True, thinking=request.enable_thinking)
        base = self._render(request, generation=False, thinking=request.enable_thinking)
        cache, reused = self._cached_prefix(prompt)
        start = reused
        if prompt[: len(base)] == base and reused < len(base):
            # Checkpoint the conversation before the generation tail: the next cycle re-renders
            # everything after it, and non-trimmable caches can only resume from exact prefixes.
            self._prefill(cache, prompt[reused : len(base)], stop)
            self._checkpoint(cache, prompt[: len(base)])
            start = len(base)
        in_think = bool(
            tok.has_thinking and tok.rfind_think_start(prompt) > tok.rfind_think_end(prompt)
        )
        # A reply that must call, with no grammar to hold it and no thinking open, starts
        # with the call's marker (written into the prompt, after the cached conversation).
        fmt = self._call_format()
        lead = forced_start(fmt, request) if constraint is None and not in_think else ""
        prompt += self._encode(lead) if lead else []
        hold = LeadHold(fmt, lead)
        emit(StartChunk(starts_in_think=in_think))

        def check_stop(_done: int, _total: int) -> None:
            if stop.is_set():
                raise Cancelled

        generated: list[int] = []
        first_at: float | None = None
        stops = StopStrings(request.stop)
        last = None
        sampler = make_sampler(temp=request.temperature)
        for response in stream_generate(
            self._model,
            tok,
            prompt[start:],
            max_tokens=request.max_tokens,
            sampler=sampler,
            prompt_cache=cache,
            prompt_progress_callback=check_stop,
            logits_processors=processors or None,
        ):
            if first_at is None:
                first_at = time.perf_counter()
            generated.append(response.token)
            last = response
            if response.text and (text := hold.feed(stops.feed(response.text))):
                emit(TextChunk(text=text))
            if stop.is_set() or stops.stopped:
                break
        if rest := hold.feed(stops.finish()) + hold.finish():
            emit(TextChunk(text=rest))
        self._cache.insert_cache(self.model, prompt + generated, cache)
        usage = Usage(
            prompt_tokens=len(prompt),
            cached_tokens=reused,
            completion_tokens=len(generated),
            tokens_per_s=float(last.generation_tps) if last is not None else 0.0,
            ttft_ms=((first_at or time.perf_counter()) - started) * 1000,
            mask_ms_per_token=mask_ms_per_token(constraint),
        )
        self.last_usage = usage
        emit(UsageChunk(usage=usage))
        emit(DoneChunk(finish_reason=last.finish_reason if last is not None else None))

    # -- constrained decoding ------------------------------------------------------------------
    def _list_special_tokens(self) -> list[str]:
        hf = self._tok._tokenizer
        added = getattr(hf, "added_tokens_decoder", {}) or {}
        return [str(t) for t in added.values()] + list(getattr(hf, "all_special_tokens", []))

    def _make_lltokenizer(self) -> Any:
        import llguidance.hf

        return llguidance.hf.from_tokenizer(
            self._tok._tokenizer, eos_token=sorted(self._tok.eos_token_ids)
        )

    def _call_format(self) -> CallFormat:
        if not self.native_tools:
            return "legacy"
        template = self._tok.chat_template
        return detect_format(str(template)) if template else "qwen_json"

    def _encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False)

    def _decode(self, token: int) -> str:
        return self._tok.decode([token])

    def _eos(self) -> int:
        return sorted(self._tok.eos_token_ids)[0]

    @staticmethod
    def _mask_processor(constraint: ToolCallConstraint) -> Callable[[Any, Any], Any]:
        """An mlx-lm logits processor. The mask is filled with numpy and applied with
        ``mx.where``: llguidance's MLX kernel is Metal-only."""

        def apply(tokens: Any, logits: Any) -> Any:
            import mlx.core as mx

            mask = constraint.allowed(tokens, logits.shape[-1])
            if mask is None:
                return logits
            return mx.where(mx.array(mask), logits, -mx.inf)

        return apply

    # -- scoring -------------------------------------------------------------------------------
    def _variants(self, option: str) -> list[list[int]]:
        # The label as written and capitalised: 33/44 on the intent set, against 27/44 for the
        # exact label alone and 24/44 when upper-case and space-led spellings were added too.
        spellings = {option, option.capitalize()}
        return [self._tok.encode(s, add_special_tokens=False) for s in sorted(spellings)]

    def _score_sync(self, request: CompletionRequest, options: list[str]) -> dict[str, float]:
        """Log-probability of each option as the reply: one forward pass when the options'
        first tokens differ (the usual case for single-word labels)."""
        import mlx.core as mx

        firsts = {o: {v[0] for v in self._variants(o) if v} for o in options}
        for option in options:
            if any(firsts[option] & firsts[other] for other in options if other != option):
                # One forward pass cannot tell them apart: the caller generates instead.
                raise ScoringUnavailable(f"cannot score {options}: their first tokens are the same")
        prompt = self._render(request, generation=True, thinking=False)
        cache, reused = self._cached_prefix(prompt)
        logits = None
        rest = prompt[reused:]
        for begin in range(0, len(rest), PREFILL_STEP):
            logits = self._model(mx.array(rest[begin : begin + PREFILL_STEP])[None], cache=cache)
        assert logits is not None
        logprobs = logits[0, -1] - mx.logsumexp(logits[0, -1])
        self._cache.insert_cache(self.model, list(prompt), cache)
        scores: dict[str, float] = {}
        for option in options:
            ids = sorted(firsts[option])
            scores[option] = float(cast(float, mx.logsumexp(logprobs[mx.array(ids)]).item()))
        self.last_usage = Usage(prompt_tokens=len(prompt), cached_tokens=reused)
        return scores
