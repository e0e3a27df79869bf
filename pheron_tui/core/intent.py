"""Classifying a message as chat or task.

Where the provider can score fixed answers, the label with the higher log-probability right
after the prompt wins: one forward pass, no decoding. Otherwise the model generates a short
reply that is searched for either word. A reply that says neither falls back to ``rule_intent``.
"""

from __future__ import annotations

import ast
import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pheron_tui.core.messages import CompletionRequest, Intent, Message
from pheron_tui.core.prompts import CLASSIFY_SYSTEM
from pheron_tui.core.provider import ChoiceScorer, Provider, ScoringUnavailable
from pheron_tui.core.python_source import parsed
from pheron_tui.core.word_entries import entries_named_by_words
from pheron_tui.core.workspace_text import (
    FILE_LIMIT,
    walk_folders,
    workspace_files,
    workspace_text,
)

CLASSIFY_MAX_TOKENS = 64
LABELS: tuple[Intent, Intent] = ("chat", "task")

# Verbs and nouns that mean "do something on this machine". Used only when the model's own
# classification is unavailable or unreadable.
_TASK_WORDS = re.compile(
    r"\b(list|read|open|write|create|make|edit|change|modify|delete|remove|rename|move|copy|"
    r"run|execute|install|build|compile|test|fix|search|find|grep|count|show|summari[sz]e|"
    r"file|files|folder|folders|directory|directories|dir|repo|repository|script|command|"
    r"shell|code|\.py|\.md|\.txt|\.json|readme)\b",
    re.IGNORECASE,
)


def rule_intent(text: str) -> Intent:
    """The documented fallback: a message that mentions files, folders, commands or an action
    verb on them is a task; anything else is chat."""
    return "task" if _TASK_WORDS.search(text) else "chat"


# What the built-in tools work on. A request that speaks of these is about this machine, so
# its first step looks before answering, whatever the model would rather do.
_WORKSPACE_WORDS = re.compile(
    r"\b(files?|folders?|director(?:y|ies)|dirs?|repo(?:sitory)?|workspace|codebase|"
    r"scripts?|commands?|shell|terminal)\b",
    re.IGNORECASE,
)


# Programs a request may name as the way to do it ("is docker running? use docker ps"): only
# names that are not also everyday words ("find", "sort", "hostname") or languages ("with
# Python" asks how, not for a run).
_PROGRAMS = (
    r"docker|podman|git|kubectl|npm|npx|yarn|pnpm|pip3?|pipx|cargo|rustc|gcc|make|cmake|ls|"
    r"dir|cat|echo|grep|rg|del|rm|rmdir|mkdir|mv|cp|taskkill|tasklist|killall|pkill|ps|df|du|"
    r"uname|whoami|ipconfig|ifconfig|ping|curl|wget|ssh|scp|rsync|tar|unzip|chmod|chown|"
    r"systemctl|brew|apt|apt-get|yum|dnf|pacman|netstat|nslookup|pytest|ruff|mypy|wc|sed|awk|"
    r"sudo"
)
# A command line the request tells the agent to use: after "use", "using", "run", "with"…
# (and "the command", "the instruction"), or in backticks.
_COMMAND_LINE = re.compile(
    r"\b(?:use|using|with|via|run|running|execute|executing|type|typing)\s+"
    r"(?:the\s+)?(?:(?:command|instruction|program|cli)\s+)?[\"'`]?"
    rf"(?:{_PROGRAMS})(?![\w-])|`(?:{_PROGRAMS})(?![\w-])[^`]*`",
    re.IGNORECASE,
)


def speaks_of_the_workspace(text: str) -> bool:
    """Whether the message speaks of files, folders, scripts or commands (``list the files
    here``, ``check whether docker is installed using docker --version``), the things the
    built-in tools act on."""
    return _WORKSPACE_WORDS.search(text) is not None or _COMMAND_LINE.search(text) is not None


