"""Tool schemas that contradict themselves, read the way their authors meant them.

Schemas written by hand for an MCP server say things no value satisfies: an ``enum`` put on
an array instead of on its items (``"metrics": {"type": "array", "items": {"type":
"string"}, "enum": ["temperature", "humidity"]}``), an "integer" whose options are the
strings "1" to "9", a "boolean" whose options are "True", "False" and "dontcare". Taken
literally, every call is invalid, and a grammar built from the schema does not compile
(llguidance: "Unsatisfiable schema"), so a required argument cannot be written and the call
goes unconstrained. BFCL's live categories hold such tools in 79 of 2,195 cases.
"""

from __future__ import annotations

from typing import Any

from pheron_tui.core.parsing import conformed

_SCALARS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}
_NESTED = ("items", "additionalProperties", "not")
_NESTED_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_NESTED_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def repaired(schema: Any) -> Any:
    """``schema`` with every self-contradicting ``enum`` made satisfiable: an array's options
    moved to its items, a scalar's options given its type ("1" for an integer is 1, "True"
    for a boolean is true) or, where some option cannot be ("dontcare"), the options kept
    and the type dropped (the listed options are what the tool takes); a required key the
    schema does not describe, or describes with no schema, takes any value. Anything else is
    left as written."""
    if isinstance(schema, list):
        return [repaired(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _NESTED:
        if isinstance(out.get(key), dict):
            out[key] = repaired(out[key])
    for key in _NESTED_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [repaired(item) for item in out[key]]
    for key in _NESTED_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: repaired(item) for name, item in out[key].items()}
    properties, required = out.get("properties"), out.get("required")
    if isinstance(properties, dict) and isinstance(required, list):
        # A required key the schema does not describe takes any value (not none at all).
        missing = [k for k in required if isinstance(k, str) and k not in properties]
        out["properties"] = {**properties, **{key: {} for key in missing}}
    if isinstance(properties, dict):
        # So does a key described by something that is no schema (null, a number).
        described = out["properties"].items()
        out["properties"] = {k: v if isinstance(v, dict | bool) else {} for k, v in described}
    options = out.get("enum")
    kind = out.get("type")
    if not isinstance(options, list) or not isinstance(kind, str):
        return out
    if kind == "array" and not all(isinstance(option, list) for option in options):
        items = out.get("items")
        items = items if isinstance(items, dict) else {}
        del out["enum"]
        if "enum" not in items:
            out["items"] = repaired({**items, "enum": options})
        return out
    if kind in _SCALARS and not all(_is_a(option, kind) for option in options):
        typed = [_typed(option, kind) for option in options]
        if all(_is_a(option, kind) for option in typed):
            out["enum"] = list(dict.fromkeys(typed))
        else:
            del out["type"]
    return out


def _is_a(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, _SCALARS[kind])


def _typed(value: Any, kind: str) -> Any:
    if kind == "string":
        return value if isinstance(value, str) or value is None else str(value)
    return conformed(value, {"type": kind})
