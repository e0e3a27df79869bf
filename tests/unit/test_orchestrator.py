"""The orchestrator's turn logic, driven by scripted replies."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from pheron_tui.core.critic import Step, is_clarify_turn, parse_verdict
from pheron_tui.core.intent import parse_intent, rule_intent
from pheron_tui.core.tools import ubid
from pheron_tui.providers.scripted import ScriptedProvider

from ..conftest import Agent

LIST = '<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>'
LIST_SUB = '<tool_call>{"name": "list_dir", "arguments": {"path": "./"}}</tool_call>'


async def test_chat_answers_directly_with_thinking_off(make_agent) -> None:
    agent = make_agent(classify=["chat"], chat=[["Hel", "lo ", "there."]])
    result = await agent.orchestrator.submit("hi!")
    assert (result.status, result.answer) == ("finished", "Hello there.")
    chat_request = agent.provider.requests[-1]
    assert chat_request.purpose == "chat" and not chat_request.enable_thinking
    assert not chat_request.tools
    assert "".join(e.text for e in agent.of("AnswerDelta")) == "Hello there."


async def test_task_plans_with_tools_and_thinking_then_critic(make_agent) -> None:
    agent = make_agent(
        classify=["task"],
        plan=[["<think>look first</think>", LIST], "Two files: main.py and notes.md."],
        critic=["PASS: both files are listed"],
    )
    result = await agent.orchestrator.submit("what files are here?")
    assert result.status == "finished"
    plan = agent.provider.requests[1]
    assert plan.purpose == "plan" and plan.enable_thinking
    assert {t.function.name for t in plan.tools} >= {"list_dir", "shell_exec"}
    finished = agent.of("ToolCallFinished")[0]
    assert finished.ok and "notes.md" in finished.observation
    second_plan = agent.provider.requests[2]
    tool_message = second_plan.messages[-1]
    assert tool_message.role == "tool" and "notes.md" in tool_message.content
    assistant = second_plan.messages[-2]
    assert assistant.tool_calls[0].name == "list_dir"
    assert assistant.reasoning_content == "look first"
    [verdict] = agent.of("CriticVerdict")
    assert (verdict.verdict, verdict.auto) == ("PASS", False)


async def test_ask_policy_waits_for_the_user(make_agent) -> None:
    agent = make_agent(
        policy="ask", classify=["task"], plan=[LIST, LIST_SUB, "done"], critic=["PASS: ok"]
    )
    turn = asyncio.create_task(agent.orchestrator.submit("list"))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if agent.orchestrator.gate.pending:
            break
    [call_id] = agent.orchestrator.gate.pending
    assert not agent.of("ToolCallStarted")
    [waiting] = agent.of("ToolCallAwaitingDecision")  # a UI learns it waits from the bus
    assert waiting.call_id == call_id
    assert (waiting.choices, waiting.always) == (["approve", "always", "deny"], ["allow list_dir"])
    assert not agent.of("RulesChanged")
    assert agent.orchestrator.decide(call_id, "always")
    for _ in range(100):
        await asyncio.sleep(0)
    result = await asyncio.wait_for(turn, 2)
    assert result.status == "finished"
    decisions = [(d.decision, d.by) for d in agent.of("ToolCallDecided")]
    assert decisions == [
        ("approved", "user (always: allow list_dir)"),
        ("auto_approved", "rule:session: allow list_dir"),
    ]
    [changed] = agent.of("RulesChanged")
    assert [(r.action, r.tool, r.scope) for r in changed.rules] == [
        ("allow", "list_dir", "session")
    ]
    assert len(agent.of("ToolCallAwaitingDecision")) == 1  # the second call matched the rule


async def test_denied_call_is_observed_by_the_model(make_agent) -> None:
    agent = make_agent(
        policy="ask",
        classify=["task"],
        plan=[LIST, "I could not look."],
        critic=["FAIL: it did not look"],
    )
    result = await _first_call_denied(agent, "list")
    assert result.status == "finished"
    assert agent.of("ToolCallDecided")[0].decision == "denied"
    assert "denied" in agent.provider.requests[2].messages[-1].content
    assert agent.of("CriticVerdict")[0].verdict == "FAIL"


async def test_an_answer_that_repeats_a_note_from_before_the_change_is_sent_back(
    make_agent, workspace
) -> None:
    """Asked for a docstring, the 1.5B model's first write was refused (the file exists) and
    its second went in; it then answered with the first refusal's note. A note about a call
    that did not go through, repeated after a later call worked, is no answer: sent back once.
    Repeated with nothing done since, it may be the answer (a file that does not exist)."""
    first = 'CALL(write_file) WITH {"path": "notes.md", "content": "# Notes"}'
    second = 'CALL(write_file) WITH {"path": "notes.md", "content": "more", "mode": "append"}'
    parroted = (
        "notes.md already exists; it is unchanged. To add to its end, call write_file again "
        'with "mode": "append".'
    )
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[first, second, f"<final>{parroted}</final>", "<final>Added a line.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Add the line more to notes.md")
    assert result.answer == "Added a line."
    told = [m.content for m in agent.orchestrator.history if m.role == "user"]
    assert any("repeats a note from an earlier tool result" in text for text in told)


async def test_an_answer_that_only_repeats_the_denial_is_sent_back_once(make_agent) -> None:
    """After a denial the 1.5B model answered with the note it was given ("The user denied
    this call; it did not run."), or asked it back as a CLARIFY question: that says nothing
    to the user who just denied it. It is sent back, once, without making the model call
    again."""
    agent = make_agent(
        policy="ask",
        classify=["task"],
        plan=[
            LIST,
            'CLARIFY("The user denied this call; it did not run.")',
            "I did not list the files: you declined the listing.",
        ],
        critic=["FAIL: nothing was listed"],
    )
    result = await _first_call_denied(agent, "list")
    assert result.answer == "I did not list the files: you declined the listing."
    sent_back = agent.provider.requests[3]
    assert "not an answer" in sent_back.messages[-1].content
    assert sent_back.tool_choice != "required"
    # A second echo is the answer: the model is not sent round and round.
    again = make_agent(
        policy="ask",
        classify=["task"],
        plan=[LIST, "The user denied this call.", "The user denied this call; it did not run."],
        critic=["FAIL: nothing was listed"],
    )
    assert (await _first_call_denied(again, "list")).answer == (
        "The user denied this call; it did not run."
    )


async def _first_call_denied(agent: Agent, text: str):
    """Submit ``text`` and deny the first call the model proposes; the turn's result."""
    turn = asyncio.create_task(agent.orchestrator.submit(text))
    while not agent.orchestrator.gate.pending:
        await asyncio.sleep(0)
    agent.orchestrator.decide(agent.orchestrator.gate.pending[0], "deny")
    return await turn


async def test_policy_none_denies_everything(make_agent) -> None:
    agent = make_agent(policy="none", classify=["task"], plan=[LIST, "ok"], critic=["PASS: fine"])
    await agent.orchestrator.submit("list")
    assert agent.of("ToolCallDecided")[0].by == "policy:none"
    assert not agent.of("ToolCallStarted")


async def test_read_only_policy_asks_for_writes(make_agent) -> None:
    write = (
        '<tool_call>{"name": "write_file", "arguments": {"path": "x", "content": "y"}}</tool_call>'
    )
    agent = make_agent(
        policy="read-only", classify=["task"], plan=[LIST, write, "ok"], critic=["PASS"]
    )
    turn = asyncio.create_task(agent.orchestrator.submit("go"))
    while not agent.orchestrator.gate.pending:
        await asyncio.sleep(0)
    assert agent.of("ToolCallDecided")[0].decision == "auto_approved"
    [proposed_write] = [p for p in agent.of("ToolCallProposed") if p.tool == "write_file"]
    assert proposed_write.risk == "write"
    agent.orchestrator.cancel()
    result = await turn
    assert result.status == "cancelled"


async def test_clarify_ends_finished_without_tools_and_auto_passes(make_agent) -> None:
    agent = make_agent(classify=["task"], plan=['CLARIFY("Which folder do you mean?")'])
    result = await agent.orchestrator.submit("clean it up")
    assert (result.status, result.answer) == ("finished", "Which folder do you mean?")
    assert agent.of("ClarifyRequested")[0].question == "Which folder do you mean?"
    assert not agent.of("ToolCallProposed")
    [verdict] = agent.of("CriticVerdict")
    assert (verdict.verdict, verdict.auto) == ("PASS", True)


async def test_legacy_path_uses_prompted_format_and_ubid(make_agent) -> None:
    code = ubid("read_file")
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[f'CALL([{code}]) WITH {{"path": "notes.md"}}', "<final>You need milk.</final>"],
        critic=["PASS: the notes say milk"],
    )
    result = await agent.orchestrator.submit("what do I need?")
    assert result.answer == "You need milk."
    plan = agent.provider.requests[1]
    # The specs still travel (an engine constrains the CALL to them); the first step asks
    # for a call outright, the next one leaves the choice to the model.
    assert {t.function.name for t in plan.tools} >= {"read_file"}
    assert plan.tool_choice == "required"
    assert agent.provider.requests[2].tool_choice == "auto"
    assert code in plan.messages[0].content and "CALL(" in plan.messages[0].content
    observation = agent.provider.requests[2].messages[-1]
    assert observation.role == "user" and "buy milk" in observation.content
    assert "".join(e.text for e in agent.of("AnswerDelta")).strip() == "You need milk."


