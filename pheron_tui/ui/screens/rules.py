"""The rules screen: every approval rule in force; revoke one, or keep a session rule."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from pheron_tui.config import ConfigError
from pheron_tui.core.rules import Rule
from pheron_tui.core.safety import printable
from pheron_tui.runtime import Runtime

SCOPE_LABELS = {
    "session": "this session",
    "project": "this project",
    "user": "every project",
}


def describe(rule: Rule) -> Content:
    where = SCOPE_LABELS[rule.scope]
    return Content(printable(f"{rule.describe():<50} {where}"))


class RulesScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("d,delete", "revoke", "Revoke"),
        Binding("p", "keep('project')", "Keep for this project"),
        Binding("u", "keep('user')", "Keep for every project"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime
        self.rules: list[Rule] = runtime.rules()

    def compose(self) -> ComposeResult:
        with Vertical(id="rules-box"):
            yield Static(
                Content(
                    "Approval rules · a deny rule always wins · an allow rule never approves a "
                    f"dangerous call · saved in {printable(str(self.runtime.config_path))}"
                ),
                id="rules-title",
            )
            yield OptionList(id="rules-list")
        yield Footer()

    def on_mount(self) -> None:
        self._refresh()

    def _refresh(self, keep: int | None = None) -> None:
        self.rules = self.runtime.rules()
        options = self.query_one(OptionList)
        options.clear_options()
        for index, rule in enumerate(self.rules):
            options.add_option(Option(describe(rule), id=str(index)))
        if not self.rules:
            options.add_option(
                Option("No rules yet: press a on a waiting call to add one.", disabled=True)
            )
        else:
            options.highlighted = min(keep or 0, len(self.rules) - 1)
        options.focus()
        self.refresh_bindings()

    def _selected(self) -> tuple[int, Rule] | None:
        options = self.query_one(OptionList)
        index = options.highlighted
        if index is None or index >= len(self.rules):
            return None
        return index, self.rules[index]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("revoke", "keep"):
            selected = self._selected() if self.is_mounted else None
            if selected is None:
                return False
            if action == "keep":
                return selected[1].scope == "session"
        return True

    def action_revoke(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        index, rule = selected
        try:
            self.runtime.revoke_rule(rule)
        except ConfigError as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(f"Revoked: {rule.describe()}")
        self._refresh(keep=index)

    def action_keep(self, scope: str) -> None:
        selected = self._selected()
        if selected is None or selected[1].scope != "session":
            return
        index, rule = selected
        try:
            kept = self.runtime.keep_rule(rule, "project" if scope == "project" else "user")
        except (ConfigError, OSError) as exc:
            self.notify(str(exc), severity="error")
            return
        self.notify(f"Saved: {kept.describe()} for {SCOPE_LABELS[kept.scope]}")
        self._refresh(keep=index)

    def on_option_list_option_highlighted(self) -> None:
        self.refresh_bindings()

    def action_close(self) -> None:
        self.dismiss(None)
