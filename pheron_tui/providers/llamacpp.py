"""LlamaCppProvider: GGUF models in-process with llama.cpp, through the prebuilt xllamacpp.

The fast local path on CPUs without Apple Silicon, with no compiler needed: xllamacpp ships
llama.cpp's own server as a Python extension. The server runs inside this process, bound to
the loopback interface with a random port and a random API key, and this provider speaks
OpenAI chat completions to it, so everything ``OpenAIProvider`` does (streaming, thinking off
by ``chat_template_kwargs``, server-parsed tool calls, logprob scoring, usage with cached
tokens, key scrubbing) applies unchanged. What llama.cpp adds: the GGUF's own Jinja template
(native tools when it takes them, the legacy CALL format otherwise, judged from the
template's capabilities), a tool call constrained by the server's own grammar for native
formats, ours (llguidance) when a legacy reply must or may be a call (a call held to the
tools from ``CALL(`` on, wherever it starts), prompt reuse across requests
(the server's host-memory prompt cache), and a cancel that stops generation at the next token
(the server notices the closed stream).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from pheron_tui.core.messages import Chunk, CompletionRequest, PromptProgressChunk, TextChunk
from pheron_tui.core.provider import Progress, ProviderError
from pheron_tui.providers.forced_lead import LeadHold, forced_start
from pheron_tui.providers.grammar import FREE_LEAD, MAX_CALLS, body_grammar
from pheron_tui.providers.models import ModelError, catalogue_entry, display_name, gguf_file
from pheron_tui.providers.openai_compat import OpenAIProvider, ReplyProgress
from pheron_tui.providers.server_limits import MAX_CHARS_PER_TOKEN, Body

CONTEXT_TOKENS = 8192
PROMPT_CACHE_MIB = 2048
"""Host memory for saved prompt states: a classification or critic request between two
planning steps replaces the slot's context, and the next step's prompt comes back from here."""
PREFILL_BATCH = 512
"""Tokens read between two prompt progress events (and two chances to stop)."""


class LlamaCppProvider(OpenAIProvider):
    name = "llamacpp"
    score_top_n = 200
    """llama.cpp reports as many alternatives as asked: a label the model ranks low is still
    scored, as it was from the full logits."""
    scrub_replies = False
    """The key is ours, made up at start and never shown to the model: nothing to scrub."""

    def __init__(
        self,
        model: str = "default",
        constrained: bool = True,
        context_tokens: int = CONTEXT_TOKENS,
        chat_template: str | None = None,
    ) -> None:
        # The port is only known once the server runs; the client's base URL is set then.
        super().__init__(
            base_url="http://127.0.0.1:9/v1",
            model=model,
            api_key=secrets.token_urlsafe(24),
            key_env="(in-process server)",
            tool_mode="native",
            max_retries=0,
            read_timeout_s=3600,
            context_window=context_tokens,
        )
        self.model = model
        self.constrained = constrained
        self.context_tokens = context_tokens
        self.chat_template = chat_template
        """A template to use instead of the GGUF's own (tests; models with a broken one)."""
        self.display_model = display_name(model, "llamacpp")
        self.extra_payload: Any = None
        """A function of the request returning fields to set in its payload, None to remove
        one (tests force replies with a grammar this way)."""
        self._server: Any = None
        self._letting_go: set[threading.Thread] = set()
        """Requests the consumer left (a cancel): each ends at its next event; joined on close."""
        self._load_lock = asyncio.Lock()
        self._special: tuple[str, ...] = ()
        self._turn_end = ""
        """The end-of-turn token's text (``<|im_end|>``), named in grammars with free text."""
        self._template_kwargs = True
        self._can_score = True

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return self._special

    # -- loading -------------------------------------------------------------------------------
    async def load(self, progress: Progress | None = None) -> None:
        async with self._load_lock:
            if self._server is None:
                await self._load(progress or (lambda _f, _m: None))

    async def _load(self, report: Progress) -> None:
        try:
            path = await asyncio.to_thread(gguf_file, self.model, "llamacpp", report)
        except (ModelError, ValueError) as exc:
            raise ProviderError(str(exc)) from None
        report(0.9, f"loading {self.display_model}")
        try:
            self._server = await asyncio.to_thread(self._start, path)
        except Exception as exc:  # unknown architectures, corrupt files
            raise ProviderError(
                f"could not load model {self.model!r}: {type(exc).__name__}: {exc}"
            ) from None
        self.base_url = self._server.listening_address.rstrip("/") + "/v1"
        self._client.base_url = self.base_url
        await self._read_props()

    def _start(self, path: Path) -> Any:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self.context_tokens
        params.n_parallel = 1
        # The prompt is read in batches of this many tokens, with a progress event after
        # each: the points where a cancel can stop a long prefill (2048 by default; the
        # physical batch is 512 either way, so reading is not slower).
        params.n_batch = PREFILL_BATCH
        threads = max(1, min(_usable_cpus(), 8))
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.use_jinja = True
        params.cache_ram_mib = PROMPT_CACHE_MIB
        params.api_keys = [self._key]  # other local processes cannot use the port
        params.verbosity = -1
        if self.chat_template is not None:
            params.chat_template = self.chat_template
        return xllamacpp.Server(params)

    async def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Counted by the model's tokenizer (the server's ``/tokenize``)."""
        if self._server is None:
            raise ProviderError("the model is not loaded")
        url = self.base_url.removesuffix("/v1") + "/tokenize"
        counts = []
        for text in texts:
            response = await self._client.post(url, json={"content": text})
            if response.status_code != 200:
                raise ProviderError(f"tokenize failed: HTTP {response.status_code}")
            counts.append(len(response.json().get("tokens", [])))
        return counts

    async def _read_props(self) -> None:
        """The template's capabilities decide native tools or the legacy format."""
        response = await self._client.get(self.base_url.removesuffix("/v1") + "/props")
        props = response.json() if response.status_code == 200 else {}
        caps = props.get("chat_template_caps") or {}
        template = str(props.get("chat_template") or "")
        takes_tools = bool(caps.get("supports_tools")) and "tool" in template
        self.tool_mode = "native" if takes_tools else "legacy"
        entry = catalogue_entry(self.model, "llamacpp")
        if entry is not None:
            self.tool_mode = entry.tool_mode  # measured: the format that works for this model
        self._special = tuple(
            t for t in (props.get("bos_token"), props.get("eos_token")) if isinstance(t, str) and t
        )
        eos = props.get("eos_token")
        self._turn_end = eos if isinstance(eos, str) else ""

    async def aclose(self) -> None:
        for worker in list(self._letting_go):
            await asyncio.to_thread(worker.join)
        await super().aclose()
        if self._server is not None:
            # The server's destructor stops its loop and joins its thread: not on the loop.
            holder, self._server = [self._server], None
            await asyncio.to_thread(holder.clear)

    # -- requests --------------------------------------------------------------------------------
    async def stream(self, request: CompletionRequest) -> AsyncIterator[Chunk]:
        """One reply, straight from the server's handler through a callback (no HTTP): the
        handler runs on a thread, its events cross to the event loop in batches, and once the
        consumer lets go the callback tells the server to stop at the next token."""
        await self.load()  # the first request loads the model, as the other engines do
        payload = self._payload(request)
        budget = max(request.max_tokens, 1) * MAX_CHARS_PER_TOKEN
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[list[dict[str, Any]] | BaseException | None] = asyncio.Queue()
        pending: list[dict[str, Any]] = []
        lock = threading.Lock()
        stop = threading.Event()

        def deliver() -> None:
            with lock:
                batch = pending[:]
                pending.clear()
            if batch:
                queue.put_nowait(batch)

        def callback(event: dict[str, Any]) -> bool:
            with lock:
                first = not pending
                pending.append(event)
            if first:  # one wake-up per batch, not per token
                loop.call_soon_threadsafe(deliver)
            return stop.is_set()

        def run() -> None:
            try:
                self._server.handle_chat_completions(payload, callback)
                outcome: BaseException | None = None
            except BaseException as exc:  # reported on the loop, not lost on the thread
                outcome = exc
            loop.call_soon_threadsafe(deliver)
            loop.call_soon_threadsafe(queue.put_nowait, outcome)

        async def events() -> AsyncIterator[dict[str, Any] | None]:
            while True:
                item = await queue.get()
                if item is None:
                    yield None
                    return
                if isinstance(item, BaseException):
                    raise ProviderError(f"llama.cpp failed: {item}") from None
                for event in item:
                    if _is_error(event):
                        raise ProviderError(f"llama.cpp: {_error_text(event)}")
                    yield event

        worker = threading.Thread(target=run, name="llamacpp-request", daemon=True)
        worker.start()
        hold = LeadHold("legacy", self._forced_lead(request))
        try:
            async for chunk in self._chunks(events(), ReplyProgress(), budget):
                if isinstance(chunk, TextChunk):
                    if text := hold.feed(chunk.text):
                        yield TextChunk(text=text)
                    continue
                if not isinstance(chunk, PromptProgressChunk) and (rest := hold.finish()):
                    yield TextChunk(text=rest)
                yield chunk
        finally:
            # Told to stop, the server ends the request at its next event: a token, or the
            # next prompt batch read. Not waited for, so a cancel during a long prefill is
            # felt at once; the next request queues behind it in the server (one slot).
            stop.set()
            if worker.is_alive():
                self._letting_go.add(worker)
                self._letting_go = {w for w in self._letting_go if w.is_alive()}

    async def score_choices(
        self, request: CompletionRequest, options: Sequence[str]
    ) -> dict[str, float]:
        await self.load()
        return await super().score_choices(request, options)

    async def _send(self, method: str, url: str, payload: dict | None = None) -> Body:
        """Non-streamed requests (scoring) go to the handler directly too."""
        if url != "/chat/completions" or payload is None:
            return await super()._send(method, url, payload)
        result = await asyncio.to_thread(self._server.handle_chat_completions, payload)
        status = 400 if _is_error(result) else 200
        return Body(status, httpx.Headers(), json.dumps(result))

    def _payload(self, request: CompletionRequest, stream: bool = True) -> dict[str, Any]:
        payload = super()._payload(request, stream)
        payload["cache_prompt"] = True
        if stream:
            payload["return_progress"] = True  # prompt_progress events while it reads
        if grammar := self._grammar(request):
            payload["grammar"] = grammar
        if stream and (lead := self._forced_lead(request)):
            # The server continues a last assistant message (its prefill) and streams only
            # what follows it: the stream puts the lead back in front (``LeadHold``).
            payload["messages"].append({"role": "assistant", "content": lead})
        if self.extra_payload is not None:
            for key, value in self.extra_payload(request).items():
                if value is None:
                    payload.pop(key, None)
                else:
                    payload[key] = value
        return payload

    def _forced_lead(self, request: CompletionRequest) -> str:
        """The start of an unconstrained legacy reply that must call (``CALL``). Native
        formats are held to a call by the server's own ``tool_choice``; constrained legacy
        replies by the grammar."""
        if self.native_tools or self.constrained:
            return ""
        return forced_start("legacy", request)

    def _grammar(self, request: CompletionRequest) -> str | None:
        """Legacy format only: a reply that must be a call is constrained to one, one that
        must be the answer to ``<final>``, and one that may be either keeps its prose free and
        each call it makes, from ``CALL(`` on, constrained (a 1.5B model's free call otherwise
        ran on with an unterminated JSON string). Native formats are constrained by the
        server."""
        if not (self.constrained and self.tool_mode == "legacy" and request.tools):
            return None
        if request.purpose != "plan":
            return None
        if request.tool_choice == "required":
            calls = MAX_CALLS if request.parallel_tool_calls else 1
            return body_grammar("legacy", request.tools, lead='"CALL("', calls=calls)
        # Free text under a grammar ends only at a token the grammar names: the end of turn.
        end = self._turn_end
        if not (end.startswith("<") and end.endswith(">") and len(end) > 2):
            return None  # no name to give it: better unconstrained than running on
        if request.tool_choice == "none":
            return f'%llguidance {{}}\nstart: "<final>" ANSWER {end}\nANSWER: /(.|\\n){{12,}}/\n'
        return body_grammar("legacy", request.tools, lead=FREE_LEAD, turn_end=end)


def _is_error(event: Any) -> bool:
    """The handler reports a failure as an event without choices: ``{"error": …}`` or
    ``{"code": …, "message": …}``."""
    return (
        isinstance(event, dict)
        and "choices" not in event
        and ("error" in event or ("code" in event and "message" in event))
    )


def _error_text(event: dict[str, Any]) -> str:
    error = event.get("error", event)
    if isinstance(error, dict):
        return str(error.get("message") or error)[:300]
    return str(error)[:300]


def _usable_cpus() -> int:
    """The CPUs this process may run on: a process pinned with taskset or a cgroup cpuset
    gets fewer than the machine has, and more threads than that only take turns."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1
