"""The slash commands in the command palette (ctrl+p), each with its key where it has one."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from pheron_tui.ui.slash import COMMANDS, SlashCommand


class SlashCommands(Provider):
    def _entries(self) -> list[tuple[str, str, SlashCommand]]:
        keys = {b.action: b.key for b in self.app.BINDINGS if isinstance(b, Binding)}
        entries = []
        for command in COMMANDS:
            key = keys.get(command.action)
            shown = f"/{command.name}" + (f" ({key})" if key else "")
            entries.append((shown, command.help, command))
        return entries

    def _run(self, command: SlashCommand) -> None:
        if command.required:
            # A command that needs an argument is started in the message box.
            self.app.call_later(self.app.run_action, f"prefill('/{command.name} ')")
            return
        self.app.call_later(self.app.run_action, command.action)

    async def discover(self) -> Hits:
        for shown, help_text, command in self._entries():
            yield DiscoveryHit(shown, partial(self._run, command), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for shown, help_text, command in self._entries():
            score = matcher.match(shown)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(shown), partial(self._run, command), help=help_text
                )
