"""Constraining tool calls token by token with llguidance, for any in-process engine.

``ToolCallConstraint`` watches the generated tokens. In ``auto`` mode it leaves everything
free until the call's start marker has been generated, then allows only tokens that keep the
call valid for the grammar, until the call is complete, and then lets go again. In
``required`` mode the reply *starts* with the call, and holds that call or several, one a
line. The engines apply the mask their own way (``mx.where`` on MLX: llguidance's MLX kernel
is Metal-only; ``np.where`` on llama.cpp).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy costs ~70 ms to import: not before the first frame
    import numpy as np

from pheron_tui.core.messages import ToolSpec
from pheron_tui.providers.grammar import MAX_CALLS, START_MARKERS, CallFormat, body_grammar

log = logging.getLogger("pheron_tui.constrain")


class ToolCallConstraint:
    def __init__(
        self,
        lltokenizer: Any,
        grammar: str,
        trigger: str | None,
        eos: int,
        stop_after_call: bool = False,
        decode: Any = None,
    ) -> None:
        import llguidance

        problem = llguidance.LLMatcher.validate_grammar(grammar, lltokenizer)
        if problem:
            raise ValueError(f"tool-call grammar rejected: {problem}")
        self._llg = llguidance
        self.lltokenizer = lltokenizer
        self.grammar = grammar
        self.trigger = trigger
        """The start marker as text: whatever tokens spell it (``CALL(`` may come as ``\nCALL``
        and ``(``), the call is constrained from the token that completes it."""
        self.decode = decode
        self.eos = eos
        self.stop_after_call = stop_after_call
        """End the reply once a call is complete (the legacy format takes one call a reply)."""
        self._matcher: Any = None if self.trigger is not None else self._new_matcher()
        self._prompt_length: int | None = None
        self._seen = 0
        self._recent = ""
        self._done = False
        import llguidance.numpy as llnp

        self._bitmask = llnp.allocate_token_bitmask(1, lltokenizer.vocab_size)
        self.mask_seconds = 0.0
        self.masked_tokens = 0

    def _new_matcher(self) -> Any:
        return self._llg.LLMatcher(self.lltokenizer, self.grammar)

    def _feed(self, token: int) -> None:
        if self._done:
            return
        if self._matcher is None:
            assert self.trigger is not None
            self._recent = (self._recent + self.decode(token))[-4 * len(self.trigger) :]
            if self._recent.endswith(self.trigger):
                self._matcher = self._new_matcher()
            return
        if not self._matcher.consume_token(token):
            # The engine sampled outside the mask (it cannot, unless it ignored it): the call
            # is left free and the parser reports whatever it became.
            log.warning("constraint lost: %s", self._matcher.get_error() or "token rejected")
            self._matcher, self._recent = None, ""
            return
        if self._matcher.is_stopped():
            self._matcher, self._recent = None, ""
            if self.trigger is None or self.stop_after_call:
                self._done = True  # the call (or answer) is the whole reply: only EOS is left

    def allowed(self, tokens: Sequence[int], vocab_size: int) -> np.ndarray | None:
        """The tokens allowed next, as a boolean mask; None when generation is free.

        ``tokens`` is everything the engine has so far (its first call: the prompt, or the
        part not in the cache); only what came after that first call is generated text, and
        only the part not seen before is read (an engine's array is not copied each step).
        """
        import numpy as np

        if self._prompt_length is None:
            self._prompt_length = len(tokens)
            self._seen = len(tokens)
        for token in tokens[self._seen :]:
            self._feed(int(token))
        self._seen = len(tokens)
        if self._done:
            mask = np.zeros(vocab_size, dtype=bool)
            mask[self.eos] = True
            return mask
        if self._matcher is None:
            return None
        started = time.perf_counter()
        import llguidance.numpy as llnp

        llnp.fill_next_token_bitmask(self._matcher, self._bitmask)
        bits = np.unpackbits(self._bitmask.view(np.uint8), bitorder="little").astype(bool)
        if bits.size >= vocab_size:
            bits = bits[:vocab_size]
        else:
            bits = np.pad(bits, (0, vocab_size - bits.size))
        self.mask_seconds += time.perf_counter() - started
        self.masked_tokens += 1
        return bits


def build_constraint(
    lltokenizer: Any,
    fmt: CallFormat,
    tools: list[ToolSpec],
    tool_choice: str,
    encode: Any,
    eos: int,
    decode: Any,
    several: bool = True,
) -> ToolCallConstraint:
    """A constraint for one request. ``encode(text)`` tokenises the way the engine would
    (special tokens recognised), so a marker that is one token is referenced as that token;
    ``decode(token)`` gives a token's text, to spot the start marker however it was spelt.
    ``several``: a reply that must call may hold several calls (``parallel_tool_calls``)."""
    if tool_choice == "none":
        if fmt != "legacy":
            raise ValueError("a native format needs no constraint to leave tools alone")
        # The reply starts as the final answer; it may end whenever the model stops.
        grammar = '%llguidance {}\nstart: "<final>" /(.|\\n){12,}/\n'
        return ToolCallConstraint(lltokenizer, grammar, None, eos)
    end_ids = encode("</tool_call>")
    end = f"<[{end_ids[0]}]>" if len(end_ids) == 1 else json.dumps("</tool_call>")
    start = START_MARKERS[fmt]
    start_ids = encode(start)
    if tool_choice == "required":
        # The reply is the call: the start marker becomes part of the grammar.
        lead = f"<[{start_ids[0]}]>" if len(start_ids) == 1 else json.dumps(start)
        grammar = body_grammar(fmt, tools, end, lead, calls=MAX_CALLS if several else 1)
        return ToolCallConstraint(lltokenizer, grammar, None, eos)
    return ToolCallConstraint(
        lltokenizer,
        body_grammar(fmt, tools, end),
        start,
        eos,
        stop_after_call=fmt == "legacy",
        decode=decode,
    )
