"""Changes that would leave a JSON or Python file unreadable, a Python function reading a
name nothing defines, or a statement repeated where it can never run: said, with the
parser's words.

A small model's edit often breaks the file it edits: ``{"port": 9090}`` appended to a JSON
object, a line indented one level off. Written, the breakage surfaces later as someone else's
error; refused with the parser's message, the model can correct its own call. Held only
once, the 1.5B model made the same breaking edit again at once, so a tool never makes one (a
person still can). A file that did not parse before is not judged.
"""

from __future__ import annotations

import ast
import builtins
import json
import textwrap
import warnings
from collections import Counter
from pathlib import PurePosixPath

from pheron_tui.core.python_source import parsed
from pheron_tui.tools.write_guard import JSON_SUFFIXES, PYTHON_SUFFIXES

UNREADABLE_AFTER = "after this change it would not be valid"
"""How a refusal for a file left unreadable begins its reason."""


def broken_syntax(path: str, before: str, after: str) -> str | None:
    """Why ``after`` no longer reads as the kind of file ``path`` names, when ``before`` did,
    in whole sentences; else None."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in JSON_SUFFIXES:
        if _json_error(before) is not None:
            return None
        return _unreadable("JSON", after, _json_error(after))
    if suffix not in PYTHON_SUFFIXES:
        return None
    # Each text parsed once: every check below reads the same two trees.
    old_tree = parsed(before)
    if old_tree is None:
        return None
    new_tree, error = _python_read(after)
    if new_tree is None:
        return _unreadable("Python", after, error)
    return _newly_undefined(old_tree, new_tree) or _newly_repeated_dead_code(old_tree, new_tree)


def _unreadable(kind: str, after: str, error: tuple[str, int | None] | None) -> str | None:
    if error is None:
        return None
    why, line = error
    return f"{UNREADABLE_AFTER} {kind} ({why}).{_around(after, line)}"


_OPENER = {"}": "{", ")": "(", "]": "["}


def without_stray_closer(new: str) -> str | None:
    """``new`` without the closing bracket it ends with when nothing in it opens that bracket,
    or None when it ends with no such bracket. After ``"new": "return sum(numbers) /
    len(numbers)`` the 1.5B model wrote ``}"``, closing the call's JSON inside the string, and
    made the same edit twice more, shown the parser's "unmatched '}'"."""
    body = new.rstrip()
    closer = body[-1:] or " "
    if closer not in _OPENER or body.count(closer) <= body.count(_OPENER[closer]):
        return None
    return body[:-1] + new[len(body) :]


HEADER_SHOWN_LINES = 40
"""Lines of a definition shown, at most, when `old` held only its first one."""


def header_only(path: str, before: str, old: str) -> str:
    """When ``old`` is only the first line of a function or class of the Python file ``path``,
    as ``before`` has it (its
    ``def``/``class`` line), what the edit leaves and how to replace the whole definition,
    in sentences, with its lines as the file has them; else "". Wanting to replace average(),
    the 1.5B model gave its ``def`` line as `old` and a one-line function as `new`, leaving
    the old body below it, unreadable, twice in a row."""
    wanted = old.strip()
    python = PurePosixPath(path).suffix.lower() in PYTHON_SUFFIXES
    tree = parsed(before) if python and wanted and "\n" not in wanted else None
    if tree is None:
        return ""
    lines = before.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        if lines[first - 1].strip() != wanted or last == first:
            continue
        if last - first >= HEADER_SHOWN_LINES:
            return ""
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        whole = "\n".join(lines[first - 1 : last])
        return (
            f"\n`old` is only the first line of the {kind} {node.name} (line {first}); its "
            f"body, lines {first + 1}-{last}, would stay below `new`. To replace the whole "
            f"{kind}, give all of its lines as `old`, as the file has them:\n{whole}"
        )
    return ""


