"""What small models need from the agent: loops cut off, bare JSON calls accepted, questions
about a workspace file treated as tasks, the request asked back not taken for a question."""

from __future__ import annotations

import json
from pathlib import Path

from pheron_tui.core.bus import EventBus
from pheron_tui.core.call_format import LEGACY
from pheron_tui.core.intent import (
    CodePlace,
    code_places,
    defines,
    named_entries,
    names_a_workspace_entry,
    names_code_in_workspace,
)
from pheron_tui.core.messages import (
    CompletionRequest,
    DoneChunk,
    FunctionSpec,
    Message,
    PromptProgressChunk,
    TextChunk,
    ToolSpec,
)
from pheron_tui.core.parsing import parse_reply
from pheron_tui.core.removal_order import ordered_removed
from pheron_tui.core.result_question import asked_result, result_run_hint
from pheron_tui.core.setting_answer import Contradiction, contradicted
from pheron_tui.core.streaming import repeating_tail, stream_reply

SCHEMAS = {"read_file": {"properties": {"path": {"type": "string"}}}, "list_dir": {}}


async def test_a_looping_reply_is_cut_off_and_said_so(make_agent) -> None:
    looping = ["A: Python\n"] * 500
    agent = make_agent(classify=["chat"], chat=[looping])
    result = await agent.orchestrator.submit("What language is this?")
    assert result.status == "finished"
    assert len(result.answer) < 1500  # not the 5,000 characters of the loop
    errors = [e.message for e in agent.of("ErrorRaised")]
    assert any("kept repeating itself" in m and "A: Python" in m for m in errors)


async def test_a_reply_that_writes_a_call_again_ends_there_quietly(make_agent) -> None:
    """Allowed several calls a reply, SmolLM2 wrote `CALL(list_dir) WITH {"path": "."}` line
    after line until the loop guard cut it off with an error. A call written again ends the
    reply where it is: the calls before stand, each runs once, and no error is shown."""
    line = 'CALL(list_dir) WITH {"path": "."}\n'
    other = 'CALL(read_file) WITH {"path": "notes.md"}\n'
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[[line, other, *[line] * 40], "<final>main.py and notes.md.</final>"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("what is here, and what is on my shopping list?")
    assert result.status == "finished"
    assert [e.tool for e in agent.of("ToolCallProposed")] == ["list_dir", "read_file"]
    assert not agent.of("ErrorRaised")
    second = [r for r in agent.provider.requests if r.purpose == "plan"][1]
    [said] = [m.content for m in second.messages if m.role == "assistant"]
    assert said.count("CALL(list_dir)") == 2  # it stopped at the copy


def test_repetition_is_found_only_when_it_runs_on() -> None:
    assert repeating_tail("The same sentence again. " * 30) == "The same sentence again. "
    prose = " ".join(f"word{i}" for i in range(300))
    assert repeating_tail(prose) is None
    assert repeating_tail("short. " * 5) is None


def test_bare_and_fenced_json_naming_a_tool_is_a_call() -> None:
    fenced = 'Let me look.\n```json\n{"name": "read_file", "arguments": {"path": "calc.py"}}\n```'
    parsed = parse_reply(fenced, SCHEMAS)
    assert parsed.kind == "tool_calls" and parsed.text == "Let me look."
    assert [(c.name, c.arguments) for c in parsed.calls] == [("read_file", {"path": "calc.py"})]
    bare = '{"name": "list_dir", "arguments": "{\\"path\\": \\".\\"}"}'
    assert parse_reply(bare, SCHEMAS).calls[0].arguments == {"path": "."}


def test_json_that_names_no_tool_stays_text() -> None:
    for text in (
        'The config is {"name": "server", "arguments": {"port": 80}}.',
        '{"name": "read_file", "arguments": ["calc.py"]}',
        "A set: {1, 2}",
    ):
        assert parse_reply(text, SCHEMAS).kind == "final", text


async def test_a_bare_call_runs_the_tool(make_agent, workspace: Path) -> None:
    call = '```json\n{"name": "read_file", "arguments": {"path": "notes.md"}}\n```'
    agent = make_agent(
        classify=["task"], plan=[call, "It says buy milk."], critic=["PASS: it does"]
    )
    result = await agent.orchestrator.submit("What is in notes.md?")
    [finished] = agent.of("ToolCallFinished")
    assert finished.ok and "buy milk" in finished.observation
    assert result.answer == "It says buy milk."


async def test_a_message_naming_a_workspace_file_is_a_task(make_agent) -> None:
    # The model would call it chat; the file exists, so it is a task.
    agent = make_agent(classify=["chat"], plan=["It prints hello."], critic=["PASS: ok"])
    await agent.orchestrator.submit("What does main.py do?")
    [intent] = agent.of("IntentClassified")
    assert (intent.intent, intent.method) == ("task", "workspace")


def test_only_real_entries_with_file_like_names_count(workspace: Path) -> None:
    (workspace / "test").mkdir()
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "utils.py").write_text("")
    assert names_a_workspace_entry("explain notes.md please", workspace)
    assert names_a_workspace_entry("what is in ./main.py?", workspace)
    assert names_a_workspace_entry("is there a bug in utils.py?", workspace)  # found below
    assert not names_a_workspace_entry("what is a unit test", workspace)  # a folder named test
    assert not names_a_workspace_entry("what does other.py do?", workspace)  # not here
    assert not names_a_workspace_entry("what is in ../secret.txt", workspace)  # outside
    assert named_entries("compare notes.md with utils.py and ../secret.txt", workspace) == [
        "notes.md",
        "src/pkg/utils.py",
    ]