# A wh-word opens a question on its own; an auxiliary (``is``, ``do``, ``have``) opens one
# only when a sentence ends with a question mark, since ``do it`` and ``have a go`` are orders.
_QUESTION_START = re.compile(r"^\s*(what|which|who|whose|where|when|why|how)\b", re.IGNORECASE)
_QUESTION_MARK = re.compile(r"\?(?:\s|$)")
_CHANGE_WORDS = re.compile(
    r"\b(?:(?:fix|change|edit|create|add|write|delete|remove|rename|move|replace|update|make|"
    r"refactor|implement|insert|append|set|save|modify|rewrite|format|install|run|execute|"
    r"commit|undo|revert|generate|build|clean|restore|convert|correct|apply|patch|put)"
    r"(?:s|es|d|ed|ing|ting|ning)?|made|wrote|written|ran)\b",
    re.IGNORECASE,
)


def asks_only_to_know(text: str) -> bool:
    """A question that asks nothing to be changed (``Which function in utils.py reverses a
    string?``): answering it needs no write. A question with a verb of change (``Can you fix
    calc.py?``, ``Why did the run fail?``) is not one."""
    question = _QUESTION_START.match(text) is not None or _QUESTION_MARK.search(text) is not None
    return question and _CHANGE_WORDS.search(text) is None


# A verb in its bare form opening a clause: the request, or part of it, is an order ("Fix the
# bug", "…, then run it", "Can you rename it?"). Inside a clause the same verbs are usually only
# mentioned ("Explain what `make build` does").
_CLAUSE_START = r"(?:^|[,;:.!]\s+|\b(?:and|then|please|you)\s+)"
_RUN_VERBS = r"run|execute"
_WRITE_VERBS = (
    r"fix|change|edit|create|add|write|delete|remove|rename|move|replace|update|make|refactor|"
    r"implement|insert|append|save|modify|rewrite|install|commit|undo|revert|generate|build|"
    r"restore|convert|correct|apply|patch|put|repair|mend"
)
_WRITE_ORDER = re.compile(_CLAUSE_START + rf"(?:{_WRITE_VERBS})\b", re.IGNORECASE)
_CODE_FILE = r"[\w./-]+\.(?:py|sh|js|mjs|ts|rb|pl|php|lua|R|jl)\b"
# "Use units.py to convert 10 miles" asks for the script to be run: the 1.5B model added a
# function to units.py instead.
_RUN_ORDER = re.compile(
    _CLAUSE_START + rf"(?:(?:{_RUN_VERBS})\b|use\s+`?{_CODE_FILE})", re.IGNORECASE
)
_CHANGE_ORDER = re.compile(
    _CLAUSE_START + rf"(?:(?:{_WRITE_VERBS}|{_RUN_VERBS})\b|use\s+`?{_CODE_FILE})",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# "Can you fix it?", and after a clause ("check.py fails, can you fix it?").
_ASKED_TO_DO = re.compile(
    r"(?:^|[,;:])\s*(?:please\s+)?(?:can|could|would|will)\s+you\b", re.IGNORECASE
)


def _orders(text: str, verbs: re.Pattern[str]) -> bool:
    for sentence in _SENTENCE_END.split(text):
        question = _QUESTION_START.match(sentence) or sentence.rstrip().endswith("?")
        if verbs.search(sentence) and (not question or _ASKED_TO_DO.search(sentence)):
            return True
    return False


def orders_a_change(text: str) -> bool:
    """Whether the message tells the agent to change something (``Fix the bug in calc.py``,
    ``Could you rename data.csv?``, ``Why does it fail? Run it.``), so that an answer with
    nothing written or run has not done it. A question (``How do I run it?``, ``Is the file
    created?``) is no order."""
    return _orders(text, _CHANGE_ORDER)


def orders_a_run(text: str) -> bool:
    """Whether the message tells the agent to run something (``Write square.py, run it and
    tell me the output``): an answer with nothing run has not done it."""
    return _orders(text, _RUN_ORDER)


def orders_only_a_run(text: str) -> bool:
    """Whether the message tells the agent to run something and to change nothing else
    (``Run python3 test_calc.py and tell me which test fails``): a file written for it is not
    what was asked. Told to run the tests, the 1.5B model wrote a new test_calc.py."""
    return _orders(text, _RUN_ORDER) and not _orders(text, _WRITE_ORDER)


_PYTHON_USED = re.compile(r"\buse\s+`?(?P<path>[\w./-]+)\.py\b", re.IGNORECASE)
USE_HINT_FUNCTIONS = 8
"""The functions a use hint lists, at most (the first of the file's, in order)."""


def python_use_hint(text: str, workspace: Path) -> str:
    """How to run the functions of the Python file the message says to use ("Use units.py to
    convert 10 miles to kilometres"), or "" when there is none to list. Told to run what the
    request names, the 1.5B model searched and edited units.py: a module of functions has
    nothing to run as it is. Shown ``from catalog import NAME; print(NAME(VALUES))``, it ran
    that as written, twice; so the hint names the file's own functions and how each is
    called, and imports them from the workspace folder, where the files they open are."""
    match = _PYTHON_USED.search(text)
    if match is None:
        return ""
    parts = match["path"].removeprefix("./").split("/")
    if not all(part.isidentifier() for part in parts):
        return ""
    relative = "/".join(parts) + ".py"
    functions = _public_functions(workspace, relative)[:USE_HINT_FUNCTIONS]
    if not functions:
        return ""
    names = ", ".join(name for name, _ in functions)
    return (
        f"{relative} defines {', '.join(called for _, called in functions)}. To use them, run "
        f'Python with shell_exec: python3 -c "from {".".join(parts)} import {names}; '
        'print(...)", with the call that does what was asked, and the values the request '
        "gives, in place of the dots."
    )


def _public_functions(workspace: Path, relative: str) -> list[tuple[str, str]]:
    """(name, how it is called) of each top-level function of a workspace Python file whose
    name does not start with "_"."""
    text = workspace_text(workspace, relative, FILE_LIMIT)
    module = parsed(text) if text is not None else None
    if module is None:
        return []
    found = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
            "_"
        ):
            arguments = ast.unparse(node.args)
            if len(arguments) > 60:
                arguments = arguments[:59] + "…"
            found.append((node.name, f"{node.name}({arguments})"))
    return found


