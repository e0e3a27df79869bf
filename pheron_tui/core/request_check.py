"""The check a request says must pass once the work is done.

Either a command the request names as the goal ("Fix calc.py so that `python3 test_calc.py`
passes", "make npm test pass"), or a script of the workspace it says is failing and orders
fixed ("check_catalog.py is failing. Please fix the code so it passes"). The check is run
first, to see what fails, and again after the change; the script is the measure of the fix,
so an edit of it is not the fix.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pheron_tui.core.intent import orders_a_change
from pheron_tui.core.python_source import parsed
from pheron_tui.core.workspace_text import FILE_LIMIT, workspace_text

_SCRIPT = r"[\w./-]+\.(?:py|sh)"
_COMMAND = (
    r"`[^`\n]{2,200}`"
    r"|(?:python3?|pytest|npm|npx|yarn|pnpm|make|cargo|go|node|bash|sh|ruby|java|mvn|gradle"
    r"|tox|nox|\./[\w.-]+)(?:\s+[\w./:=-]+){0,8}?"
    rf"|{_SCRIPT}\b"
)
_GOAL = re.compile(
    rf"\b(?:so\s+that|so|until|such\s+that|make|making)\s+(?:running\s+)?(?P<command>{_COMMAND})"
    r"\s+(?:passes|pass|runs|works|succeeds|is\s+green)\b",
    re.IGNORECASE,
)
_FAILING = re.compile(
    rf"(?:`(?P<quoted>[^`\n]{{2,200}})`|(?<![\w./-])(?P<command>{_SCRIPT}))"
    r"\s+(?:is\s+|keeps\s+)?(?:failing|fails|failed|"
    r"(?:does\s*n[o']t|do\s*n[o']t|is\s*n[o']t|is\s+not|won'?t|will\s+not|no\s+longer)"
    r"\s+pass(?:es|ing)?)\b",
    re.IGNORECASE,
)
_BARE_SCRIPT = re.compile(rf"(?:\./)?{_SCRIPT}")
PYTEST_RUN = "python3 -m pytest -q "
"""How a file of pytest tests only is run (as a script it would pass doing nothing)."""


def check_command(text: str) -> str | None:
    """The command the message names as the goal of the work (``Fix calc.py so that
    `python3 test_calc.py` passes``, ``make pytest pass``), as written, or None."""
    match = _GOAL.search(text)
    return match.group("command").strip("`").strip() if match else None


def named_check(text: str, workspace: Path) -> str | None:
    """The command that runs the check the message says must pass, or None: the goal it names
    (``check_command``), or a command in backquotes or a workspace script it says is failing,
    when it orders a fix. A script named bare is run as its kind is run: ``python3
    check.py``, ``python3 -m pytest -q test_x.py`` for a file of pytest tests only (run as a
    script it would pass doing nothing), ``bash check.sh``. Told "check_catalog.py is
    failing, fix the code", the 1.5B model, never made to run it, edited the check's
    assertion instead."""
    command = _named_command(text)
    if command is None or not _BARE_SCRIPT.fullmatch(command):
        return command
    return script_command(command.removeprefix("./"), workspace)


def checked_script(text: str, check: str) -> str | None:
    """The workspace script ``check`` (``named_check`` of ``text``) runs: the one the message
    names bare (``tests/check_x.py is failing``), however it is run, or the one the command
    it names runs by name (``check_script``)."""
    command = _named_command(text)
    if command is not None and _BARE_SCRIPT.fullmatch(command):
        return command.removeprefix("./")
    return check_script(check)


def _named_command(text: str) -> str | None:
    command = check_command(text)
    if command is None and orders_a_change(text):
        failing = _FAILING.search(text)
        command = (failing["quoted"] or failing["command"]).strip() if failing else None
    return command


def script_command(script: str, workspace: Path) -> str | None:
    """How to run the workspace script ``script``, or None when it is no file of the
    workspace (a name the message only mentions is no check anyone can run)."""
    text = workspace_text(workspace, script, FILE_LIMIT)
    if text is None:
        return None
    if script.endswith(".sh"):
        return f"bash {script}"
    module = parsed(text)
    if module is not None and _only_defines_tests(module):
        return f"{PYTEST_RUN}{script}"
    if (
        module is not None
        and (dotted := _module_name(script))
        and _imports_from_root(module, script, workspace)
    ):
        # tests/check_shop.py doing `from shop import total`: run as `python3
        # tests/check_shop.py` it finds no shop (Python looks in tests/), and the check's
        # script is the one file the fix must not edit.
        return f"python3 -m {dotted}"
    return f"python3 {script}"


def _module_name(script: str) -> str | None:
    """``tests/check_x.py`` → ``tests.check_x``: a script in a folder, runnable with ``-m``
    from the workspace; None for one at the top or a path no module name can spell."""
    parts = script.removesuffix(".py").split("/")
    if len(parts) < 2 or not script.endswith(".py") or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _imports_from_root(module: ast.Module, script: str, workspace: Path) -> bool:
    """Whether the script imports a module of the workspace's top folder and none of its own
    folder (which ``-m`` would no longer find); one that sets ``sys.path`` itself is left
    to run as written."""
    folder = workspace / script.rpartition("/")[0]
    from_root = False
    for node in ast.walk(module):
        if _is_sys_path(node):
            return False
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if _module_in(folder, top):
                return False
            from_root = from_root or _module_in(workspace, top)
    return from_root


def _is_sys_path(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _module_in(folder: Path, name: str) -> bool:
    return (folder / f"{name}.py").is_file() or (folder / name).is_dir()


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ASSIGNMENTS = (ast.Assign, ast.AnnAssign)


def _only_defines_tests(module: ast.Module) -> bool:
    """Whether the module defines pytest tests and, run as a script, does nothing else."""
    tests = False
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            tests = tests or node.name.startswith("test")
        elif isinstance(node, ast.ClassDef):
            tests = tests or node.name.startswith("Test")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        elif not isinstance(node, _DEFINITIONS + _ASSIGNMENTS):
            return False
    return tests


def check_script(check: str) -> str | None:
    """The workspace script a check command runs (``python3 check.py`` → ``check.py``), or
    None for a command that runs none by name (``npm test``)."""
    words = check.split()
    scripts = [w.removeprefix("./") for w in words if _BARE_SCRIPT.fullmatch(w)]
    return scripts[-1] if len(scripts) == 1 else None


def names_apart_from_check(text: str, script: str) -> bool:
    """Whether the message names ``script`` anywhere but where it names it as the check: "fix
    test_calc.py so that it passes" makes the script itself the work."""
    rest = _FAILING.sub(" ", _GOAL.sub(" ", text))
    word = re.compile(rf"(?<![\w./-])(?:\./)?{re.escape(script)}(?![\w/-])")
    return word.search(rest) is not None


def runs_check(command: str, check: str) -> bool:
    """Whether the shell ``command`` runs ``check``. A check that runs a script is run by any
    part of the command that runs that script (``python check.py``, ``cd . && pytest
    test_x.py``, ``./check.sh``), not by one that only reads it (``cat check.py``); another
    check by its words, in order."""
    script = check_script(check)
    parts = [part.split() for part in _COMMAND_SEPARATORS.split(command.replace("`", " "))]
    if script is None:
        wanted = check.split()
        return any(_in_order(wanted, words) for words in parts)
    for words in parts:
        names = [word.removeprefix("./") for word in words]
        if script in names and words[0].removeprefix("./") in _RUNNERS | {script}:
            return True
    return False


_COMMAND_SEPARATORS = re.compile(r"&&|\|\||;|\|")
_RUNNERS = frozenset({"python", "python3", "bash", "sh", "pytest", "uv", "poetry"})


def _in_order(wanted: list[str], words: list[str]) -> bool:
    given = iter(words)
    return bool(wanted) and all(word in given for word in wanted)
