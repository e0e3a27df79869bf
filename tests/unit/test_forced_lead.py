"""The lead of a reply that must call, put back in front of what the model wrote after it,
and only where the model went on into a call."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.core.messages import CompletionRequest, Message, ToolSpec
from pheron_tui.core.parsing import parse_reply
from pheron_tui.providers.forced_lead import LeadHold, forced_start
from pheron_tui.tools.builtin import default_registry

TOOLS: list[ToolSpec] = default_registry().specs()


def shown(fmt, lead: str, pieces: list[str]) -> str:
    hold = LeadHold(fmt, lead)
    return "".join(hold.feed(piece) for piece in pieces) + hold.finish()


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_a_reply_that_goes_on_into_a_call_is_that_call_however_it_streams(cuts) -> None:
    after = '(read_file) WITH {"path": "notes.md"}'
    text = shown("legacy", "CALL", split(after, cuts))
    [call] = parse_reply(text, default_registry().schemas()).calls
    assert (call.name, call.arguments, call.error) == ("read_file", {"path": "notes.md"}, None)


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_a_reply_that_goes_another_way_is_shown_without_the_lead(cuts) -> None:
    after = "ING the function is not needed: 4."
    assert shown("legacy", "CALL", split(after, cuts)) == after
    assert shown("legacy", "CALL", []) == ""


def test_a_native_lead_is_the_whole_marker_and_stays() -> None:
    body = '\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>'
    text = shown("qwen_json", "<tool_call>", [body])
    assert parse_reply(text, default_registry().schemas()).calls[0].name == "list_dir"


def test_no_lead_passes_the_text_through() -> None:
    assert shown("legacy", "", ["CAL", "L me later"]) == "CALL me later"


def test_only_a_planning_step_that_must_call_is_led() -> None:
    def request(**kw) -> CompletionRequest:
        fields = {"tools": TOOLS, "purpose": "plan", "tool_choice": "required", **kw}
        return CompletionRequest(messages=[Message(role="user", content="hi")], **fields)

    assert forced_start("legacy", request()) == "CALL"
    assert forced_start("qwen_json", request()) == "<tool_call>"
    for other in ({"tool_choice": "auto"}, {"purpose": "critic"}, {"tools": []}):
        assert forced_start("legacy", request(**other)) == ""