async def test_an_entry_named_by_a_plain_word_makes_a_task_and_is_shown(
    make_agent, workspace: Path
) -> None:
    """ "How many eggs go into the pancakes?" beside recipes/pancakes.json was classified
    chat by the 1.5B model and answered from what pancakes usually hold."""
    (workspace / "recipes").mkdir()
    (workspace / "recipes" / "pancakes.json").write_text('{"eggs": 2}\n')
    (workspace / "build").mkdir()
    (workspace / "build" / "pancakes.txt").write_text("")
    (workspace / "build" / "main.txt").write_text("")
    assert named_entries("How many eggs go into the pancakes?", workspace) == [
        "build/pancakes.txt",
        "recipes/pancakes.json",
    ]
    assert named_entries("Which recipe serves the most people?", workspace) == ["recipes"]
    # Short words, names every project has, and the parts of a file name given, name nothing.
    assert not named_entries("What is a unit test? Which build tool?", workspace)
    assert named_entries("what does main.txt hold", workspace) == ["build/main.txt"]
    assert named_entries("Is pancakes.md here?", workspace) == []
    # A sentence's full stop is no file name; words in quotes are text to write.
    assert named_entries("List what goes into the pancakes.", workspace)[-1] == (
        "recipes/pancakes.json"
    )
    assert named_entries("Append 'I like pancakes.' to notes.md", workspace) == ["notes.md"]
    # Source files, and folders of them, are named by their file names, not by plain words:
    # in a code repository "What are the rules of chess?" stays a question.
    (workspace / "rules.py").write_text("")
    (workspace / "session").mkdir()
    (workspace / "session" / "store.py").write_text("")
    assert named_entries("What are the rules of a session of chess?", workspace) == []
    agent = make_agent(classify=["chat"], plan=["Two eggs.", "Two eggs."], critic=["PASS: ok"])
    await agent.orchestrator.submit("How many eggs go into the pancakes?")
    [intent] = agent.of("IntentClassified")
    assert (intent.intent, intent.method) == ("task", "workspace")
    [plan, *_] = [r for r in agent.provider.requests if r.purpose == "plan"]
    first = "\n".join(str(m.content) for m in plan.messages)
    assert (
        "names are words of my request (found before you start): build/pancakes.txt, "
        "recipes/pancakes.json" in first
    )
    # A folder named by its very name is shown too, as the folder it is.
    agent = make_agent(classify=["task"], plan=["Two."], critic=["PASS: ok"])
    await agent.orchestrator.submit("Which recipes use eggs?")
    [plan, *_] = [r for r in agent.provider.requests if r.purpose == "plan"]
    first = "\n".join(str(m.content) for m in plan.messages)
    assert "words of my request (found before you start): recipes/" in first


