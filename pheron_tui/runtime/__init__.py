"""Wiring settings into a running agent: bus, provider, tools, orchestrator.

Shared by the TUI and the headless runner; imports no UI code.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import platformdirs

from pheron_tui.config import APP_NAME, Settings, app_paths, default_config_path
from pheron_tui.core import events as ev
from pheron_tui.core.approval import Policy
from pheron_tui.core.bus import EventBus
from pheron_tui.core.checkpoints import TurnRecord, states_before
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator, RewindError, TurnInProgress
from pheron_tui.core.provider import Provider, ProviderError
from pheron_tui.core.rules import Rule, RuleBook
from pheron_tui.rules_file import delete_rule, rules_for, save_rule
from pheron_tui.runtime.mentions import Attached, attach_mentions
from pheron_tui.runtime.project import Instructions, WorkspaceCheckpointer, load_instructions
from pheron_tui.session.blobs import BlobStore
from pheron_tui.session.store import LoadedSession, SessionHeader, SessionStore
from pheron_tui.tools.bubblewrap import Sandbox, choose_sandbox, secret_paths
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.checkpoint import Restored, restore
from pheron_tui.tools.mcp import McpServer, McpTools, parse_servers


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass
class RewindReport:
    files: Restored = field(default_factory=Restored)
    messages_removed: int = 0
    untracked: list[str] = field(default_factory=list)
    """Tools that ran in the rewound turns whose effects no checkpoint holds."""
    incomplete: bool = False
    """Some of the files could not be saved before they changed (links, too big)."""


@dataclass
class Runtime:
    settings: Settings
    bus: EventBus
    provider: Provider
    orchestrator: Orchestrator
    sandbox: Sandbox
    config_path: Path
    """Where persistent approval rules are saved."""
    mcp: McpTools
    """The user's MCP servers (started by ``start_mcp``), a tool source of the registry."""
    mcp_problems: list[str]
    """Config entries for MCP servers that cannot run, each naming the server."""
    instructions: Instructions = field(default_factory=Instructions)
    """The project's AGENTS.md files, as loaded into the system prompt."""
    store: SessionStore | None = None
    resumed: LoadedSession | None = None
    _closed: bool = False

    @classmethod
    def resume(
        cls,
        settings: Settings,
        default_policy: Policy,
        session: LoadedSession,
        provider: Provider | None = None,
        config_path: Path | None = None,
        sandbox: Sandbox | None = None,
        can_ask: bool = True,
        mcp: McpTools | None = None,
    ) -> Runtime:
        """Continue a recorded session: same id, the conversation restored, seq and turns
        going on from where the log ends."""
        runtime = cls.create(
            settings,
            default_policy,
            provider=provider,
            session_id=session.header.session_id,
            first_seq=session.last_seq + 1,
            config_path=config_path,
            sandbox=sandbox,
            can_ask=can_ask,
            mcp=mcp,
        )
        runtime.orchestrator.restore(session.conversation(), session.last_turn_id, session.events)
        runtime.resumed = session
        return runtime

    @classmethod
    def create(
        cls,
        settings: Settings,
        default_policy: Policy,
        provider: Provider | None = None,
        session_id: str | None = None,
        first_seq: int = 1,
        config_path: Path | None = None,
        sandbox: Sandbox | None = None,
        can_ask: bool = True,
        mcp: McpTools | None = None,
    ) -> Runtime:
        """Build everything; raises ProviderError when the provider cannot even be built.

        ``can_ask`` False (headless): a call that needs a person's decision is denied."""
        from pheron_tui.runtime.select import create_provider

        bus = EventBus(session_id or new_session_id(), first_seq=first_seq)
        provider = provider or create_provider(settings)
        own_files = app_paths(config_path)
        sandbox = sandbox or choose_sandbox(
            settings.sandbox, settings.workspace, settings.sandbox_network, own_files
        )
        instructions = load_instructions(settings.workspace)
        agent = AgentSettings(
            workspace=settings.workspace,
            policy=settings.approve or default_policy,
            max_steps=settings.max_steps,
            shell_timeout_s=settings.shell_timeout_s,
            output_cap_chars=settings.output_cap_chars,
            shell_prefix=sandbox.prefix,
            shell_refusal=sandbox.refusal,
            rules=RuleBook(rules_for(settings.rules, settings.workspace)),
            chat_max_tokens=settings.chat_max_tokens,
            plan_max_tokens=settings.plan_max_tokens,
            protected_paths=own_files + secret_paths(),
            can_ask=can_ask,
            checkpointer=WorkspaceCheckpointer(BlobStore()),
            instructions=instructions.text,
        )
        registry = default_registry()
        problems: list[str] = []
        if mcp is None:
            specs, problems = parse_servers(settings.mcp_servers, settings.mcp)
            mcp = McpTools(specs, Path(platformdirs.user_state_dir(APP_NAME)))
        registry.add_source(mcp)
        orchestrator = Orchestrator(provider, registry, bus, agent)
        runtime = cls(
            settings=settings,
            bus=bus,
            provider=provider,
            orchestrator=orchestrator,
            sandbox=sandbox,
            config_path=config_path or default_config_path(),
            mcp=mcp,
            mcp_problems=problems,
            instructions=instructions,
        )
        mcp.on_change = runtime._mcp_changed
        return runtime

    # -- MCP servers -------------------------------------------------------------------------------
    def start_mcp(self) -> None:
        """Start every configured MCP server in the background; each reports on the bus."""
        self.mcp.start()

    def restart_failed_mcp(self) -> list[str]:
        return self.mcp.restart_failed()

    def _mcp_changed(self, server: McpServer) -> None:
        registry = self.orchestrator.registry
        self.mcp.sync(registry)  # ready tools are callable at once; a dead server's are gone
        self.bus.emit(
            ev.McpServerChanged,
            0,
            server=server.spec.name,
            state=server.state,
            tools=[tool.name for tool in server.tools],
            spec_chars=self.mcp.spec_chars(server, registry),
            error=server.error,
        )

    # -- commands for a UI ------------------------------------------------------------------------
    def rules(self) -> list[Rule]:
        return self.orchestrator.rules()

    def revoke_rule(self, rule: Rule) -> None:
        """Take a rule away, from the config file too unless it is a session rule.
        Raises ConfigError when the file cannot be changed (the rule then stays)."""
        if rule.scope != "session":
            delete_rule(self.config_path, rule)
        self.orchestrator.replace_rule(rule, None)

    def keep_rule(self, rule: Rule, scope: Literal["project", "user"]) -> Rule:
        """Save a session rule in the config file for this project or every project; the
        saved rule replaces it. Raises ConfigError or OSError when it cannot be saved."""
        workspace = str(self.settings.workspace.resolve()) if scope == "project" else None
        kept = Rule(rule.action, rule.tool, rule.command, scope=scope, workspace=workspace)
        save_rule(self.config_path, kept)
        self.orchestrator.replace_rule(rule, kept)
        return kept

    def rewind(self, turn_id: int, files: bool, conversation: bool) -> RewindReport:
        """Put back the files tools changed from turn ``turn_id`` on, and/or take the
        conversation back to just before it. Raises RewindError (and changes nothing) when
        the conversation cannot go back that far."""
        orchestrator = self.orchestrator
        if orchestrator.busy:
            raise TurnInProgress("a turn is running")
        records = orchestrator.turns.since(turn_id)
        record = orchestrator.turns.get(turn_id)
        if record is None:
            raise RewindError(f"there is no turn {turn_id} to rewind to")
        if conversation and record.history_start is None:
            raise RewindError(
                f"turn {turn_id} was compacted into a summary; only its files can be put back"
            )
        report = RewindReport(
            untracked=sorted({tool for r in records for tool in r.untracked}),
            incomplete=not all(r.complete for r in records),
        )
        if files:
            settings = orchestrator.settings
            report.files = restore(
                settings.workspace,
                settings.protected_paths,
                states_before(records),
                BlobStore().get,
            )
        if conversation:
            report.messages_removed = orchestrator.rewind_conversation(turn_id)
        return report

    def rewind_points(self) -> list[TurnRecord]:
        """The turns a rewind can go back to, oldest first (copies)."""
        return [replace(r, saved=list(r.saved), untracked=list(r.untracked))
                for r in self.orchestrator.turns.turns]  # fmt: skip

    def attach(self, text: str) -> Attached:
        """The workspace files ``text`` mentions as ``@path``, read to go with it."""
        settings = self.orchestrator.settings
        return attach_mentions(text, settings.workspace, settings.protected_paths)

    async def new_session(self) -> None:
        """Start a fresh conversation in a new session (the old one stays in the list); the
        model, the tools and the rules stay."""
        if self.orchestrator.busy:
            raise TurnInProgress("a turn is running")
        await self.stop_recording()
        fresh = Runtime.create(
            self.settings,
            self.orchestrator.settings.policy,
            provider=self.provider,
            config_path=self.config_path,
            sandbox=self.sandbox,
            can_ask=self.orchestrator.gate.can_ask,
            mcp=self.mcp,
        )
        fresh.orchestrator.gate.rules = self.orchestrator.gate.rules
        self._adopt(fresh)
        self.resumed = None
        self.start_recording()

    def _adopt(self, fresh: Runtime) -> None:
        plan_mode = self.orchestrator.settings.plan_mode
        self.bus, self.orchestrator = fresh.bus, fresh.orchestrator
        self.orchestrator.settings.plan_mode = plan_mode
        self.instructions = fresh.instructions
        self.mcp.on_change = self._mcp_changed
        self.mcp.sync(self.orchestrator.registry)
        self.store = None

    async def switch_model(self, name: str) -> None:
        """Load another model (``--model`` names) and carry on the conversation with it; the
        old one is closed only once the new one is ready. Raises ProviderError."""
        from pheron_tui.runtime.select import create_provider

        if self.orchestrator.busy:
            raise TurnInProgress("a turn is running")
        settings = self.settings.model_copy(update={"model": name})
        provider = create_provider(settings)
        ok = await self._load(provider, fatal=False)
        if not ok:
            await provider.aclose()
            raise ProviderError(
                f"model {name!r} could not be loaded; still using {self.provider.model}"
            )
        old, self.provider = self.provider, provider
        self.settings = settings
        self.orchestrator.provider = provider
        self.orchestrator.critic.provider = provider
        await old.aclose()
        self.bus.emit(
            ev.ModelReady,
            0,
            provider=provider.name,
            model=provider.model,
            context_window=provider.context_window,
        )

    async def switch_to(self, session: LoadedSession) -> None:
        """Leave this session (its log closed, the model kept loaded) and carry on ``session``
        exactly as ``--resume`` would. The bus is a new one: readers subscribe again."""
        if self.orchestrator.busy:
            raise TurnInProgress("a turn is running")
        await self.stop_recording()
        fresh = Runtime.resume(
            self.settings,
            self.orchestrator.settings.policy,
            session,
            provider=self.provider,
            config_path=self.config_path,
            sandbox=self.sandbox,
            can_ask=self.orchestrator.gate.can_ask,
            mcp=self.mcp,
        )
        self._adopt(fresh)
        self.resumed = session
        self.start_recording()

    def warnings(self) -> list[str]:
        """What the user must know before the first call: a workspace that is the whole home
        folder or the whole system, approvals turned off."""
        found = list(self.mcp_problems)
        workspace = self.settings.workspace.resolve()
        if workspace in (Path.home().resolve(), Path("/")):
            found.append(
                f"The workspace is {workspace}: tools may read and write everything under it "
                "(pheron-tui's own files and ~/.ssh-style secrets excepted). Start pheron-tui "
                "in a project folder, or pass --workspace DIR."
            )
        if self.orchestrator.settings.policy == "all":
            found.append(
                "--approve all (approval policy 'all'): every tool call runs without asking, "
                "shell commands and dangerous ones included. Only deny rules still stop a call."
            )
        return found

    async def load_model(self) -> bool:
        """Load the model, reporting progress on the bus; False (and an error event) on failure."""
        if not await self._load(self.provider):
            return False
        self.bus.emit(
            ev.ModelReady,
            0,
            provider=self.provider.name,
            model=self.provider.model,
            context_window=self.provider.context_window,
        )
        return True

    async def _load(self, provider: Provider, fatal: bool = True) -> bool:
        """Load ``provider`` with progress on the bus; False after an error event (``load``
        when the app has no other model, ``model`` when the current one stays)."""
        kind: ev.ErrorKind = "load" if fatal else "model"
        self.bus.emit(ev.ModelLoading, 0, progress=None, message=f"loading {provider.model}")
        loop = asyncio.get_running_loop()

        def progress(fraction: float | None, message: str) -> None:
            # Loaders report from their own threads; the bus lives on the event loop.
            loop.call_soon_threadsafe(
                lambda: self.bus.emit(ev.ModelLoading, 0, progress=fraction, message=message)
            )

        try:
            await provider.load(progress)
        except ProviderError as exc:
            self.bus.emit(ev.ErrorRaised, 0, message=str(exc), recoverable=not fatal, kind=kind)
            return False
        except Exception as exc:  # a loader's own bug must not take the app down
            message = f"loading failed: {type(exc).__name__}: {exc}"
            self.bus.emit(ev.ErrorRaised, 0, message=message, recoverable=not fatal, kind=kind)
            return False
        return True

    def start_recording(self, folder: Path | None = None) -> None:
        """Write every event from now on to the session log (if the settings allow)."""
        if not self.settings.record_sessions or self.store is not None:
            return
        header = SessionHeader(
            session_id=self.bus.session_id,
            provider=self.provider.name,
            model=self.provider.model,
            workspace=str(self.settings.workspace.resolve()),
            started=time.time(),
        )
        self.store = SessionStore(self.bus, header, folder)
        self.store.start()

    async def stop_recording(self) -> None:
        if self.store is not None:
            await self.store.close()

    async def aclose(self) -> None:
        """Stop the MCP servers, the session log and the model; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        await self.mcp.aclose()
        await self.stop_recording()
        await self.provider.aclose()
