"""Where a Python traceback in a command's output says the program stopped, in one sentence.

Asked "Run python3 test_calc.py and tell me which test fails", the 1.5B model read the
traceback and answered "Test average failed": the function, ``test_average``, is named in the
traceback, between frames of paths and carets a small model reads past. The sentence names the
workspace's functions on the way to the error, innermost first, as the code spells them.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePath

_TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(
    r'^\s+File "(?P<path>[^"\n]{1,4096})", line (?P<line>\d{1,9})(?:, in (?P<name>\S{1,200}))?$'
)
_ERROR = re.compile(r"^(?P<kind>[A-Za-z_][\w.]{0,200})(?::\s?(?P<message>.*))?$")
MOST_FRAMES_SAID = 3
"""Workspace frames named, innermost first: the failing line, its caller, that one's caller."""
MOST_MESSAGE_CHARS = 200
MOST_CODE_CHARS = 120


def python_failure(output: str, workspace: Path) -> str:
    """One sentence naming the exception of the last Python traceback in ``output`` and the
    workspace functions it went through (innermost first, with file, line and code), or ""
    when there is no traceback or none of its frames is a file of ``workspace``."""
    start = output.rfind(_TRACEBACK)
    if start < 0:
        return ""
    root = workspace.resolve()
    frames: list[tuple[str, int, str | None, str]] = []
    error = ""
    lines = output[start + len(_TRACEBACK) :].splitlines()
    for index, line in enumerate(lines):
        frame = _FRAME.match(line)
        if frame is not None:
            after = lines[index + 1] if index + 1 < len(lines) else ""
            # The frame's source line is indented; a frame without one is followed by the
            # next frame or by the error itself.
            code = after.strip() if after[:1].isspace() and not _FRAME.match(after) else ""
            where = _in_workspace(frame["path"], root)
            if where is not None:
                frames.append((where, int(frame["line"]), frame["name"], code))
            continue
        if line and not line[0].isspace():
            found = _ERROR.match(line)
            if found is not None:
                message = (found["message"] or "").strip()
                error = found["kind"] + (
                    f" ({_short(message, MOST_MESSAGE_CHARS)})" if message else ""
                )
            break
    if not frames or not error:
        return ""
    said = [_frame(*frame) for frame in reversed(frames[-MOST_FRAMES_SAID:])]
    called = "".join(f", called from {frame}" for frame in said[1:])
    return f"Python stopped with {error} in {said[0]}{called}."


def _frame(path: str, line: int, name: str | None, code: str) -> str:
    place = f"{path} line {line}" + (f": `{_short(code, MOST_CODE_CHARS)}`" if code else "")
    if name is None:  # where a SyntaxError is: no function runs there
        return place
    if name == "<module>":
        return place
    return f"{name} ({place})"


def _in_workspace(path: str, root: Path) -> str | None:
    """``path`` relative to the workspace, or None when it is outside it (the standard
    library, site-packages) or no file (``<string>`` of ``python3 -c``)."""
    if path.startswith("<"):
        return None
    given = PurePath(path)
    full = Path(given if given.is_absolute() else root / given)
    try:
        relative = full.resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):
        return None
    text = relative.as_posix()
    return None if text == "." or text.startswith("../") else text


def _short(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"