_NAME_LIKE = re.compile(r"[\w.\-/]+")


def file_like_words(text: str) -> set[str]:
    """Words of the message that could name a file or folder: with an extension or a slash,
    or long (a folder named ``test`` must not turn every message about tests into a task)."""
    words = set()
    for word in _NAME_LIKE.findall(text):
        word = word.strip(".,;:!?/").removeprefix("./")
        if word and ("." in word or "/" in word or len(word) > 12):
            words.add(word)
    return words


def names_a_workspace_entry(text: str, workspace: Path) -> bool:
    """Whether the message names a file or folder that exists in the workspace, by its path
    or, anywhere below, by its name (``What does calc.py do?`` needs calc.py)."""
    return bool(named_entries(text, workspace, first_only=True))


def named_entries(
    text: str, workspace: Path, *, first_only: bool = False, by_words: bool = True
) -> list[str]:
    """The workspace entries the message names, as paths from the workspace root: by their
    path, by their name anywhere below (``calc.py`` found in ``src/``), then, if
    ``by_words``, by a plain word (``the pancakes`` for ``recipes/pancakes.json``:
    ``word_entries``)."""
    found = _entries_named_as_files(text, workspace, first_only=first_only)
    if (found and first_only) or not by_words:
        return found
    more = entries_named_by_words(text, workspace, first_only=first_only)
    return found + [path for path in more if path not in found]


def _entries_named_as_files(text: str, workspace: Path, *, first_only: bool) -> list[str]:
    words = file_like_words(text)
    if not words:
        return []
    root = Path(workspace)
    found: list[str] = []
    for word in sorted(words):
        try:
            if (root / word).resolve().is_relative_to(root.resolve()) and (root / word).exists():
                found.append(word)
        except (OSError, ValueError):
            continue
        if found and first_only:
            return found
    names = {w.rsplit("/", 1)[-1] for w in words} - {f.rsplit("/", 1)[-1] for f in found}
    for folder, dirs, files in walk_folders(root):
        for name in sorted(names.intersection(dirs) | names.intersection(files)):
            found.append((Path(folder) / name).relative_to(root).as_posix())
            if first_only:
                return found
    return found


