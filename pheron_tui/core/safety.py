"""Making model and tool text safe to put on a terminal, and short enough to quote.

Control characters (ESC and the rest of C0 except newline and tab, DEL, and C1) are shown as
visible ``\\xNN`` escapes, so a model cannot clear the screen, move the cursor or set a link.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def printable(text: str) -> str:
    """Control characters as ``\\xNN``; a lone surrogate (which no terminal can be sent) as
    U+FFFD."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(
        lambda m: "\ufffd" if _SURROGATE.match(m.group()) else f"\\x{ord(m.group()):02x}", text
    )


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (from a ``\\udcff`` JSON escape, or a byte that was
    not UTF-8 in argv or a file name) replaced by U+FFFD, so it can always be written as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters, keeping its start and end around an ellipsis (a
    6,000-character name helps nobody)."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"