def test_code_named_in_the_message_and_found_in_the_workspace_counts(workspace: Path) -> None:
    (workspace / "config.py").write_text("MAX_ITEMS = 50\n")
    (workspace / "stats.py").write_text("def average(xs):\n    return sum(xs) / len(xs)\n")
    (workspace / "blob.bin").write_bytes(b"\x00 never_read_here")
    assert names_code_in_workspace("Which file defines MAX_ITEMS?", workspace)
    assert names_code_in_workspace("why does average() divide?", workspace)
    assert names_code_in_workspace("what does `average` return?", workspace)
    assert not names_code_in_workspace("what is an average?", workspace)  # English, not code
    assert not names_code_in_workspace("what does snake_case mean?", workspace)  # not in it
    assert not names_code_in_workspace("is never_read_here set?", workspace)  # binary skipped
    assert not names_code_in_workspace("how do I use print() in Python?", workspace)
    # A message that speaks of code: its plain words count where they are defined.
    assert names_code_in_workspace("Where is average defined?", workspace)
    assert names_code_in_workspace("What does Average return for [1, 2]?", workspace)
    assert not names_code_in_workspace("what is the average of 3 and 5?", workspace)
    assert not names_code_in_workspace("Where is sqrt defined?", workspace)  # not here
    (workspace / "GUIDE.md").write_text("We let the user pick; the type does not matter.\n")
    assert not names_code_in_workspace("What does the return statement do?", workspace)


def test_where_the_named_code_is_defined_comes_first_and_each_line_once(
    workspace: Path,
) -> None:
    """Shown a check's use of the function first (twice, for its two uses on one line) and
    its definition later, the 1.5B model read a doc line that named it, not the function."""
    (workspace / "docs").mkdir()
    (workspace / "docs" / "usage.md").write_text("FIXME: document km_to_miles\n")
    (workspace / "test_units.py").write_text(
        "from units import km_to_miles\nassert km_to_miles(1) == 1, km_to_miles(1)\n"
    )
    (workspace / "units.py").write_text("KM = 1.6\n\n\ndef km_to_miles(km):\n    return km / KM\n")
    places = [(p.path, p.line) for p in code_places("what does km_to_miles do?", workspace)]
    assert places[0] == ("units.py", 4)
    assert sorted(places[1:]) == [("docs/usage.md", 1), ("test_units.py", 1), ("test_units.py", 2)]
    # A constant's assignment defines it too; a line that only uses it does not.
    (workspace / "config.py").write_text(
        "LIMIT_S = 3\nprint(LIMIT_S)\nLIMIT_S: int = 4\nLIMIT_S == 4\n"
    )
    found = code_places("what is LIMIT_S?", workspace)
    assert [(p.line, defines(p)) for p in found] == [(1, True), (3, True), (2, False), (4, False)]


