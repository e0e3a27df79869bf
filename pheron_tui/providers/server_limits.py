"""What an OpenAI-compatible server may send: bounded bodies and lines, and a stream searched
for the API key even when the key arrives split across pieces."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from pheron_tui.core.think import partial_suffix

# Bounds on what a server may send: a whole non-streamed body, one SSE line, and a reply's
# characters per requested token (a token is rarely more than a few characters; a server that
# streams on past max_tokens is cut off).
MAX_BODY_BYTES = 1_000_000
MAX_LINE_BYTES = 4_000_000
MAX_CHARS_PER_TOKEN = 16


@dataclass
class Body:
    """A response read with a bound on its size."""

    status_code: int
    headers: httpx.Headers
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


async def bounded_text(response: httpx.Response, limit: int = MAX_BODY_BYTES) -> str:
    """At most ``limit`` bytes of a body: a 300 MB error page is not read whole."""
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk[: limit - len(data)]
        if len(data) >= limit:
            break
    return data.decode("utf-8", errors="replace")


class KeyScrubber:
    """Removes the key from a stream of text even when it arrives split across pieces: a tail
    that could be the start of the key is held back until the next piece shows what follows,
    and dropped if the stream ends there (it would be part of the key)."""

    def __init__(self, key: str | None) -> None:
        self.key = key or ""
        self._held = ""

    def feed(self, text: str) -> str:
        if not self.key:
            return text
        text = (self._held + text).replace(self.key, "***")
        keep = partial_suffix(text, self.key)
        self._held = text[len(text) - keep :]
        return text[: len(text) - keep]
