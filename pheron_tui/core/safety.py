"""Making model and tool text safe to put on a terminal, and short enough to quote.

Control characters (ESC and the rest of C0 except newline and tab, DEL, and C1) are shown as
visible ``\\xNN`` escapes, so a model cannot clear the screen, move the cursor or set a link.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters, keeping its start and end around an ellipsis (a
    6,000-character name helps nobody)."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"
