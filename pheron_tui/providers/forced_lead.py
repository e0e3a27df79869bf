"""The start of a reply that must call, for engines with no grammar holding it to a call.

With constraining off, ``tool_choice="required"`` would be only advice on the prompted
(legacy) format: the 1.5B model answered 3 of the first 15 BFCL ``multiple`` questions in
prose. The engine writes the call's start marker into the prompt as the start of the reply
(an assistant prefill), and ``LeadHold`` shows it only once the model goes on into a call.
"""

from __future__ import annotations

from pheron_tui.core.messages import CompletionRequest
from pheron_tui.providers.grammar import START_MARKERS, CallFormat

FORCED_LEADS: dict[CallFormat, str] = {
    "qwen_json": "<tool_call>",
    "qwen_xml": "<tool_call>",
    "legacy": "CALL",
}
"""The start markers up to where a model's own tokens break: ``CALL(read_file)`` is
``CALL``, ``(read``, ``_file``, ``)``. Started with ``CALL(``, a lone ``(`` the model never
writes, the 1.5B model wrote ``CALL( triangle_area_heron)`` for ``math.triangle_area_heron``
and ``weathers.get…`` for ``weather.get…``."""


def forced_start(fmt: CallFormat, request: CompletionRequest) -> str:
    """What a planning reply that must call starts with when no grammar holds it
    (``FORCED_LEADS``); empty for any other request."""
    if request.tools and request.purpose == "plan" and request.tool_choice == "required":
        return FORCED_LEADS[fmt]
    return ""


class LeadHold:
    """The reply's text with the lead in front, once what follows the lead makes the whole
    start marker (``CALL`` then ``(read``); a model that went on some other way (``CALL``
    then ``ING…``) has its text shown without the lead, not garbled by it."""

    def __init__(self, fmt: CallFormat, lead: str) -> None:
        self._lead = lead
        self._marker = START_MARKERS[fmt]
        self._held: str | None = lead or None
        """The lead and the text after it while undecided; None once decided."""

    def feed(self, text: str) -> str:
        if self._held is None:
            return text
        joined = self._held + text
        if len(joined) < len(self._marker) and self._marker.startswith(joined):
            self._held = joined  # "CALL" then "": not yet known
            return ""
        self._held = None
        return joined if joined.startswith(self._marker) else joined[len(self._lead) :]

    def finish(self) -> str:
        """What is still held at the end of the reply, without a lead nothing followed."""
        held, self._held = self._held, None
        return "" if held is None else held[len(self._lead) :]
