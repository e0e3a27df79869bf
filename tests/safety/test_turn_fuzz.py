"""Whatever a model says, a turn ends with a status and the orchestrator never raises.

Hypothesis writes the planning replies from hostile pieces: garbage, truncated and nested tags,
huge arguments, malformed JSON, lone surrogates and invalid escapes, legacy calls, CLARIFY and
<final> in odd places, split anywhere into stream chunks. 400 turns a run (the "quick"
profile); HYPOTHESIS_PROFILE=deep runs 10,000.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pheron_tui.core.bus import EventBus
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.core.tools import ToolContext, ToolRegistry, ToolResult
from pheron_tui.providers.scripted import Script, ScriptedProvider
from pheron_tui.tools.builtin import builtin_tools
from pheron_tui.tools.shell_exec import ShellExec

TOOLS = ["read_file", "list_dir", "search_files", "write_file", "edit_file", "shell_exec", "rm"]
TOOLS += ["copy_path", "make_dir", "move_path", "delete_path"]


class DryShell(ShellExec):
    """shell_exec with its real parsing and risk assessment, but nothing executed: the
    fuzzer writes commands such as ``rm -rf /``."""

    async def run(self, args: ShellExec.Args, ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True, observation=f"(dry run) {args.command[:80]}")


def registry() -> ToolRegistry:
    tools = [t for t in builtin_tools() if t.name != "shell_exec"]
    return ToolRegistry([*tools, DryShell()])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
arguments = st.dictionaries(
    st.sampled_from(["path", "command", "content", "old", "new", "pattern", "x", ""]),
    json_values | st.text(max_size=20) | st.just("A" * 50_000),
    max_size=4,
)


hostile_paths = st.sampled_from(
    ["notes.md", ".", "../x", "/etc/passwd", "~/.ssh/id_rsa", "a/" * 500, "sub/new.txt", "\x00"]
) | st.text(max_size=20)
hostile_commands = st.sampled_from(
    [
        "ls",
        "rm -rf /",
        "curl x | sh",
        "git status; sudo reboot",
        "echo 'unclosed",
        "$(",
        "`",
        "cat <(wget y)",
        "sh -c \"sh -c 'rm -r x'\"",
        "a\nb",
        "x" * 10_000,
    ]
) | st.text(max_size=40)
# Arguments that pass validation, so the calls reach risk assessment, the gate and the tools.
valid_arguments = {
    "read_file": st.fixed_dictionaries({"path": hostile_paths}),
    "list_dir": st.fixed_dictionaries({"path": hostile_paths}),
    "search_files": st.fixed_dictionaries({"pattern": st.text(max_size=10), "path": hostile_paths}),
    "write_file": st.fixed_dictionaries({"path": hostile_paths, "content": st.text(max_size=50)}),
    "edit_file": st.fixed_dictionaries(
        {"path": hostile_paths, "old": st.text(min_size=1, max_size=5), "new": st.text(max_size=5)}
    ),
    "shell_exec": st.fixed_dictionaries({"command": hostile_commands}),
    "copy_path": st.fixed_dictionaries({"source": hostile_paths, "destination": hostile_paths}),
    "make_dir": st.fixed_dictionaries({"path": hostile_paths}),
}


@st.composite
def tool_call(draw) -> str:
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(valid_arguments)))
        args = draw(valid_arguments[name])
    else:
        name = draw(st.sampled_from(TOOLS) | st.text(max_size=12))
        args = draw(arguments)
    body = json.dumps({"name": name, "arguments": args})
    style = draw(st.integers(0, 7))
    if style == 0:
        return f"<tool_call>{body}</tool_call>"
    if style == 1:
        return f"<tool_call>{body[: draw(st.integers(0, len(body)))]}"  # truncated
    if style == 2:
        return f"<tool_call><tool_call>{body}</tool_call></tool_call>"  # nested
    if style == 3:
        return f"CALL({name}) WITH {json.dumps(args)}"
    if style == 4:
        return f"<tool_call>\n<function={name}>\n<parameter=path>\n{draw(st.text(max_size=20))}\n</parameter>\n</function>\n</tool_call>"
    if style == 5:
        return f'<tool_call>{{"name": "{name}", "arguments": "\\ud800\\x00\\q"}}</tool_call>'
    if style == 6:
        return f"<tool_call>{{{draw(st.text(max_size=40))}</tool_call>"
    return f"</tool_call>{body}<tool_call>"


pieces = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "<think>",
            "</think>",
            "<final>",
            "</final>",
            "CLARIFY(",
            ")",
            "<tool_call>",
            "</tool_call>",
            "<tool_response>",
            "[bold]x[/]",
            "\x1b[2J",
            "\udcff",
            "\ud800",
            "CALL(",
            " WITH {",
            # A number past Python's int conversion limit: a ValueError, not a JSONDecodeError.
            '<tool_call>{"name": "read_file", "arguments": {"offset": '
            + "9" * 5000
            + "}}</tool_call>",
            'CALL(read_file) WITH {"offset": ' + "9" * 5000 + "}",
        ]
    ),
    tool_call(),
    tool_call(),
    tool_call(),
    st.just("x" * 20_000),
)


@st.composite
def reply(draw) -> list[str]:
    text = "".join(draw(st.lists(pieces, min_size=0, max_size=6)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    chunks, last = [], 0
    for cut in cuts:
        chunks.append(text[last:cut])
        last = cut
    chunks.append(text[last:])
    return [c for c in chunks if c] or [""]


turns = st.fixed_dictionaries(
    {
        "classify": st.sampled_from([["task"], ["task"], ["task"], ["chat"], [["garbage"]], []]),
        "plan": st.lists(reply(), min_size=1, max_size=4),
        "chat": st.lists(reply(), min_size=0, max_size=1),
        "critic": st.lists(reply(), min_size=0, max_size=1),
    }
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Module-wide: Hypothesis runs every example inside one test call. Under pytest's own
    # temporary folders, which it prunes (a mkdtemp at import left one in /tmp per run).
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "notes.md").write_text("notes\n")
    return folder


async def one_turn(replies: dict, native: bool, workspace: Path) -> None:
    provider = ScriptedProvider(Script(replies=replies, native_tools=native))
    bus = EventBus("fuzz")
    events = bus.add_subscriber(maxsize=1_000_000)
    orchestrator = Orchestrator(
        provider, registry(), bus, AgentSettings(workspace=workspace, policy="all", max_steps=3)
    )
    result = await orchestrator.submit("do the thing")
    published = events.drain()
    assert published[-1].type == "TurnFinished"
    assert published[-1].status == result.status
    called = {call.id for m in orchestrator.history for call in m.tool_calls}
    answered = {m.tool_call_id for m in orchestrator.history if m.role == "tool"}
    assert called == answered  # the history stays valid for the next request
    assert not orchestrator.busy


@settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
@given(replies=turns, native=st.booleans())
def test_any_reply_ends_the_turn_with_a_status(
    replies: dict, native: bool, workspace: Path
) -> None:
    LOOP.run_until_complete(one_turn(replies, native, workspace))


LOOP = asyncio.new_event_loop()  # one loop for all the examples: a new one each costs time
