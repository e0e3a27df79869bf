"""Stop strings for engines that generate token by token: text up to the first one, never
the string itself, and nothing held back longer than a stop string could still be forming."""

from __future__ import annotations


class StopStrings:
    def __init__(self, stops: list[str]) -> None:
        self.stops = [s for s in stops if s]
        self._held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """The text that may be shown now; after a stop string, nothing more."""
        if self.stopped or not self.stops:
            return "" if self.stopped else text
        held = self._held + text
        cut = min((i for i in (held.find(s) for s in self.stops) if i != -1), default=-1)
        if cut != -1:
            self.stopped, self._held = True, ""
            return held[:cut]
        keep = max((self._forming(held, s) for s in self.stops), default=0)
        self._held = held[len(held) - keep :] if keep else ""
        return held[: len(held) - keep]

    def finish(self) -> str:
        """What was held back at the end of a reply that never finished a stop string."""
        held, self._held = self._held, ""
        return "" if self.stopped else held

    @staticmethod
    def _forming(text: str, stop: str) -> int:
        """How long a start of ``stop`` the end of ``text`` is."""
        for size in range(min(len(stop) - 1, len(text)), 0, -1):
            if text.endswith(stop[:size]):
                return size
        return 0
