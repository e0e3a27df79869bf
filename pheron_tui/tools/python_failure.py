"""Where the Python tracebacks in a command's output say the errors are, in one sentence.

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
MOST_FAILURES_SAID = 3
"""Tracebacks named, in the order printed: a run of many failing tests is not retold whole."""
_CHAINED = "the above exception"
"""How Python joins a traceback to the next of its chain ("During handling of the above
exception, another exception occurred:", "The above exception was the direct cause …")."""
MOST_MESSAGE_CHARS = 200
MOST_CODE_CHARS = 120


def python_failure(output: str, workspace: Path) -> str:
    """One sentence naming the exception of each Python traceback in ``output`` (the last of a
    chain: the one that got out) and the workspace functions it went through, innermost first,
    with file, line and code; "" when there is none, or no frame of one is a file of
    ``workspace``. unittest prints a traceback per failing test: each is named."""
    blocks = output.split(_TRACEBACK)[1:]
    if not blocks:
        return ""
    root = workspace.resolve()
    said: list[str] = []
    for index, block in enumerate(blocks):
        lines = block.splitlines()
        if index + 1 < len(blocks) and _CHAINED in " ".join(lines[-3:]).lower():
            continue  # handled, and another error raised: that one is said
        failure = _failure(lines, root)
        if failure:
            said.append(failure)
    if not said:
        return ""
    if len(said) == 1:
        return f"Python stopped with {said[0]}."
    shown = "; ".join(said[:MOST_FAILURES_SAID])
    more = len(said) - MOST_FAILURES_SAID
    rest = f"; and {more} more" if more > 0 else ""
    return f"Python raised {len(said)} errors: {shown}{rest}."


def _failure(lines: list[str], root: Path) -> str:
    """ "KeyError ('k') in f (a.py line 1: `code`), called from …" for one traceback's lines,
    or "" when it has no error line or no frame in the workspace."""
    frames: list[tuple[str, int, str | None, str]] = []
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
            if found is None or not frames:
                return ""
            message = (found["message"] or "").strip()
            error = found["kind"] + (f" ({_short(message, MOST_MESSAGE_CHARS)})" if message else "")
            said = [_frame(*frame) for frame in reversed(frames[-MOST_FRAMES_SAID:])]
            called = "".join(f", called from {frame}" for frame in said[1:])
            return f"{error} in {said[0]}{called}"
    return ""


def _frame(path: str, line: int, name: str | None, code: str) -> str:
    place = f"{path} line {line}" + (f": `{_short(code, MOST_CODE_CHARS)}`" if code else "")
    if name is None or name == "<module>":  # a SyntaxError's place, or a script's top level
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