_IDENTIFIER = re.compile(r"`([^`\s]{2,80})`|\b([A-Za-z_]\w*)(\()?")
CODE_NOTE_MARKERS = frozenset({"TODO", "FIXME", "XXX", "HACK"})
"""The notes developers leave in files, named in capitals: they count where they occur."""
_DEFINED = rb"(?:def|class|function|fn|func|const|let|var|struct|enum|interface|type)\s+%s\b"


_SPEAKS_OF_CODE = re.compile(
    r"\b(?:defin(?:e|ed|es|ition)|functions?|methods?|class(?:es)?|returns?|called|"
    r"implement(?:s|ed)?|signature)\b",
    re.IGNORECASE,
)


_DEFINED_AS_CODE = rb"(?:def|class|function|fn|func)\s+%s\s*[(:<]"
"""A plain word counts only as a definition that looks like code (``def slugify(``): prose
such as "let the user…" must not read as ``let the``."""


def code_like_words(text: str) -> tuple[set[str], set[str], set[str]]:
    """Words of the message that look like code rather than English: those with an underscore
    (``MAX_ITEMS``, ``parse_args``) and the notes of ``CODE_NOTE_MARKERS`` ("Which file has a
    FIXME note?": the 1.5B model, told nothing, read a Java file it made up), which count
    where they occur; and those called
    (``average()``) or in backticks, which count only where they are defined (``print()`` is
    everybody's). In a message that speaks of code (``Where is slugify defined?``, ``What
    does total return?``) every other word counts where a definition of it looks like code
    (the third set)."""
    occurring: set[str] = set()
    defined: set[str] = set()
    plain: set[str] = set()
    code_talk = _SPEAKS_OF_CODE.search(text) is not None
    for quoted, word, called in _IDENTIFIER.findall(text):
        name = (quoted or word).strip("()")
        if not name:
            continue
        if ("_" in name.strip("_") and len(name) >= 3) or name in CODE_NOTE_MARKERS:
            occurring.add(name)
        elif quoted or called:
            defined.add(name)
        elif code_talk and len(name) >= 3:
            plain.update((name, name.lower()))
    return occurring, defined, plain - defined


def names_code_in_workspace(text: str, workspace: Path) -> bool:
    """Whether code the message names is in the workspace's text files (``Which file
    defines MAX_ITEMS?`` is about this project, not general knowledge)."""
    return bool(code_places(text, workspace, most=1))


@dataclass(frozen=True)
class CodePlace:
    """A line of a workspace file where a name the message gives occurs or is defined."""

    name: str
    path: str
    line: int
    text: str


_DEFINITION_LINE = (
    r"(?:(?:async\s+)?(?:def|class|function|fn|func|const|let|var|struct|enum|interface|type)"
    r"\s+{name}\b|{name}\s*(?::[^=]*)?=(?!=))"
)
"""A line that defines ``name`` (``def km_to_miles(``, ``TIMEOUT_S = 30``), from its start."""


def defines(place: CodePlace) -> bool:
    """Whether the line at ``place`` is where its name is defined."""
    return re.match(_DEFINITION_LINE.format(name=re.escape(place.name)), place.text) is not None


def code_places(text: str, workspace: Path, most: int = 6) -> list[CodePlace]:
    """Where in the workspace's text files the code the message names is (up to ``most``
    lines, each once, those that define a name first, then in walk order): lines where a
    name with an underscore occurs, lines that define a called or backticked name. Shown uses
    first, the 1.5B model asked what a function does read a doc line that named it, not the
    function."""
    places = _code_lines(text, workspace, most * 4)
    return sorted(places, key=lambda place: not defines(place))[:most]


