"""ApprovalGate: decides whether a proposed tool call may run.

Policies: ``ask`` waits for the user's decision; ``read-only`` runs read tools by itself and asks
for the rest; ``all`` runs everything; ``none`` denies everything. "Always" from the user
allows that tool for the rest of the session.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from pheron_tui.core.events import Risk

Policy = Literal["ask", "read-only", "all", "none"]
UserChoice = Literal["approve", "always", "deny"]


@dataclass(frozen=True)
class GateDecision:
    approved: bool
    auto: bool
    by: str

    @property
    def label(self) -> Literal["approved", "denied", "auto_approved"]:
        if not self.approved:
            return "denied"
        return "auto_approved" if self.auto else "approved"


class ApprovalGate:
    def __init__(self, policy: Policy = "ask") -> None:
        self.policy: Policy = policy
        self.always_allowed: set[str] = set()
        self._pending: dict[str, asyncio.Future[UserChoice]] = {}

    @property
    def pending(self) -> list[str]:
        return list(self._pending)

    def automatic(self, tool: str, risk: Risk) -> GateDecision | None:
        """The decision when no one needs to be asked, else None."""
        if self.policy == "none":
            return GateDecision(approved=False, auto=True, by="policy:none")
        if risk == "dangerous":
            return None if self.policy != "all" else GateDecision(True, True, "policy:all")
        if self.policy == "all":
            return GateDecision(approved=True, auto=True, by="policy:all")
        if tool in self.always_allowed:
            return GateDecision(approved=True, auto=True, by=f"rule:always {tool}")
        if self.policy == "read-only" and risk == "read":
            return GateDecision(approved=True, auto=True, by="policy:read-only")
        return None

    async def wait(self, call_id: str, tool: str) -> GateDecision:
        """Wait for ``decide(call_id, …)``; cancelling the caller withdraws the question."""
        future: asyncio.Future[UserChoice] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        try:
            choice = await future
        finally:
            self._pending.pop(call_id, None)
        if choice == "always":
            self.always_allowed.add(tool)
        return GateDecision(approved=choice != "deny", auto=False, by="user")

    def decide(self, call_id: str, choice: UserChoice) -> bool:
        """Answer a waiting call; False when no call with that id is waiting."""
        future = self._pending.get(call_id)
        if future is None or future.done():
            return False
        future.set_result(choice)
        return True
