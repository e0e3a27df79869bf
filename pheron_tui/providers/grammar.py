"""Tool-call grammars (llguidance Lark) built from the ToolSpecs, one per call format.

Each grammar describes what follows the call's start marker, so reasoning and prose stay
free and only the call itself is constrained:

* ``qwen_json`` (Qwen3, Hermes): after ``<tool_call>``:
  ``\\n{"name": "NAME", "arguments": {...}}\\n</tool_call>``
* ``qwen_xml`` (Qwen3.5, Qwen3-Coder): after ``<tool_call>``:
  ``\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n…</function>\\n</tool_call>``
* ``legacy`` (the prompted format, for models without function calling): after ``CALL(``:
  ``NAME) WITH {...}``

Arguments follow each tool's JSON schema: required parameters, enum values and types, with
compact separators (a weak model otherwise pads JSON with hundreds of spaces).
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

import llguidance

from pheron_tui.core.messages import ToolSpec
from pheron_tui.core.tool_schema import repaired

CallFormat = Literal["qwen_json", "qwen_xml", "legacy"]

START_MARKERS: dict[CallFormat, str] = {
    "qwen_json": "<tool_call>",
    "qwen_xml": "<tool_call>",
    "legacy": "CALL(",
}
END_MARKER = "</tool_call>"

_COMPACT = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
MAX_CALLS = 8
"""How many calls a reply that must call may hold: as many as BFCL's parallel questions ask
for at most, and a stop for a weak model that writes call after call."""
DEFAULT_MAX_STRING = 500
DEFAULT_MAX_ITEMS = 50
"""Bounds for strings and arrays whose schema sets none. A weak model otherwise writes one
value until the token budget runs out, and a call cut off there is a malformed call (BFCL
live_simple: 1 in 5 cut off at 2,000 characters a string, none at 500). A tool that takes
longer text says so with maxLength, as write_file does."""


def _bounded(schema: Any) -> Any:
    """The schema with default bounds on every unbounded string and array inside it."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value) for key, value in schema.items()}
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds and "maxLength" not in out and "enum" not in out:
        out["maxLength"] = DEFAULT_MAX_STRING
    if "array" in kinds and "maxItems" not in out:
        out["maxItems"] = DEFAULT_MAX_ITEMS
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        # An object that lists its keys takes those keys: a weak model otherwise invents
        # its own names for them (BFCL live_simple: "wind_strength" for "windStrength").
        out["additionalProperties"] = False
    return out


def _rule_name(prefix: str, name: str) -> str:
    """A Lark rule name: lower case only (upper case would make it a terminal)."""
    return prefix + "".join(c if c.isalnum() else "_" for c in name).lower()


def _schema(schema: dict[str, Any]) -> str:
    return _json_schema({"type": "object", "properties": {}, **schema})


def _json_schema(schema: dict[str, Any]) -> str:
    """The JSON schema a ``%json`` rule holds: bounded, compact, and one that compiles. A
    schema that contradicts itself in a way ``repaired`` does not know becomes any value of
    its type, so one tool's bad schema leaves the call to it free instead of breaking the
    grammar for every tool."""
    written = json.dumps({**_bounded(repaired(schema)), "x-guidance": _COMPACT})
    if _compiles(written):
        return written
    loose = {"type": schema["type"]} if isinstance(schema.get("type"), str) else {}
    return json.dumps({**loose, "x-guidance": _COMPACT})


@functools.lru_cache(maxsize=512)
def _compiles(schema: str) -> bool:
    failed, _ = llguidance.LLMatcher.validate_grammar_with_warnings(
        f"%llguidance {{}}\nstart: %json {schema}\n"
    )
    return not failed


def _value_rule(spec: dict[str, Any]) -> str | None:
    """A Lark rule for one XML parameter value, or None for a free string."""
    if "enum" in spec:
        return " | ".join(json.dumps(str(e)) for e in spec["enum"])
    kind = spec.get("type", "string")
    if kind == "integer":
        return "/-?[0-9]{1,15}/"
    if kind == "number":
        return "/-?[0-9]{1,15}(\\.[0-9]{1,10})?/"
    if kind == "boolean":
        return '"true" | "false"'
    if kind in ("object", "array") or isinstance(kind, list):
        return "%json " + _json_schema(spec)
    return None