async def test_malformed_call_becomes_an_observation_then_recovers(make_agent) -> None:
    agent = make_agent(
        classify=["task"],
        plan=['<tool_call>{"name": "list_dir", "arguments": {oops}</tool_call>', LIST, "done"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("list")
    assert result.status == "finished"
    # Native path: the failure answers the call as a tool result (a user message would start a
    # new query for Qwen-style templates and lose the reasoning and the prompt cache).
    feedback = agent.provider.requests[2].messages[-1]
    assert feedback.role == "tool" and "not valid JSON" in feedback.content
    assert agent.provider.requests[2].messages[-2].tool_calls[0].id == feedback.tool_call_id
    assert agent.of("ErrorRaised")[0].recoverable
    assert agent.of("ToolCallFinished")[0].ok


async def test_a_call_naming_no_tool_is_told_the_tools_names(make_agent) -> None:
    """The 1.5B model wrote ``CALL(test_calc.py)`` to run the tests: what is wrong first is the
    name, and the list of tools is what leads it to shell_exec."""
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=["CALL(test_calc.py)", "<final>done</final>"],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit("run the tests")
    told = agent.provider.requests[2].messages[-1].content
    assert "unknown tool 'test_calc.py'" in told and "shell_exec" in told


async def test_step_cap_fails_the_turn_with_a_reason(make_agent) -> None:
    reads = [
        f'<tool_call>{{"name": "read_file", "arguments": {{"path": "notes.md", "offset": {i}}}}}</tool_call>'
        for i in range(1, 4)
    ]
    agent = make_agent(classify=["task"], plan=reads, max_steps=3)
    result = await agent.orchestrator.submit("loop")
    assert result.status == "failed"
    assert "after 3 planning steps" in result.reason
    assert agent.of("TurnFinished")[0].status == "failed"


async def test_three_identical_failing_calls_end_the_task(make_agent) -> None:
    bad = '<tool_call>{"name": "read_file", "arguments": {"path": "missing.txt"}}</tool_call>'
    agent = make_agent(classify=["task"], plan=[bad] * 5)
    result = await agent.orchestrator.submit("read it")
    assert result.status == "failed"
    assert "3 times in a row" in result.reason
    assert len(agent.of("ToolCallFinished")) == 1  # a read that just failed is not run again


async def test_a_failed_edit_leaves_what_was_read_as_read(make_agent, workspace) -> None:
    """After each failed edit the 1.5B model read the file again and made the same edit:
    an edit that failed changed nothing, so the read is not run again, and the same edit
    failing a third time ends the task instead of looping to the step cap."""
    (workspace / "shop.py").write_text("def total(items):\n    return 0\n")
    read = 'CALL(read_file) WITH {"path": "shop.py"}'
    edit = 'CALL(edit_file) WITH {"path": "shop.py", "old": "return 1", "new": "return sum(items)"}'
    agent = _calls_agent(make_agent, [read], edit, read, edit, read, edit, read, "Done.")
    result = await agent.orchestrator.submit("Fix total in shop.py: it must return the sum")
    assert [e.tool for e in agent.of("ToolCallProposed")] == ["read_file"] + ["edit_file"] * 3
    assert result.status == "failed"
    assert "3 times in a row" in result.reason
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert "did not go through" in str(plans[3].messages[-1].content)


async def test_script_running_out_is_an_error_and_a_failed_turn(make_agent) -> None:
    agent = make_agent(classify=["chat"])
    result = await agent.orchestrator.submit("hello")
    assert result.status == "failed"
    assert "no 'chat' reply left" in agent.of("ErrorRaised")[0].message


async def test_cancel_during_stream_ends_cancelled_and_history_stays_usable(make_agent) -> None:
    # Words that never repeat: a repeating reply would be cut off as a loop before the cancel.
    long_reply = [f"w{i} " for i in range(10_000)]
    agent = make_agent(classify=["chat", "chat"], chat=[long_reply, "second"])
    turn = asyncio.create_task(agent.orchestrator.submit("long"))
    while not agent.of("AnswerDelta"):
        await asyncio.sleep(0)
    assert agent.orchestrator.cancel()
    result = await asyncio.wait_for(turn, 1)
    assert result.status == "cancelled"
    assert agent.of("TurnFinished")[-1].status == "cancelled"
    again = await agent.orchestrator.submit("again")
    assert again.answer == "second"
    # The model is never handed words about the cancel as if it had said them.
    said = [m.content for m in agent.orchestrator.history if m.role == "assistant"]
    assert not any("cancel" in text.lower() for text in said)


async def test_provider_parsed_calls_are_dispatched(make_agent) -> None:
    agent = make_agent(
        classify=["task"],
        plan=[
            [{"tool_call": {"name": "read_file", "arguments": '{"path": "main.py"}'}}],
            "It prints hello.",
        ],
        critic=["PASS: yes"],
    )
    result = await agent.orchestrator.submit("what does main.py do")
    assert result.answer == "It prints hello."
    assert "print('hello')" in agent.of("ToolCallFinished")[0].observation


def test_intent_parsing_and_fallback_rule() -> None:
    assert parse_intent("Task.") == "task"
    assert parse_intent("this is chat") == "chat"
    assert parse_intent("Hello! How can I help?") is None
    assert rule_intent("list the files in src") == "task"
    assert rule_intent("what is the capital of France?") == "chat"


async def test_unreadable_classifier_reply_falls_back_to_the_rule(make_agent) -> None:
    agent = make_agent(classify=["Sure, happy to help!"], chat=["Paris."])
    await agent.orchestrator.submit("what is the capital of France?")
    assert agent.of("IntentClassified")[0].method == "rule"
    assert agent.of("IntentClassified")[0].intent == "chat"


def test_critic_rules() -> None:
    assert is_clarify_turn('CLARIFY("which?")', [])
    assert is_clarify_turn("Which file?", [])
    assert not is_clarify_turn("Which file?", [Step("list_dir", {"path": "."}, output="a.txt")])
    assert not is_clarify_turn("Done.", [])
    assert parse_verdict("FAIL - it never read the file") == ("FAIL", "it never read the file")
    assert parse_verdict("**PASS**: correct") == ("PASS", "correct")
    assert parse_verdict("looks fine") is None


async def test_unreadable_critic_reply_is_a_fail_not_a_pass(make_agent) -> None:
    agent = make_agent(classify=["task"], plan=["All done."], critic=["hmm"])
    await agent.orchestrator.submit("do it")
    [verdict] = agent.of("CriticVerdict")
    assert verdict.verdict == "FAIL" and "no verdict" in verdict.reason


def test_labelled_intent_set_is_large_and_balanced() -> None:
    import json
    from pathlib import Path

    rows = [
        json.loads(x)
        for x in (Path(__file__).parent.parent / "data" / "intents.jsonl").read_text().splitlines()
        if x
    ]
    labels = [r["intent"] for r in rows]
    assert len(rows) >= 40 and labels.count("chat") >= 15 and labels.count("task") >= 15


async def test_a_repeated_successful_call_is_not_run_again(make_agent) -> None:
    """Small models loop on a call that worked: the repeat is answered, not run, the next
    step must answer, and a model that still only calls gets the result as the answer."""
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[
            'CALL(list_dir) WITH {"path": "."}',
            'CALL(list_dir) WITH {"path": "."}',
            '<final>CALL(list_dir) WITH {"path": "."}',
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("list the files")
    assert result.status == "finished"
    assert len(agent.of("ToolCallStarted")) == 1
    assert "notes.md" in result.answer and "did not put the result into words" in result.answer
    assert [r.tool_choice for r in agent.provider.requests if r.purpose == "plan"] == [
        "required",
        "auto",
        "none",
    ]


async def test_two_repeated_reads_in_one_reply_leave_an_order_to_act_not_to_answer(
    make_agent, workspace
) -> None:
    """ "Fix the bug": the 1.5B model read both files, then in its next reply read both again.
    The first repeat told it to make the change and the second to answer, so it was made to
    answer, and gave the request back. What the next step must do is said once a reply; made
    to call, it read the files a third time, so that step offers only tools that change."""
    read_notes = 'CALL(read_file) WITH {"path": "notes.md"}'
    read_main = 'CALL(read_file) WITH {"path": "main.py"}'
    edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "milk", "new": "bread"}'
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[
            f"{read_notes}\n{read_main}",
            f"{read_main}\n{read_notes}",
            edit,
            "<final>Done.</final>",
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("change milk to bread in my shopping list")
    assert result.answer == "Done." and "bread" in (workspace / "notes.md").read_text()
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert plans[2].tool_choice == "required"
    # Told to make the change, and made to call, it is offered only the tools that make one.
    offered = {tool.function.name for tool in plans[2].tools or ()}
    assert "edit_file" in offered and not offered & {"read_file", "list_dir", "shell_exec"}
    assert "read_file" in {tool.function.name for tool in plans[3].tools or ()}


async def test_reads_that_alternate_in_a_loop_are_not_run_again(make_agent) -> None:
    """read, search, read, search… until the step limit (the 1.5B model on "Who had the
    highest score in data.csv?"): a read already done is answered, not run, and the next
    step must answer. A write in between makes reading again worth it."""
    read = 'CALL(read_file) WITH {"path": "notes.md"}'
    search = 'CALL(search_files) WITH {"pattern": "milk"}'
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[read, search, read, "<final>Buy milk.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("what does notes.md say?")
    assert (result.status, result.answer) == ("finished", "Buy milk.")
    assert [e.tool for e in agent.of("ToolCallProposed")] == ["read_file", "search_files"]
    assert [r.tool_choice for r in agent.provider.requests if r.purpose == "plan"][-1] == "none"

    write = 'CALL(write_file) WITH {"path": "notes.md", "content": "x", "mode": "append"}'
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[read, write, read, "<final>Done.</final>"],
        critic=["PASS: ok"],
    )
    await agent.orchestrator.submit("append x to notes.md and show it")
    assert [e.tool for e in agent.of("ToolCallProposed")] == [
        "read_file",
        "write_file",
        "read_file",
    ]


async def test_a_question_gets_no_write(make_agent, workspace) -> None:
    """Asked "Which function in utils.py reverses a string?", the 1.5B model once edited
    utils.py. A question that asks for no change has its writes shown denied before anyone
    is asked to approve them; the model is told to read, and answers."""
    edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "milk", "new": "bread"}'
    read = 'CALL(read_file) WITH {"path": "notes.md"}'
    agent = make_agent(
        policy="ask",
        native_tools=False,
        classify=["task"],
        plan=[edit, read, "<final>Milk.</final>"],
        critic=["PASS: ok"],
    )
    turn = asyncio.create_task(agent.orchestrator.submit("What does notes.md say to buy?"))
    asked = set()
    while not turn.done():
        for waiting in agent.of("ToolCallAwaitingDecision"):  # a read may ask; a write may not
            if waiting.call_id not in asked:
                asked.add(waiting.call_id)
                agent.orchestrator.decide(waiting.call_id, "approve")
        await asyncio.sleep(0)
    result = turn.result()
    assert (result.status, result.answer) == ("finished", "Milk.")
    proposed = {e.call_id: e.tool for e in agent.of("ToolCallProposed")}
    assert sorted(proposed.values()) == ["edit_file", "read_file"]
    assert [proposed[c] for c in asked] == ["read_file"]
    decided = [(proposed[e.call_id], e.decision, e.by) for e in agent.of("ToolCallDecided")]
    assert ("edit_file", "denied", "question") in decided
    assert "buy milk" in (workspace / "notes.md").read_text()
    told = [m.content for r in agent.provider.requests for m in r.messages]
    assert any("only asks a question" in str(text) for text in told)
    # No tool that writes was offered (a write named anyway is the guard's, above); reading
    # and running commands were.
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    offered = {t.function.name for r in plans for t in r.tools}
    assert {"read_file", "shell_exec"} <= offered
    assert not offered & {"edit_file", "write_file", "delete_path", "move_path"}
    assert "edit_file" not in (plans[0].messages[0].content or "")


async def test_an_order_to_run_gets_no_write(make_agent, workspace) -> None:
    """Told "Run python3 test_calc.py and tell me which test fails", the 1.5B model wrote a
    test_calc.py of its own, then appended to the real one. A request that orders only a run
    is offered no tool that writes, and a write named anyway is denied unasked."""
    (workspace / "test_calc.py").write_text("assert 1 + 1 == 3\n")
    write = 'CALL(write_file) WITH {"path": "test_calc.py", "content": "x", "mode": "append"}'
    run = 'CALL(shell_exec) WITH {"command": "python3 test_calc.py"}'
    agent = make_agent(
        policy="all",
        native_tools=False,
        classify=["task"],
        plan=[write, run, "<final>The assertion on line 1 fails.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit(
        "Run python3 test_calc.py and tell me which test fails."
    )
    assert result.status == "finished"
    decided = [(e.decision, e.by) for e in agent.of("ToolCallDecided")]
    assert decided[0] == ("denied", "run order")
    assert (workspace / "test_calc.py").read_text() == "assert 1 + 1 == 3\n"
    told = [str(m.content) for r in agent.provider.requests for m in r.messages]
    assert any("not for files to be changed" in text for text in told)
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    offered = {t.function.name for r in plans for t in r.tools}
    assert "shell_exec" in offered and not offered & {"write_file", "edit_file"}


async def test_a_change_that_cannot_be_made_fails_without_asking(make_agent, workspace) -> None:
    """An edit whose `old` is not in the file, an append to a file never read: nobody is asked
    to approve what cannot work; the model is told why, as if it had run."""
    edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "no such text", "new": "x"}'
    append = 'CALL(write_file) WITH {"path": "notes.md", "content": "x", "mode": "append"}'
    agent = make_agent(
        policy="ask",
        native_tools=False,
        classify=["task"],
        plan=[edit, append, "<final>Could not.</final>", "<final>Could not.</final>"],
        critic=["PASS: ok"],
    )
    before = (workspace / "notes.md").read_text()
    # Were anyone asked, the turn would wait for them: it must end by itself.
    result = await asyncio.wait_for(agent.orchestrator.submit("Change notes.md"), 10)
    assert result.status == "finished"
    assert not agent.of("ToolCallAwaitingDecision") and not agent.of("ToolCallDecided")
    finished = [(e.status, e.observation) for e in agent.of("ToolCallFinished")]
    assert finished[0][0] == "failed" and "does not occur" in finished[0][1]
    assert finished[1][0] == "failed" and before.splitlines()[0] in finished[1][1]  # shown
    assert (workspace / "notes.md").read_text() == before


async def test_a_change_request_is_offered_the_tools_that_write(make_agent) -> None:
    agent = make_agent(native_tools=False, classify=["task"], plan=["<final>ok</final>"])
    await agent.orchestrator.submit("Replace milk with bread in notes.md.")
    plan = next(r for r in agent.provider.requests if r.purpose == "plan")
    assert {"edit_file", "write_file"} <= {t.function.name for t in plan.tools}


async def test_a_dangerous_call_waits_without_always_on_offer(make_agent) -> None:
    dangerous = (
        '<tool_call>{"name": "shell_exec", "arguments": {"command": "rm -rf ."}}</tool_call>'
    )
    agent = make_agent(policy="ask", classify=["task"], plan=[dangerous, "ok"], critic=["PASS"])
    turn = asyncio.create_task(agent.orchestrator.submit("clean up"))
    while not agent.orchestrator.gate.pending:
        await asyncio.sleep(0)
    [waiting] = agent.of("ToolCallAwaitingDecision")
    assert (waiting.choices, waiting.always) == (["approve", "deny"], [])
    agent.orchestrator.decide(waiting.call_id, "deny")
    await turn
    assert agent.orchestrator.rules() == [] and not agent.of("RulesChanged")


async def test_a_message_is_classified_on_its_own_after_a_task(make_agent) -> None:
    agent = make_agent(
        classify=["task", "chat"],
        plan=[LIST, "Two files."],
        critic=["PASS: ok"],
        chat=["Rome."],
    )
    await agent.orchestrator.submit("list the files")
    await agent.orchestrator.submit("What is the capital of Italy?")
    classify = [r for r in agent.provider.requests if r.purpose == "classify"]
    assert len(classify) == 2
    # The second sees only its own message: the task before cannot make it a task.
    assert [m.role for m in classify[1].messages] == ["system", "user"]
    assert classify[1].messages[-1].content == "What is the capital of Italy?"


async def test_an_answer_that_only_repeats_the_request_is_sent_back_once(make_agent) -> None:
    request = "Fix the bug in calc.py so that the tests pass."
    agent = make_agent(
        classify=["task", "task"],
        # Sent back twice (it echoes; then it has changed nothing), then taken as it is.
        plan=[request, LIST, *["Fixed nothing yet: here is the folder."] * 2, *[request] * 3],
        critic=["FAIL: no", "FAIL: no"],
    )
    result = await agent.orchestrator.submit(request)
    assert result.answer == "Fixed nothing yet: here is the folder."
    told = [m.content for m in agent.orchestrator.history if m.role == "user"]
    assert any("repeats the request" in text for text in told)
    assert agent.of("ToolCallStarted")  # it was made to act
    again = await agent.orchestrator.submit(request)  # a model that insists is not looped
    assert again.status == "finished" and again.answer == request


@pytest.mark.parametrize(
    ("request_text", "answer"),
    [
        ("How many lines are in notes.md?", "2 lines are in notes.md"),
        ("Is milk in notes.md?", "Yes, milk is in notes.md"),
        # A word the read showed ("milk") is what was asked, not an echo.
        ("What should I buy, according to notes.md?", "According to notes.md, buy milk."),
    ],
)
async def test_an_answer_in_the_requests_words_with_a_number_or_yes_is_an_answer(
    make_agent, request_text: str, answer: str
) -> None:
    """Most of its words are the request's, but the number (the yes, the word found) is what
    was asked."""
    agent = make_agent(
        classify=["task"],
        plan=['CALL(read_file) WITH {"path": "notes.md"}', answer, "sent back"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit(request_text)
    assert result.answer == answer
    told = [m.content for m in agent.orchestrator.history if m.role == "user"]
    assert not any("repeats the request" in text for text in told)


async def test_an_order_answered_with_nothing_done_is_told_to_act_once(
    make_agent, workspace
) -> None:
    """The 1.5B model asked to fix a bug read the file and described the fix. An order to
    change answered before any change was tried is sent back once, and the next step must
    call; a second such answer is the answer (and the critic's to judge)."""
    read = 'CALL(read_file) WITH {"path": "notes.md"}'
    edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "milk", "new": "bread"}'
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[read, "Replace milk with bread on line 1.", edit, "<final>Done.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Replace milk with bread in notes.md.")
    assert (result.status, result.answer) == ("finished", "Done.")
    assert "bread" in (workspace / "notes.md").read_text()
    told = [m.content for m in agent.orchestrator.history if m.role == "user"]
    assert any("no file has been changed" in text for text in told)
    assert [r.tool_choice for r in agent.provider.requests if r.purpose == "plan"][2] == (
        "required"
    )

    stubborn = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[read, "Replace milk on line 1.", read, "<final>Replace milk on line 1.</final>"],
        critic=["FAIL: nothing changed"],
    )
    result = await stubborn.orchestrator.submit("Replace milk with bread in notes.md.")
    assert result.answer == "Replace milk on line 1."
    assert [e.tool for e in stubborn.of("ToolCallProposed")] == ["read_file"]

    # Ordered to run, the model wrote the script and said what it would print.
    write = 'CALL(write_file) WITH {"path": "sq.py", "content": "print(12**2)", "mode": "create"}'
    run = 'CALL(shell_exec) WITH {"command": "python3 sq.py"}'
    runner = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[write, "<final>144</final>", run, "<final>It printed 144.</final>"],
        critic=["PASS: ok"],
    )
    result = await runner.orchestrator.submit("Write sq.py to print 12 squared, then run it.")
    assert result.answer == "It printed 144."
    assert [e.tool for e in runner.of("ToolCallProposed")] == ["write_file", "shell_exec"]
    # The order is also a change, but the run is what is undone: only tools that run.
    offered = [r.tools for r in runner.provider.requests if r.purpose == "plan"][2]
    assert [tool.function.name for tool in offered or ()] == ["shell_exec"]

    # An answer right after a failed call may be reporting it: not sent back.
    missing = 'CALL(read_file) WITH {"path": "nowhere.md"}'
    reporting = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[missing, "<final>nowhere.md does not exist.</final>"],
        critic=["PASS"],
    )
    result = await reporting.orchestrator.submit("Replace milk with bread in nowhere.md.")
    assert result.answer == "nowhere.md does not exist."

    # A question is not an order: its answer is not sent back.
    asked = make_agent(
        native_tools=False, classify=["task"], plan=[read, "<final>Milk.</final>"], critic=["PASS"]
    )
    assert (await asked.orchestrator.submit("What does notes.md say?")).answer == "Milk."


