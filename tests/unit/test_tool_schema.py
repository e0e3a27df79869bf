"""Tool schemas that contradict themselves, read as their authors meant them."""

from __future__ import annotations

from types import SimpleNamespace

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.core.tool_schema import repaired
from pheron_tui.core.tools import ToolCallError
from pheron_tui.tools.mcp import McpTool

# As BFCL's live tools write them (from real API descriptions): the options on the array.
SENSORS = {
    "type": "object",
    "properties": {
        "metrics": {
            "type": "array",
            "items": {"type": "string"},
            "enum": ["temperature", "humidity", "co2"],
        },
        "adults": {"type": "integer", "enum": ["1", "2", "3"]},
        "free_entry": {"type": "boolean", "enum": ["True", "False", "dontcare"]},
    },
    "required": ["metrics"],
}


def test_options_put_on_an_array_become_the_options_of_its_items() -> None:
    fixed = repaired(SENSORS)["properties"]["metrics"]
    assert "enum" not in fixed
    assert fixed["items"] == {"type": "string", "enum": ["temperature", "humidity", "co2"]}
    jsonschema.validate({"metrics": ["temperature", "co2"]}, repaired(SENSORS))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"metrics": ["rainfall"]}, repaired(SENSORS))
    # Read literally, no value at all was valid.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"metrics": ["temperature"]}, SENSORS)


def test_options_written_in_another_type_take_the_declared_one_or_stand_alone() -> None:
    properties = repaired(SENSORS)["properties"]
    assert properties["adults"] == {"type": "integer", "enum": [1, 2, 3]}
    # "dontcare" is no boolean: the options are what the tool takes, the type goes.
    assert properties["free_entry"] == {"enum": ["True", "False", "dontcare"]}
    jsonschema.validate({"metrics": [], "adults": 2, "free_entry": "dontcare"}, repaired(SENSORS))


def test_an_mcp_tool_with_such_a_schema_takes_the_values_its_server_takes() -> None:
    server = SimpleNamespace(spec=SimpleNamespace(name="meraki"))
    definition = SimpleNamespace(
        name="readings", description="Latest readings", input_schema=SENSORS
    )
    tool = McpTool(server, definition)  # type: ignore[arg-type]
    tool.validate({"metrics": ["humidity"], "adults": 2})
    with pytest.raises(ToolCallError, match="metrics"):
        tool.validate({"metrics": ["rainfall"]})


_SCALAR = st.sampled_from(
    [
        {"type": "string", "enum": ["a", "b"]},
        {"type": "integer", "enum": [1, 2]},
        {"type": "number", "enum": [0.5, 2]},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string", "enum": ["x"]}},
        {"type": "array", "enum": [["x"], ["y", "z"]]},
    ]
)


@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=4), _SCALAR, max_size=4))
def test_a_schema_that_says_what_it_means_is_left_as_written(properties: dict) -> None:
    schema = {"type": "object", "properties": properties, "required": sorted(properties)[:1]}
    assert repaired(schema) == schema


def test_a_required_key_the_schema_does_not_describe_takes_any_value() -> None:
    sloppy = {"type": "object", "properties": {"b": None}, "required": ["a"]}
    assert repaired(sloppy)["properties"] == {"b": {}, "a": {}}
    jsonschema.validate({"a": 5, "b": "x"}, repaired(sloppy))