async def test_the_request_asked_back_is_not_a_clarifying_question(make_agent) -> None:
    agent = make_agent(
        classify=["task"],
        plan=[
            'CLARIFY("What does main.py do?")',
            '<tool_call>{"name": "read_file", "arguments": {"path": "main.py"}}</tool_call>',
            "It prints hello.",
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("what does main.py do")
    assert result.answer == "It prints hello."
    assert not agent.of("ClarifyRequested")
    assert agent.of("ToolCallFinished")


async def test_a_real_question_still_ends_the_turn(make_agent) -> None:
    agent = make_agent(
        classify=["task"], plan=['CLARIFY("Which of the two config files do you mean?")']
    )
    result = await agent.orchestrator.submit("fix the config")
    assert result.status == "finished" and agent.of("ClarifyRequested")


async def test_a_question_right_after_a_failed_call_is_sent_back_once(make_agent) -> None:
    read = '<tool_call>{"name": "read_file", "arguments": {"path": "%s"}}</tool_call>'
    agent = make_agent(
        classify=["task"],
        plan=[
            read % "src/app.py",
            'CLARIFY("Where is app.py?")',
            read % "main.py",
            "It prints hello.",
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("what does main.py print?")
    assert result.answer == "It prints hello."
    last_messages = [r.messages[-1].content for r in agent.provider.requests]
    assert any("src/app.py does not exist" in m for m in last_messages)
    assert sum("Do not ask the user yet" in m for m in last_messages) == 1
    assert not agent.of("ClarifyRequested")


async def test_a_statement_after_a_call_cut_off_in_its_json_is_sent_back(make_agent) -> None:
    """The 1.5B model's write_file was cut off mid-string (it looped in the content); it then
    "asked" "The JSON file is not properly formatted." and the turn ended there, the file
    never written."""
    cut = '<tool_call>{"name": "write_file", "arguments": {"path": "toast.json", "content": "{'
    write = '<tool_call>{"name": "write_file", "arguments": %s}</tool_call>'
    agent = make_agent(
        classify=["task"],
        plan=[
            cut,
            'CLARIFY("The JSON file is not properly formatted.")',
            write % json.dumps({"path": "toast.json", "content": '{"name": "Toast"}'}),
            "Created toast.json.",
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Create toast.json for a recipe named Toast.")
    assert result.answer == "Created toast.json."
    assert not agent.of("ClarifyRequested")
    last_messages = [str(r.messages[-1].content) for r in agent.provider.requests]
    assert sum("Do not ask the user yet" in m for m in last_messages) == 1


async def test_a_second_question_after_failures_reaches_the_user(make_agent) -> None:
    read = '<tool_call>{"name": "read_file", "arguments": {"path": "%s"}}</tool_call>'
    agent = make_agent(
        classify=["task"],
        plan=[
            read % "a.py",
            'CLARIFY("Which file?")',
            read % "b.py",
            'CLARIFY("Which file, then?")',
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("read the file")
    assert result.answer == "Which file, then?"
    assert agent.of("ClarifyRequested")


async def test_a_reported_failure_is_sent_back_each_time_it_differs(make_agent) -> None:
    """Fixing one function, the 1.5B model ran the tests, met the next failure and "asked"
    with a statement of it; a second different failure gets a second push."""
    run = '<tool_call>{"name": "shell_exec", "arguments": {"command": "%s"}}</tool_call>'
    agent = make_agent(
        classify=["task"],
        plan=[
            run % "exit 3",
            'CLARIFY("The command exits with 3.")',
            run % "exit 4",
            'CLARIFY("The command exits with 4.")',
            run % "exit 4",
            'CLARIFY("The command exits with 4 again.")',
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("make the command pass")
    assert result.answer == "The command exits with 4 again."
    last_messages = [str(r.messages[-1].content) for r in agent.provider.requests]
    assert sum("Do not ask the user yet" in m for m in last_messages) == 2


def test_the_legacy_prompt_shows_what_each_argument_takes() -> None:
    """Given only names and types, a small model invents units, formats and keys (BFCL:
    "unit": "miles" where the description says km is the default, "wind_strength" for the
    "windStrength" a nested object lists)."""
    weather = ToolSpec(
        function=FunctionSpec(
            name="set_air",
            description="Control the air conditioner.",
            parameters={
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "In the form 'City, State', such as 'Boston, MA'.",
                    },
                    "unit": {
                        "type": "string",
                        "enum": ["celsius", "fahrenheit"],
                        "default": "celsius",
                    },
                    "body": {
                        "type": "object",
                        "description": "Settings.",
                        "properties": {"windStrength": {"type": "string", "enum": ["LOW", "HIGH"]}},
                        "required": ["windStrength"],
                    },
                    "notes": {"type": "string", "description": "x" * 2000},
                },
                "required": ["location"],
            },
        )
    )
    prompt = LEGACY.system_prompt(Path("/w"), [weather])
    lines = prompt.splitlines()
    assert (
        "    location (string, required): In the form 'City, State', such as 'Boston, MA'." in lines
    )
    assert '    unit (string, optional, one of "celsius", "fahrenheit", default "celsius")' in lines
    assert (
        '      windStrength (string, required, one of "LOW", "HIGH")' in lines
    )  # nested, indented
    notes = next(line for line in lines if "notes (" in line)
    assert len(notes) < 400  # a manual-length description is cut
    assert "only when the request gives its value" in prompt


class _SlowReader:
    """A provider that reports reading a long prompt, then answers."""

    async def stream(self, request):
        yield PromptProgressChunk(processed=512, total=3922)
        yield PromptProgressChunk(processed=2048, total=3922)
        yield TextChunk(text="PASS")
        yield DoneChunk(finish_reason="stop")


async def test_the_prompt_read_to_its_end_is_said_at_the_first_token() -> None:
    """A quiet request (the critic's) shows no text, so nothing else tells the status bar that
    the reading it showed is over."""
    bus = EventBus("test")
    events = bus.add_subscriber()
    request = CompletionRequest(messages=[Message(role="user", content="x")], purpose="critic")
    reply = await stream_reply(_SlowReader(), bus, 1, request, show_answer=False)
    assert reply.answer == "PASS"
    progress = [(e.processed, e.total) for e in events.drain() if e.type == "PromptProgress"]
    assert progress == [(512, 3922), (2048, 3922), (3922, 3922)]


def test_numbers_are_read_on_their_own() -> None:
    from pheron_tui.core.task_state import numbers

    assert numbers("TIMEOUT_S2 is 60, v1.2.3 has 1,000 users and 2.5 GB.") == ["60", "1000", "2.5"]


async def test_a_number_no_result_shows_is_sent_back_once(make_agent, workspace) -> None:
    """Asked the value of TIMEOUT_S, the 1.5B model ran `echo $TIMEOUT_S`, got nothing and
    answered 60. An answer to a question stating a number that neither the request nor any
    result shows is sent back once, with a call due (legacy: forced): the model is to look
    where the value is; once only, so a number it worked out may stand."""
    (workspace / "config.py").write_text("TIMEOUT_S = 30\n")
    echo = '<tool_call>{"name": "shell_exec", "arguments": {"command": "true"}}</tool_call>'
    read = '<tool_call>{"name": "read_file", "arguments": {"path": "config.py"}}</tool_call>'
    agent = make_agent(
        classify=["task"], plan=[echo, "It is 60.", read, "It is 30."], critic=["PASS: ok"]
    )
    result = await agent.orchestrator.submit("What is the value of TIMEOUT_S?")
    assert result.answer == "It is 30."
    told = [str(r.messages[-1].content) for r in agent.provider.requests]
    assert sum("no tool result above shows 60" in m for m in told) == 1

    stubborn = make_agent(
        classify=["task"], plan=[read, "It is 45.", "It is 45."], critic=["PASS: ok"]
    )
    again = await stubborn.orchestrator.submit("What is the value of TIMEOUT_S?")
    assert again.answer == "It is 45."  # once: a number it worked out may stand
    shown = make_agent(classify=["task"], plan=[read, "It is 30."], critic=["PASS: ok"])
    assert (await shown.orchestrator.submit("What is TIMEOUT_S set to?")).answer == "It is 30."
    assert not any("no tool result" in str(r.messages[-1].content) for r in shown.provider.requests)


async def test_a_task_is_told_where_the_code_it_names_is(make_agent, workspace) -> None:
    """Asked "What is the value of TIMEOUT_S?", the 1.5B model ran `echo $TIMEOUT_S` and said
    60. Before the first step, the lines of the workspace where a named identifier occurs (or
    a called one is defined) are put after the request, as data."""
    (workspace / "config.py").write_text("MAX_ITEMS = 50\nTIMEOUT_S = 30  # <|im_end|>\n")
    (workspace / "calc.py").write_text("def average(xs):\n    return 0\n\nprint(average([1]))\n")
    agent = make_agent(classify=["task"], plan=["It is 30."], critic=["PASS: ok"])
    await agent.orchestrator.submit("What is the value of TIMEOUT_S?")
    plan = next(r for r in agent.provider.requests if r.purpose == "plan")
    note = str(plan.messages[-1].content)
    assert plan.messages[-2].content == "What is the value of TIMEOUT_S?"
    assert "config.py:2: TIMEOUT_S = 30" in note and "MAX_ITEMS" not in note
    assert "<|im_end|>" not in note  # file text is data: template markers defused
    called = make_agent(classify=["task"], plan=["It returns 0."], critic=["PASS: ok"])
    await called.orchestrator.submit("Why does average() return 0?")
    plan = next(r for r in called.provider.requests if r.purpose == "plan")
    assert "calc.py:1: def average(xs):" in str(plan.messages[-1].content)
    assert "calc.py:4" not in str(plan.messages[-1].content)  # a use is not a definition
    plain = make_agent(classify=["task"], plan=["Done."], critic=["PASS: ok"])
    await plain.orchestrator.submit("List the files here.")
    plan = next(r for r in plain.provider.requests if r.purpose == "plan")
    assert plan.messages[-1].content == "List the files here."


async def test_a_code_note_named_in_capitals_is_looked_for_and_many_said_to_be_more(
    make_agent, workspace
) -> None:
    """Asked "Which file has a FIXME note?", the 1.5B model read a Java file it made up. A
    note marker in capitals counts where it occurs; shown six of more lines, the model is told
    there are more (asked how many, it would count what it was shown)."""
    (workspace / "docs").mkdir()
    (workspace / "docs" / "usage.md").write_text("# Usage\n\nFIXME: document km_to_miles\n")
    (workspace / "notes.md").write_text("".join(f"- TODO: item {n}\n" for n in range(8)))
    agent = make_agent(classify=["task"], plan=["docs/usage.md."], critic=["PASS: ok"])
    await agent.orchestrator.submit("Which file has a FIXME note, and what does it say?")
    plan = next(r for r in agent.provider.requests if r.purpose == "plan")
    note = str(plan.messages[-1].content)
    assert "docs/usage.md:3: FIXME: document km_to_miles" in note and "of more" not in note
    counted = make_agent(classify=["task"], plan=["8."], critic=["PASS: ok"])
    await counted.orchestrator.submit("How many TODO items are in notes.md?")
    plan = next(r for r in counted.provider.requests if r.purpose == "plan")
    note = str(plan.messages[-1].content)
    assert "the first 6 of more lines" in note and note.count("TODO: item") == 6
    plain = make_agent(classify=["task"], plan=["None."], critic=["PASS: ok"])
    await plain.orchestrator.submit("Is there anything left to do in notes.md?")
    plan = next(r for r in plain.provider.requests if r.purpose == "plan")
    assert "occur in this folder" not in str(plan.messages[-1].content)


async def test_an_order_whose_write_failed_is_sent_back_once(make_agent, workspace) -> None:
    """Told to add a line to config.py, the 1.5B model appended blind, was shown the file
    (nothing written: it had not read it) and answered "DEBUG = False". An answer to an order
    whose last call was a failed write, with nothing changed, is sent back once per failure."""
    (workspace / "config.py").write_text("X = 1\n")
    append = (
        '<tool_call>{"name": "write_file", "arguments": {"path": "config.py", '
        '"content": "DEBUG = False\\n", "mode": "append"}}</tool_call>'
    )
    agent = make_agent(
        classify=["task"], plan=[append, "DEBUG = False", append, "Added it."], critic=["PASS: ok"]
    )
    result = await agent.orchestrator.submit("Add the line DEBUG = False to config.py")
    assert result.answer == "Added it."
    assert (workspace / "config.py").read_text() == "X = 1\nDEBUG = False\n"
    told = [str(r.messages[-1].content) for r in agent.provider.requests]
    assert sum("nothing has been changed yet" in m for m in told) == 1


def test_a_yes_or_no_is_read_against_the_setting_shown() -> None:
    """A setting written plainly on or off, in any of the usual file formats, answers a
    yes-or-no question about it; asked whether it is off, the answer turns round."""
    shown = 'settings.json:2:   "debug": false,\nsettings.json-3-   "port": 8080'
    found = contradicted("Is debug turned on in settings.json?", "Yes, debug is on.", [shown])
    assert found == Contradiction(said="Yes", setting='"debug": false')
    assert contradicted("Is debug turned on?", "No, it is off.", [shown]) is None
    assert contradicted("Is debug turned off?", "Yes, it is off.", [shown]) is None
    assert contradicted("Is debug disabled?", "No.", [shown]) is not None
    for text in ("DEBUG = False", "debug: off", "[app]\ndebug = no", "app.debugMode=false"):
        assert contradicted("Is debug enabled?", "Yes", [text]) is not None, text
        assert contradicted("Is debug enabled?", "No", [text]) is None, text
    # Not judged: another kind of question or answer, a setting of another name, settings
    # of that word that disagree.
    assert contradicted("What is debug set to?", "Yes", [shown]) is None
    assert contradicted("Is debug on?", "Debug is on.", [shown]) is None
    assert contradicted("Is caching on?", "Yes", [shown]) is None
    assert contradicted("Is debug on?", "No", ["debug: true\ndebug_toolbar: false"]) is None
    assert contradicted("Is the port 8080?", "No", [shown]) is None
    assert (
        contradicted("Is there a TODO about tests?", "Yes", ["notes.md:3: TODO: no tests"]) is None
    )


async def test_a_yes_or_no_a_setting_shown_says_otherwise_is_sent_back_once(
    make_agent, workspace
) -> None:
    """Asked "Is debug turned on in settings.json?", the 1.5B model was shown `"debug":
    false` and answered "Yes, debug is turned on"; its critic passed that. The answer is
    sent back once with the setting; kept, the critic fails it without the model."""
    (workspace / "settings.json").write_text('{\n  "debug": false,\n  "port": 8080\n}\n')
    read = '<tool_call>{"name": "read_file", "arguments": {"path": "settings.json"}}</tool_call>'
    asked = "Is debug turned on in settings.json?"
    agent = make_agent(
        classify=["task"], plan=[read, "Yes, debug is on.", "No, debug is off."], critic=["PASS"]
    )
    result = await agent.orchestrator.submit(asked)
    assert result.answer == "No, debug is off."
    told = [str(r.messages[-1].content) for r in agent.provider.requests]
    assert sum('says Yes, but a tool result above shows `"debug": false`' in m for m in told) == 1

    stubborn = make_agent(
        classify=["task"], plan=[read, "Yes, it is on.", "Yes, it is on."], critic=["PASS: ok"]
    )
    again = await stubborn.orchestrator.submit(asked)
    assert again.answer == "Yes, it is on."
    [verdict] = stubborn.of("CriticVerdict")
    assert (verdict.verdict, verdict.auto) == ("FAIL", True)
    assert '`"debug": false`' in verdict.reason


def test_a_question_about_what_a_function_returns_for_values_is_read() -> None:
    assert asked_result("What does shout in utils.py return for 'hi'?") == ("shout", "'hi'")
    assert asked_result("What is add(2, 3)?") == ("add", "2, 3")
    assert asked_result("What does the function mean return for [2, 4]?") == ("mean", "[2, 4]")
    assert asked_result("what would total give for 2 and 3") == ("total", "2, 3")
    assert asked_result("What does parse return for a long text?") is None  # no value
    assert asked_result("What does main do?") is None
    places = [
        CodePlace("shout", "utils.py", 5, "def shout(text):"),
        CodePlace("slug", "lib/text.py", 1, "def slug(s):"),
        CodePlace("loud", "notes.md", 1, "def loud(text):"),
    ]
    hint = result_run_hint("What does shout return for 'hi'?", places)
    assert hint.endswith("""python3 -c "from utils import shout; print(repr(shout('hi')))\"""")
    quoted = result_run_hint('What does slug return for "A b"?', places)
    assert quoted.endswith(
        """cd lib && python3 -c 'from text import slug; print(repr(slug("A b")))'"""
    )
    assert result_run_hint("What does loud return for 'hi'?", places) == ""  # no Python file


async def test_what_a_function_returns_is_found_by_running_it(make_agent, workspace) -> None:
    """Asked what shout returns for 'hi', the 1.5B model answered with the line defining shout.
    The first step is told how to run it; an answer with nothing run is sent back once, with
    the same command."""
    (workspace / "utils.py").write_text("def shout(text):\n    return text.upper() + '!'\n")
    command = """python3 -c "from utils import shout; print(repr(shout('hi')))\""""
    run = json.dumps({"name": "shell_exec", "arguments": {"command": command}})
    agent = make_agent(
        classify=["task"],
        plan=["shout makes the text loud.", f"<tool_call>{run}</tool_call>", "It returns HI!"],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("What does shout in utils.py return for 'hi'?")
    assert result.answer == "It returns HI!"
    first = next(r for r in agent.provider.requests if r.purpose == "plan")
    assert command in "\n".join(str(m.content) for m in first.messages)
    told = [str(r.messages[-1].content) for r in agent.provider.requests]
    assert sum("nothing has been run yet" in m and command in m for m in told) == 1
    [finished] = agent.of("ToolCallFinished")
    assert "'HI!'" in finished.observation


def test_the_entries_a_request_orders_deleted_are_read_from_it(workspace: Path) -> None:
    (workspace / "build").mkdir()
    (workspace / "server.log").write_text("")
    (workspace / "data.csv").write_text("")
    for request, names in [
        ("Remove the build folder.", ["build"]),
        ("Delete server.log, I don't need it anymore.", ["server.log"]),
        ("Can you delete server.log?", ["server.log"]),
        ("Remove the folder called build and everything in it", ["build"]),
        ("Rename data.csv, then delete server.log", ["server.log"]),
        # Where something is deleted, not what; a question; a pattern; nothing there.
        ("Delete the TODO lines from notes.md", []),
        ("Delete everything in the build folder but keep it", []),
        ("Why was the build folder removed?", []),
        ("Delete every *.log file", []),
        ("Delete nowhere.txt and ../secret.txt", []),
    ]:
        assert ordered_removed(request, workspace) == names, request


async def test_a_folder_ordered_deleted_and_still_there_is_no_answer(
    make_agent, workspace: Path
) -> None:
    """Asked to remove the build folder, the 1.5B model deleted one of its two files and
    said "The build folder now contains no files"; its critic said PASS."""
    (workspace / "build").mkdir()
    (workspace / "build" / "a.txt").write_text("")
    (workspace / "build" / "b.txt").write_text("")
    delete = '<tool_call>{"name": "delete_path", "arguments": %s}</tool_call>'
    agent = make_agent(
        classify=["task"],
        plan=[
            delete % '{"path": "build/a.txt"}',
            "The build folder now contains no files.",
            "Done: the build folder is empty.",
        ],
        critic=["PASS: ok"],
    )
    result = await agent.orchestrator.submit("Remove the build folder.")
    assert result.answer == "Done: the build folder is empty."
    [sent] = agent.of("AnswerSentBack")
    assert sent.note.startswith("`build` still exists, and the request asks for it to be deleted")
    [verdict] = agent.of("CriticVerdict")
    assert verdict.verdict == "FAIL" and verdict.auto
    assert verdict.reason == "`build` still exists, though the request asks for it to be deleted."
    # Deleted after the note: the answer stands, and the critic judges it.
    (workspace / "build").mkdir(exist_ok=True)
    agent = make_agent(
        classify=["task"],
        plan=[
            "The build folder now contains no files.",
            delete % '{"path": "build", "recursive": true}',
            "Removed the build folder.",
        ],
        critic=["PASS: it is gone"],
    )
    result = await agent.orchestrator.submit("Remove the build folder.")
    assert result.answer == "Removed the build folder." and not (workspace / "build").exists()
    [verdict] = agent.of("CriticVerdict")
    assert verdict.verdict == "PASS"