class _CallScoring(ScriptedProvider):
    """A scripted model that can be scored: the chance it would start with a call."""

    call_chance = 0.5

    async def score_choices(self, request, options) -> dict[str, float]:
        if list(options) == ["CALL("]:
            return {"CALL(": math.log(self.call_chance)}
        return {label: (0.0 if label == "task" else -9.0) for label in options}


async def _first_plan(workspace, message: str, call_chance: float):
    provider = _CallScoring.from_replies(
        native_tools=False,
        plan=["<final>The capital of France is Paris.</final>"],
        critic=["PASS: it answers"],
    )
    provider.call_chance = call_chance
    agent = Agent(provider, workspace, "all")
    await agent.orchestrator.submit(message)
    return next(r for r in provider.requests if r.purpose == "plan")


async def test_a_first_call_is_forced_only_where_the_model_considers_one(workspace) -> None:
    # Asked something no tool does, a forced model makes up some call anyway (BFCL
    # irrelevance: 3 of 240 right when every first step was forced).
    unlikely = await _first_plan(workspace, "What is the capital of France?", call_chance=0.02)
    assert unlikely.tool_choice == "auto"
    likely = await _first_plan(workspace, "What is the capital of France?", call_chance=0.6)
    assert likely.tool_choice == "required"
    # A request about the workspace's own files is looked up, whatever the model would do.
    named = await _first_plan(workspace, "What does notes.md say?", call_chance=0.02)
    assert named.tool_choice == "required"
    files = await _first_plan(workspace, "list the files here", call_chance=0.02)
    assert files.tool_choice == "required"


