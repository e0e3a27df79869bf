"""LlamaCppProvider: GGUF models in-process with llama.cpp (llama-cpp-python).

The fast local path on CPUs without Apple Silicon. Like the MLX provider it renders prompts
with the model's own chat template (from the GGUF), streams raw text through pheron-tui's
think guard and parser, runs every llama.cpp call on one thread (a context is not
thread-safe), stops within one token of a cancel, and reuses the KV cache for the longest
prefix the next prompt shares with the last (classification, planning cycles and turns all
start with the same system prompt and history).
"""

from __future__ import annotations

import asyncio
import codecs
import math
import os
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pheron_tui.core.messages import (
    CompletionRequest,
    DoneChunk,
    StartChunk,
    TextChunk,
    Usage,
    UsageChunk,
)
from pheron_tui.providers.base import ProviderError
from pheron_tui.providers.chat_template import ChatTemplate
from pheron_tui.providers.constrain import ToolCallConstraint
from pheron_tui.providers.engine import InProcessEngine, mask_ms_per_token
from pheron_tui.providers.grammar import CallFormat, detect_format
from pheron_tui.providers.models import ModelError, Progress, bundled_gguf
from pheron_tui.providers.threaded import Emit

CONTEXT_TOKENS = 8192
CHECKPOINTS = 3
"""Saved KV states kept for reuse: a classification or critic request between two turns
replaces the context, and the next turn's prompt is then found in a checkpoint instead."""
CHECKPOINT_MAX_BYTES = 256 * 1024 * 1024
"""A bigger state (a large model deep into a long conversation) is not copied at all."""
MIN_GAIN_TOKENS = 16
"""Restoring a checkpoint costs a copy; only worth it when it saves this many tokens."""
EMIT_INTERVAL_S = 0.02
"""Text crosses to the event loop at most this often (the first token at once): waking the
loop for every token made decoding ~1 % slower on 2 cores (bench/llamacpp_provider.py: 0.983
of raw per token, 0.990 batched), and the UI coalesces at a similar rate anyway."""

LogitsProcessor = Callable[[Any, Any], Any]


