"""Plan mode, project instructions, the context budget, checkpoints and per-hunk decisions,
in the core, on scripted replies."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pheron_tui.core.checkpoints import TurnRecords
from pheron_tui.core.context import SUMMARY_PREFIX
from pheron_tui.runtime.project import WorkspaceCheckpointer, load_instructions
from pheron_tui.session.blobs import BlobStore


def call(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


async def test_plan_mode_offers_only_read_tools_and_refuses_a_write(make_agent, workspace) -> None:
    agent = make_agent(
        plan_mode=True,
        classify=["task"],
        plan=[call("write_file", path="new.txt", content="x"), "1. create new.txt"],
        critic=["PASS: a plan"],
    )
    result = await agent.orchestrator.submit("create new.txt")
    assert result.answer == "1. create new.txt"
    plan = agent.provider.requests[1]
    offered = {tool.function.name for tool in plan.tools}
    assert "read_file" in offered and not offered & {"write_file", "edit_file", "shell_exec"}
    assert "Plan mode is on" in plan.messages[0].content
    [decided] = agent.of("ToolCallDecided")
    assert (decided.decision, decided.by) == ("denied", "plan mode")
    assert not (workspace / "new.txt").exists()
    assert "Plan mode is on" in agent.provider.requests[2].messages[-1].content  # told why


async def test_project_instructions_follow_every_system_prompt(make_agent) -> None:
    agent = make_agent(
        instructions="The project's instructions (AGENTS.md): answer in French.",
        classify=["chat", "task"],
        chat=["Bonjour"],
        plan=["Fini."],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit("hello")
    await agent.orchestrator.submit("list the files")
    chat, plan = agent.provider.requests[1], agent.provider.requests[3]
    for request in (chat, plan):
        assert request.messages[0].role == "system"
        assert request.messages[0].content.endswith("answer in French.")


def test_agents_md_from_the_repository_root_down_to_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("outside the repository: never read")
    (tmp_path / "repo" / "AGENTS.md").write_text("use tabs")
    workspace = tmp_path / "repo" / "pkg"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("run make test")
    found = load_instructions(workspace)
    assert found.files == [tmp_path / "repo" / "AGENTS.md", workspace / "AGENTS.md"]
    assert found.text.index("use tabs") < found.text.index("run make test")
    assert "never read" not in found.text
    long = load_instructions(workspace, limit=20)
    assert long.cut > 0 and long.text.endswith("run make test") and "cut" in long.summary


def filler(tag: str) -> str:
    """About 250 tokens of text that does not repeat itself (the loop guard would cut it)."""
    return " ".join(f"{tag}{n}" for n in range(300))[:1000]


async def test_a_conversation_over_the_window_is_compacted_not_cut(make_agent) -> None:
    words = filler("w")
    agent = make_agent(
        context_window=1200,
        classify=["chat"] * 3,
        chat=[f"answer one {filler('a')}", f"answer two {filler('b')}", "answer three"],
        compact=["the summary text"],
    )
    for n in ("one", "two"):
        await agent.orchestrator.submit(f"question {n} {words}")
    result = await agent.orchestrator.submit("question three")
    assert result.answer == "answer three"
    compact, last = agent.provider.requests[-2], agent.provider.requests[-1]
    assert compact.purpose == "compact" and "question one" in compact.messages[-1].content
    assert last.messages[0].role == "system"  # the system prompt stays
    assert (
        SUMMARY_PREFIX in last.messages[1].content
        and "the summary text" in last.messages[1].content
    )
    assert last.messages[-1].content == "question three"  # the latest turn stays whole
    assert not any("answer one" in (m.content or "") for m in last.messages)
    [replaced] = agent.of("ConversationReplaced")
    assert replaced.reason == "compact" and "summary" in replaced.note


async def test_a_task_keeps_its_tools_after_compaction(make_agent) -> None:
    words = filler("w")
    agent = make_agent(
        context_window=1700,
        classify=["chat", "task"],
        chat=[f"answer {filler('a')}"],
        compact=["summary"],
        plan=["Done."],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit(f"first {words}")
    await agent.orchestrator.submit(f"now a task {words}")
    plan = next(r for r in agent.provider.requests if r.purpose == "plan")
    assert plan.tools and plan.messages[0].role == "system"
    assert agent.of("ConversationReplaced")


async def test_a_single_message_too_big_for_the_window_fails_clearly(make_agent) -> None:
    agent = make_agent(context_window=600, classify=["chat"], chat=["never"])
    result = await agent.orchestrator.submit("x " * 4000)
    assert result.status == "failed"
    assert "context window holds 600" in result.reason and "shorten" in result.reason
    assert [r.purpose for r in agent.provider.requests] == ["classify"]


async def test_under_approve_all_an_overwrite_losing_most_of_a_file_is_made_when_repeated(
    make_agent, workspace
) -> None:
    (workspace / "config.py").write_text("TIMEOUT_S = 30\nRETRIES = 3\n")
    shrink = call("write_file", path="config.py", content="# cleared\n", mode="overwrite")
    agent = make_agent(
        classify=["task"],
        plan=[call("read_file", path="config.py"), shrink, "left it", shrink, "done"],
    )
    await agent.orchestrator.submit("clear config.py")
    assert (workspace / "config.py").read_text() == "TIMEOUT_S = 30\nRETRIES = 3\n"
    told = agent.provider.requests[-1].messages[-1].content
    assert "RETRIES = 3" in told and "edit_file" in told
    await agent.orchestrator.submit("yes, replace the whole file")  # the next turn keeps it
    assert (workspace / "config.py").read_text() == "# cleared\n"


async def test_a_per_hunk_decision_writes_only_the_hunks_taken(make_agent, workspace) -> None:
    before = "".join(f"line {i}\n" for i in range(30))
    (workspace / "f.txt").write_text(before)
    after = before.replace("line 1\n", "line one\n").replace("line 25\n", "line 25!\n")
    agent = make_agent(
        policy="read-only",
        classify=["task"],
        plan=[
            call("read_file", path="f.txt"),
            call("write_file", path="f.txt", content=after, mode="overwrite"),
            "done",
        ],
        critic=["PASS: ok"],
    )
    turn = asyncio.create_task(agent.orchestrator.submit("edit f.txt"))
    while not agent.orchestrator.gate.pending:
        await asyncio.sleep(0.01)
    [_read, proposed] = agent.of("ToolCallProposed")
    assert proposed.hunks == 2 and "+line one" in proposed.diff
    agent.orchestrator.decide(proposed.call_id, "approve", [1])
    await turn
    assert (workspace / "f.txt").read_text() == before.replace("line 25\n", "line 25!\n")
    told = agent.provider.requests[3].messages[-1].content
    assert "applied 2 of 2, rejected 1" in told and "-line 1" in told
    [_auto, decided] = agent.of("ToolCallDecided")
    assert decided.hunks == [2]


async def test_files_are_checkpointed_before_a_tool_changes_them(
    make_agent, workspace, tmp_path
) -> None:
    store = BlobStore(tmp_path / "blobs")
    agent = make_agent(
        checkpointer=WorkspaceCheckpointer(store),
        classify=["task"],
        plan=[
            call("edit_file", path="notes.md", old="milk", new="bread"),
            call("move_path", source="main.py", destination="src/app.py"),
            "done",
        ],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit("change things")
    saved = [f for e in agent.of("FilesCheckpointed") for f in e.files]
    notes = next(f for f in saved if f.path == "notes.md")
    assert store.get(notes.blob) == b"# Notes\nbuy milk\n"
    assert any(f.path == "src/app.py" and f.kind == "missing" for f in saved)
    records = TurnRecords()
    for event in agent.events:
        records.add(event)
    assert [r.turn_id for r in records.turns] == [1]
    assert {s.path for s in records.turns[0].saved} >= {"notes.md", "main.py", "src/app.py"}


async def test_a_shell_call_is_recorded_as_not_undoable(make_agent, tmp_path) -> None:
    agent = make_agent(
        checkpointer=WorkspaceCheckpointer(BlobStore(tmp_path / "b")),
        classify=["task"],
        plan=[call("shell_exec", command="echo hi"), "done"],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit("say hi")
    assert agent.orchestrator.turns.turns[0].untracked == ["shell_exec"]


@pytest.mark.parametrize("conversation", [True, False])
async def test_rewinding_the_conversation_drops_the_later_turns(make_agent, conversation) -> None:
    agent = make_agent(classify=["chat"] * 3, chat=["one", "two", "three"])
    for text in ("a", "b", "c"):
        await agent.orchestrator.submit(text)
    if conversation:
        removed = agent.orchestrator.rewind_conversation(2)
        assert removed == 4
        assert [m.content for m in agent.orchestrator.history] == ["a", "one"]
        assert [r.turn_id for r in agent.orchestrator.turns.turns] == [1]
    else:
        assert len(agent.orchestrator.history) == 6


async def test_plan_mode_reads_without_asking_but_deny_rules_still_win(make_agent) -> None:
    from pheron_tui.core.rules import Rule

    agent = make_agent(
        policy="ask",
        plan_mode=True,
        classify=["task"],
        plan=[call("read_file", path="notes.md"), call("list_dir", path="."), "1. a plan"],
        critic=["PASS: ok"],
    )
    agent.orchestrator.gate.rules.add(Rule("deny", "list_dir"))
    result = await agent.orchestrator.submit("plan something")
    assert result.answer == "1. a plan"
    read, listing = agent.of("ToolCallDecided")
    assert (read.decision, read.by) == ("auto_approved", "plan mode")
    assert listing.decision == "denied" and listing.by.startswith("rule:")
    assert not agent.of("ToolCallAwaitingDecision")


def test_agents_md_that_is_not_a_regular_file_is_skipped(tmp_path: Path) -> None:
    os_fifo = tmp_path / "AGENTS.md"
    import os

    os.mkfifo(os_fifo)  # reading it would block the start-up
    assert load_instructions(tmp_path).files == []


async def test_a_huge_diff_is_shown_cut_and_decided_whole(make_agent, workspace) -> None:
    big = "".join(
        f"line {i}\n" for i in range(15_000)
    )  # under the 200,000 characters a call may write
    agent = make_agent(
        classify=["task"],
        plan=[call("write_file", path="big.txt", content=big), "done"],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit("write big.txt")
    [proposed] = agent.of("ToolCallProposed")
    assert len(proposed.diff) < 61_000 and "more lines of the diff not shown" in proposed.diff
    assert proposed.hunks == 0
    assert (workspace / "big.txt").read_text() == big


async def test_a_long_path_is_written_whole_not_as_shown(make_agent, workspace) -> None:
    deep = "/".join(["a_rather_long_folder_name"] * 12) + "/f.txt"  # longer than shown paths
    (workspace / deep).parent.mkdir(parents=True)
    before = "".join(f"line {i}\n" for i in range(30))
    (workspace / deep).write_text(before)
    after = before.replace("line 1\n", "one\n").replace("line 25\n", "twenty-five\n")
    agent = make_agent(
        policy="ask",
        classify=["task"],
        plan=[call("edit_file", path=deep, old=before, new=after), "done"],
        critic=["PASS: ok"],
    )
    turn = asyncio.create_task(agent.orchestrator.submit("edit it"))
    while not agent.orchestrator.gate.pending:
        await asyncio.sleep(0.01)
    [proposed] = agent.of("ToolCallProposed")
    agent.orchestrator.decide(proposed.call_id, "approve", [0])
    await turn
    assert (workspace / deep).read_text() == before.replace("line 1\n", "one\n")
    assert sorted(p.name for p in workspace.iterdir()) == [
        "a_rather_long_folder_name",
        "main.py",
        "notes.md",
    ]