def _legacy_agent(workspace, plan: list[str]) -> Agent:
    """An agent on a scripted legacy-format model that takes the request as a task, plans
    ``plan`` and approves everything."""
    provider = ScriptedProvider.from_replies(
        native_tools=False, classify=["task"], plan=plan, critic=["PASS: it answers"]
    )
    return Agent(provider, workspace, "all")


def _field_agent(workspace, plan: list[str]) -> Agent:
    """A legacy-format agent with a tool that needs numbers (as BFCL's and many MCP servers'
    tools do)."""
    from .test_grounding import MagneticField

    agent = _legacy_agent(workspace, plan)
    agent.orchestrator.registry.register(MagneticField())
    MagneticField.runs = 0
    return agent


async def test_a_first_call_with_numbers_nobody_gave_is_not_run(workspace) -> None:
    """Made to call with no tool that fits, the 1.5B model filled the nearest tool with numbers
    of its own (``current=10, distance=5`` for "current I at distance r"). Such a call is
    shown denied, nothing runs, and the model is asked for the answer instead."""
    from .test_grounding import FieldArgs, MagneticField

    guess = 'CALL(magnetic_field) WITH {"current": 10, "distance": 5}'
    agent = _field_agent(workspace, [guess, "<final>B = μ0·I / (2π·r).</final>"])
    symbols = "What is the magnetic field at distance r from a wire carrying current I?"
    result = await agent.orchestrator.submit(symbols)
    assert (result.status, result.answer) == ("finished", "B = μ0·I / (2π·r).")
    assert MagneticField.runs == 0
    assert [(e.decision, e.by) for e in agent.of("ToolCallDecided")] == [("denied", "value check")]
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert plans[1].tool_choice == "none"
    assert "needs 10, 5, and nobody gave that" in plans[1].messages[-1].content

    # The same call with the user's own numbers runs; an optional value nobody asked for is
    # left out, so the tool's default applies.
    given = 'CALL(magnetic_field) WITH {"current": 2, "distance": 4, "permeability": 4e-7}'
    agent = _field_agent(workspace, [given, "<final>1e-07 T.</final>"])
    result = await agent.orchestrator.submit("The magnetic field 4 m from a wire carrying 2 A?")
    assert result.answer == "1e-07 T."
    assert MagneticField.runs == 1
    assert MagneticField.last == FieldArgs(current=2, distance=4)
    [proposed] = agent.of("ToolCallProposed")
    assert proposed.arguments == {"current": 2, "distance": 4}


async def test_a_first_call_runs_without_the_list_items_nobody_said(workspace) -> None:
    """Asked for "a vegetarian pasta with cheese", the 1.5B model searched for ["Pasta",
    "Tomato sauce", "Cheese"]: once held back whole by the value check for the sauce, the
    call now runs with the ingredients the user named."""
    from .test_grounding import RecipeArgs, RecipeSearch

    padded = 'CALL(recipe_search) WITH {"ingredients": ["Pasta", "Tomato sauce", "Cheese"]}'
    agent = _legacy_agent(workspace, [padded, "<final>Cheesy pasta.</final>"])
    agent.orchestrator.registry.register(RecipeSearch())
    RecipeSearch.last = None
    result = await agent.orchestrator.submit("Give me a recipe for a vegetarian pasta with cheese.")
    assert result.answer == "Cheesy pasta."
    assert RecipeSearch.last == RecipeArgs(ingredients=["Pasta", "Cheese"])
    [proposed] = agent.of("ToolCallProposed")
    assert proposed.arguments == {"ingredients": ["Pasta", "Cheese"]}


async def test_a_request_that_names_a_tool_gets_a_call_its_values_checked_strictly(
    workspace,
) -> None:
    """ "Solve a quadratic equation where a=2, b=6, c=5" with a solve_quadratic_equation tool:
    the 1.5B model's chance of a call was 0.08 and it answered 0.5 itself. A request that
    names a tool is made to call, whatever that chance; since the model did not choose the
    call, each of its required values must have been said, 0 and 1 included."""
    from .test_grounding import FieldArgs, MagneticField

    def agent_for(call: str) -> Agent:
        provider = _CallScoring.from_replies(
            native_tools=False,
            classify=["task"],
            plan=[call, "<final>Done.</final>"],
            critic=["PASS: it answers"],
        )
        provider.call_chance = 0.02
        agent = Agent(provider, workspace, "all")
        agent.orchestrator.registry.register(MagneticField())
        MagneticField.runs = 0
        return agent

    asked = "What is the magnetic field 4 m from a wire carrying 2 A?"
    given = agent_for('CALL(magnetic_field) WITH {"current": 2, "distance": 4}')
    await given.orchestrator.submit(asked)
    first = next(r for r in given.provider.requests if r.purpose == "plan")
    assert first.tool_choice == "required"
    assert MagneticField.last == FieldArgs(current=2, distance=4)
    # A 1 nobody said would pass a call the model chose; not one it was made to make.
    one = agent_for('CALL(magnetic_field) WITH {"current": 1, "distance": 4}')
    await one.orchestrator.submit("What is the magnetic field 4 m from a wire?")
    assert MagneticField.runs == 0
    assert [e.by for e in one.of("ToolCallDecided")] == ["value check"]
    # Not named, the same unlikely call is left to the model.
    unnamed = agent_for("<final>Done.</final>")
    await unnamed.orchestrator.submit("How strong is the pull 4 m from a wire carrying 2 A?")
    first = next(r for r in unnamed.provider.requests if r.purpose == "plan")
    assert first.tool_choice == "auto"
    # A tool whose values the model writes is never named into a call: "write" is not an
    # order to call write_file.
    poem = agent_for("<final>Done.</final>")
    await poem.orchestrator.submit("Write me a short poem about the sea.")
    first = next(r for r in poem.provider.requests if r.purpose == "plan")
    assert first.tool_choice == "auto"


