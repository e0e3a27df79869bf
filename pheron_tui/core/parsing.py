"""Reading a planning reply: CLARIFY → native tool calls → legacy CALL → final answer.

Native calls come in two Qwen forms inside ``<tool_call>…</tool_call>``: JSON
(``{"name": …, "arguments": {…}}``, Qwen3 / Hermes) and XML
(``<function=NAME><parameter=K>V</parameter></function>``, Qwen3.5 / Qwen3-Coder), whose values
are typed by the tool's JSON schema. The legacy prompted form is ``CALL(name_or_ubid) WITH {json}``
with the answer in ``<final>…</final>``.

Nothing here raises on what a model writes: a call that cannot be read becomes a ``ParsedCall``
with an ``error`` that the orchestrator turns into an observation for the model.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pheron_tui.core.model_json import json_problem, loads, raw_decode
from pheron_tui.core.safety import without_surrogates
from pheron_tui.core.think import partial_suffix

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"

# Every pattern here runs on whatever a model wrote, thousands of spaces or markers included:
# names are bounded and no two repeats can share a character, so none of them backtracks.
CLARIFY_START = "CLARIFY("
_CLARIFY_RE = re.compile(
    r"CLARIFY\(\s*+(?:\"((?:[^\"\\]|\\.)*+)\"|'((?:[^'\\]|\\.)*+)'|([^)]*+))\s*+\)", re.DOTALL
)
_TOOL_BLOCK_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION_RE = re.compile(r"<function=([^>\n]{0,200}+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER_RE = re.compile(
    r"<parameter=([^>\n]{0,200}+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL
)
# The target runs to the bracket: a name with a space in it (``CALL(l lawsuits_search)``, the
# 1.5B model) is still a call, to be named right or refused, never the answer.
_LEGACY_RE = re.compile(r"CALL\(\s*+([^)\n]{0,200}+)\)\s*+(?:WITH\s*+)?")
LEGACY_CALL_START = "CALL("
_FINAL_RE = re.compile(r"<final>(.*?)(?:</final>|\Z)", re.DOTALL)

#: Markers after which a streamed planning reply is no longer shown as answer text.
STREAM_MARKERS = (TOOL_CALL_OPEN, "<function=", LEGACY_CALL_START, CLARIFY_START, "<final>")


UNREAD_LEGACY_CALL = "not readable; a call is CALL(tool_name) WITH {json arguments}, on one line"


@dataclass
class ParsedCall:
    """One call read from a reply. ``error`` is set when it could not be read."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    form: Literal["json", "xml", "legacy", "provider"] = "json"
    error: str | None = None


@dataclass
class ParsedReply:
    kind: Literal["clarify", "tool_calls", "final"]
    text: str = ""
    """The question (clarify), the prose around the calls (tool_calls) or the answer (final)."""
    calls: list[ParsedCall] = field(default_factory=list)


def parse_clarify(text: str) -> str | None:
    """The question of the reply's first ``CLARIFY(…)``, quoted or not; one closed by nothing
    (``CLARIFY("The function has been added.</final>``, the 1.5B model, or a reply cut at its
    token limit) asks what follows its opening."""
    start = text.find(CLARIFY_START)
    if start < 0:
        return None
    match = _CLARIFY_RE.match(text, start)
    if match is None or (match.group(3) or "")[:1] in ('"', "'"):
        # No closing bracket, or a quote never closed before one inside the question.
        question = _unclosed_question(text[start + len(CLARIFY_START) :])
    else:
        double, single, bare = match.groups()
        question = double if double is not None else single if single is not None else bare
    question = question.replace('\\"', '"').replace("\\'", "'").strip()
    return question or None


def _unclosed_question(rest: str) -> str:
    question = rest.strip().removesuffix("</final>").rstrip()
    question = question[1:] if question[:1] in ('"', "'") else question
    return question[:-1] if question[-1:] in ('"', "'") else question


