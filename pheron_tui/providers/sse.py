"""Server-sent events, as OpenAI-compatible servers stream them.

Only what chat completions use: ``data:`` fields (several lines join with a newline), a blank
line ends an event, ``:`` lines are comments (keep-alives), other fields are ignored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator


class LineTooLong(ValueError):
    """A line longer than the reader accepts: a broken or hostile server."""


async def bounded_lines(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[str]:
    """Lines of a byte stream (``\\n`` or ``\\r\\n`` ends), never holding more than ``limit``
    bytes of one line: an endless line fails instead of filling memory."""
    pending = bytearray()
    async for chunk in chunks:
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[:end])
            del pending[: end + 1]
            yield line.decode("utf-8", errors="replace")
        if len(pending) > limit:
            raise LineTooLong(f"the server sent a line over {limit:,} bytes")
    if pending:
        yield pending.decode("utf-8", errors="replace")


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
