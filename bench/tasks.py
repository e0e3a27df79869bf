"""Everyday tasks end to end: does the agent do the job, and does its critic know?

Run: python bench/tasks.py [--model NAME] [--provider llamacpp|mlx] [--set everyday|held-out|third|fourth|fifth]
     [--only N,M] [--timeout S] [--log DIR]

Each task starts from a fresh copy of a small fixture project (a calculator with a bug and a
failing check, notes with TODOs, a CSV, a config module) and runs through the installed command,
exactly as a user scripting the agent would:
``pheron-tui run --json --approve all --workspace COPY PROMPT``. The task is then checked by its
effect: files on disk, a check script that must pass, or facts the answer must state. Printed
per task: right or not, the critic's verdict, tool calls, tokens (prompt / generated), wall
time; then the success rate and how often the critic agreed with the check.

``--set held-out`` runs a second project (a shop's inventory with a bug, a log, JSON settings, a
shell script, a nested package) with tasks written after the agent's aids were built: the
everyday set was looked at while building them, this one shows whether they carry over.
``--set third`` (unit conversions, an INI file, docs, a folder to remove) was written once the
held-out set had been looked at in turn, to measure that again; ``--set fourth`` (a book
catalogue package) once the third had been; ``--set fifth`` (a recipe scaler with JSON
recipes, YAML settings and a build folder) once the fourth had been.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHERON = Path(sys.executable).parent / "pheron-tui"

FIXTURE = {
    "README.md": "# Quokka\n\nQuokka is a tiny calculator library used to try the agent.\n",
    "calc.py": (
        "def add(a, b):\n    return a + b\n\n\n"
        "def average(numbers):\n"
        '    """The arithmetic mean of a non-empty list of numbers."""\n'
        "    return sum(numbers) / (len(numbers) - 1)\n"
    ),
    "test_calc.py": (
        "from calc import add, average\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_average():\n    assert average([2, 4, 6]) == 4\n\n\n"
        'if __name__ == "__main__":\n'
        "    test_add()\n    test_average()\n    print('all tests passed')\n"
    ),
    "utils.py": (
        "def flip_text(text):\n    return text[::-1]\n\n\n"
        "def shout(text):\n    return text.upper() + '!'\n"
    ),
    "config.py": "MAX_ITEMS = 50\nTIMEOUT_S = 30\n",
    "notes.md": (
        "# Notes\n\n- TODO: add a median function\n- the colour of the logo is blue\n"
        "- TODO: write more tests\n- TODO: publish the package\n"
    ),
    "data.csv": "name,score\nana,3\nbo,5\ncy,8\ndee,1\n",
    "tmp.log": "old log line\n",
}


def says(*facts: str) -> Callable[[Path, str], bool]:
    """The answer states every fact (case-insensitive; a number as a whole number, so "17"
    does not state 7)."""

    def stated(fact: str, answer: str) -> bool:
        if fact.isdigit():
            return re.search(rf"(?<![\d.]){fact}(?![\d]|\.\d)", answer) is not None
        return fact.lower() in answer.lower()

    return lambda _ws, answer: all(stated(f, answer) for f in facts)


def picks(right: Sequence[str], others: Sequence[str]) -> Callable[[Path, str], bool]:
    """The answer names one of ``right`` (as whole words) and not every one of ``others``: an
    answer that lists the file's rows names the right one too, and picks nothing."""

    def named(word: str, answer: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", answer, re.IGNORECASE) is not None

    def check(_ws: Path, answer: str) -> bool:
        answer = answer.replace("\\n", " ").replace("\\t", " ")  # rows written out as text
        return any(named(w, answer) for w in right) and not all(named(w, answer) for w in others)

    return check


def passes(command: list[str]) -> Callable[[Path, str], bool]:
    def check(ws: Path, _answer: str) -> bool:
        done = subprocess.run(command, cwd=ws, capture_output=True, text=True, timeout=30)
        return done.returncode == 0

    return check


def file_is(name: str, pattern: str) -> Callable[[Path, str], bool]:
    def check(ws: Path, _answer: str) -> bool:
        path = ws / name
        return path.is_file() and re.search(pattern, path.read_text(errors="replace")) is not None

    return check


def check_kept_passing(fixture: dict[str, str], check: str) -> Callable[[Path, str], bool]:
    """The fixture's check script passes and is as it was (no test was edited away)."""

    def fixed(ws: Path, answer: str) -> bool:
        kept = (ws / check).read_text() == fixture[check]
        return kept and passes([sys.executable, check])(ws, answer)

    return fixed


def calc_fixed(ws: Path, answer: str) -> bool:
    """The check passes and the other function still works (no test was edited away)."""
    return check_kept_passing(FIXTURE, "test_calc.py")(ws, answer)


def moved(fixture: dict[str, str], source: str, target: str) -> Callable[[Path, str], bool]:
    """``source`` is gone and ``target`` holds what it held (a rename or a move)."""

    def check(ws: Path, _answer: str) -> bool:
        end = ws / target
        return not (ws / source).exists() and end.is_file() and end.read_text() == fixture[source]

    return check


def multiply_added(ws: Path, answer: str) -> bool:
    probe = "import utils; assert utils.multiply(3, 4) == 12; assert utils.flip_text('ab') == 'ba'"
    return passes([sys.executable, "-c", probe])(ws, answer)


def square_script(ws: Path, answer: str) -> bool:
    if not (ws / "square.py").is_file():
        return False
    done = subprocess.run(
        [sys.executable, "square.py"], cwd=ws, capture_output=True, text=True, timeout=30
    )
    return "144" in done.stdout and "144" in answer


def colour_replaced(ws: Path, _answer: str) -> bool:
    text = (ws / "notes.md").read_text()
    return "colour" not in text and "color of the logo" in text and text.count("TODO") == 3


def timeout_changed(ws: Path, _answer: str) -> bool:
    text = (ws / "config.py").read_text()
    return "TIMEOUT_S = 60" in text and "MAX_ITEMS = 50" in text


def notes_copied(ws: Path, _answer: str) -> bool:
    copy, original = ws / "notes_backup.md", ws / "notes.md"
    return copy.is_file() and original.is_file() and copy.read_text() == FIXTURE["notes.md"]


def hello_script(ws: Path, _answer: str) -> bool:
    if not (ws / "hello.py").is_file():
        return False
    done = subprocess.run(
        [sys.executable, "hello.py"], cwd=ws, capture_output=True, text=True, timeout=30
    )
    return "Hello" in done.stdout


def add_documented(ws: Path, answer: str) -> bool:
    """add has a docstring, still adds, and calc.py defines it once."""
    import ast

    try:
        tree = ast.parse((ws / "calc.py").read_text())
    except SyntaxError:
        return False
    adds = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "add"]
    probe = "import calc; assert calc.add(2, 3) == 5"
    return (
        len(adds) == 1
        and ast.get_docstring(adds[0]) is not None
        and passes([sys.executable, "-c", probe])(ws, answer)
    )


