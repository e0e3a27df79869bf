"""Intent: what the classifier reads of a message."""

from __future__ import annotations

from pheron_tui.core.intent import classify_request


def test_a_long_message_is_classified_from_its_start_and_end() -> None:
    pasted = "x " * 20_000
    text = "Please fix the failing test in calc.py.\n" + pasted + "\nThanks, run pytest after."
    shown = classify_request(text).messages[-1].content
    assert len(shown) < 2_100 and shown.startswith("Please fix") and shown.endswith("pytest after.")
    assert classify_request("short one").messages[-1].content == "short one"