def body_grammar(
    fmt: CallFormat,
    tools: list[ToolSpec],
    end: str = json.dumps(END_MARKER),
    lead: str = "",
    turn_end: str = "",
    calls: int = 1,
) -> str:
    """The grammar for what follows the start marker. ``end`` is how the end marker is
    written: a string literal, or a token reference such as ``<[151658]>`` when the
    tokenizer has it as one token. ``lead`` puts the start marker itself in front (for a
    reply that must be a call), or is ``FREE_LEAD``: free text with calls in it, closed by
    ``turn_end`` (the model's end-of-turn token, as a reference such as ``<|im_end|>``).
    ``calls``: with a ``lead``, how many calls the reply may hold, one a line (a request for
    several things at once); the model may end after any of them."""
    rules: list[str] = []
    alternatives: list[str] = []
    for index, spec in enumerate(tools):
        function = spec.function
        parameters = function.parameters or {}
        rule = _rule_name(f"f{index}_", function.name)  # the index keeps lower-cased names apart
        alternatives.append(rule)
        if fmt == "legacy":
            rules.append(
                f"{rule}: {json.dumps(function.name + ') WITH ')} %json {_schema(parameters)}"
            )
        elif fmt == "qwen_json":
            head = json.dumps(f'\n{{"name": "{function.name}", "arguments": ')
            rules.append(f'{rule}: {head} %json {_schema(parameters)} "}}\\n" {end}')
        else:
            required = set(parameters.get("required", []))
            parts = []
            for number, (key, prop) in enumerate((parameters.get("properties") or {}).items()):
                part = _rule_name(f"{rule}_p{number}_", key)
                opening = json.dumps(f"<parameter={key}>\n")
                value = _value_rule(prop)
                if value is None:  # a free string, ended by the closing tag
                    most = prop.get("maxLength", DEFAULT_MAX_STRING)
                    repeat = f"{{0,{int(most)}}}"
                    rules.append(f'{part}_v[lazy]: /(.|\\n){repeat}/ "\\n</parameter>\\n"')
                    rules.append(f"{part}: {opening} {part}_v")
                else:
                    rules.append(f'{part}: {opening} ({value}) "\\n</parameter>\\n"')
                parts.append(part if key in required else f"{part}?")
            head = json.dumps(f"\n<function={function.name}>\n")
            rules.append(f'{rule}: {head} {" ".join(parts)} "</function>\\n" {end}')
    start = " | ".join(alternatives)
    if lead == FREE_LEAD:
        free = _free_or_calls(fmt, start, turn_end)
        return "%llguidance {}\n" + free + "\n".join(rules) + "\n"
    if lead:
        one = f"{lead} ({start})"
        start = f'{one} ("\\n" {one}){{0,{calls - 1}}}' if calls > 1 else one
    return "%llguidance {}\nstart: " + start + "\n" + "\n".join(rules) + "\n"


FREE_LEAD = "free"
"""``lead`` for a reply that may be prose or calls: free text, and each call in it, from its
start marker on, constrained (a tool_choice ``auto`` reply)."""


def _free_or_calls(fmt: CallFormat, calls: str, turn_end: str) -> str:
    """Text without the start marker, or calls each led by text that ends at the marker, then
    such text again, then the end of the turn. The marker cannot occur outside a call, so once
    the model writes it the call is held to the grammar (a lazy lead: it ends at the first
    marker). The end-of-turn token is named because llama.cpp does not let a model stop
    inside free text under a grammar: without it the reply runs on to ``max_tokens``."""
    marker = START_MARKERS[fmt]
    pattern = "".join(f"\\{c}" if not c.isalnum() else c for c in marker)
    return (
        f"start: (PLAIN | (call_lead call)+ PLAIN) {turn_end}\n"
        f"call: {calls}\n"
        f"PLAIN: /(.|\\n)*/ & ~/(.|\\n)*{pattern}(.|\\n)*/\n"
        f"call_lead[lazy]: /(.|\\n)*{pattern}/\n"
    )


def detect_format(template: str) -> CallFormat:
    """The call format a chat template teaches, judged from its text."""
    if "<function=" in template:
        return "qwen_xml"
    if "<tool_call>" in template:
        return "qwen_json"
    return "legacy"
