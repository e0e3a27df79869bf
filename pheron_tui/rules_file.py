"""Approval rules in the config file: read them for a workspace, add and remove them in place.

Edits go through tomlkit so the user's comments and layout survive. Rules never live in the
workspace itself: a model that can write files there must not be able to write its own
permissions.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from pheron_tui.config import ConfigError, RuleConfig
from pheron_tui.core.rules import Rule


def rules_for(configs: list[RuleConfig], workspace: Path) -> list[Rule]:
    """The configured rules that apply in ``workspace``: user rules and its project rules."""
    here = workspace.resolve()
    rules = []
    for config in configs:
        if config.workspace is not None and Path(config.workspace).expanduser().resolve() != here:
            continue
        rules.append(
            Rule(
                action=config.action,
                tool=config.tool,
                command=tuple(shlex.split(config.command)),
                scope="project" if config.workspace is not None else "user",
                workspace=str(here) if config.workspace is not None else None,
            )
        )
    return rules


def _entry(rule: Rule) -> dict[str, str]:
    entry = {"action": rule.action, "tool": rule.tool}
    if rule.command:
        entry["command"] = shlex.join(rule.command)
    if rule.scope == "project" and rule.workspace:
        entry["workspace"] = rule.workspace
    return entry


def _load(path: Path) -> tomlkit.TOMLDocument:
    try:
        return (
            tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
        )
    except (OSError, TOMLKitError) as exc:
        raise ConfigError(f"{path}: cannot be updated: {exc}") from None


def _same(table: object, entry: dict[str, str], workspace_root: str | None) -> bool:
    if not isinstance(table, dict):
        return False
    found = {k: str(v) for k, v in table.items()}
    if "command" in found:
        found["command"] = shlex.join(shlex.split(found["command"]))
    if "workspace" in found and workspace_root is not None:
        found["workspace"] = str(Path(found["workspace"]).expanduser().resolve())
    return found == entry


def save_rule(path: Path, rule: Rule) -> None:
    """Append ``rule`` (scope project or user) to the config file's ``[[rules]]``."""
    if rule.scope == "session":
        raise ValueError("session rules are not saved")
    document = _load(path)
    rules = document.get("rules")
    if rules is None:
        rules = tomlkit.aot()
        if len(document):
            document.add(tomlkit.nl())
        document.append("rules", rules)
    entry = _entry(rule)
    if any(_same(table, entry, rule.workspace) for table in rules):
        return
    table = tomlkit.table()
    table.update(entry)
    rules.append(table)
    _write(path, document)


def delete_rule(path: Path, rule: Rule) -> bool:
    """Remove ``rule`` from the config file; False when it is not there."""
    document = _load(path)
    rules = document.get("rules")
    if rules is None:
        return False
    entry = _entry(rule)
    kept = [table for table in rules if not _same(table, entry, rule.workspace)]
    if len(kept) == len(rules):
        return False
    while len(rules):
        rules.pop()
    for table in kept:
        rules.append(table)
    if not len(rules):
        del document["rules"]
    _write(path, document)
    return True


def _write(path: Path, document: tomlkit.TOMLDocument) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".toml.tmp")
    temporary.write_text(tomlkit.dumps(document), encoding="utf-8")
    temporary.replace(path)  # a crash mid-write leaves the old file, never half a file