class _FitScoring(_CallScoring):
    """A scripted model that also judges whether a tool is made for the request."""

    fit = 0.5

    async def score_choices(self, request, options) -> dict[str, float]:
        if tuple(options) == ("yes", "no"):
            self.fit_questions.append(request.messages[-1].content)
            return {"yes": math.log(self.fit), "no": math.log(1 - self.fit)}
        return await super().score_choices(request, options)


async def test_a_first_call_to_a_tool_not_made_for_the_request_is_not_run(workspace) -> None:
    """Made to call, the 1.5B model calls the nearest tool with the values the user did give
    (a lawyer search for "where can I find a security guard in New York?"); the value check lets
    that through. Asked about the tool on its own, the model says it does not fit: the call is
    shown denied and the model answers instead."""
    from .test_grounding import MagneticField

    def agent_for(call: str, fit: float, call_chance: float = 0.6) -> Agent:
        provider = _FitScoring.from_replies(
            native_tools=False,
            classify=["task"],
            plan=[call, "<final>None of my tools does that.</final>"],
            critic=["PASS: it answers"],
        )
        provider.call_chance, provider.fit, provider.fit_questions = call_chance, fit, []
        agent = Agent(provider, workspace, "all")
        agent.orchestrator.registry.register(MagneticField())
        MagneticField.runs = 0
        return agent

    nearest = 'CALL(magnetic_field) WITH {"current": 2, "distance": 4}'
    asked = "What is the electric potential 4 m from a charge of 2 C?"
    unfit = agent_for(nearest, fit=0.2)
    result = await unfit.orchestrator.submit(asked)
    assert result.answer == "None of my tools does that."
    assert MagneticField.runs == 0
    assert [(e.decision, e.by) for e in unfit.of("ToolCallDecided")] == [("denied", "fit check")]
    [question] = unfit.provider.fit_questions
    assert MagneticField.description in question and asked in question
    plans = [r for r in unfit.provider.requests if r.purpose == "plan"]
    assert plans[1].tool_choice == "none"
    assert "magnetic_field does not do what the user asked" in plans[1].messages[-1].content

    # Nor one it is barely more sure fits than not (a boiling-point tool for a freezing
    # point: 0.54).
    barely = agent_for(nearest, fit=0.54)
    await barely.orchestrator.submit(asked)
    assert [(e.decision, e.by) for e in barely.of("ToolCallDecided")] == [("denied", "fit check")]

    # A tool the model takes to fit runs.
    fitting = agent_for(nearest, fit=0.9)
    await fitting.orchestrator.submit("What is the magnetic field 4 m from a wire carrying 2 A?")
    assert MagneticField.runs == 1

    # A tool the request names is not judged: its values are, strictly.
    named = agent_for(nearest, fit=0.2, call_chance=0.02)
    await named.orchestrator.submit("What is the magnetic field 4 m from a wire carrying 2 A?")
    assert (MagneticField.runs, named.provider.fit_questions) == (1, [])

    # Nor is a workspace tool: looking before answering is the model's to choose.
    look = agent_for('CALL(read_file) WITH {"path": "notes.md"}', fit=0.2)
    await look.orchestrator.submit("What should I buy today?")
    assert [e.decision for e in look.of("ToolCallDecided")] == ["auto_approved"]
    assert look.provider.fit_questions == []

    # At a low chance of a call (5-15 %) the step is made to call all the same, and the call
    # runs only if its tool clearly fits: "when was the Treaty of Lisbon signed?" with a
    # get_event_date tool scored 0.12, and the model answered from memory.
    unsure = agent_for(nearest, fit=0.9, call_chance=0.08)
    await unsure.orchestrator.submit("What is the pull 4 m from a wire carrying 2 A?")
    first = next(r for r in unsure.provider.requests if r.purpose == "plan")
    assert (first.tool_choice, MagneticField.runs) == ("required", 1)
    for call in (nearest, 'CALL(read_file) WITH {"path": "notes.md"}'):
        doubtful = agent_for(call, fit=0.7, call_chance=0.08)
        await doubtful.orchestrator.submit("What is the pull 4 m from a wire carrying 2 A?")
        assert [e.by for e in doubtful.of("ToolCallDecided")] == ["fit check"]
    # Under 5 % the model answers as it likes.
    unlikely = agent_for("<final>None of my tools does that.</final>", fit=0.9, call_chance=0.02)
    await unlikely.orchestrator.submit("What is the pull 4 m from a wire carrying 2 A?")
    first = next(r for r in unlikely.provider.requests if r.purpose == "plan")
    assert first.tool_choice == "auto"


async def test_a_first_step_about_the_workspace_drops_unasked_options_only(workspace) -> None:
    """A request that speaks of a command is forced to call and its numbers are not judged
    (they may come from files), but an option nobody asked for is left out there too: BFCL's
    "close firefox using taskkill command" came back with an extra ``"unit": "seconds"``."""
    from .test_grounding import FieldArgs, MagneticField

    call = 'CALL(magnetic_field) WITH {"current": 10, "distance": 5, "permeability": 4e-7}'
    agent = _field_agent(workspace, [call, "<final>4e-07 T.</final>"])
    await agent.orchestrator.submit("Run the magnetic_field command for my wire, please.")
    assert MagneticField.last == FieldArgs(current=10, distance=5)
    assert [e.decision for e in agent.of("ToolCallDecided")] == ["auto_approved"]


async def test_write_file_keeps_the_mode_the_request_asks_for_in_other_words(workspace) -> None:
    """ "Add a line" asks for append without the word: write_file's mode is never left out."""
    append = 'CALL(write_file) WITH {"path": "todo.txt", "content": "eggs\\n", "mode": "append"}'
    agent = _legacy_agent(workspace, [append, "<final>Added.</final>"])
    await agent.orchestrator.submit("Add a line saying eggs to todo.txt")
    [proposed] = agent.of("ToolCallProposed")
    assert proposed.arguments["mode"] == "append"


async def test_a_command_the_model_writes_is_not_a_guess(workspace) -> None:
    """A command line is written, not named: its digits and words are the model's own."""
    command = 'CALL(shell_exec) WITH {"command": "printf Zanzibar | head -c 100000"}'
    agent = _legacy_agent(workspace, [command, "<final>Zanzibar</final>"])
    await agent.orchestrator.submit("Greet me, please.")
    assert [(e.decision, e.by) for e in agent.of("ToolCallDecided")] == [
        ("auto_approved", "policy:all")
    ]


async def test_several_calls_in_one_reply_run_in_order_each_once(make_agent, workspace) -> None:
    """ "Show notes.md and list the files": both reads in one reply run, one after the other;
    the same call written twice runs once."""
    read = 'CALL(read_file) WITH {"path": "notes.md"}'
    listing = 'CALL(list_dir) WITH {"path": "."}'
    agent = _calls_agent(make_agent, [read, listing, read], "Buy milk; two files.")
    result = await agent.orchestrator.submit("show my shopping list and what else is here")
    assert result.status == "finished"
    assert [e.tool for e in agent.of("ToolCallProposed")] == ["read_file", "list_dir"]
    assert [e.ok for e in agent.of("ToolCallFinished")] == [True, True]
    second = [r for r in agent.provider.requests if r.purpose == "plan"][1]
    results = [m.content for m in second.messages if "milk" in str(m.content)]
    assert results and "main.py" in str(second.messages[-1].content)


async def test_a_task_about_the_workspace_asks_for_one_call_a_reply(make_agent, workspace) -> None:
    """Offered several calls a reply on a task about its files, the 1.5B model read names.txt,
    listed the folder, searched every line of every file and wrote the file it had not seen,
    all at once. A workspace task asks for one call a reply (prompt and grammar); a request
    about nothing in the workspace may still hold several (BFCL's parallel questions)."""
    agent = _calls_agent(make_agent, ['CALL(read_file) WITH {"path": "notes.md"}'], "Milk.")
    await agent.orchestrator.submit("what is in notes.md?")
    plan = next(r for r in agent.provider.requests if r.purpose == "plan")
    assert plan.parallel_tool_calls is False
    assert "one under the other" not in str(plan.messages[0].content)
    agent = _calls_agent(make_agent, [], "Sunny in both.")
    await agent.orchestrator.submit("what is the weather in Paris and in Rome?")
    plan = next(r for r in agent.provider.requests if r.purpose == "plan")
    assert plan.parallel_tool_calls is True
    assert "one under the other" in str(plan.messages[0].content)


SHOP_CHECK = "from shop import total\nassert total([1]) == 1\n"
SHOP_FIX = 'CALL(edit_file) WITH {"path": "shop.py", "old": "return 0", "new": "return sum(items)"}'


def _shop_failing_its_check(workspace) -> None:
    """shop.py, whose total() returns 0, and check.py (``SHOP_CHECK``), which it fails;
    ``SHOP_FIX`` mends it."""
    (workspace / "shop.py").write_text("def total(items):\n    return 0\n")
    (workspace / "check.py").write_text(SHOP_CHECK)


def _calls_agent(make_agent, calls: list[str], *then: str) -> Agent:
    """An agent whose first planning reply holds ``calls``, a line each, then ``then``: more
    replies, the last the final answer; every call approved by policy."""
    *more, answer = then
    plan = ["\n".join(calls), *more, f"<final>{answer}</final>"]
    return make_agent(
        policy="all", native_tools=False, classify=["task"], plan=plan, critic=["PASS: ok"]
    )


