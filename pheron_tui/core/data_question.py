"""A question that counts, adds up or compares the records of a data file of the workspace.

Asked "How many books in books.json came out before 1950?", the 1.5B model read the file and
said 3 (there are 2); asked on which date visits.csv recorded the most visitors, it named the
first row's. Python counts right: such a question is answered by running a line of Python
over the file, and the agent says how before the first step, with the file's fields, so the
line the model writes names them as the file has them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from pheron_tui.core.intent import named_entries
from pheron_tui.core.workspace_text import workspace_text

_AGGREGATE = re.compile(
    r"\b(?:how\s+many|how\s+much|count|number\s+of|total|sum|average|mean|median"
    r"|most|least|fewest|max(?:imum)?|min(?:imum)?|highest|lowest|largest|smallest|biggest"
    r"|greatest|warmest|coldest|hottest|busiest|oldest|newest|earliest|latest|longest"
    r"|shortest|cheapest|dearest|top\s+\d+)\b",
    re.IGNORECASE,
)
_DATA_SUFFIXES = (".json", ".csv", ".tsv")
DATA_LIMIT = 1_000_000
"""Bytes, at most, of a data file read to describe it."""
MOST_FIELDS = 12
FIELD_CHARS = 40
MOST_CHARS = 1000
"""Longer than this, a message is no one question over a file (and is not read)."""


def data_question_hint(text: str, workspace: Path) -> str:
    """How to work out the answer to a question that counts or compares over a data file the
    message names (JSON records, CSV or TSV rows), with Python, or "" when the message asks
    no such thing or names no such file."""
    if len(text) > MOST_CHARS or _AGGREGATE.search(text) is None:
        return ""
    # Named as a file: "How many books are in nowhere.json?" is not about books.json.
    for name in named_entries(text, workspace, by_words=False):
        if name.endswith(_DATA_SUFFIXES) and re.fullmatch(r"[\w./-]+", name):
            described = _described(workspace, name)
            if described:
                return described
    # A folder of JSON files, one record each, named by its name or a word ("Which recipe
    # serves the most people?" beside recipes/): the 1.5B model listed it and answered
    # "There are 3 recipes".
    for name in named_entries(text, workspace):
        if re.fullmatch(r"[\w./-]+", name) and (workspace / name).is_dir():
            described = _folder_described(workspace, name)
            if described:
                return described
    return ""


FOLDER_RECORDS = 200
"""JSON files, at most, in a folder described as records."""


def _folder_described(workspace: Path, name: str) -> str:
    """A folder whose JSON files (two or more, directly in it) each hold one object."""
    try:
        files = sorted(p for p in (workspace / name).glob("*.json") if p.is_file())
    except OSError:
        return ""
    if not 2 <= len(files) <= FOLDER_RECORDS:
        return ""
    records: list[dict[str, object]] = []
    for file in files:
        text = workspace_text(workspace, file.relative_to(workspace).as_posix(), DATA_LIMIT)
        try:
            data = json.loads(text) if text is not None else None
        except (ValueError, RecursionError):
            return ""
        if not isinstance(data, dict):
            return ""
        records.append(data)
    keys = list(dict.fromkeys(str(key) for record in records for key in record))
    load = (
        "import json, pathlib; records = [json.loads(p.read_text()) for p in "
        f"sorted(pathlib.Path('{name}').glob('*.json'))]; answer = ...; print(answer)"
    )
    shape = (
        f"{name} holds {len(files)} JSON files, each an object with the keys {_fields(keys)} "
        "(`records` holds them, in file-name order)"
    )
    return _hint(shape, load)


def _described(workspace: Path, name: str) -> str:
    text = workspace_text(workspace, name, DATA_LIMIT)
    if text is None:
        return ""
    if name.endswith(".json"):
        return _json_hint(name, text)
    return _table_hint(name, text, "\t" if name.endswith(".tsv") else ",")


def _fields(names: list[str]) -> str:
    shown = [repr(str(n)[:FIELD_CHARS]) for n in names[:MOST_FIELDS]]
    more = ", …" if len(names) > MOST_FIELDS else ""
    return ", ".join(shown) + more


def _json_hint(name: str, text: str) -> str:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    load = f"import json; data = json.load(open('{name}')); answer = ...; print(answer)"
    if _records(data):
        return _hint(f"{name} holds a list of {_described_records(data)}", load)
    # {"books": [...]}: the records under one key.
    if isinstance(data, dict):
        key = next((k for k, v in data.items() if _records(v)), None)
        if key is not None:
            where = repr(str(key)[:FIELD_CHARS])
            return _hint(
                f"{name} holds an object whose {where} is a list of "
                f"{_described_records(data[key])}",
                load,
            )
    # A settings object or a list of values is read, not counted over.
    return ""


def _records(data: object) -> bool:
    return isinstance(data, list) and bool(data) and all(isinstance(i, dict) for i in data)


def _described_records(records: list[dict[str, object]]) -> str:
    keys = list(dict.fromkeys(str(key) for item in records for key in item))
    many = "records, each" if len(records) > 1 else "record,"
    return f"{len(records)} {many} with the keys {_fields(keys)}"


def _table_hint(name: str, text: str, delimiter: str) -> str:
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error:
        return ""
    rows = [row for row in rows if row]
    if len(rows) < 2:
        return ""
    header, count = rows[0], len(rows) - 1
    many = "rows" if count > 1 else "row"
    tab = ", delimiter='\\t'" if delimiter == "\t" else ""
    reader = f"rows = list(csv.DictReader(open('{name}'){tab}))"
    load = f"import csv; {reader}; answer = ...; print(answer)"
    shape = (
        f"{name} has {count} {many} under the header {_fields(header)} (`rows` holds those "
        f"{count} and not the header; csv gives every value as text: convert numbers with "
        "int() or float() before comparing or adding them)"
    )
    return _hint(shape, load)


def _hint(shape: str, load: str) -> str:
    # The answer is named before it is printed: shown ``print(...)``, the 1.5B model wrote
    # ``print(max(rows, key=…)['name']`` and left print's parenthesis open, twice.
    return (
        f"{shape}. Work the answer out with Python rather than by reading: run shell_exec with "
        f'python3 -c "{load}", the expression that computes what was asked in place of the '
        "dots, then answer from what it prints."
    )
