"""ApprovalGate: decides whether a proposed tool call may run.

Policies: ``ask`` waits for the user's decision; ``read-only`` runs read tools by itself and asks
for the rest; ``all`` runs everything; ``none`` denies everything. Rules (``core/rules.py``)
sit on top: a deny rule always wins, even over ``all``; an allow rule approves a call unless it
is dangerous. "Always" from the user adds session rules for what the call did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pheron_tui.core.events import Decision, Risk, RuleShown, UserChoice
from pheron_tui.core.rules import SHELL_TOOL, CommandFacts, Rule, RuleBook, command_prefix

Policy = Literal["ask", "read-only", "all", "none"]


@dataclass(frozen=True)
class GateDecision:
    approved: bool
    auto: bool
    by: str
    added: tuple[Rule, ...] = ()
    """Session rules an "always" answer added."""
    hunks: frozenset[int] | None = None
    """A per-hunk review's hunks taken (numbered from 0); None when the whole call was."""

    @property
    def label(self) -> Decision:
        if not self.approved:
            return "denied"
        return "auto_approved" if self.auto else "approved"


@dataclass(frozen=True)
class CallFacts:
    """What the gate needs to know about one call."""

    tool: str
    risk: Risk
    commands: Sequence[CommandFacts] | None = None
    """The simple commands of a shell call, as parsed; None for other tools."""

    def choices(self) -> list[UserChoice]:
        """What a person may answer: "always" only where ``always_rules`` has something."""
        return ["approve", "always", "deny"] if self.always_rules() else ["approve", "deny"]

    def always_rules(self) -> list[Rule]:
        """The session rules an "always" answer adds: the tool, or each command's prefix.

        Empty (no "always" on offer) for a dangerous call, and for a shell line with a part no
        narrow prefix describes: a rule for the other parts would not cover the line again."""
        if self.risk == "dangerous":
            return []  # never turn a dangerous call into a standing permission
        if self.tool != SHELL_TOOL:
            return [Rule("allow", self.tool)]
        prefixes = [command_prefix(command) for command in self.commands or ()]
        if not prefixes or not all(prefixes):
            return []
        return [Rule("allow", SHELL_TOOL, prefix) for prefix in dict.fromkeys(prefixes)]


def shown_rules(book: RuleBook) -> list[RuleShown]:
    """The rules in force as a ``RulesChanged`` event carries them."""
    return [
        RuleShown(action=r.action, tool=r.tool, command=list(r.command), scope=r.scope)
        for r in book.rules
    ]


NOBODY_TO_ASK = "nobody to ask"
"""How ``by`` ends for a call denied because it needed a person and none was there."""


class ApprovalGate:
    def __init__(
        self, policy: Policy = "ask", rules: RuleBook | None = None, can_ask: bool = True
    ) -> None:
        self.policy: Policy = policy
        self.rules = rules or RuleBook()
        self.can_ask = can_ask
        """False headless: a call that needs a decision is denied, never left waiting."""
        self._pending: dict[str, asyncio.Future[tuple[UserChoice, frozenset[int] | None]]] = {}

    @property
    def pending(self) -> list[str]:
        """The calls waiting for ``decide``, oldest first."""
        return list(self._pending)

    def automatic(self, call: CallFacts) -> GateDecision | None:
        """The decision when no one needs to be asked, else None."""
        if self.policy == "none":
            return GateDecision(approved=False, auto=True, by="policy:none")
        matched = self.rules.match(call.tool, call.commands)
        if matched is not None and matched.action == "deny":
            return GateDecision(approved=False, auto=True, by=matched.by)
        if self.policy == "all":
            return GateDecision(approved=True, auto=True, by="policy:all")
        if call.risk == "dangerous":
            return None  # a rule or a policy short of "all" never approves this by itself
        if matched is not None:
            return GateDecision(approved=True, auto=True, by=matched.by)
        if self.policy == "read-only" and call.risk == "read":
            return GateDecision(approved=True, auto=True, by="policy:read-only")
        if not self.can_ask:
            by = f"policy:{self.policy}: {NOBODY_TO_ASK}"
            return GateDecision(approved=False, auto=True, by=by)
        return None

    async def wait(self, call_id: str, call: CallFacts) -> GateDecision:
        """Wait for ``decide(call_id, …)``; cancelling the caller withdraws the question."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[UserChoice, frozenset[int] | None]] = loop.create_future()
        self._pending[call_id] = future
        try:
            choice, hunks = await future
        finally:
            self._pending.pop(call_id, None)
        if choice == "always":
            added = call.always_rules()
            for rule in added:
                self.rules.add(rule)
            if added:
                shown = ", ".join(rule.describe() for rule in added)
                by = f"user (always: {shown})"
                return GateDecision(approved=True, auto=False, by=by, added=tuple(added))
        if choice == "approve" and hunks is not None:
            return GateDecision(approved=bool(hunks), auto=False, by="user", hunks=hunks)
        return GateDecision(approved=choice != "deny", auto=False, by="user")

    def decide(self, call_id: str, choice: UserChoice, hunks: Iterable[int] | None = None) -> bool:
        """Answer a waiting call (``hunks``: approve only these hunks of its diff, numbered
        from 0); False when no call with that id is waiting."""
        future = self._pending.get(call_id)
        if future is None or future.done():
            return False
        future.set_result((choice, None if hunks is None else frozenset(hunks)))
        return True