async def test_a_change_made_with_another_tools_call_waits_for_its_result(
    make_agent, workspace
) -> None:
    """Read a file and write it back in one reply: the write was made before the read's
    result was seen, a guess at it. It is shown denied, not run, and the model sees its reply
    as if it had stopped after the read (told of the put-off calls, the 1.5B model wrote them
    again); its next write, made after the read, runs. Calls put off so are not denials:
    three of them do not end the task as denied. Several writes of one tool are not held."""
    read = 'CALL(read_file) WITH {"path": "notes.md"}'
    guess = 'CALL(write_file) WITH {"path": "notes.md", "content": "guessed"}'
    guessed_edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "eggs", "new": "x"}'
    run = 'CALL(shell_exec) WITH {"command": "cat notes.md"}'
    seen = 'CALL(edit_file) WITH {"path": "notes.md", "old": "milk", "new": "bread"}'
    agent = _calls_agent(make_agent, [read, guess, guessed_edit, run], seen, "Changed it.")
    result = await agent.orchestrator.submit("change milk to bread in my shopping list")
    assert result.status == "finished"
    decided = [(e.decision, e.by) for e in agent.of("ToolCallDecided")]
    assert decided.count(("denied", "order check")) == 3
    text = (workspace / "notes.md").read_text()
    assert "bread" in text and "guessed" not in text
    second = [r for r in agent.provider.requests if r.purpose == "plan"][1]
    seen_reply = [m for m in second.messages if m.role == "assistant"][-1]
    assert seen_reply.content == read and "buy milk" in str(second.messages[-1].content)
    assert not any(
        "guessed" in str(m.content) or "Not run" in str(m.content) for m in second.messages
    )
    judged = next(r for r in agent.provider.requests if r.purpose == "critic").messages[-1]
    assert "1. read_file" in judged.content and "2. edit_file" in judged.content
    assert "write_file" not in judged.content and "shell_exec" not in judged.content

    first = 'CALL(write_file) WITH {"path": "a.txt", "content": "a"}'
    second = 'CALL(write_file) WITH {"path": "b.txt", "content": "b"}'
    agent = _calls_agent(make_agent, [first, second], "Made a.txt and b.txt.")
    await agent.orchestrator.submit("create a.txt containing a and b.txt containing b")
    assert (workspace / "a.txt").read_text() == "a" and (workspace / "b.txt").read_text() == "b"


async def test_an_order_whose_changes_were_all_put_off_is_not_answered_with_the_note(
    make_agent, workspace
) -> None:
    """ "Fix the bug": the 1.5B model read two files and, in the same reply, edited blind and
    ran the tests. The edit and the run were put off, and told of them, the model answered
    with the note about the edit; the task ended with nothing fixed. A put-off call is no
    step: answered after it, the order is still undone, and the model is told to act."""
    read = 'CALL(read_file) WITH {"path": "notes.md"}'
    guessed_edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "eggs", "new": "x"}'
    run = 'CALL(shell_exec) WITH {"command": "cat notes.md"}'
    echo = (
        "The edit_file call came in the same reply as read_file, before its result was seen. "
        "Read that result; then call edit_file again if it is still needed."
    )
    edit = 'CALL(edit_file) WITH {"path": "notes.md", "old": "milk", "new": "bread"}'
    agent = _calls_agent(make_agent, [read, guessed_edit, run], echo, edit, "Changed it.")
    result = await agent.orchestrator.submit("change milk to bread in my shopping list")
    assert result.answer == "Changed it."
    assert "bread" in (workspace / "notes.md").read_text()
    told = [str(m.content) for r in agent.provider.requests for m in r.messages]
    assert any("no file has been changed yet" in t for t in told)


async def test_a_run_after_a_write_in_one_reply_goes_on_unless_the_write_failed(
    make_agent, workspace
) -> None:
    """ "Write square.py and run it": the run needs the write done, not its result, so both
    run (put off, the 1.5B answered "I did not run it"). After a write that did not go
    through, the run waits: it would run something other than what the model meant."""
    write = 'CALL(write_file) WITH {"path": "square.py", "content": "print(12 ** 2)"}'
    run = 'CALL(shell_exec) WITH {"command": "python3 square.py"}'
    agent = _calls_agent(make_agent, [write, run], "It prints 144.")
    result = await agent.orchestrator.submit("write square.py printing 12 squared, run it")
    assert result.status == "finished"
    assert [e.ok for e in agent.of("ToolCallFinished")] == [True, True]
    assert "144" in agent.of("ToolCallFinished")[1].observation

    (workspace / "main.py").write_text("print('old')\n")  # exists and unread: a create fails
    write = 'CALL(write_file) WITH {"path": "main.py", "content": "print(1)", "mode": "create"}'
    run = 'CALL(shell_exec) WITH {"command": "python3 main.py"}'
    agent = _calls_agent(make_agent, [write, run], "Could not write main.py.")
    await agent.orchestrator.submit("make main.py print 1 and run it")
    decided = [(e.decision, e.by) for e in agent.of("ToolCallDecided")]
    assert decided[-1] == ("denied", "order check")
    second = [r for r in agent.provider.requests if r.purpose == "plan"][1]
    assert "main.py already exists" in str(second.messages[-1].content)
    assert not any("python3 main.py" in str(m.content) for m in second.messages)


async def test_a_request_that_names_a_check_runs_it_first_and_after_the_change(
    make_agent, workspace
) -> None:
    """ "Fix main.py so that `python3 main.py` passes": told to fix first, the 1.5B model
    edited the function the check does not fail on. The first step offers only the tool that
    runs commands; an answer given after a change with the check not run since is sent back
    once, to run it."""
    run = 'CALL(shell_exec) WITH {"command": "python3 main.py"}'
    edit = 'CALL(edit_file) WITH {"path": "main.py", "old": "hello", "new": "hi"}'
    agent = _calls_agent(make_agent, [run], edit, "<final>Fixed.</final>", run, "Fixed; it passes.")
    result = await agent.orchestrator.submit("Fix main.py so that `python3 main.py` passes.")
    assert result.status == "finished" and result.answer == "Fixed; it passes."
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert [t.function.name for t in plans[0].tools] == ["shell_exec"]
    assert plans[0].tool_choice == "required"
    assert "have not run `python3 main.py` since" in str(plans[3].messages[-1].content)
    assert [t.function.name for t in plans[3].tools] == ["shell_exec"]
    assert [e.tool for e in agent.of("ToolCallProposed")] == [
        "shell_exec",
        "edit_file",
        "shell_exec",
    ]


async def test_a_failing_check_reported_back_is_sent_back_to_fix(make_agent, workspace) -> None:
    """The 1.5B model ran the check, then asked the user to fix what it printed; told to
    correct its call, it ran the same check again. Reporting the check's failure is sent back
    once for each failure: fix it (the next step offers tools that read or write)."""
    run = 'CALL(shell_exec) WITH {"command": "python3 main.py --missing-flag && false"}'
    agent = _calls_agent(
        make_agent, [run], 'CLARIFY("It fails; please fix main.py.")', "I could not fix it."
    )
    prompt = "Fix main.py so that `python3 main.py --missing-flag && false` passes."
    result = await agent.orchestrator.submit(prompt)
    assert result.status == "finished"
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    told = str(plans[2].messages[-1].content)
    assert "is what the request asks you to fix" in told
    assert {t.function.name for t in plans[2].tools} >= {"read_file", "edit_file"}
    assert "shell_exec" not in {t.function.name for t in plans[2].tools}
    assert plans[2].tool_choice == "required"