def function_rewrite(path: str, before: str, old: str, new: str) -> tuple[str, str, str] | None:
    """(the whole function as ``before`` has it, that function rewritten, what was done) when
    ``old`` is only the ``def`` line of a function of the Python file ``path`` and ``new`` is
    a whole function of that name, on one line (``def f(x): return x + 1``) or on several;
    else None. The model means the function to become that one: asked to fix oldest() and
    km_to_miles(), the 1.5B model gave the def line as `old` and the def line with the fixed
    return after its colon as `new`, which left the old body below it, unreadable, again
    after being told so; asked to fix total(), it gave the whole new function as `new`. A
    body on the def line goes on a line of its own; the function takes the old one's
    indentation; the old docstring stays unless the new one has its own."""
    wanted, written = old.strip(), textwrap.dedent(new.strip("\n")).rstrip()
    python = PurePosixPath(path).suffix.lower() in PYTHON_SUFFIXES
    if not python or not wanted or "\n" in wanted:
        return None
    one, tree = parsed(written), parsed(before)
    if one is None or tree is None or len(one.body) != 1:
        return None
    function = one.body[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if function.decorator_list:
        return None
    lines = before.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        if node.name != function.name or lines[first - 1].strip() != wanted or last == first:
            continue
        indent = _indent(lines[first - 1])
        old_body_indent = _indent(lines[node.body[0].lineno - 1])
        if len(old_body_indent) <= len(indent):
            return None  # the old body shares its def line: not this mistake
        new_lines = written.splitlines()
        body_at = function.body[0].lineno
        encoded = new_lines[body_at - 1].encode()
        start = function.body[0].col_offset  # in UTF-8 bytes
        ahead = encoded[:start].decode(errors="replace").rstrip()
        if ahead.strip():  # the body after the colon that ends the def line (or signature)
            header = [*new_lines[: body_at - 1], ahead]
            body_indent = old_body_indent[len(indent) :]
            body = [body_indent + encoded[start:].decode(errors="replace").strip()]
            body += new_lines[body_at:]
            how = "its body on its def line"
        else:
            header, body = new_lines[: body_at - 1], new_lines[body_at - 1 :]
            body_indent = _indent(body[0])
            how = "a whole new function after its def line as `old`"
        kept: list[str] = []
        docstring = node.body[0]
        if ast.get_docstring(node) is not None and ast.get_docstring(function) is None:
            for line in lines[docstring.lineno - 1 : docstring.end_lineno or docstring.lineno]:
                inner = line.removeprefix(old_body_indent)
                kept.append(body_indent + inner if inner != line else line)
        whole = "\n".join(lines[first - 1 : last])
        rewritten = "\n".join(indent + line if line else line for line in [*header, *kept, *body])
        done = (
            f"`new` gave {node.name} {how}, so the whole function (lines {first}-{last}) was "
            "replaced by it" + (", its docstring kept." if kept else ".")
        )
        return whole, rewritten, done
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _newly_undefined(before: ast.Module, after: ast.Module) -> str | None:
    """A name a function reads after the change that nothing defines (not a parameter, a
    local, an enclosing function's name, a module name or a builtin) and that it did not read
    undefined before. Told to fix average(), the 1.5B model put average's fixed return line
    into add(a, b), which then returned ``sum(numbers)``: valid Python, a NameError."""
    undefined_before = _undefined(before)
    if undefined_before is None:
        return None
    known = {(function, name) for function, name, _ in undefined_before}
    for function, name, line in _undefined(after) or []:
        if (function, name) not in known:
            owners = _defined_in(after, name)
            meant = (
                f"; `{name}` belongs to {owners}: was the change meant there?" if owners else "."
            )
            return (
                f"{function}() would read `{name}` (line {line}), which it does not define "
                f"and the module does not either{meant} Check that `old` is the text to change."
            )
    return None


def _newly_repeated_dead_code(before: ast.Module, after: ast.Module) -> str | None:
    """A statement the change leaves after a return (raise, break, continue) of its block that
    repeats a statement above it: never run, and never meant. Asked for a docstring on
    ``add``, the 1.5B model replaced ``def add(a, b):`` with itself and ``return a + b``,
    leaving the return twice. A dead statement that repeats nothing (code stubbed out on
    purpose) is not judged."""
    try:
        known = Counter(text for text, *_ in _repeated_dead_code(before))
        dead = _repeated_dead_code(after)
    except RecursionError:  # ast.dump of a very deep expression: not judged
        return None
    for text, line, ender, ender_line in dead:
        if known[text] > 0:
            known[text] -= 1
            continue
        first = text.splitlines()[0] if text else ""
        shown = first if len(first) <= 80 and first == text else first[:79] + "…"
        return (
            f"line {line} (`{shown}`) would never run: it repeats a line above it and comes "
            f"after the {ender} on line {ender_line}. "
            "Write a line to keep once: an edit's `new` takes the place of its `old`."
        )
    return None


_ENDERS = {ast.Return: "return", ast.Raise: "raise", ast.Break: "break", ast.Continue: "continue"}


def _repeated_dead_code(tree: ast.Module) -> list[tuple[str, int, str, int]]:
    """(statement, its line, what ends its block, that one's line) for each statement after
    the end of its block that repeats one of the statements before it."""
    found: list[tuple[str, int, str, int]] = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            end = next((i for i, s in enumerate(block) if type(s) in _ENDERS), None)
            if end is None:
                continue
            above = {ast.dump(s) for s in block[: end + 1]}
            ender, ender_line = _ENDERS[type(block[end])], block[end].lineno
            found.extend(
                (ast.unparse(s), s.lineno, ender, ender_line)
                for s in block[end + 1 :]
                if ast.dump(s) in above
            )
    return found


def _defined_in(tree: ast.Module, name: str) -> str:
    """The functions of ``tree`` whose own scope defines ``name``, as "average() (line 5)"."""
    owners = [
        f"{node.name}() (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and name in (_bound(node) or set())
    ]
    return " and ".join(owners[:2])


_ALWAYS_DEFINED = frozenset(dir(builtins)) | {
    "__file__",
    "__name__",
    "__doc__",
    "__builtins__",
    "__class__",  # a method's, for super()
    "__spec__",
    "__loader__",
    "__package__",
    "__path__",
}


def _undefined(tree: ast.Module) -> list[tuple[str, str, int]] | None:
    """(function, name, line) for each name a function reads that nothing defines; None when
    the module cannot be judged (names come from ``import *``)."""
    module = _bound(tree)
    if module is None:
        return None
    # A function's `global x` binds x in the module.
    module |= {
        name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names
    }
    found: list[tuple[str, str, int]] = []
    # A stack, not recursion: a long expression is a deep tree (`a + a + …`).
    pending: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    while pending:
        node, enclosing = pending.pop()
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _FUNCTIONS):
                pending.append((child, enclosing))
                continue
            own = _bound(child)
            if own is None:
                continue
            scope = enclosing | own
            for inner in _own_nodes(child):
                if (
                    isinstance(inner, ast.Name)
                    and isinstance(inner.ctx, ast.Load)
                    and inner.id not in scope
                    and inner.id not in module
                    and inner.id not in _ALWAYS_DEFINED
                ):
                    found.append((getattr(child, "name", "lambda"), inner.id, inner.lineno))
            pending.append((child, scope))
    return found


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (*_FUNCTIONS, ast.ClassDef)


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a module's or function's own scope: a nested function or class is one
    node (its name), not what is inside it."""
    found: list[ast.AST] = []
    if isinstance(scope, _FUNCTIONS):
        # Only the parameters' names: defaults, annotations and decorators are read in the
        # enclosing scope (a method's default may be a class attribute).
        given = scope.args
        found.extend([*given.posonlyargs, *given.args, *given.kwonlyargs])
        found.extend(arg for arg in (given.vararg, given.kwarg) if arg is not None)
        pending: list[ast.AST] = [scope.body] if isinstance(scope, ast.Lambda) else list(scope.body)
    else:
        pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, _SCOPES):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _bound(scope: ast.AST) -> set[str] | None:
    """Every name a module's or function's own scope binds (over-counting is safe: it only
    keeps a name from being reported); None when a star import makes that unknowable."""
    names: set[str] = set()
    for inner in _own_nodes(scope):
        if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
            names.add(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(inner.name)
        elif isinstance(inner, ast.arg):
            names.add(inner.arg)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            for alias in inner.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            names.update(inner.names)
        elif isinstance(inner, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and inner.name:
            names.add(inner.name)
        elif isinstance(inner, ast.MatchMapping) and inner.rest:
            names.add(inner.rest)
    return names


def _around(text: str, line: int | None) -> str:
    """The lines around ``line`` as the change would leave them, numbered as read_file shows
    them: told only "line 2: unexpected indent", the 1.5B model made the same edit again."""
    if not line:
        return ""
    lines = text.splitlines()
    low, high = max(line - 3, 0), min(line + 1, len(lines))
    shown = "\n".join(f"{n + 1:>5}  {lines[n][:200]}" for n in range(low, high))
    return f" Those lines would read:\n{shown}" if shown else ""


def _json_error(text: str) -> tuple[str, int | None] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}: {exc.msg}", exc.lineno
    except (ValueError, RecursionError):
        return "it cannot be read", None
    return None


def _python_read(text: str) -> tuple[ast.Module | None, tuple[str, int | None] | None]:
    """``text`` as a module, or None and what the parser said of it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours
            return ast.parse(text), None
    except SyntaxError as exc:
        return None, (f"line {exc.lineno}: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError, MemoryError):
        return None, ("it cannot be read", None)