def gguf_path(spec: str, progress: Progress) -> Path:
    """The GGUF file ``--model`` names: the bundled one, or a path to a .gguf."""
    if spec == "bundled":
        return bundled_gguf(progress)
    path = Path(spec).expanduser()
    if path.suffix.lower() == ".gguf" and path.is_file():
        return path
    raise ModelError(
        f"--provider llamacpp runs .gguf files; {spec!r} is not one (MLX folders and hub ids "
        "run with --provider mlx)"
    )


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class LlamaCppProvider(InProcessEngine):
    name = "llamacpp"

    def __init__(
        self,
        model: str = "bundled",
        threads: int | None = None,
        chat_template: str | None = None,
        constrained: bool = True,
    ) -> None:
        super().__init__(model, constrained)
        self.threads = threads or os.cpu_count() or 2
        self.chat_template = chat_template
        """A template to use instead of the GGUF's own (some GGUFs ship a broken one)."""
        self._llm: Any = None
        self._template: ChatTemplate | None = None
        self._stop_tokens: set[int] = set()
        self._checkpoints: list[tuple[list[int], Any]] = []

    @property
    def _loaded(self) -> bool:
        return self._llm is not None

    @property
    def native_tools(self) -> bool:
        return self._template is not None and self._template.takes_tools

    # -- loading -------------------------------------------------------------------------------
    def _load_sync(self) -> None:
        try:
            path = gguf_path(self.model, self.progress)
        except (ModelError, ValueError) as exc:
            raise ProviderError(str(exc)) from None
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ProviderError(
                "llama-cpp-python is not installed; see the README for the one command that "
                "installs pheron-tui[llamacpp]"
            ) from None
        self.progress(0.95, f"loading {self.display_model} with llama.cpp")
        try:
            llm = Llama(
                model_path=str(path),
                n_ctx=CONTEXT_TOKENS,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                n_batch=512,
                verbose=False,
            )
        except Exception as exc:  # corrupt files, unknown architectures
            raise ProviderError(f"llama.cpp could not load {path}: {exc}") from None
        source = self.chat_template or llm.metadata.get("tokenizer.chat_template")
        if not source:
            raise ProviderError(f"{path.name} has no chat template; pheron-tui needs one")

        def token_text(token_id: int) -> str:
            if token_id < 0:
                return ""
            return llm.detokenize([token_id], special=True).decode("utf-8", errors="replace")

        bos, eos = llm.token_bos(), llm.token_eos()
        self._template = ChatTemplate(source, bos_token=token_text(bos), eos_token=token_text(eos))
        self._stop_tokens = {eos, *self._end_of_turn_tokens(llm)}
        self._llm = llm

    @staticmethod
    def _end_of_turn_tokens(llm: Any) -> set[int]:
        """Tokens that end a turn besides EOS (``<|im_end|>``, ``<|eot_id|>``, …)."""
        found = set()
        for marker in ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"):
            ids = llm.tokenize(marker.encode(), add_bos=False, special=True)
            if len(ids) == 1:
                found.add(ids[0])
        return found

    async def aclose(self) -> None:
        if self._llm is not None:
            await self._on_thread(self._free)
        await asyncio.to_thread(self._thread.shutdown, True, cancel_futures=True)

    def _free(self) -> None:
        llm, self._llm = self._llm, None
        if llm is not None and hasattr(llm, "close"):
            llm.close()

    # -- prompts -------------------------------------------------------------------------------
    def _render(self, request: CompletionRequest, thinking: bool) -> tuple[str, list[int]]:
        assert self._template is not None
        messages = [m.to_chat_dict() for m in request.messages]
        tools = (
            [t.model_dump() for t in request.tools] if request.tools and self.native_tools else None
        )
        text = self._template.render(messages, tools=tools, enable_thinking=thinking)
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) + request.max_tokens > CONTEXT_TOKENS:
            raise ProviderError(
                f"the conversation is too long for the model's context: {len(tokens)} prompt "
                f"tokens + {request.max_tokens} to generate > {CONTEXT_TOKENS}"
            )
        return text, tokens

    def _reusable(self, tokens: list[int]) -> int:
        """Prompt tokens already in the KV cache (llama-cpp-python keeps them when the next
        prompt starts the same way; one token is always evaluated again). A saved checkpoint
        that shares more of the prompt than the live context is restored first."""
        llm = self._llm
        live = common_prefix(llm.input_ids[: llm.n_tokens].tolist(), tokens[:-1])
        best, best_state = live, None
        for saved, state in self._checkpoints:
            shared = common_prefix(saved, tokens[:-1])
            if shared > best + MIN_GAIN_TOKENS:
                best, best_state = shared, state
        if best_state is not None:
            llm.load_state(best_state)
        return best

    def _checkpoint(self) -> None:
        """Keep the context a conversation reply left, for the next turn to start from."""
        llm = self._llm
        tokens = llm.input_ids[: llm.n_tokens].tolist()
        import llama_cpp

        if llama_cpp.llama_state_get_size(llm._ctx.ctx) > CHECKPOINT_MAX_BYTES:
            return
        state = llm.save_state()
        self._checkpoints = [c for c in self._checkpoints if c[0] != tokens][-(CHECKPOINTS - 1) :]
        self._checkpoints.append((tokens, state))

    # -- generation ----------------------------------------------------------------------------
    def _generate(self, request: CompletionRequest, emit: Emit, stop: threading.Event) -> None:
        from llama_cpp import LogitsProcessorList

        llm = self._llm
        started = time.perf_counter()
        text, prompt = self._render(request, thinking=request.enable_thinking)
        reused = self._reusable(prompt)
        emit(StartChunk(starts_in_think=text.rfind("<think>") > text.rfind("</think>")))
        processors, constraint = self._processors(request)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        first_at: float | None = None
        last_at = 0.0
        emitted_at = 0.0  # long ago: the first token goes out at once
        pending: list[str] = []
        generated = 0
        sampled = 0  # with the stop token: the intervals a speed is measured over
        finish = "length"
        tokens = llm.generate(
            prompt,
            temp=request.temperature,
            top_k=1 if request.temperature == 0 else 40,
            top_p=1.0,
            min_p=0.0,
            repeat_penalty=1.0,
            logits_processor=LogitsProcessorList(processors) if processors else None,
        )
        try:
            for token in tokens:
                sampled += 1
                last_at = time.perf_counter()
                if first_at is None:
                    first_at = last_at
                if token in self._stop_tokens:
                    finish = "stop"
                    break
                generated += 1
                pending.append(decoder.decode(llm.detokenize([token], special=True)))
                if last_at - emitted_at >= EMIT_INTERVAL_S and (text := "".join(pending)):
                    emit(TextChunk(text=text))
                    pending.clear()
                    emitted_at = last_at
                if stop.is_set() or generated >= request.max_tokens:
                    finish = "cancelled" if stop.is_set() else "length"
                    break
        finally:
            tokens.close()
        if request.purpose in ("chat", "plan"):
            self._checkpoint()
        if rest := "".join(pending) + decoder.decode(b"", final=True):
            emit(TextChunk(text=rest))
        ended = time.perf_counter()
        usage = Usage(
            prompt_tokens=len(prompt),
            cached_tokens=reused,
            completion_tokens=generated,
            tokens_per_s=(sampled - 1) / (last_at - first_at)
            if first_at and sampled > 1 and last_at > first_at
            else 0.0,
            ttft_ms=((first_at or ended) - started) * 1000,
            mask_ms_per_token=mask_ms_per_token(constraint),
        )
        self.last_usage = usage
        emit(UsageChunk(usage=usage))
        emit(DoneChunk(finish_reason=finish))

    # -- constrained decoding ------------------------------------------------------------------
    def _list_special_tokens(self) -> list[str]:
        import llama_cpp

        vocab = self._llm._model.vocab
        wanted = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
        return [
            self._decode(token)
            for token in range(llama_cpp.llama_vocab_n_tokens(vocab))
            if llama_cpp.llama_vocab_get_attr(vocab, token) & wanted
        ]

    def _make_lltokenizer(self) -> Any:
        from llguidance.llamacpp import lltokenizer_from_vocab

        with warnings.catch_warnings():
            # llguidance calls a llama.cpp function deprecated in 0.3.36, once per token.
            warnings.simplefilter("ignore", DeprecationWarning)
            return lltokenizer_from_vocab(self._llm._model.vocab)

    def _call_format(self) -> CallFormat:
        assert self._template is not None
        return detect_format(self._template.source) if self.native_tools else "legacy"

    def _encode(self, text: str) -> list[int]:
        return self._llm.tokenize(text.encode(), add_bos=False, special=True)

    def _decode(self, token: int) -> str:
        return self._llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    def _eos(self) -> int:
        return self._llm.token_eos()

    @staticmethod
    def _mask_processor(constraint: ToolCallConstraint) -> LogitsProcessor:
        def apply(input_ids: Any, logits: Any) -> Any:
            import numpy as np

            mask = constraint.allowed(input_ids, logits.shape[-1])
            return logits if mask is None else np.where(mask, logits, -np.inf)

        return apply

    # -- scoring -------------------------------------------------------------------------------
    def _score_sync(self, request: CompletionRequest, options: list[str]) -> dict[str, float]:
        """Log-probabilities of each option's first token, from the logits after the prompt
        (one prefill, sharing the KV prefix like generation)."""
        import numpy as np
        from llama_cpp import LogitsProcessorList

        llm = self._llm
        _text, prompt = self._render(request, thinking=False)
        reused = self._reusable(prompt)
        captured: list[Any] = []

        def capture(_ids: Any, logits: Any) -> Any:
            if not captured:
                captured.append(np.array(logits, dtype=np.float64))
            return logits

        tokens = llm.generate(
            prompt, temp=0.0, top_k=1, logits_processor=LogitsProcessorList([capture])
        )
        try:
            next(tokens)
        finally:
            tokens.close()
        logits = captured[0]
        top = logits.max()
        logprobs = logits - (top + math.log(np.exp(logits - top).sum()))
        scores: dict[str, float] = {}
        firsts: dict[str, set[int]] = {}
        for option in options:
            spellings = {option, option.capitalize()}
            firsts[option] = {
                ids[0]
                for s in spellings
                if (ids := llm.tokenize(s.encode(), add_bos=False, special=False))
            }
        for option in options:
            if any(firsts[option] & firsts[o] for o in options if o != option):
                raise ProviderError(f"cannot score {options}: their first tokens are the same")
            chosen = logprobs[sorted(firsts[option])]
            peak = chosen.max()
            scores[option] = float(peak + math.log(np.exp(chosen - peak).sum()))
        self.last_usage = Usage(prompt_tokens=len(prompt), cached_tokens=reused)
        return scores