@pytest.mark.parametrize(
    "advice",
    [
        "You need to change total to return sum(items).",
        'CLARIFY("Please change total in shop.py to return sum(items).")',
    ],
)
async def test_a_fix_described_after_the_failing_check_is_sent_back_to_be_made(
    make_agent, workspace, advice: str
) -> None:
    """ "Make `python3 check.py` pass": the 1.5B model ran the check, read the faulty line and
    answered with the fix for the user to make. Running the check is not the change: the
    answer is sent back, and the next step offers only tools that write. Handed back as a
    CLARIFY that asks nothing, it is no question either."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    read = 'CALL(read_file) WITH {"path": "shop.py"}'
    edit = SHOP_FIX
    agent = _calls_agent(make_agent, [run], "It fails.", read, advice, edit, run, "Fixed.")
    result = await agent.orchestrator.submit("Make `python3 check.py` pass.")
    assert result.answer == "Fixed."
    assert "sum(items)" in (workspace / "shop.py").read_text()
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert "no file has been changed yet" in str(plans[4].messages[-1].content)
    writers = {"write_file", "edit_file", "delete_path", "move_path", "copy_path", "make_dir"}
    assert {t.function.name for t in plans[4].tools} <= writers


async def test_a_clarify_asking_the_user_to_run_the_check_is_sent_back_to_run_it(
    make_agent, workspace
) -> None:
    """After its change, the 1.5B model replied CLARIFY("… Please run `python3 test_units.py`
    again to verify"): the check the request names is the agent's to run."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    edit = SHOP_FIX
    verify = 'CLARIFY("I changed total. Please run `python3 check.py` again to verify.")'
    agent = _calls_agent(make_agent, [run], edit, verify, run, "Fixed; it passes.")
    result = await agent.orchestrator.submit("Make `python3 check.py` pass.")
    assert result.answer == "Fixed; it passes."
    assert [e.tool for e in agent.of("ToolCallProposed")] == [
        "shell_exec",
        "edit_file",
        "shell_exec",
    ]


async def test_a_failing_check_sent_back_says_where_what_it_calls_is_defined(
    make_agent, workspace
) -> None:
    """Sent to read the code the failure points to, the 1.5B model read the check itself."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    agent = _calls_agent(make_agent, [run], "It fails.", "I could not fix it.")
    await agent.orchestrator.submit("Fix shop.py so that `python3 check.py` passes.")
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert "What it calls is defined at shop.py:1" in str(plans[2].messages[-1].content)


async def test_a_script_said_to_be_failing_is_run_first_and_kept_as_it_is(
    make_agent, workspace
) -> None:
    """ "check_catalog.py is failing. Please fix the code so it passes": never made to run
    it, the 1.5B model edited the check's assertion to what the code returned. The script is
    the check: the first step may only run a command, and a write to the script is refused
    without asking, with where the code its failure calls is defined; the code it tests is
    what changes."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python check.py"}'
    weaken = 'CALL(edit_file) WITH {"path": "check.py", "old": "== 1", "new": "== 0"}'
    edit = SHOP_FIX
    agent = _calls_agent(make_agent, [run], weaken, edit, run, "Fixed; it passes.")
    result = await agent.orchestrator.submit("check.py is failing. Please fix the code.")
    assert result.answer == "Fixed; it passes."
    assert (workspace / "check.py").read_text() == SHOP_CHECK
    assert "sum(items)" in (workspace / "shop.py").read_text()
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert [t.function.name for t in plans[0].tools] == ["shell_exec"]
    assert plans[0].tool_choice == "required"
    assert not any("run it first" in str(m.content) for m in plans[0].messages)  # it is plain
    decided = [(e.decision, e.by) for e in agent.of("ToolCallDecided")]
    assert decided[1] == ("denied", "check")
    told = str(plans[2].messages[-1].content)
    assert "check.py is the check the request says must pass" in told
    assert "What its failure calls is defined at shop.py:1: change that." in told


async def test_a_shell_command_that_edits_the_check_is_refused_like_an_edit(
    make_agent, workspace
) -> None:
    """Refused an edit of the check, a model may write it with ``sed -i`` or a redirection
    instead: the command names the script to write, so it is refused the same way, while
    a command that only runs the check still runs."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python check.py"}'
    weaken = 'CALL(shell_exec) WITH {"command": "sed -i s/1$/0/ check.py"}'
    overwrite = 'CALL(shell_exec) WITH {"command": "echo pass > ./check.py"}'
    agent = _calls_agent(make_agent, [run], weaken, overwrite, SHOP_FIX, run, "Fixed.")
    await agent.orchestrator.submit("check.py is failing. Please fix the code.")
    assert (workspace / "check.py").read_text() == SHOP_CHECK
    decided = [(e.decision, e.by) for e in agent.of("ToolCallDecided")]
    assert decided[1:3] == [("denied", "check"), ("denied", "check")]
    assert decided[-1][0] != "denied"  # running it is not writing it


async def test_a_fix_answered_undone_is_told_to_change_a_line_and_keep_names(
    make_agent, workspace
) -> None:
    """Told only "make the change now" after describing the bug, the 1.5B model renamed the
    function the check calls, in four fix tasks of four: the note says which line to change
    and to keep the names the check calls."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    read = 'CALL(read_file) WITH {"path": "shop.py"}'
    agent = _calls_agent(
        make_agent,
        [run],
        "<final>total returns 0, not 1.</final>",
        read,
        "<final>total should add up the items.</final>",
        SHOP_FIX,
        run,
        "Fixed.",
    )
    result = await agent.orchestrator.submit("Fix shop.py so that python3 check.py passes.")
    assert result.answer == "Fixed."
    notes = [str(r.messages[-1].content) for r in agent.provider.requests if r.purpose == "plan"]
    told = next(n for n in notes if "no file has been changed yet" in n)
    assert "the line that computes the wrong value" in told and "Keep every function's name" in told


async def test_a_rename_the_named_check_imports_is_refused_every_time(
    make_agent, workspace
) -> None:
    """Told "Fix shop.py so that python3 check.py passes", the 1.5B model renamed total, was
    told check.py imports it, and made the same rename again, which a rename elsewhere may
    do: check.py, which the work may not change, then failed on its import. A name the
    named check imports is never taken away; another file's is held once, as before."""
    _shop_failing_its_check(workspace)
    (workspace / "app.py").write_text("from shop import total\n")
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    rename = 'CALL(edit_file) WITH {"path": "shop.py", "old": "total", "new": "total_sum"}'
    agent = _calls_agent(make_agent, [run], rename, rename, SHOP_FIX, run, "Fixed.")
    await agent.orchestrator.submit("Fix shop.py so that python3 check.py passes.")
    assert (workspace / "shop.py").read_text() == "def total(items):\n    return sum(items)\n"
    finished = [e for e in agent.of("ToolCallFinished") if e.call_id != "call-1"]
    said = "check.py is the check the request names, which stays as it is"
    assert [said in e.observation for e in finished[:2]] == [True, True]
    # With the function's lines, for the edit to make instead.
    assert finished[0].observation.endswith("Its lines:\ndef total(items):\n    return 0")
    assert finished[-1].ok  # the check passes with the name kept
    # Asked for the rename itself, with no check named, the second call goes through.
    _shop_failing_its_check(workspace)
    other = _calls_agent(make_agent, [rename], rename, "Renamed.")
    await other.orchestrator.submit("Rename total in shop.py to total_sum.")
    assert "def total_sum(items)" in (workspace / "shop.py").read_text()


async def test_a_file_of_pytest_tests_said_to_be_failing_is_said_how_to_run(
    make_agent, workspace
) -> None:
    """Run as a script, a file of pytest tests only passes doing nothing: the command that
    runs it is said before the first step."""
    (workspace / "test_shop.py").write_text("def test_total():\n    assert False\n")
    agent = _calls_agent(make_agent, ['CALL(shell_exec) WITH {"command": "ls"}'], "Done.")
    await agent.orchestrator.submit("test_shop.py is failing, fix the code")
    first = next(r for r in agent.provider.requests if r.purpose == "plan")
    said = "run with `python3 -m pytest -q test_shop.py`: run it first"
    assert any(said in str(m.content) for m in first.messages)


async def test_a_script_the_request_names_as_the_work_may_be_changed(make_agent, workspace) -> None:
    """ "Fix check.py so that `python3 check.py` passes": the script is the work, not only
    the check."""
    (workspace / "check.py").write_text("assert 1 == 2\n")
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    edit = 'CALL(edit_file) WITH {"path": "check.py", "old": "1 == 2", "new": "2 == 2"}'
    agent = _calls_agent(make_agent, [run], edit, run, "Fixed.")
    await agent.orchestrator.submit("Fix check.py so that `python3 check.py` passes.")
    assert (workspace / "check.py").read_text() == "assert 2 == 2\n"


async def test_a_count_over_a_data_file_is_worked_out_with_python(make_agent, workspace) -> None:
    """ "How many books in books.json came out before 1950?": the 1.5B model read the file
    and said 3 of 2. The agent says, before the first step, what the file holds and how
    Python loads it; an answer given with nothing run is sent back once, to run it."""
    books = [{"title": "Dune", "year": 1965}, {"title": "The Hobbit", "year": 1937}]
    (workspace / "books.json").write_text(json.dumps(books))
    read = 'CALL(read_file) WITH {"path": "books.json"}'
    program = "import json; data = json.load(open('books.json')); print(sum(b['year'] < 1950 for b in data))"
    run = json.dumps({"command": f'python3 -c "{program}"'})
    agent = _calls_agent(
        make_agent, [read], "<final>2 books.</final>", f"CALL(shell_exec) WITH {run}", "1 book."
    )
    result = await agent.orchestrator.submit("How many books in books.json came out before 1950?")
    assert result.answer == "1 book."
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    note = str(plans[0].messages[-1].content)
    assert "a list of 2 records, each with the keys 'title', 'year'" in note
    assert "json.load(open('books.json'))" in note
    assert "nothing has been run yet" in str(plans[2].messages[-1].content)
    assert agent.of("ToolCallFinished")[-1].observation.strip().endswith("1")
    # An order to change the file is done by an edit: no hint, and no run asked for.
    agent = _calls_agent(make_agent, [read], "Removed it.")
    result = await agent.orchestrator.submit("Remove the oldest book from books.json.")
    first = next(r for r in agent.provider.requests if r.purpose == "plan")
    assert not any("json.load" in str(m.content) for m in first.messages)


async def test_an_answer_that_ignores_what_the_run_printed_is_sent_back_once(
    make_agent, workspace
) -> None:
    """The 1.5B model ran the line that works out the warmest city, got "Cairo", and
    answered that the file holds no temperatures. The answer is sent back once with what
    was printed; an answer that says it stands, and a second miss is heard."""
    (workspace / "stations.csv").write_text("city,temp_c\nOslo,-3\nCairo,27\n")
    program = "import csv; rows = list(csv.DictReader(open('stations.csv'))); print(max(rows, key=lambda r: int(r['temp_c']))['city'])"
    run = "CALL(shell_exec) WITH " + json.dumps({"command": f'python3 -c "{program}"'})
    question = "Which city in stations.csv is the warmest?"
    agent = _calls_agent(make_agent, [run], "The file holds no temperatures.", "Cairo.")
    result = await agent.orchestrator.submit(question)
    assert result.answer == "Cairo."
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    assert "Your command printed `Cairo`" in str(plans[2].messages[-1].content)
    agent = _calls_agent(make_agent, [run], "Oslo.", "Oslo, I insist.")
    assert (await agent.orchestrator.submit(question)).answer == "Oslo, I insist."
    agent = _calls_agent(make_agent, [run], "The warmest city is Cairo.")
    assert (await agent.orchestrator.submit(question)).answer == "The warmest city is Cairo."