@dataclass(frozen=True)
class Task:
    prompt: str
    check: Callable[[Path, str], bool]
    chat: bool = False
    """Answerable without tools: a call is not wrong, but the check is on the answer."""


PY_VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"

TASKS = [
    Task("What does the function average in calc.py do?", says("mean")),
    Task("Is there a bug in the average function in calc.py? Explain.", says("len")),
    Task("Fix the bug in calc.py so that `python3 test_calc.py` passes.", calc_fixed),
    Task("Create a file hello.txt containing the text: hello world", file_is("hello.txt", r"^hello world\s*$")),
    Task("How many TODO items are in notes.md?", says("3")),
    Task("Run python3 test_calc.py and tell me which test fails.", says("test_average")),
    Task("Rename data.csv to records.csv.", moved(FIXTURE, "data.csv", "records.csv")),
    Task("What is the capital of France?", says("Paris"), chat=True),
    Task("List the Python files in this folder.", says("calc.py", "utils.py", "test_calc.py", "config.py")),
    Task("What is the project's name, according to README.md?", says("Quokka")),
    Task("Add a function multiply(a, b) to utils.py that returns a times b.", multiply_added),
    Task("Delete the file tmp.log.", lambda ws, _a: not (ws / "tmp.log").exists()),
    Task("What is 17 * 23?", says("391"), chat=True),
    Task("Create docs/index.md with the single line: Welcome", file_is("docs/index.md", r"Welcome")),
    Task("How many data rows (not counting the header) does data.csv have?", says("4")),
    Task("Which function in utils.py reverses a string?", says("flip_text")),
    Task("In notes.md, replace the word colour with color.", colour_replaced),
    Task("Which Python version is installed here? Run a command to find out.", says(PY_VERSION)),
    Task("Write a script square.py that prints the square of 12, run it and tell me the output.", square_script),
    Task("Which file defines MAX_ITEMS, and what is its value?", says("config.py", "50")),
    Task("Who had the highest score in data.csv?", picks(["cy"], ["ana", "bo", "dee"])),
    Task("Explain in one sentence what a Python list comprehension is.", says("list"), chat=True),
    # 23–32, added later: file operations and phrasings the first 22 did not try.
    Task("Show me what's in config.py", says("MAX_ITEMS", "50")),
    Task("Change TIMEOUT_S in config.py to 60.", timeout_changed),
    Task("How many lines does calc.py have?", says("7")),
    Task("Copy notes.md to notes_backup.md", notes_copied),
    Task("Make a new python file hello.py that prints Hello, then run it.", hello_script),
    Task("Create a folder named build", lambda ws, _a: (ws / "build").is_dir()),
    Task("Add a docstring to the add function in calc.py.", add_documented),
    Task("What does shout in utils.py return for 'hi'?", says("HI!")),
    Task("Which files mention TODO?", says("notes.md")),
    Task("What is the value of TIMEOUT_S?", says("30")),
]  # fmt: skip


