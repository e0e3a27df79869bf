"""Python source read quietly: the guards that judge an edit parse files they did not write."""

from __future__ import annotations

import ast
import warnings


def parsed(text: str) -> ast.Module | None:
    """``text`` as a module, or None when it does not parse (or is too deep to)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