async def test_an_order_to_use_a_python_file_is_told_how_to_run_it(make_agent, workspace) -> None:
    """ "Use units.py to convert 10 miles to kilometres" orders a run, not a change: the 1.5B
    model, answering with nothing run, was told "no file has been changed yet", edited
    units.py and was refused. It is told to run, and how a function of the file is run."""
    (workspace / "units.py").write_text("def miles_to_km(miles):\n    return miles * 1.609344\n")
    read = 'CALL(read_file) WITH {"path": "units.py"}'
    run = (
        'CALL(shell_exec) WITH {"command": '
        '"python3 -c \\"from units import miles_to_km; print(miles_to_km(10))\\""}'
    )
    agent = make_agent(
        policy="all",
        native_tools=False,
        classify=["task"],
        plan=[read, "<final>miles_to_km converts miles.</final>", run, "<final>16.09344</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Use units.py to convert 10 miles to kilometres.")
    assert (result.status, result.answer) == ("finished", "16.09344")
    told = [str(m.content) for r in agent.provider.requests for m in r.messages]
    assert any("nothing has been run yet" in text and "from units import" in text for text in told)
    assert not any("no file has been changed" in text for text in told)
    assert "16.09344" in agent.of("ToolCallFinished")[-1].observation


@pytest.mark.parametrize(
    ("call", "failure"),
    [
        ('CALL(search_files) WITH {"pattern": "def", "path": "tests"}', "does not exist"),
        ('CALL(shell_exec) WITH {"command": "python3 -c \'assert 1 == 2\'"}', "AssertionError"),
    ],
)
async def test_a_read_or_command_that_just_failed_is_not_run_again(
    make_agent, call: str, failure: str
) -> None:
    """The 1.5B model searched the missing folder "tests" twice in a row; asked whether a
    function had a bug, it ran the failing tests three times. Nothing changed in between, so
    the second call is not run: the model is told it would fail the same way."""
    agent = make_agent(
        policy="all",
        native_tools=False,
        classify=["task"],
        plan=[call, call, "<final>There is no tests folder.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Which functions do the tests in tests/ test?")
    assert result.status == "finished"
    [finished] = agent.of("ToolCallFinished")
    assert finished.status == "failed" and failure in finished.observation
    told = [str(m.content) for r in agent.provider.requests for m in r.messages]
    assert any("already made this exact call and it failed" in text for text in told)
    assert not any("Use that path" in text for text in told)


async def test_a_failed_read_made_again_is_told_the_entry_its_result_named(
    make_agent, workspace
) -> None:
    """Told "tests does not exist; did you mean test_units.py?" and, making the same search,
    only to correct the call, the 1.5B model searched the missing folder a third time."""
    (workspace / "test_units.py").write_text("def test_one():\n    pass\n")
    search = 'CALL(search_files) WITH {"pattern": "def", "path": "tests"}'
    agent = _calls_agent(make_agent, [search], search, "None.")
    await agent.orchestrator.submit("Which functions do the tests test?")
    told = [str(r.messages[-1].content) for r in agent.provider.requests if r.purpose == "plan"]
    assert "It asked: did you mean test_units.py? Use that path." in told[2]


async def test_an_answer_after_a_failure_that_names_the_likely_entry_is_sent_back(
    make_agent, workspace
) -> None:
    """Told "tests does not exist; did you mean test_units.py?", the 1.5B model answered
    "test_units.py is the correct file to test" instead of reading it. An answer right after
    such a failure is sent back once to correct the call; a plain failure may be the answer."""
    (workspace / "test_units.py").write_text("assert 1 == 1\n")
    search = 'CALL(search_files) WITH {"pattern": "def", "path": "tests"}'
    read = 'CALL(read_file) WITH {"path": "test_units.py"}'
    agent = make_agent(
        policy="all",
        native_tools=False,
        classify=["task"],
        plan=[search, "<final>test_units.py is the file.</final>", read, "<final>None.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Which functions does test_units.py test?")
    assert result.answer == "None."
    assert [e.observation.split("\n")[0] for e in agent.of("ToolCallFinished")][1] == (
        "test_units.py (1 line):"
    )
    missing = make_agent(
        policy="all",
        native_tools=False,
        classify=["task"],
        plan=['CALL(read_file) WITH {"path": "zzz.md"}', "<final>zzz.md does not exist.</final>"],
        critic=["PASS: ok"],
    )
    answered = await missing.orchestrator.submit("What does zzz.md say?")
    assert answered.answer == "zzz.md does not exist."


async def test_a_clarify_handing_back_a_question_about_an_unread_file_is_sent_to_read_it(
    make_agent, workspace
) -> None:
    """Shown three lines of calc.py by a search, the 1.5B model said CLARIFY("… it does not
    provide any information about the bug") without reading the file the request names. It is
    told once to read it; once read, a CLARIFY that asks nothing goes to the user."""
    (workspace / "calc.py").write_text("def average(xs):\n    return sum(xs) / (len(xs) - 1)\n")
    search = 'CALL(search_files) WITH {"pattern": "def average", "path": "."}'
    read = 'CALL(read_file) WITH {"path": "calc.py"}'
    gave_up = 'CLARIFY("The search does not show anything about a bug.")'
    answer = "Yes: it divides by len(xs) - 1 instead of len(xs)."
    agent = _calls_agent(make_agent, [search], gave_up, read, answer)
    result = await agent.orchestrator.submit("Is there a bug in average in calc.py? Explain.")
    assert result.answer == answer
    assert [e.tool for e in agent.of("ToolCallProposed")] == ["search_files", "read_file"]
    told = [str(r.messages[-1].content) for r in agent.provider.requests if r.purpose == "plan"]
    assert "calc.py, the file the request names, has not been read yet" in told[2]

    read_first = _calls_agent(make_agent, [read], gave_up, "unused")
    handed_back = await read_first.orchestrator.submit("Is there a bug in calc.py? Explain.")
    assert handed_back.answer == "The search does not show anything about a bug."


async def test_a_fix_to_a_function_the_failing_check_does_not_name_is_held_once(
    make_agent, workspace
) -> None:
    """Told to make test_units.py pass, its output naming km_to_miles, the 1.5B model edited
    miles_to_km, the function above it. Such an edit is held back once, naming the function
    the check fails in; an edit there runs, and the same edit made again goes ahead."""
    units = "def miles_to_km(m):\n    return m * 1.6\n\n\ndef km_to_miles(k):\n    return k * 1.6\n"
    (workspace / "units.py").write_text(units)
    (workspace / "check.py").write_text(
        "from units import km_to_miles\nassert km_to_miles(16) == 10\n"
    )
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    wrong = 'CALL(edit_file) WITH {"path": "units.py", "old": "return m * 1.6", "new": "return m"}'
    right = 'CALL(edit_file) WITH {"path": "units.py", "old": "return k * 1.6", "new": "return k / 1.6"}'
    agent = _calls_agent(make_agent, [run], wrong, right, run, "Fixed; it passes.")
    result = await agent.orchestrator.submit("Make `python3 check.py` pass.")
    assert result.answer == "Fixed; it passes."
    [held] = [e for e in agent.of("ToolCallDecided") if e.decision != "auto_approved"]
    assert held.by == "fix check"
    told = [str(r.messages[-1].content) for r in agent.provider.requests if r.purpose == "plan"]
    assert "the check fails in km_to_miles (units.py:5)" in told[2]
    assert (workspace / "units.py").read_text().endswith("return k / 1.6\n")
    assert "return m * 1.6" in (workspace / "units.py").read_text()

    (workspace / "units.py").write_text(units)
    insisting = _calls_agent(make_agent, [run], wrong, wrong, "Changed miles_to_km.")
    await insisting.orchestrator.submit("Make `python3 check.py` pass.")
    assert "return m\n" in (workspace / "units.py").read_text()  # made again: it goes ahead


async def test_an_answer_while_the_named_check_still_fails_is_sent_back_once(
    make_agent, workspace
) -> None:
    """The 1.5B model's change broke the check's import; it read two files and answered that
    the check passed. With nothing written since the check last failed, the answer is sent
    back once, saying where what the check calls is defined."""
    _shop_failing_its_check(workspace)
    run = 'CALL(shell_exec) WITH {"command": "python3 check.py"}'
    read = 'CALL(read_file) WITH {"path": "check.py"}'
    fix = SHOP_FIX
    agent = _calls_agent(make_agent, [run], read, "It passes now.", fix, run, "Fixed.")
    result = await agent.orchestrator.submit("Make `python3 check.py` pass.")
    assert result.answer == "Fixed."
    told = [str(r.messages[-1].content) for r in agent.provider.requests if r.purpose == "plan"]
    assert "What it calls is defined at shop.py:1" in told[3]
    assert "sum(items)" in (workspace / "shop.py").read_text()