# The held-out set: another project, other wordings.
SHOP = {
    "inventory.py": (
        'PRICES = {"apple": 0.5, "pear": 0.75, "plum": 0.3}\n\n\n'
        "def total(items):\n"
        '    """The summed price of the named items."""\n'
        "    cost = 0\n"
        "    for item in items:\n"
        "        cost = PRICES[item]\n"
        "    return cost\n\n\n"
        "def in_stock(item):\n    return item in PRICES\n"
    ),
    "check_inventory.py": (
        "from inventory import in_stock, total\n\n"
        'assert in_stock("plum")\n'
        'assert total(["apple", "pear"]) == 1.25, total(["apple", "pear"])\n'
        'print("inventory ok")\n'
    ),
    "settings.json": '{\n  "debug": false,\n  "port": 8080\n}\n',
    "CHANGELOG.md": (
        "# Changelog\n\n## 1.4.0\n- plums\n\n## 1.3.2\n- fix pear price\n\n"
        "## 1.3.0\n- first release\n"
    ),
    "app.log": (
        "INFO start\nERROR price missing for kiwi\nINFO order 17\n"
        "WARNING slow disk\nERROR timeout talking to bank\nINFO stop\n"
    ),
    "names.txt": "Maya\nBen\nZoe\nAlex\nOmar\n",
    "greet.sh": '#!/bin/sh\necho "hi $1"\n',
    "shop/__init__.py": "",
    "shop/text.py": ('def slugify(title):\n    return "-".join(title.lower().split())\n'),
}


def says_any(*wordings: str) -> Callable[[Path, str], bool]:
    """The answer states one of these (case-insensitive)."""
    return lambda _ws, answer: any(w.lower() in answer.lower() for w in wordings)


