"""Server-sent events, as OpenAI-compatible servers stream them.

Only what chat completions use: ``data:`` fields (several lines join with a newline), a blank
line ends an event, ``:`` lines are comments (keep-alives), other fields are ignored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator


async def sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The data of each event, in order; a last event without its blank line still counts."""
    data: list[str] = []
    async for line in lines:
        line = line.rstrip("\r")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)
