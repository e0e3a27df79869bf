"""Getting the user's attention when the agent waits for them or a long turn ends: the bell,
a desktop notification (OSC 9 for iTerm2, Windows Terminal, kitty, ghostty; OSC 777 for
foot, rxvt, VTE terminals) and the window title (OSC 2).

Terminals that know none of these ignore them. What goes into a sequence is stripped of
control characters and separators, so a model's words cannot end the sequence early.
"""

from __future__ import annotations

import re
from typing import Any

from textual.app import App

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")
TITLE_CHARS = 80


def _clean(text: str, limit: int = TITLE_CHARS) -> str:
    return _UNSAFE.sub(" ", text)[:limit].strip()


def _write(app: App[Any], sequence: str) -> None:
    driver = getattr(app, "_driver", None)
    if driver is not None:
        driver.write(sequence)


def notify_desktop(app: App[Any], title: str, body: str) -> None:
    app.bell()
    title, body = _clean(title), _clean(body, 200)
    _write(app, f"\x1b]9;{title}: {body}\x07")
    _write(app, f"\x1b]777;notify;{title};{body}\x07")


def set_window_title(app: App[Any], text: str) -> None:
    _write(app, f"\x1b]2;{_clean(text)}\x07")
