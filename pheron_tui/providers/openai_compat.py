"""OpenAIProvider: any server that speaks the OpenAI chat-completions API.

OpenRouter in the cloud; vLLM, SGLang, llama.cpp's server, mlx_lm.server or Ollama locally.
Replies stream over SSE and are turned into the same chunks the in-process engines produce:
content goes through pheron-tui's think guard and parser, ``reasoning``/``reasoning_content``
goes straight to the thinking pane, and tool calls the server parsed are assembled by index.

Tool modes: ``native`` sends the ``tools`` parameter; ``legacy`` uses the prompted
``CALL(…) WITH {…}`` format for models without function calling; ``auto`` starts native and
falls back to legacy the first time the server rejects ``tools``.

The API key lives only in the client's Authorization header and is scrubbed from anything the
server sends back, so it never reaches an error, an event or the session log.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import random
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal
from urllib.parse import urlparse

import httpx

from pheron_tui.core.messages import (
    Chunk,
    CompletionRequest,
    DoneChunk,
    Message,
    PromptProgressChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    Usage,
    UsageChunk,
)
from pheron_tui.core.provider import (
    OptionsUnlikely,
    Progress,
    ProviderError,
    ScoringUnavailable,
    ToolsRejected,
)
from pheron_tui.providers.server_limits import (
    MAX_CHARS_PER_TOKEN,
    MAX_LINE_BYTES,
    Body,
    KeyScrubber,
    bounded_text,
)
from pheron_tui.providers.sse import LineTooLong, bounded_lines, sse_data

ToolMode = Literal["auto", "native", "legacy"]
OPENROUTER_URL = "https://openrouter.ai/api/v1"
RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER_S = 60.0


def default_key_env(base_url: str) -> str:
    return "OPENROUTER_API_KEY" if "openrouter.ai" in base_url else "OPENAI_API_KEY"


def is_local(base_url: str) -> bool:
    host = urlparse(base_url).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".local")


class ReplyProgress:
    """How much of a reply has arrived: nothing means a failure may still be retried."""

    arrived = 0


class OpenAIProvider:
    name = "openai"
    engine_reason = ""
    score_top_n = 10
    """Alternatives asked for when scoring options (OpenAI's API allows 20 at most)."""
    scrub_replies = True
    """Whether streamed text is searched for the API key (a server may echo it)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        key_env: str = "OPENAI_API_KEY",
        tool_mode: ToolMode = "auto",
        max_retries: int = 3,
        connect_timeout_s: float = 10.0,
        read_timeout_s: float = 120.0,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
        context_window: int | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._context_window = context_window
        self.model = model
        self.key_env = key_env
        self.tool_mode: ToolMode = tool_mode
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._key = api_key or None
        host = urlparse(self.base_url).hostname or self.base_url
        self.display_model = f"{model} @ {host}"
        self._openrouter = "openrouter.ai" in host
        self._openai = host == "api.openai.com"
        self._template_kwargs = not (self._openrouter or self._openai)
        self._can_score = True
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
            transport=transport,
        )

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return ()  # not known here; the common chat-template markers are defused anyway

    @property
    def native_tools(self) -> bool:
        return self.tool_mode != "legacy"

    @property
    def context_window(self) -> int | None:
        """A server does not say; known only when configured (``context_window``)."""
        return self._context_window

    # -- loading ---------------------------------------------------------------------------------
    async def load(self, progress: Progress | None = None) -> None:
        """Check the server answers and takes the key."""
        if self._key is None and not is_local(self.base_url):
            raise ProviderError(
                f"no API key: set {self.key_env} (or name another variable with api_key_env in "
                "the config)"
            )
        if progress is not None:
            progress(None, f"connecting to {self.base_url}")
        response = await self._send("GET", "/models")
        if response.status_code in (401, 403, 404):
            raise self._http_error(response.status_code, response.text, url="/models")
        # Anything else (no /models route, a list without this model) is left to the first
        # real request, whose error names the problem in the server's own words.

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- requests --------------------------------------------------------------------------------
    def _message(self, message: Message, legacy: bool) -> dict[str, Any]:
        if legacy and message.role == "tool":
            return {"role": "user", "content": message.content}
        out: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.reasoning_content and self._template_kwargs:
            out["reasoning_content"] = message.reasoning_content  # templates re-render it
        if message.tool_calls and not legacy:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
        if message.role == "tool":
            out["tool_call_id"] = message.tool_call_id
            if message.name:
                out["name"] = message.name
        return out

    def _payload(self, request: CompletionRequest, stream: bool = True) -> dict[str, Any]:
        legacy = not self.native_tools
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [self._message(m, legacy) for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": stream,
        }
        if stream:
            payload["stream_options"] = {"include_usage": True}
        if request.stop:
            payload["stop"] = request.stop
        if request.tools and not legacy:
            payload["tools"] = [spec.model_dump() for spec in request.tools]
            payload["tool_choice"] = request.tool_choice
            if not request.parallel_tool_calls:
                payload["parallel_tool_calls"] = False  # sent only when it asks for something
        if self._openrouter:
            payload["reasoning"] = {"enabled": request.enable_thinking}
        elif self._template_kwargs:
            payload["chat_template_kwargs"] = {"enable_thinking": request.enable_thinking}
        return payload

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    async def _send(self, method: str, url: str, payload: dict | None = None) -> Body:
        """A plain request with the retry policy (for /models and non-streamed scoring); the
        body is read up to MAX_BODY_BYTES."""
        for attempt in range(self.max_retries + 1):
            try:
                async with self._client.stream(method, url, json=payload) as reply:
                    response = Body(reply.status_code, reply.headers, await bounded_text(reply))
            except httpx.TransportError as exc:
                if attempt >= self.max_retries:
                    raise self._unreachable(exc) from None
                await asyncio.sleep(self._delay(attempt, None))
                continue
            if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                await asyncio.sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            return response
        raise AssertionError("unreachable")

    def _unreachable(self, exc: Exception) -> ProviderError:
        kind = type(exc).__name__
        return ProviderError(
            f"cannot reach {self.base_url} ({kind}: {self._scrub(str(exc)) or 'no detail'}); "
            "is the server running, and is --base-url right?"
        )

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        """Exponential backoff with jitter, or what the server's Retry-After asks (capped)."""
        if retry_after:
            try:
                return min(float(retry_after), MAX_RETRY_AFTER_S)
            except ValueError:
                when = email.utils.parsedate_to_datetime(retry_after)
                if when is not None:
                    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER_S)
        base = self.backoff_s * (2**attempt)
        return base + random.uniform(0, base / 2)

    def _http_error(self, status: int, body: str, url: str = "/chat/completions") -> ProviderError:
        detail = self._scrub(_error_message(body))
        if status == 401:
            fix = (
                f"set {self.key_env} to a valid key"
                if self._key is None
                else f"check the key in {self.key_env}"
            )
            return ProviderError(f"{self.base_url} refused the API key (401): {fix}. {detail}")
        if status == 403:
            return ProviderError(
                f"{self.base_url} denied access (403): the key in {self.key_env} may not be "
                f"allowed to use {self.model!r}. {detail}"
            )
        if status == 404:
            return ProviderError(
                f"{self.base_url}{url} was not found (404): check --base-url (it usually ends "
                f"in /v1) and that the server serves --model {self.model!r}. {detail}"
            )
        return ProviderError(f"the server answered {status}: {detail}")

    # -- streaming -------------------------------------------------------------------------------
    async def stream(self, request: CompletionRequest) -> AsyncIterator[Chunk]:
        """Stream one reply. Failures before anything arrived are retried (429, 5xx, dropped
        connections); a stream cut after text arrived ends the reply with an error instead,
        since the text already shown cannot be taken back."""
        payload = self._payload(request)
        attempt = 0
        while True:
            progress = ReplyProgress()
            try:
                async with self._client.stream("POST", "/chat/completions", json=payload) as reply:
                    if reply.status_code == 200:
                        budget = max(request.max_tokens, 1) * MAX_CHARS_PER_TOKEN
                        async for chunk in self._read(reply, progress, budget):
                            yield chunk
                        return
                    body = (await bounded_text(reply))[:4000]
                    if reply.status_code not in RETRY_STATUSES or attempt >= self.max_retries:
                        self._reject(reply.status_code, body, payload)
                    delay = self._delay(attempt, reply.headers.get("retry-after"))
            except httpx.TransportError as exc:
                if progress.arrived or attempt >= self.max_retries:
                    if not progress.arrived:
                        raise self._unreachable(exc) from None
                    raise ProviderError(
                        f"the stream was cut after {progress.arrived} characters "
                        f"({type(exc).__name__}: {self._scrub(str(exc)) or 'connection lost'})"
                    ) from None
                delay = self._delay(attempt, None)
            except _Retry as again:
                payload = again.payload
                delay = 0.0
            attempt += 1
            await asyncio.sleep(delay)

    def _reject(self, status: int, body: str, payload: dict[str, Any]) -> None:
        """Raise for a failed request: tools refused, kwargs refused, or a plain error."""
        lowered = body.lower()
        if status in (400, 422) and "chat_template_kwargs" in lowered and self._template_kwargs:
            self._template_kwargs = False  # a strict server: stop sending it
            raise _Retry({k: v for k, v in payload.items() if k != "chat_template_kwargs"})
        if status in (400, 422) and "tools" in payload and self.tool_mode == "auto":
            self.tool_mode = "legacy"
            raise ToolsRejected(
                f"the server does not take tools ({status}: {self._scrub(_error_message(body))}); "
                "switching to the prompted CALL format"
            )
        raise self._http_error(status, body)

    async def _read(
        self, reply: httpx.Response, progress: ReplyProgress, budget: int
    ) -> AsyncIterator[Chunk]:
        """The chunks of one streamed HTTP reply (SSE)."""

        async def events() -> AsyncIterator[dict[str, Any] | None]:
            try:
                async for data in sse_data(bounded_lines(reply.aiter_bytes(), MAX_LINE_BYTES)):
                    if data.strip() == "[DONE]":
                        yield None
                        return
                    yield _decode(data, self._scrub)
            except LineTooLong as exc:
                raise ProviderError(str(exc)) from None

        async for chunk in self._chunks(events(), progress, budget):
            yield chunk

    async def _chunks(
        self, events: AsyncIterator[dict[str, Any] | None], progress: ReplyProgress, budget: int
    ) -> AsyncIterator[Chunk]:
        """The chunks of one reply from its decoded events (None marks the end). Malformed
        pieces of an event are skipped; the key is scrubbed from everything; past ``budget``
        characters the reply is cut ("length")."""
        started = time.perf_counter()
        first: float | None = None
        calls: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] | None = None
        finish: str | None = None
        done = False
        secret = self._key if self.scrub_replies else None
        content_scrub, reasoning_scrub = KeyScrubber(secret), KeyScrubber(secret)
        async for event in events:
            if event is None:
                done = True
                break
            if isinstance(event.get("usage"), dict):
                usage = event["usage"]
            if (reading := _prompt_progress(event)) is not None:
                yield reading
            choices = event.get("choices")
            for choice in choices if isinstance(choices, list) else []:
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta")
                delta = delta if isinstance(delta, dict) else {}
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    first = first or time.perf_counter()
                    progress.arrived += len(reasoning)
                    if text := reasoning_scrub.feed(reasoning):
                        yield ReasoningChunk(text=text)
                content = delta.get("content")
                if isinstance(content, str) and content:
                    first = first or time.perf_counter()
                    progress.arrived += len(content)
                    if text := content_scrub.feed(content):
                        yield TextChunk(text=text)
                pieces = delta.get("tool_calls")
                for piece in pieces if isinstance(pieces, list) else []:
                    progress.arrived += 1 + _merge_call(calls, piece)
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
            if progress.arrived > budget:
                finish = "length"  # a server streaming on past max_tokens
                break
        if not done and finish is None:
            raise ProviderError(
                "the stream ended before the reply was complete "
                f"({progress.arrived} characters arrived)"
            )
        for index in sorted(calls):
            call = calls[index]
            yield ToolCallChunk(
                name=self._scrub(call["name"]),
                arguments=self._scrub(call["arguments"]),
                id=call["id"],
            )
        if usage is not None:
            yield UsageChunk(usage=_usage(usage, started, first))
        yield DoneChunk(finish_reason=finish)

    # -- scoring ---------------------------------------------------------------------------------
    async def score_choices(
        self, request: CompletionRequest, options: Sequence[str]
    ) -> dict[str, float]:
        """Log-probabilities of each option's first token, from a one-token completion."""
        if not self._can_score:
            raise ScoringUnavailable("this server gives no logprobs")
        payload = self._payload(request.model_copy(update={"max_tokens": 1}), stream=False)
        payload.update(logprobs=True, top_logprobs=self.score_top_n, temperature=0.0)
        payload.pop("tools", None)
        payload.pop("tool_choice", None)
        response = await self._send("POST", "/chat/completions", payload)
        if response.status_code != 200:
            if response.status_code in (401, 403, 404):
                raise self._http_error(response.status_code, response.text)
            self._can_score = False
            raise ScoringUnavailable(f"logprobs request failed ({response.status_code})")
        try:
            choice = response.json()["choices"][0]
            top = choice["logprobs"]["content"][0]["top_logprobs"]
            pairs = [(str(t["token"]), float(t["logprob"])) for t in top]
        except (ValueError, KeyError, IndexError, TypeError, RecursionError):
            self._can_score = False
            raise ScoringUnavailable("this server gives no logprobs") from None
        scores: dict[str, float] = {}
        for option in options:
            matching = [
                logprob
                for token, logprob in pairs
                if token.strip() and option.lower().startswith(token.strip().lower())
            ]
            scores[option] = max(matching, default=float("-inf"))
        if all(score == float("-inf") for score in scores.values()):
            raise OptionsUnlikely("none of the options is among the likely tokens")
        return scores


