"""Files and folders of the workspace that a message names by a plain word.

"How many eggs go into the pancakes?" in a folder holding ``recipes/pancakes.json`` is about
that file, though it gives no file name: the 1.5B model's classifier took it for a general
question and answered from what pancakes usually hold. A word of the message that is an
entry's name without its suffix (``pancakes`` for ``pancakes.json``; ``recipe`` for the
folder ``recipes``) names that entry: data and documents, not source files or folders of
them. Names every project has (``config``, ``tests``, ``README``) and short words do not:
"what is a unit test" must stay a question.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pheron_tui.core.workspace_text import walk_folders

SHORTEST_WORD = 5
"""Letters a word needs to name an entry: ``data``, ``app``, ``docs`` name nothing."""
MOST_WORDS = 40
"""Words of a message looked at, at most (a pasted page names nothing by its words)."""

_COMMON_NAMES = """
    about admin android assets backend backup bench benchmarks build cache changelog client
    common config configs contributing copying core credits debug default demo deploy dist
    docker dockerfile document documents download downloads example examples extra files
    fixture fixtures folder frontend global hello helper helpers image images index input
    install internal issue issues layout legal licence license local logger logging logs
    main makefile manage media migrations model models module modules notes other output
    outputs package packages pages plugin plugins private project public python readme
    release releases report reports requirements resources sample samples script scripts
    server service services setup shared source sources static store style styles support
    template templates testing tests third tools types update upload uploads users utils
    vendor version views widget widgets world
"""
COMMON_NAMES = frozenset(_COMMON_NAMES.split())
"""Names of files and folders found in many projects, or words used for them in questions
about anything: a word equal to one of these names no entry."""

_WORD = re.compile(r"[A-Za-z][a-z]+")
_QUOTED = re.compile(r"(?<!\w)'[^'\n]+'(?!\w)|\"[^\"\n]+\"|[“‘][^”’\n]+[”’]")
_FILE_LIKE = re.compile(r"[\w\-]*(?:[./][\w\-]+)+")
"""A file name or path: a dot or slash with more after it (not a sentence's full stop)."""


def _forms(word: str) -> set[str]:
    """The word and its plural or singular: "recipe" names ``recipes``; "pancake",
    ``pancakes.json``."""
    forms = {word, word + "s", word + "es"}
    if word.endswith("es"):
        forms.add(word[:-2])
    if word.endswith("s"):
        forms.add(word[:-1])
    return forms


def request_words(text: str) -> set[str]:
    """The lowercase forms of the message's plain words that may name an entry: not the
    parts of a file name it gives (``scale.py`` names scale.py, not ``build/scale.txt``), nor
    words in quotes, which are text to write ("Append 'Oslo is the coldest station.'")."""
    plain = _FILE_LIKE.sub(" ", _QUOTED.sub(" ", text[:2000]))
    words = [w.lower() for w in _WORD.findall(plain)][: MOST_WORDS * 4]
    chosen = [w for w in words if len(w) >= SHORTEST_WORD and w not in COMMON_NAMES]
    forms: set[str] = set()
    for word in chosen[:MOST_WORDS]:
        forms |= _forms(word)
    return forms - COMMON_NAMES


def entries_named_by_words(text: str, workspace: Path, *, first_only: bool = False) -> list[str]:
    """Paths (from the workspace root) of the files and folders whose name without its
    suffix is a plain word of the message, in walk order, at most one walk's worth."""
    forms = request_words(text)
    if not forms:
        return []
    root = Path(workspace)
    found: list[str] = []
    for folder, dirs, files in walk_folders(root):
        for name in [*dirs, *sorted(files)]:
            stem = name.split(".", 1)[0].lower() if not name.startswith(".") else ""
            if stem in forms and not _code(Path(folder) / name, name in files):
                found.append((Path(folder) / name).relative_to(root).as_posix())
                if first_only:
                    return found
    return found


_CODE_SUFFIXES = """
    .py .pyi .js .mjs .cjs .ts .tsx .jsx .rs .go .java .kt .swift .c .h .cc .cpp .hpp .cs .rb
    .php .pl .lua .sh .bash .zsh .r .jl .scala .m .ex .exs .hs .ml .dart .vue .svelte
"""
CODE_SUFFIXES = frozenset(_CODE_SUFFIXES.split())
"""Suffixes of source files: a module is named by its file name or its functions
(``intent.code_places``); by a plain word, a code repository's modules (``rules.py``,
``grammar.py``) would turn "What are the rules of chess?" into a task."""


def _code(path: Path, is_file: bool) -> bool:
    """A source file, or a folder that holds one directly: not named by a plain word."""
    if is_file:
        return path.suffix.lower() in CODE_SUFFIXES
    try:
        with os.scandir(path) as entries:
            return any(
                Path(entry.name).suffix.lower() in CODE_SUFFIXES
                for _, entry in zip(range(200), entries, strict=False)
            )
    except OSError:
        return True