def _coerce(value: str, schema: Mapping[str, Any] | None) -> Any:
    """Type an XML parameter value by its JSON schema, as mlx-lm's qwen3_coder parser does."""
    kind = (schema or {}).get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if value.strip().lower() in ("null", "none") and kind != "string":
        return None
    if kind in (None, "string"):
        return value
    text = value.strip()
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            return value
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return value
        return (
            int(number) if number.is_integer() and "." not in text and "e" not in text else number
        )
    if kind == "boolean":
        lowered = text.lower()
        return True if lowered == "true" else False if lowered == "false" else value
    try:
        return loads(text)
    except ValueError:
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value


def conformed(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """A call's value in the kinds its schema declares, read the way pydantic's lax mode reads
    them: a "number" is a float (``[1, 3]`` for an array of numbers is ``[1.0, 3.0]``), a whole
    float for an "integer" an int, a numeric or true/false string the number or flag. Arrays
    and objects are walked; anything else stays as the model wrote it, for validation to judge.
    """
    if not isinstance(schema, Mapping):
        return value
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if isinstance(value, str) and kind in ("number", "integer", "boolean"):
        typed = _coerce(value, {"type": kind})
        return value if isinstance(typed, str) else conformed(typed, schema)
    if isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # more digits than a float holds: validation says so
            return value
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "array" and isinstance(value, list):
        return [conformed(item, schema.get("items")) for item in value]
    if kind == "object" and isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        return {key: conformed(item, properties.get(key)) for key, item in value.items()}
    return value


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def _parse_xml_call(body: str, schemas: Mapping[str, Mapping[str, Any]]) -> ParsedCall:
    match = _FUNCTION_RE.search(body)
    if match is None:
        return ParsedCall(name="", form="xml", error="no <function=NAME> inside <tool_call>")
    name = match.group(1).strip()
    properties = (schemas.get(name) or {}).get("properties", {})
    arguments: dict[str, Any] = {}
    for key, value in _PARAMETER_RE.findall(match.group(2)):
        key = key.strip()
        arguments[key] = _coerce(_strip_one_newline(value), properties.get(key))
    arguments, error = decode_arguments(arguments)
    if error is None and "</function>" not in body:
        error = "the call was cut off before </function>"
    return ParsedCall(name=name, arguments=arguments, form="xml", error=error)


MAX_ARGUMENT_DEPTH = 32


class _TooDeep(ValueError):
    pass


def _clean(value: Any, depth: int = 0) -> Any:
    """Arguments fit to pass on: no lone surrogates (they cannot be written as UTF-8 to a log,
    a file or a terminal), and no nesting deeper than anything a tool takes."""
    if depth > MAX_ARGUMENT_DEPTH:
        raise _TooDeep(f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep")
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {without_surrogates(str(k)): _clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v, depth + 1) for v in value]
    return value


def decode_arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    """Arguments may arrive as an object or as a JSON string holding one."""
    if value is None:
        return {}, None
    if isinstance(value, str):
        try:
            value = loads(value) if value.strip() else {}
        except ValueError as exc:
            return {}, f"arguments are not valid JSON ({json_problem(exc)})"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, not {type(value).__name__}"
    try:
        return _clean(value), None
    except _TooDeep as exc:
        return {}, str(exc)


def _parse_json_call(body: str) -> ParsedCall:
    text = body.strip()
    try:
        data = loads(text)
    except ValueError as exc:
        return ParsedCall(
            name=_guess_name(text),
            form="json",
            error=f"the call is not valid JSON ({json_problem(exc)})",
        )
    if not isinstance(data, dict):
        return ParsedCall(name="", form="json", error="the call must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return ParsedCall(name="", form="json", error='the call has no "name"')
    arguments, error = decode_arguments(data.get("arguments", data.get("parameters")))
    return ParsedCall(name=name, arguments=arguments, form="json", error=error)


def _guess_name(text: str) -> str:
    match = re.search(r'"name"\s*:\s*"([^"]*)"', text)
    return match.group(1) if match else ""


MAX_CALLS_READ = 32
"""A reply's calls past this many are not read: a reply that loops on a call would otherwise
ask for one approval after another (and cost a pass over the rest of the reply each)."""


def parse_native_calls(
    text: str, schemas: Mapping[str, Mapping[str, Any]] | None = None
) -> list[ParsedCall]:
    """Every ``<tool_call>`` block in order, JSON or XML; an unclosed last block is an error."""
    schemas = schemas or {}
    calls: list[ParsedCall] = []
    for match in itertools.islice(_TOOL_BLOCK_RE.finditer(text), MAX_CALLS_READ):
        body = match.group(1)
        closed = match.group(0).endswith(TOOL_CALL_CLOSE)
        call = _parse_xml_call(body, schemas) if "<function=" in body else _parse_json_call(body)
        if not closed and call.error is None:
            call.error = "the call was cut off before </tool_call>"
        calls.append(call)
    if not calls and "<function=" in text:
        # Some models drop the <tool_call> wrapper around the XML form.
        calls.append(_parse_xml_call(text, schemas))
    return calls


MAX_BARE_CANDIDATES = 20


def parse_bare_calls(text: str, tools: Mapping[str, Any]) -> tuple[list[ParsedCall], int]:
    """JSON objects naming a real tool with object arguments, bare or in a code fence
    (``{"name": "read_file", "arguments": {"path": "calc.py"}}``): small models asked for
    ``<tool_call>`` often write just that. Returns the calls and where the first one starts.
    Nothing else counts, so JSON that merely mentions a tool stays text."""
    calls: list[ParsedCall] = []
    first = len(text)
    position = 0
    for _ in range(MAX_BARE_CANDIDATES):
        start = text.find("{", position)
        if start < 0:
            break
        try:
            value, end = raw_decode(text[start:])
        except ValueError:
            position = start + 1
            continue
        position = start + end
        if not isinstance(value, dict) or value.get("name") not in tools:
            continue
        raw_arguments = value.get("arguments", value.get("parameters", {}))
        if isinstance(raw_arguments, str):
            try:
                raw_arguments = loads(raw_arguments)
            except ValueError:
                continue
        if not isinstance(raw_arguments, dict):
            continue
        arguments, error = decode_arguments(raw_arguments)
        calls.append(ParsedCall(name=value["name"], arguments=arguments, form="json", error=error))
        fence = text.rfind("```", 0, start)
        opens_here = fence >= 0 and not text[fence + 3 : start].strip(
            " \t\nabcdefghijklmnopqrstuvwxyz"
        )
        first = min(first, fence if opens_here else start)
    return calls, first


_AS_LISTED = re.compile(r"([^\s\[\]]{1,200}+)[ \t]*+\[U[0-9A-F]{6}\](?::.*)?", re.DOTALL)
"""A tool's line as the legacy prompt lists it, ``name [UBID]: what it does``: the 0.5B model,
unconstrained, copies it into ``CALL(…)`` (7 of 200 BFCL multiple cases)."""


def parse_legacy_calls(text: str) -> list[ParsedCall]:
    """``CALL(name_or_ubid) WITH {json}``; the target may be in brackets, or the tool's line
    as the prompt lists it."""
    calls: list[ParsedCall] = []
    for match in itertools.islice(_LEGACY_RE.finditer(text), MAX_CALLS_READ):
        written = match.group(1).strip()
        listed = _AS_LISTED.fullmatch(written)
        target = listed.group(1) if listed else written.strip(" \t[]\"'")
        rest = text[match.end() :].lstrip()
        if not target:
            calls.append(ParsedCall(name="", form="legacy", error="CALL() names no tool"))
            continue
        if not rest.startswith("{"):
            calls.append(
                ParsedCall(
                    name=target,
                    form="legacy",
                    error="CALL(...) must be followed by WITH {json arguments}",
                )
            )
            continue
        try:
            arguments, _ = raw_decode(rest)
        except ValueError as exc:
            if (closed := _closed_before_marker(rest)) is not None:
                arguments = closed
            else:
                calls.append(
                    ParsedCall(
                        name=target,
                        form="legacy",
                        error=f"arguments are not valid JSON ({json_problem(exc)})",
                    )
                )
                continue
        decoded, error = decode_arguments(arguments)
        calls.append(ParsedCall(name=target, arguments=decoded, form="legacy", error=error))
    return calls


_AFTER_A_CALL = re.compile(r"\}\s*(?:<final>|<tool_call>|CALL\(|CLARIFY\()")


def _closed_before_marker(rest: str) -> dict[str, Any] | None:
    """The arguments of a call whose last string was never closed, when a reply marker comes
    right after its brace: ``{"old": "…", "new": "return sum(numbers) / len(numbers)} <final>``
    (the 1.5B model, three times in a row). Closing the string there reads what was meant; a
    brace inside a value followed by anything else is not taken for the end."""
    for end in itertools.islice(_AFTER_A_CALL.finditer(rest), 4):  # not every "}" of a flood
        try:
            value, used = raw_decode(rest[: end.start()] + '"}')
        except ValueError:
            continue
        if isinstance(value, dict) and used == end.start() + 2:
            return value
    return None


def distinct_calls(calls: list[ParsedCall]) -> list[ParsedCall]:
    """The calls in order, each only once: a small model making several calls in one reply
    may write the same one twice, and running it twice tells nobody anything new."""
    seen: set[str] = set()
    kept = []
    for call in calls:
        key = json.dumps([call.name, call.arguments, call.error], sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(call)
    return kept


NAMESPACE_SEPARATORS = (".", "__")
"""Between a tool's namespace and its own name: ``maps.shortest_path``, an MCP server's
``git__git_status``."""


def known_name(name: str, names: Iterable[str]) -> str:
    """``name`` as the one tool of ``names`` it means spells it: the one that differs from it
    in case only (the 1.5B model, its reply started for it with a lone ``(``, went on in
    capitals: ``CALL(READ_FILE)``), else the one whose own name it is without the namespace
    (unconstrained, the same model wrote ``shortest_path`` for ``maps.shortest_path`` and
    ``biot_savart_law`` for ``electromagnetism.biot_savart_law``), else the one it is
    spelt like (``emagnetic_force`` for ``electromagnetic_force``, the same model).
    ``name`` itself where none or several fit: a call is never sent to a tool guessed among
    two."""
    folded = name.casefold()
    ends = tuple(separator + folded for separator in NAMESPACE_SEPARATORS)
    known = list(names)
    for fits in (
        lambda k: k.casefold() == folded,
        lambda k: k.casefold().endswith(ends),
        lambda k: _spelt_alike(folded, k.casefold()),
    ):
        matches = [k for k in known if fits(k)]
        if matches:
            return matches[0] if len(matches) == 1 else name
    return name


SPELT_ALIKE = 0.8
"""How alike (``difflib``'s ratio) a name must be to a tool's to be taken for it misspelt:
``emagnetic_force`` for ``electromagnetic_force`` is 0.83, ``read_files`` for ``read_file``
0.95; ``delete_files`` is not ``delete_path`` (0.61), ``list_directory`` not ``list_dir``
(0.73)."""


def _spelt_alike(name: str, tool: str) -> bool:
    matcher = difflib.SequenceMatcher(None, name, tool)
    return matcher.real_quick_ratio() >= SPELT_ALIKE and matcher.ratio() >= SPELT_ALIKE


def typed_calls(
    calls: list[ParsedCall], schemas: Mapping[str, Mapping[str, Any]] | None
) -> list[ParsedCall]:
    """The calls, each naming its tool as the tool is spelt (``known_name``) and its arguments
    ``conformed`` to the tool's parameters."""
    for call in calls:
        if schemas and call.name and call.name not in schemas:
            call.name = known_name(call.name, schemas)
        if call.error is None and schemas and call.name in schemas:
            call.arguments = conformed(call.arguments, {"type": "object", **schemas[call.name]})
    return calls


def parse_reply(text: str, schemas: Mapping[str, Mapping[str, Any]] | None = None) -> ParsedReply:
    """Classify a planning reply (think text already removed): a CLARIFY question first, then
    native calls, then legacy calls, else the text is the final answer."""
    question = parse_clarify(text)
    if question is not None:
        return ParsedReply(kind="clarify", text=question)
    calls = parse_native_calls(text, schemas)
    if not calls:
        calls = parse_legacy_calls(text)
    if calls:
        return ParsedReply(
            kind="tool_calls", text=prose_before_markers(text), calls=typed_calls(calls, schemas)
        )
    bare, start = parse_bare_calls(text, schemas or {})
    if bare:
        return ParsedReply(
            kind="tool_calls", text=text[:start].strip(), calls=typed_calls(bare, schemas)
        )
    if text.lstrip().startswith(LEGACY_CALL_START):
        # A reply that opens a call it never closes is a call that could not be read, not an
        # answer to show with its markup.
        unread = ParsedCall(name="", form="legacy", error=UNREAD_LEGACY_CALL)
        return ParsedReply(kind="tool_calls", calls=[unread])
    final = _FINAL_RE.search(text)
    if final is not None:
        return ParsedReply(kind="final", text=final.group(1).strip())
    return ParsedReply(kind="final", text=text.strip())


def prose_before_markers(text: str) -> str:
    cut = min((i for i in (text.find(m) for m in STREAM_MARKERS) if i >= 0), default=len(text))
    return text[:cut].strip()


_BARE_CALL_START = re.compile(r"^[ \t]*+(?:```[\w-]{0,20}+[ \t]*+\n[ \t]*+)?\{", re.MULTILINE)
"""Where a bare JSON call may start: a ``{`` opening a line, or the code fence above it."""
_BARE_CALL_PREFIX = re.compile(r"(?:^|\n)([ \t]*+(?:`{1,3}+[\w-]{0,20}+[ \t]*+(?:\n[ \t]*+)?)?)\Z")
"""The end of a text that may still grow into ``_BARE_CALL_START`` (group 1)."""


class MarkupHold:
    """Streams a planning reply's prose while holding back everything from the first marker on.

    The chat pane shows what the model says before a tool call ("Let me look at the files"),
    never the call's markup. Text that might be the start of a marker is held until it is known.
    Given the tools, a line opening with ``{`` (or a code fence and then one) is held to the
    end of the reply, then shown unless it is a bare JSON call of one of them
    (``parse_bare_calls``): small models write their calls so.
    """

    def __init__(self, tools: Mapping[str, Any] | None = None) -> None:
        self._tools = tools or {}
        self._held = ""
        self._maybe_call = False  # holding from a line that opens with "{" to the end
        self._line_start = True  # the text shown so far ends where a line starts
        self.stopped = False

    def feed(self, text: str) -> str:
        if self.stopped:
            return ""
        if self._maybe_call:
            self._held += text
            self._stop_at_marker(len(text))
            return ""
        if not self._held and "<" not in text and "C" not in text and not self._tools:
            return text
        buf = self._held + text
        cut = min((i for i in (buf.find(m) for m in STREAM_MARKERS) if i >= 0), default=-1)
        bare = self._bare_start(buf, len(buf) if cut < 0 else cut)
        if bare is not None:
            self._maybe_call = True
            self._held = buf[bare:]
            self._stop_at_marker(len(self._held))
            return self._shown(buf[:bare])
        if cut >= 0:
            self.stopped = True
            self._held = ""
            return buf[:cut]
        keep = partial_suffix(buf, *STREAM_MARKERS)
        if self._tools:
            tail = _BARE_CALL_PREFIX.search(buf, max(len(buf) - 64, 0))
            if tail is not None and tail.group(1) and (tail.start(1) > 0 or self._line_start):
                keep = max(keep, len(buf) - tail.start(1))
        self._held = buf[len(buf) - keep :]
        return self._shown(buf[: len(buf) - keep])

    def finish(self) -> str:
        held, self._held = self._held, ""
        if self._maybe_call:
            calls, first = parse_bare_calls(held, self._tools)
            return held[:first].rstrip(" \t") if calls else held
        return "" if self.stopped else held

    def _bare_start(self, buf: str, before: int) -> int | None:
        if not self._tools:
            return None
        for match in _BARE_CALL_START.finditer(buf, 0, before + 1):
            if match.start() > 0 or self._line_start:
                return match.start()
        return None

    def _stop_at_marker(self, new: int) -> None:
        """Past a held bare call, a marker ends what may be shown: it is held no further."""
        longest = max(len(marker) for marker in STREAM_MARKERS)
        start = max(len(self._held) - new - longest, 0)
        found = (self._held.find(m, start) for m in STREAM_MARKERS)
        cut = min((i for i in found if i >= 0), default=-1)
        if cut >= 0:
            self._held = self._held[:cut]
            self.stopped = True

    def _shown(self, text: str) -> str:
        if text:
            self._line_start = text.endswith("\n")
        return text