def _prompt_progress(event: dict[str, Any]) -> PromptProgressChunk | None:
    """llama.cpp's ``prompt_progress`` (with ``return_progress``), while it reads the prompt;
    None for any other event, or for a reading already complete."""
    reading = event.get("prompt_progress")
    if not isinstance(reading, dict):
        return None
    try:
        cached = int(reading.get("cache", 0))
        processed, total = int(reading["processed"]) + cached, int(reading["total"])
    except (KeyError, TypeError, ValueError):
        return None
    if total <= 0 or processed >= total:
        return None
    return PromptProgressChunk(processed=processed, total=total)


class _Retry(Exception):
    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload


def _decode(data: str, scrub) -> dict[str, Any]:
    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        raise ProviderError(f"the server sent malformed data: {scrub(data[:200])!r}") from None
    if not isinstance(event, dict):
        raise ProviderError(f"the server sent malformed data: {scrub(data[:200])!r}")
    if "error" in event:
        raise ProviderError(f"the server reported an error: {scrub(_error_message(data))}")
    return event


def _merge_call(calls: dict[int, dict[str, Any]], piece: Any) -> int:
    """Tool calls stream in pieces keyed by index: the name once, the arguments in parts.
    Returns how many characters the piece added (pieces of the wrong shape add nothing)."""
    if not isinstance(piece, dict):
        return 0
    index = piece.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        index = len(calls)
    call = calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
    if piece.get("id"):
        call["id"] = str(piece["id"])[:200]
    function = piece.get("function")
    if not isinstance(function, dict):
        return 0
    added = 0
    if isinstance(function.get("name"), str):
        call["name"] += function["name"]
        added += len(function["name"])
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        call["arguments"] += arguments
        added += len(arguments)
    elif isinstance(arguments, dict):  # some servers send the object whole
        with contextlib.suppress(ValueError, RecursionError):
            call["arguments"] = json.dumps(arguments)
            added += len(call["arguments"])
    return added


def _count(value: Any) -> int:
    """A token count from a server: a number, or 0 for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0) if value == value and abs(value) < 1e15 else 0


def _usage(raw: dict[str, Any], started: float, first: float | None) -> Usage:
    prompt = _count(raw.get("prompt_tokens"))
    completion = _count(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    now = time.perf_counter()
    generating = now - first if first is not None else 0.0
    return Usage(
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        tokens_per_s=completion / generating if generating > 0 else 0.0,
        ttft_ms=((first or now) - started) * 1000,
    )


def _error_message(body: str) -> str:
    """The human part of an error body (OpenAI, vLLM, FastAPI and plain-text shapes)."""
    text = body.strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:300] or "(no detail)"
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed.get("detail", parsed.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return str(error)[:300]
    return text[:300]
