"""ThinkGuard: think text and answer text from a stream split anywhere."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.core.think import Kind, ThinkGuard


def split_stream(chunks: list[str], starts_in_think: bool = False) -> tuple[str, str]:
    """Run a whole chunked stream through a guard; returns (think, answer)."""
    guard = ThinkGuard(starts_in_think=starts_in_think)
    parts: dict[Kind, list[str]] = {"think": [], "answer": []}
    for chunk in chunks:
        for kind, text in guard.feed(chunk):
            parts[kind].append(text)
    for kind, text in guard.finish():
        parts[kind].append(text)
    return "".join(parts["think"]), "".join(parts["answer"])


TAGGED = "Before <think>step one\nstep two</think>\n\nThe answer is 42."


def chunkings(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    pieces, last = [], 0
    for point in points:
        pieces.append(text[last:point])
        last = point
    pieces.append(text[last:])
    return pieces


@pytest.mark.parametrize("cut", range(1, len(TAGGED)))
def test_every_single_split_gives_the_same_result(cut: int) -> None:
    think, answer = split_stream([TAGGED[:cut], TAGGED[cut:]])
    assert think == "step one\nstep two"
    assert answer == "Before The answer is 42."


@pytest.mark.parametrize("cut", range(1, len(TAGGED)))
def test_every_split_into_three_around_the_cut(cut: int) -> None:
    pieces = chunkings(TAGGED, [cut, cut + 1, cut + 3])
    assert split_stream(pieces) == ("step one\nstep two", "Before The answer is 42.")


def test_one_character_at_a_time() -> None:
    assert split_stream(list(TAGGED)) == ("step one\nstep two", "Before The answer is 42.")


def test_text_on_both_sides_of_tags_in_one_chunk_is_kept() -> None:
    think, answer = split_stream(["intro <think>why</think> outro"])
    assert think == "why"
    assert answer == "intro outro"


def test_prompt_that_opened_think_block() -> None:
    think, answer = split_stream(["reasoning ", "more</thi", "nk>\n\nfinal"], starts_in_think=True)
    assert (think, answer) == ("reasoning more", "final")


def test_lone_close_tag_at_start_is_treated_as_opened_by_the_prompt() -> None:
    assert split_stream(["reasoning</think>answer"]) == ("reasoning", "answer")


def test_unclosed_think_block_at_end_stays_think() -> None:
    guard = ThinkGuard()
    out = guard.feed("<think>still going") + guard.finish()
    assert out == [("think", "still going")]
    assert guard.in_think


def test_partial_tag_at_end_of_stream_is_answer_text() -> None:
    assert split_stream(["x < y and <thi"]) == ("", "x < y and <thi")


def test_angle_brackets_that_are_not_tags_pass_through() -> None:
    assert split_stream(["a <b> c </b> <thinking>"]) == ("", "a <b> c </b> <thinking>")


def test_plain_thinking_process_style_streams_think_then_answer() -> None:
    text = "Thinking Process:\n1. The user asks for a capital.\n2. It is Paris.\n\nFinal Answer: Paris."
    for cut in range(1, len(text)):
        think, answer = split_stream([text[:cut], text[cut:]])
        assert answer == "Paris.", cut
        assert think.startswith("1. The user asks") and "It is Paris." in think


def test_plain_style_with_markdown_markers() -> None:
    think, answer = split_stream(["**Thinking Process:**\n- a\n\n**Final Answer:** done"])
    assert answer == "done"
    assert "- a" in think


def test_a_reply_that_merely_starts_with_thin_is_answer() -> None:
    assert split_stream(["Thin", "gs to do"]) == ("", "Things to do")


@given(
    before=st.text(alphabet="ab <>/\n", max_size=20),
    inner=st.text(alphabet="xy <>\n", max_size=20),
    after=st.text(alphabet="cd <>/\n", max_size=20),
    cuts=st.lists(st.integers(0, 80), max_size=8),
)
def test_random_chunkings_agree_with_the_unchunked_stream(
    before: str, inner: str, after: str, cuts: list[int]
) -> None:
    text = f"{before}<think>{inner}</think>{after}"
    assert split_stream(chunkings(text, cuts)) == split_stream([text])


@given(st.lists(st.text(max_size=30), max_size=12), st.booleans())
def test_garbage_never_raises_and_nothing_is_invented(chunks: list[str], opened: bool) -> None:
    think, answer = split_stream(chunks, starts_in_think=opened)
    total = "".join(chunks)
    assert len(think) + len(answer) <= len(total)