def _code_lines(text: str, workspace: Path, most: int) -> list[CodePlace]:
    """Up to ``most`` distinct lines where the code the message names is, in walk order."""
    occurring, defined, plain = code_like_words(text)
    if not occurring and not defined and not plain:
        return []

    # One pattern for each kind, the name its group: a long message that speaks of code
    # gives many words, and the files are read once for all of them.
    def alternatives(names: set[str]) -> bytes:
        return b"(%s)" % b"|".join(re.escape(w.encode()) for w in sorted(names, key=len)[::-1])

    needles = [re.compile(rb"(?<!\w)%s(?!\w)" % alternatives(occurring))] if occurring else []
    needles += [re.compile(_DEFINED % alternatives(defined))] if defined else []
    needles += [re.compile(_DEFINED_AS_CODE % alternatives(plain))] if plain else []
    places: dict[tuple[str, int], CodePlace] = {}
    for relative, data in workspace_files(workspace):
        if b"\x00" in data[:1024]:
            continue
        for needle in needles:
            for match in needle.finditer(data):
                word = match.group(1).decode("utf-8", errors="replace")
                start = data.rfind(b"\n", 0, match.start()) + 1
                end = data.find(b"\n", match.end())
                line = data[start : end if end != -1 else len(data)]
                place = CodePlace(
                    word,
                    relative,
                    data.count(b"\n", 0, match.start()) + 1,
                    line.decode("utf-8", errors="replace").strip()[:200],
                )
                places.setdefault((place.path, place.line), place)
                if len(places) >= most:
                    return list(places.values())
    return list(places.values())


def names_workspace_things(text: str, workspace: Path) -> bool:
    """A file or folder of the workspace, or code that occurs in it."""
    return names_a_workspace_entry(text, workspace) or names_code_in_workspace(text, workspace)


def parse_intent(reply: str) -> Intent | None:
    """The first of the two labels the reply says, or None."""
    match = re.search(r"\b(chat|task)\b", reply, re.IGNORECASE)
    return match.group(1).lower() if match else None  # type: ignore[return-value]


CLASSIFY_HEAD_CHARS = 1500
CLASSIFY_TAIL_CHARS = 500


def classify_text(text: str) -> str:
    """What the classifier reads of a message: a long one's start and end. What is asked sits
    there; the pasted middle only made a CPU read thousands of tokens (a minute) to decide
    chat or task."""
    if len(text) <= CLASSIFY_HEAD_CHARS + CLASSIFY_TAIL_CHARS:
        return text
    return f"{text[:CLASSIFY_HEAD_CHARS]}\n[…]\n{text[-CLASSIFY_TAIL_CHARS:]}"


def classify_request(text: str) -> CompletionRequest:
    return CompletionRequest(
        messages=[
            Message(role="system", content=CLASSIFY_SYSTEM),
            Message(role="user", content=classify_text(text)),
        ],
        enable_thinking=False,
        max_tokens=CLASSIFY_MAX_TOKENS,
        purpose="classify",
    )


@dataclass
class Classification:
    intent: Intent
    method: Literal["scored", "generated", "rule", "workspace"]


async def classify(
    provider: Provider,
    text: str,
    generate: Callable[[CompletionRequest], Awaitable[str]],
    workspace: Path | None = None,
) -> Classification:
    """Chat or task for the message on its own (the conversation does not sway it). A message
    that names a file or folder of the workspace, or code found in it, is a task whatever the
    model thinks: small models take "What does calc.py do?" or "Which file defines
    MAX_ITEMS?" for general questions."""
    if workspace is not None and await asyncio.to_thread(names_workspace_things, text, workspace):
        return Classification(intent="task", method="workspace")
    request = classify_request(text)
    if isinstance(provider, ChoiceScorer):
        try:
            scores = await provider.score_choices(request, LABELS)
        except ScoringUnavailable:
            pass  # a server without logprobs: generate and parse instead
        else:
            best = max(LABELS, key=lambda label: scores[label])
            return Classification(intent=best, method="scored")
    reply = await generate(request)
    intent = parse_intent(reply)
    if intent is None:
        return Classification(intent=rule_intent(text), method="rule")
    return Classification(intent=intent, method="generated")
