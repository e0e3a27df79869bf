"""A test the answer names by less than its name.

Asked "Run python3 test_calc.py and tell me which test fails", the 1.5B model answered "Test
average failed" and "Test 'average' in file 'test_calc.py' failed", the output naming
``test_average`` (shown a sentence that names it too, it answered the same). A user looks a test
up by its name: an answer that asks which test fails and gives a shortened one is sent back once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_ASKS_WHICH_TEST = re.compile(
    r"\b(?:which|what|name)\b[^.?!\n]{0,40}\btests?\b"
    r"|\btests?\b[^.?!\n]{0,40}\b(?:fail\w*|broken|break\w*|errors?)\b",
    re.IGNORECASE,
)
# A test's name, not its module's: test_calc in "test_calc.py" or "test_calc.TestCalc" is
# left out.
_TEST_NAME = re.compile(r"\b(?:test_\w+|[A-Za-z]\w*_test)\b(?!\.)")
MOST_NAMES = 200
"""Names looked at, at most: a long test run's output lists many."""


def asks_which_test(request: str) -> bool:
    """Whether ``request`` asks which test fails (or names the failing tests)."""
    return len(request) <= 1000 and _ASKS_WHICH_TEST.search(request) is not None


def shortened_test(request: str, answer: str, outputs: Iterable[str]) -> tuple[str, str] | None:
    """(as the answer says it, as the output names it) for a test of the outputs the answer
    gives without its ``test_`` prefix (or ``_test`` suffix) and never in full, when the
    request asks which test fails; else None."""
    if not asks_which_test(request):
        return None
    names: dict[str, None] = {}
    for output in outputs:
        for match in _TEST_NAME.finditer(output):
            names[match.group()] = None
            if len(names) >= MOST_NAMES:
                break
    for name in names:
        if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", answer):
            continue
        short = name[5:] if name.startswith("test_") else name[: -len("_test")]
        # As a word of its own: not "calc" of "calc.py", not a call "average(".
        if short and re.search(rf"(?<![\w.]){re.escape(short)}(?![\w(]|\.\w)", answer):
            return short, name
    return None
