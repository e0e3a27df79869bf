"""Stop strings on engines that generate token by token (MLX, the scripted provider)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.providers.stop_strings import StopStrings


@given(
    st.lists(st.sampled_from(["CALL(x)", "\n", "<", "tool", "_out", "put", "<tool_output", "a"]))
)
def test_text_up_to_the_first_stop_string_however_it_is_split(pieces: list[str]) -> None:
    stops = StopStrings(["<tool_output"])
    shown = "".join(stops.feed(piece) for piece in pieces) + stops.finish()
    whole = "".join(pieces)
    cut = whole.find("<tool_output")
    assert shown == (whole if cut == -1 else whole[:cut])


async def test_a_scripted_reply_ends_before_a_stop_string() -> None:
    from pheron_tui.core.messages import CompletionRequest, Message, TextChunk
    from pheron_tui.providers.scripted import Script, ScriptedProvider

    provider = ScriptedProvider(
        Script(replies={"plan": [["CALL(a) WITH {}\n<tool_", 'output tool="a">guess']]})
    )
    request = CompletionRequest(
        messages=[Message(role="user", content="x")], purpose="plan", stop=["<tool_output"]
    )
    texts = [c.text async for c in provider.stream(request) if isinstance(c, TextChunk)]
    assert "".join(texts) == "CALL(a) WITH {}\n"
