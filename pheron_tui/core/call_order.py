"""Several calls in one reply: which of them wait until the model has seen the others' results.

A model asked for several things at once may write, in one reply, calls that depend on each
other: read a file and write it back, run the tests and edit what failed. Their later
arguments were written before the earlier results existed, so they are guesses. A call that
only reads runs whatever came before it; a change waits (shown, not run) when an earlier
call of the reply informs it (one that reads or runs something, of another tool) or did not
go through. A change after a change (write a file, then run it) goes on. What a waiting call
is told is for the person reading the tool log: the model's history leaves such calls out
(``Orchestrator._run_calls``), and its next step makes them again if they are still needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pheron_tui.core.events import Risk

INFORMING: tuple[Risk, ...] = ("read", "execute")
"""Tiers whose result says something the calls after them may need."""


@dataclass
class CallOrder:
    """One reply's calls so far, in order: each one's tool, tier and whether it went through."""

    made: list[tuple[str, Risk | None, bool]] = field(default_factory=list)

    def add(self, tool: str, risk: Risk | None, ok: bool) -> None:
        self.made.append((tool, risk, ok))

    def waits(self, tool: str, risk: Risk) -> str | None:
        """What the model is told about a call to ``tool`` that must wait for the next step,
        or None when it may run now."""
        if risk == "read":
            return None
        failed = list(dict.fromkeys(name for name, _, ok in self.made if not ok))
        if failed:
            return (
                f"Not run: {', '.join(failed)}, before it in the same reply, did not go "
                "through; the model is shown that result first."
            )
        unseen = [name for name, tier, _ in self.made if tier in INFORMING and name != tool]
        if unseen:
            return (
                f"Not run: this {tool} call came in the same reply as "
                f"{', '.join(dict.fromkeys(unseen))}, before its result was seen; the model "
                "is shown that result first."
            )
        return None