def port_set(ws: Path, _answer: str) -> bool:
    try:
        settings = json.loads((ws / "settings.json").read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return settings == {"debug": False, "port": 9090}


def names_sorted(ws: Path, _answer: str) -> bool:
    lines = (ws / "names.txt").read_text().split()
    return lines == sorted(SHOP["names.txt"].split())


def is_empty_added(ws: Path, answer: str) -> bool:
    probe = (
        "import inventory as i; assert i.is_empty([]) is True; assert i.is_empty([1]) is False;"
        " assert i.in_stock('pear')"
    )
    return passes([sys.executable, "-c", probe])(ws, answer)


def logs_deleted(ws: Path, _answer: str) -> bool:
    return not list(ws.glob("*.log")) and (ws / "names.txt").is_file()


def todo_written(ws: Path, _answer: str) -> bool:
    path = ws / "todo.txt"
    return path.is_file() and path.read_text().split() == ["one", "two", "three"]


HELD_OUT = [
    Task("What does total in inventory.py do?", says("price")),
    Task("Find the bug in the total function of inventory.py.", says_any("+=", "overwrit", "replace", "instead of add", "reassign", "only the last", "add up", "accumulat")),
    Task("Fix inventory.py so that python3 check_inventory.py passes.", check_kept_passing(SHOP, "check_inventory.py")),
    Task("How many ERROR lines are in app.log?", says("2")),
    Task("Set the port in settings.json to 9090.", port_set),
    Task("Create todo.txt with three lines: one, two, three", todo_written),
    Task("Sort the names in names.txt alphabetically and save the file.", names_sorted),
    Task("What is the latest version in CHANGELOG.md?", says("1.4.0")),
    Task("Move greet.sh into a new folder called scripts.", moved(SHOP, "greet.sh", "scripts/greet.sh")),
    Task("Run greet.sh with the argument Sam and tell me what it prints.", says("hi Sam")),
    Task("Where is slugify defined?", says("text.py")),
    Task("What is 2 to the power of 10?", says("1024"), chat=True),
    Task("Translate 'good morning' into Spanish.", says("buenos"), chat=True),
    Task("Add a function is_empty(items) to inventory.py that returns True when the list is empty.", is_empty_added),
    Task("How many names are in names.txt?", says("5")),
    Task("Delete every .log file here.", logs_deleted),
    Task("Is debug turned on in settings.json?", says_any("false", "not", "off", "no,", "no.")),
    Task("What does slugify return for 'Big Red Apple'?", says("big-red-apple")),
]  # fmt: skip


# The third set: written after the held-out set had been looked at and its misses mended, to
# measure again what carries over. Another project (unit conversions with a bug and a check, a
# CSV, an INI file, pyproject.toml, docs, a script in a folder, a folder to remove).
UNITS = {
    "units.py": (
        "KM_PER_MILE = 1.609344\n\n\n"
        "def miles_to_km(miles):\n    return miles * KM_PER_MILE\n\n\n"
        "def km_to_miles(km):\n    return km * KM_PER_MILE\n\n\n"
        "def celsius_to_fahrenheit(c):\n    return c * 9 / 5 + 32\n"
    ),
    "test_units.py": (
        "from units import celsius_to_fahrenheit, km_to_miles, miles_to_km\n\n"
        "assert round(miles_to_km(10), 2) == 16.09\n"
        "assert round(km_to_miles(1.609344), 6) == 1.0, km_to_miles(1.609344)\n"
        "assert celsius_to_fahrenheit(100) == 212\n"
        'print("units ok")\n'
    ),
    "stations.csv": "station,city,temp_c\nS1,Oslo,-3\nS2,Lima,19\nS3,Cairo,27\nS4,Perth,22\n",
    "pyproject.toml": (
        '[project]\nname = "unitkit"\nversion = "0.3.1"\nrequires-python = ">=3.9"\n'
    ),
    "config.ini": "[server]\nhost = localhost\nport = 5000\n\n[cache]\nenabled = yes\nsize = 128\n",
    "docs/usage.md": "# Usage\n\nCall miles_to_km(5) to convert.\n\nFIXME: document km_to_miles\n",
    "scripts/report.py": (
        "import csv\n\n"
        "with open('stations.csv') as f:\n    rows = list(csv.DictReader(f))\n"
        "coldest = min(rows, key=lambda r: float(r['temp_c']))\n"
        "print(f\"stations: {len(rows)}, coldest: {coldest['city']}\")\n"
    ),
    "old/legacy.txt": "kept for reference\n",
    "old/notes.txt": "nothing here\n",
}


def cache_resized(ws: Path, _answer: str) -> bool:
    import configparser

    config = configparser.ConfigParser()
    try:
        config.read_string((ws / "config.ini").read_text())
        return config["cache"]["size"] == "256" and config["server"]["port"] == "5000"
    except (OSError, configparser.Error, KeyError):
        return False


def f_to_c_added(ws: Path, answer: str) -> bool:
    probe = (
        "import units as u; assert abs(u.fahrenheit_to_celsius(212) - 100) < 1e-9;"
        " assert abs(u.fahrenheit_to_celsius(32)) < 1e-9; assert round(u.miles_to_km(10), 2) == 16.09"
    )
    return passes([sys.executable, "-c", probe])(ws, answer)


def old_removed(ws: Path, _answer: str) -> bool:
    return not (ws / "old").exists() and (ws / "units.py").is_file() and (ws / "docs").is_dir()


def line_appended(ws: Path, _answer: str) -> bool:
    text = (ws / "docs" / "usage.md").read_text()
    lines = text.rstrip("\n").split("\n")
    return text.startswith(UNITS["docs/usage.md"].rstrip("\n")) and lines[-1].strip() == (
        "Oslo is the coldest station."
    )


def stations_copied(ws: Path, _answer: str) -> bool:
    copy = ws / "stations_backup.csv"
    return (
        copy.is_file()
        and copy.read_text() == UNITS["stations.csv"]
        and (ws / "stations.csv").read_text() == UNITS["stations.csv"]
    )


THIRD = [
    Task("Explain what km_to_miles in units.py does and whether it is correct.", says_any("divid", "incorrect", "wrong", "bug", "not correct", "should be", "instead of")),
    Task("Make python3 test_units.py pass.", check_kept_passing(UNITS, "test_units.py")),
    Task("What version is this project, per pyproject.toml?", says("0.3.1")),
    Task("Which city is the warmest in stations.csv?", picks(["Cairo"], ["Oslo", "Lima", "Perth"])),
    Task("How many stations are listed in stations.csv?", says("4")),
    Task("Change the cache size in config.ini to 256.", cache_resized),
    Task("Run scripts/report.py and tell me what it prints.", says("Oslo")),
    Task("Add a function fahrenheit_to_celsius(f) to units.py.", f_to_c_added),
    Task("Remove the old folder and everything in it.", old_removed),
    Task("Rename docs/usage.md to docs/guide.md", moved(UNITS, "docs/usage.md", "docs/guide.md")),
    Task("Which file has a FIXME note, and what does it say?", says("usage.md", "km_to_miles")),
    Task("What is 15% of 80?", says("12"), chat=True),
    Task("What does HTTP stand for?", says("Hypertext Transfer Protocol"), chat=True),
    Task("Create a .gitignore that ignores __pycache__ folders.", file_is(".gitignore", r"__pycache__")),
    Task("Which port does the server in config.ini listen on?", says("5000")),
    Task("Append the line 'Oslo is the coldest station.' to docs/usage.md", line_appended),
    Task("How many lines long is units.py?", says(str(UNITS["units.py"].count("\n")))),
    Task("Which functions does test_units.py test?", says("miles_to_km", "km_to_miles", "celsius_to_fahrenheit")),
    Task("Use units.py to convert 10 miles to kilometres.", says("16.09")),
    Task("Make a copy of stations.csv called stations_backup.csv", stations_copied),
]  # fmt: skip


# The fourth set: written on 2026-12-07, after the third had been looked at and its misses
# mended, and run once before anything was changed for it. Another project (a book catalogue
# package with a bug and a check, JSON data, a CSV in a folder, a log, an env file, notes).
BOOKS_JSON = [
    {"title": "Dune", "author": "Frank Herbert", "year": 1965},
    {"title": "The Hobbit", "author": "J. R. R. Tolkien", "year": 1937},
    {"title": "A Wizard of Earthsea", "author": "Ursula K. Le Guin", "year": 1968},
    {"title": "The Left Hand of Darkness", "author": "Ursula K. Le Guin", "year": 1969},
    {"title": "Foundation", "author": "Isaac Asimov", "year": 1951},
    {"title": "Brave New World", "author": "Aldous Huxley", "year": 1932},
]
BOOKS = {
    "books.json": json.dumps(BOOKS_JSON, indent=2) + "\n",
    "library/__init__.py": "",
    "library/catalog.py": (
        "import json\n\n\n"
        'def load(path="books.json"):\n    with open(path) as f:\n        return json.load(f)\n\n\n'
        "def by_author(books, author):\n"
        '    return [b["title"] for b in books if b["author"] == author]\n\n\n'
        "def oldest(books):\n"
        '    """The book published first."""\n'
        '    return max(books, key=lambda b: b["year"])\n'
    ),
    "check_catalog.py": (
        "from library.catalog import by_author, load, oldest\n\n"
        "books = load()\n"
        'assert oldest(books)["title"] == "Brave New World", oldest(books)["title"]\n'
        'assert by_author(books, "Frank Herbert") == ["Dune"]\n'
        'print("catalog ok")\n'
    ),
    "notes/meeting.md": (
        "# Meeting, 3 March\n\nStatus: draft\n\n- TODO: order more shelves\n"
        "- decided: open on Sundays\n- TODO: email the printer\n"
    ),
    "data/visits.csv": (
        "date,visitors\n2026-03-01,41\n2026-03-02,58\n2026-03-03,37\n2026-03-04,62\n2026-03-05,45\n"
    ),
    "server.log": (
        "INFO start\nWARN disk at 80%\nINFO request /\nWARN slow request /books\n"
        "ERROR timeout /search\nWARN disk at 85%\nINFO stop\n"
    ),
    "env.example": "DEBUG=1\nTIMEOUT=30\nDB_URL=sqlite:///library.db\n",
    "hello.py": (
        "import sys\n\nname = sys.argv[1] if len(sys.argv) > 1 else 'world'\n"
        "print(f'Hello, {name}!')\n"
    ),
}


def env_timeout_set(ws: Path, _answer: str) -> bool:
    lines = (ws / "env.example").read_text().split()
    return sorted(lines) == sorted(BOOKS["env.example"].replace("=30", "=60").split())


def titles_added(ws: Path, answer: str) -> bool:
    probe = (
        "from library.catalog import by_author, load, titles; books = load();"
        " assert list(titles(books)) == [b['title'] for b in books];"
        " assert by_author(books, 'Frank Herbert') == ['Dune']"
    )
    return passes([sys.executable, "-c", probe])(ws, answer)


def log_deleted(ws: Path, _answer: str) -> bool:
    return not (ws / "server.log").exists() and (ws / "books.json").is_file()


def books_backed_up(ws: Path, _answer: str) -> bool:
    copy = ws / "backup" / "books.json"
    return (
        copy.is_file()
        and copy.read_text() == BOOKS["books.json"]
        and (ws / "books.json").read_text() == BOOKS["books.json"]
    )


def status_final(ws: Path, _answer: str) -> bool:
    text = (ws / "notes" / "meeting.md").read_text()
    return "Status: final" in text and "draft" not in text and text.count("TODO") == 2


FOURTH = [
    Task("Look at oldest() in library/catalog.py. Does it do what its docstring says?", says_any("max", "newest", "most recent", "latest", "min(", "doesn't", "does not", "bug", "incorrect", "wrong")),
    Task("check_catalog.py is failing. Please fix the code so it passes.", check_kept_passing(BOOKS, "check_catalog.py")),
    Task("Who wrote Foundation, according to books.json?", says("Asimov")),
    Task("How many books in books.json came out before 1950?", says("2")),
    Task("On which date did data/visits.csv record the most visitors?", picks(["2026-03-04", "March 4", "4 March"], ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-05"])),
    Task("How many WARN lines does server.log have?", says("3")),
    Task("Change TIMEOUT in env.example to 60.", env_timeout_set),
    Task("Run hello.py with the name Ada and show me what it prints.", says("Hello, Ada")),
    Task("Add a function titles(books) to library/catalog.py that returns the titles of the given books as a list.", titles_added),
    Task("Create a file named AUTHORS containing the line Ada Lovelace", file_is("AUTHORS", r"Ada Lovelace")),
    Task("Delete server.log, I don't need it anymore.", log_deleted),
    Task("Rename hello.py to greet.py", moved(BOOKS, "hello.py", "greet.py")),
    Task("List the open TODO items in notes/meeting.md.", says("shelves", "printer")),
    Task("What is the capital of Australia?", says("Canberra"), chat=True),
    Task("What is 12 times 13?", says("156"), chat=True),
    Task("Which file defines by_author?", says("catalog.py")),
    Task("Copy books.json into a new folder called backup.", books_backed_up),
    Task("How many functions are defined in library/catalog.py?", says("3")),
    Task("In notes/meeting.md, change the status from draft to final.", status_final),
    Task("Use library/catalog.py to find the books by Ursula K. Le Guin.", says("Earthsea", "Left Hand")),
]  # fmt: skip

RECIPES_SCALE = (
    "import json\nimport sys\nfrom pathlib import Path\n\n\n"
    "def load(name):\n"
    '    return json.loads((Path("recipes") / f"{name}.json").read_text())\n\n\n'
    "def scale(ingredients, factor):\n"
    '    """Every amount multiplied by factor."""\n'
    "    return {name: amount * factor for name, amount in ingredients.items() if amount > 1}\n\n\n"
    "def main():\n"
    "    recipe = load(sys.argv[1])\n"
    "    factor = float(sys.argv[2]) if len(sys.argv) > 2 else 1\n"
    '    for name, amount in scale(recipe["ingredients"], factor).items():\n'
    '        print(f"{name}: {amount:g}")\n\n\n'
    'if __name__ == "__main__":\n    main()\n'
)
RECIPES = {
    "README.md": "# Recipes\n\nA tiny tool that scales recipes.\n\nUsage: python3 scale.py pancakes 2\n",
    "scale.py": RECIPES_SCALE,
    "test_scale.py": (
        "import unittest\n\nfrom scale import scale\n\n\n"
        "class ScaleTest(unittest.TestCase):\n"
        "    def test_doubles_every_amount(self):\n"
        '        self.assertEqual(scale({"eggs": 2, "salt_tsp": 1}, 2), {"eggs": 4, "salt_tsp": 2})\n\n'
        "    def test_one_keeps_amounts(self):\n"
        '        self.assertEqual(scale({"flour_g": 200}, 1), {"flour_g": 200})\n\n\n'
        'if __name__ == "__main__":\n    unittest.main()\n'
    ),
    "recipes/pancakes.json": json.dumps(
        {
            "name": "Pancakes",
            "serves": 4,
            "ingredients": {"flour_g": 200, "milk_ml": 300, "eggs": 2, "salt_tsp": 1},
        },
        indent=2,
    )
    + "\n",
    "recipes/omelette.json": json.dumps(
        {
            "name": "Omelette",
            "serves": 1,
            "ingredients": {"eggs": 3, "butter_g": 10, "cheese_g": 30},
        },
        indent=2,
    )
    + "\n",
    "recipes/soup.json": json.dumps(
        {
            "name": "Tomato soup",
            "serves": 6,
            "ingredients": {"tomatoes_g": 1000, "onion": 1, "stock_ml": 750},
        },
        indent=2,
    )
    + "\n",
    "config.yaml": "units: metric\nlanguage: en\nmax_servings: 12\n",
    "run.sh": '#!/bin/sh\npython3 scale.py "$@"\n',
    "CHANGELOG.md": (
        "# Changelog\n\n## 0.3.0\n- soup recipe\n- scale by any factor\n\n"
        "## 0.2.0\n- omelette recipe\n\n## 0.1.0\n- first release\n"
    ),
    "build/scale.pyc.txt": "stale build output\n",
    "build/report.txt": "built 2026-01-05\n",
}


def servings_raised(ws: Path, _answer: str) -> bool:
    return (ws / "config.yaml").read_text() == RECIPES["config.yaml"].replace("12", "20")


def licence_appended(ws: Path, _answer: str) -> bool:
    text = (ws / "README.md").read_text()
    return text.startswith(RECIPES["README.md"].rstrip("\n")) and text.rstrip().endswith(
        "Licence: MIT"
    )


def build_removed(ws: Path, _answer: str) -> bool:
    return not (ws / "build").exists() and (ws / "scale.py").read_text() == RECIPES_SCALE


def toast_written(ws: Path, _answer: str) -> bool:
    try:
        toast = json.loads((ws / "recipes" / "toast.json").read_text())
    except (OSError, ValueError):
        return False
    return toast.get("name") == "Toast" and toast.get("serves") == 1


def weight_added(ws: Path, answer: str) -> bool:
    probe = (
        "from scale import total_weight;"
        " assert total_weight({'flour_g': 200, 'eggs': 2, 'butter_g': 10}) == 210"
    )
    return passes([sys.executable, "-c", probe])(ws, answer)


def units_imperial(ws: Path, _answer: str) -> bool:
    return (ws / "config.yaml").read_text() == RECIPES["config.yaml"].replace("metric", "imperial")


def pancakes_copied(ws: Path, _answer: str) -> bool:
    copy = ws / "recipes" / "pancakes_backup.json"
    original = RECIPES["recipes/pancakes.json"]
    return (
        copy.is_file()
        and copy.read_text() == original
        and ((ws / "recipes" / "pancakes.json").read_text() == original)
    )


FIFTH = [
    Task("What does scale.py do?", says_any("scale", "multipl")),
    Task("test_scale.py fails. Fix scale.py so that the tests pass.", check_kept_passing(RECIPES, "test_scale.py")),
    Task("How many eggs go into the pancakes?", says("2")),
    Task("Which recipe serves the most people?", picks(["soup", "Tomato soup"], ["Pancakes", "Omelette"])),
    Task("Set max_servings in config.yaml to 20.", servings_raised),
    Task("Run python3 scale.py pancakes 2 and tell me how much flour it gives.", says("400")),
    Task('Create recipes/toast.json for a recipe named "Toast" that serves 1, in the same format as the other recipes.', toast_written),
    Task("What is the latest version in CHANGELOG.md?", says("0.3.0")),
    Task("Add the line 'Licence: MIT' at the end of README.md.", licence_appended),
    Task("Rename run.sh to scale.sh", moved(RECIPES, "run.sh", "scale.sh")),
    Task("Remove the build folder.", build_removed),
    Task("What is the square root of 144?", says("12"), chat=True),
    Task("How do you say 'thank you' in French?", says("merci"), chat=True),
    Task("Which recipes use eggs?", picks(["pancakes", "omelette"], ["soup", "Tomato soup"])),
    Task("How many lines long is scale.py?", says(str(RECIPES_SCALE.count("\n")))),
    Task("Add a function total_weight(ingredients) to scale.py that returns the sum of the amounts whose names end in _g.", weight_added),
    Task("Run the tests and tell me which test fails.", says("test_doubles_every_amount")),
    Task("Replace metric with imperial in config.yaml.", units_imperial),
    Task("Make a copy of recipes/pancakes.json called recipes/pancakes_backup.json.", pancakes_copied),
    Task("List the ingredients of the omelette.", says("eggs", "butter", "cheese")),
]  # fmt: skip

SETS = {
    "everyday": (FIXTURE, TASKS),
    "held-out": (SHOP, HELD_OUT),
    "third": (UNITS, THIRD),
    "fourth": (BOOKS, FOURTH),
    "fifth": (RECIPES, FIFTH),
}


@dataclass
class Outcome:
    right: bool
    verdict: str
    calls: int
    prompt_tokens: int
    generated: int
    seconds: float
    status: str


def run_task(number: int, task: Task, fixture: dict[str, str], args: argparse.Namespace) -> Outcome:
    home = Path(tempfile.gettempdir()) / f"pheron-task-{args.task_set}-{number:02d}"
    shutil.rmtree(home, ignore_errors=True)  # left by a run that was killed
    ws = home / "project"
    ws.mkdir(parents=True)
    try:
        for name, text in fixture.items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(text)
        command = [str(PHERON), "run", "--json", "--approve", "all", "--workspace", str(ws)]
        command += ["--provider", args.provider, "--model", args.model, task.prompt]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            stdout = done.stdout
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        seconds = time.perf_counter() - started
        if args.log:
            args.log.mkdir(parents=True, exist_ok=True)
            (args.log / f"task{number:02d}.jsonl").write_text(stdout)
        events = []
        for line in stdout.splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        # The turn's answer, not every answer streamed on the way: one the agent sent back
        # ("That repeats the request") is not what the user is left with, and glued to the
        # next it can hide a number ("is 30." + "30") or state one that was taken back.
        answers = [e["answer"] for e in events if e["type"] == "TurnFinished"]
        streamed = "".join(e["text"] for e in events if e["type"] == "AnswerDelta")
        answer = answers[-1] if answers else streamed
        verdicts = [e["verdict"] for e in events if e["type"] == "CriticVerdict"]
        usage = [e for e in events if e["type"] == "Usage"]
        finished = [e["status"] for e in events if e["type"] == "TurnFinished"]
        right = task.check(ws, answer)
        if args.log:
            # The check beside the events, so bench/critic_replay.py can re-judge this work.
            check_file = args.log / f"task{number:02d}.check.json"
            check_file.write_text(json.dumps({"prompt": task.prompt, "right": right}))
        return Outcome(
            right=right,
            verdict=verdicts[-1] if verdicts else "-",
            calls=sum(e["type"] == "ToolCallProposed" for e in events),
            prompt_tokens=sum(u["prompt_tokens"] - u["cached_tokens"] for u in usage),
            generated=sum(u["completion_tokens"] for u in usage),
            seconds=seconds,
            status=finished[-1] if finished else "timeout",
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="llamacpp")
    parser.add_argument("--model", default="default")
    parser.add_argument("--set", choices=sorted(SETS), default="everyday", dest="task_set")
    parser.add_argument("--only", help="task numbers to run, e.g. 1,3,7 (default: all)")
    parser.add_argument("--timeout", type=float, default=400)
    parser.add_argument("--log", type=Path, help="keep each task's --json events in this folder")
    args = parser.parse_args()
    fixture, tasks = SETS[args.task_set]
    chosen = [int(n) for n in args.only.split(",")] if args.only else range(1, len(tasks) + 1)
    print(f"{args.task_set} tasks · {args.provider} · {args.model} · {len(chosen)} of {len(tasks)}")
    print(f"{'#':>3} {'ok':>3} {'critic':>6} {'calls':>5} {'new tok':>8} {'gen':>5} {'s':>6}  task")
    outcomes = []
    for number in chosen:
        task = tasks[number - 1]
        outcome = run_task(number, task, fixture, args)
        outcomes.append(outcome)
        print(
            f"{number:>3} {'✓' if outcome.right else '✗':>3} {outcome.verdict:>6} "
            f"{outcome.calls:>5} {outcome.prompt_tokens:>8} {outcome.generated:>5} "
            f"{outcome.seconds:>6.1f}  {task.prompt[:60]}"
            + ("" if outcome.status == "finished" else f"  [{outcome.status}]"),
            flush=True,
        )
    right = sum(o.right for o in outcomes)
    judged = [o for o in outcomes if o.verdict in ("PASS", "FAIL")]
    agreed = sum((o.verdict == "PASS") == o.right for o in judged)
    total_s = sum(o.seconds for o in outcomes)
    print(f"right: {right}/{len(outcomes)} ({right / max(len(outcomes), 1):.0%})")
    print(
        f"critic agrees with the check: {agreed}/{len(judged)}"
        f" ({agreed / max(len(judged), 1):.0%}) of the runs it judged"
    )
    print(f"wall time: {total_s:.0f} s in all, {total_s / max(len(outcomes), 1):.1f} s per task")


if __name__ == "__main__":
    main()
