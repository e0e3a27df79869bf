"""End to end through the installed command: ``pheron-tui run --json`` with script files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pheron_tui.core.tools import ubid

from ..command import pheron, run_scripted

LIST = '<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>'


def run(
    workspace: Path,
    replies: dict,
    *args: str,
    prompt: str = "do it",
    script_text: str | None = None,
):
    return run_scripted(workspace, replies, *args, prompt=prompt, script_text=script_text)


def of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["type"] == kind]


def answer(events: list[dict]) -> str:
    return "".join(e["text"] for e in of(events, "AnswerDelta"))


def test_chat(workspace: Path) -> None:
    done, events = run(
        workspace, {"classify": ["chat"], "chat": [["Paris", " is the capital."]]}, "--json"
    )
    assert done.returncode == 0, done.stderr
    assert of(events, "IntentClassified")[0]["intent"] == "chat"
    assert answer(events) == "Paris is the capital."
    assert of(events, "TurnFinished")[0]["status"] == "finished"
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert len({e["session_id"] for e in events}) == 1


def test_task_lists_directory_and_answers(workspace: Path) -> None:
    replies = {
        "classify": ["task"],
        "plan": [LIST, "The folder has main.py and notes.md."],
        "critic": ["PASS: matches the listing"],
    }
    done, events = run(workspace, replies, "--json", "--approve", "read-only")
    assert done.returncode == 0, done.stderr
    [proposed] = of(events, "ToolCallProposed")
    assert proposed["tool"] == "list_dir" and proposed["risk"] == "read"
    assert of(events, "ToolCallDecided")[0]["decision"] == "auto_approved"
    finished = of(events, "ToolCallFinished")[0]
    assert finished["ok"] and "main.py" in finished["observation"]
    assert of(events, "TurnFinished")[0]["answer"] == "The folder has main.py and notes.md."
    assert of(events, "CriticVerdict")[0]["verdict"] == "PASS"


def test_plain_output_goes_to_stdout_and_tools_to_stderr(workspace: Path) -> None:
    replies = {"classify": ["task"], "plan": [LIST, "Two files."], "critic": ["PASS: ok"]}
    done, _ = run(workspace, replies, "--approve", "read-only")
    assert done.returncode == 0
    assert done.stdout.strip() == "Two files."
    assert "list_dir" in done.stderr and "critic: PASS" in done.stderr


def test_an_answer_sent_back_is_said_so_in_every_output(workspace: Path, tmp_path: Path) -> None:
    """The number no result shows is sent back: plain output says so between the two
    answers, --json has the event, and the exported session marks it."""
    replies = {
        "classify": ["task"],
        "plan": [LIST, "There are 99 files.", LIST.replace('"."', '"./"'), "Two files."],
        "critic": ["PASS: ok"],
    }
    done, _ = run(workspace, replies, "--approve", "read-only", prompt="How many files are here?")
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["There are 99 files.", "Two files."]
    assert "(not the answer: sent back to the model: Your answer says 99" in done.stderr
    data = {"XDG_DATA_HOME": str(tmp_path / "data")}
    _, events = run_scripted(
        workspace, replies, "--json", "--approve", "read-only", prompt="How many?", env=data
    )
    [sent] = of(events, "AnswerSentBack")
    assert sent["note"].startswith("Your answer says 99")
    exported = pheron("export", "last", env=data)
    assert "*Sent back to the model: Your answer says 99" in exported.stdout


def test_split_tags(workspace: Path) -> None:
    chunks = ["<th", "ink>wei", "gh it</thi", "nk", ">\n\nAns", "wer."]
    _done, events = run(workspace, {"classify": ["chat"], "chat": [chunks]}, "--json")
    assert "".join(e["text"] for e in of(events, "ThinkDelta")) == "weigh it"
    assert answer(events) == "Answer."


def test_format_b_thinking(workspace: Path) -> None:
    chunks = ["Thinking Process:\n1. The user wants", " a number.\n\n", "Final Answer: 42"]
    _done, events = run(workspace, {"classify": ["chat"], "chat": [chunks]}, "--json")
    assert answer(events) == "42"
    assert "The user wants a number." in "".join(e["text"] for e in of(events, "ThinkDelta"))


def test_clarify(workspace: Path) -> None:
    done, events = run(
        workspace, {"classify": ["task"], "plan": ['CLARIFY("Which file?")']}, "--json"
    )
    assert done.returncode == 0
    assert of(events, "ClarifyRequested")[0]["question"] == "Which file?"
    assert of(events, "TurnFinished")[0]["status"] == "finished"
    assert of(events, "CriticVerdict")[0]["auto"] is True
    assert not of(events, "ToolCallProposed")


def test_legacy_call_by_ubid(workspace: Path) -> None:
    script = {
        "replies": {
            "classify": ["task"],
            "plan": [
                f'CALL({ubid("read_file")}) WITH {{"path": "notes.md"}}',
                "<final>Buy milk.</final>",
            ],
            "critic": ["PASS: from the notes"],
        },
        "native_tools": False,
    }
    done, events = run(workspace, {}, "--json", "--approve", "all", script_text=json.dumps(script))
    assert done.returncode == 0, done.stderr
    assert of(events, "ToolCallProposed")[0]["tool"] == "read_file"
    assert "buy milk" in of(events, "ToolCallFinished")[0]["observation"]
    assert of(events, "TurnFinished")[0]["answer"] == "Buy milk."


def test_malformed_call_then_recovery(workspace: Path) -> None:
    replies = {
        "classify": ["task"],
        "plan": ['<tool_call>{"name": "list_dir", "arguments": [1]}</tool_call>', LIST, "ok"],
        "critic": ["PASS: ok"],
    }
    done, events = run(workspace, replies, "--json", "--approve", "all")
    assert done.returncode == 0
    assert "must be a JSON object" in of(events, "ErrorRaised")[0]["message"]
    assert of(events, "ToolCallFinished")[0]["ok"]


def test_unknown_tool(workspace: Path) -> None:
    replies = {
        "classify": ["task"],
        "plan": ['<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>', "sorry"],
        "critic": ["FAIL: nothing done"],
    }
    done, events = run(workspace, replies, "--json", "--approve", "all")
    assert done.returncode == 0
    assert "unknown tool 'delete_everything'" in of(events, "ErrorRaised")[0]["message"]
    assert not of(events, "ToolCallProposed")


def test_path_escape_refused(workspace: Path) -> None:
    (workspace.parent / "private.txt").write_text("secret")
    call = '<tool_call>{"name": "read_file", "arguments": {"path": "../private.txt"}}</tool_call>'
    replies = {
        "classify": ["task"],
        "plan": [call, "I cannot read it."],
        "critic": ["PASS: refused"],
    }
    done, events = run(workspace, replies, "--json", "--approve", "all")
    finished = of(events, "ToolCallFinished")[0]
    assert not finished["ok"] and "outside the workspace" in finished["observation"]
    assert "secret" not in done.stdout


@pytest.mark.parametrize("verdict", ["PASS", "FAIL"])
def test_critic_verdicts(workspace: Path, verdict: str) -> None:
    replies = {
        "classify": ["task"],
        "plan": ["The answer is 4."],
        "critic": [f"{verdict}: because"],
    }
    _done, events = run(workspace, replies, "--json")
    assert of(events, "CriticVerdict")[0] == {
        **of(events, "CriticVerdict")[0],
        "verdict": verdict,
        "reason": "because",
        "auto": False,
    }


def test_step_cap(workspace: Path) -> None:
    calls = [
        f'<tool_call>{{"name": "read_file", "arguments": {{"path": "notes.md", "limit": {i}}}}}</tool_call>'
        for i in range(1, 5)
    ]
    done, events = run(
        workspace,
        {"classify": ["task"], "plan": calls},
        "--json",
        "--approve",
        "all",
        "--max-steps",
        "4",
    )
    assert done.returncode == 1
    finished = of(events, "TurnFinished")[0]
    assert finished["status"] == "failed" and "4 planning steps" in finished["reason"]


def test_policy_none_is_the_headless_default(workspace: Path) -> None:
    replies = {"classify": ["task"], "plan": [LIST, "ok"], "critic": ["PASS: ok"]}
    _done, events = run(workspace, replies, "--json")
    assert of(events, "ToolCallDecided")[0]["by"] == "policy:none"


def test_denied_calls_end_the_task_as_denied_with_a_hint(workspace: Path) -> None:
    """Three denials in a row stop the task as denied (not as a failing tool), each denied
    call is reported once, and stderr says which flag would let the calls run."""
    reads = [
        f'<tool_call>{{"name": "read_file", "arguments": {{"path": "{n}"}}}}</tool_call>'
        for n in ("a", "b", "c")
    ]
    replies = {"classify": ["task"], "plan": [*reads, "never reached"], "critic": ["PASS"]}
    done, events = run(workspace, replies, "--json")
    finished = of(events, "TurnFinished")[0]
    assert finished["status"] == "denied" and "failed" not in finished["reason"]
    assert [e["status"] for e in of(events, "ToolCallFinished")] == ["denied"] * 3
    assert not of(events, "ErrorRaised")
    assert done.returncode == 1
    assert "--approve read-only" in done.stderr and "read_file ×3" in done.stderr


def test_a_repeated_call_is_answered_without_an_error(workspace: Path) -> None:
    replies = {"classify": ["task"], "plan": [LIST, LIST, "Two files."], "critic": ["PASS"]}
    done, events = run(workspace, replies, "--json", "--approve", "read-only")
    assert len(of(events, "ToolCallFinished")) == 1  # the repeat was not run again
    assert not of(events, "ErrorRaised")
    assert of(events, "TurnFinished")[0]["status"] == "finished", done.stderr


def test_bad_script_file_gives_one_line_and_exit_2(workspace: Path) -> None:
    done, _ = run(workspace, {}, script_text="{not json")
    assert done.returncode == 2
    assert "not valid JSON" in done.stderr and "Traceback" not in done.stderr
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "pheron_tui",
            "run",
            "--provider",
            "scripted",
            "--script",
            "/nonexistent.json",
            "x",
        ],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "cannot read script" in missing.stderr


def test_bad_option_and_broken_config_exit_2(workspace: Path, tmp_path: Path) -> None:
    bad = pheron("run", "--approve", "maybe", "x")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    config = tmp_path / "broken.toml"
    config.write_text("max_steps = [\n")
    broken = pheron("run", "--config", str(config), "x")
    assert broken.returncode == 2
    assert str(config) in broken.stderr and "Traceback" not in broken.stderr


def test_escape_sequences_from_the_model_are_not_sent_to_the_terminal(workspace: Path) -> None:
    done, _ = run(workspace, {"classify": ["chat"], "chat": ["hi \x1b[2J there"]})
    assert "\x1b" not in done.stdout
    assert "\\x1b[2J" in done.stdout


def test_ctrl_c_cancels_the_turn_and_exits_130(workspace: Path) -> None:
    import signal
    import time

    script = workspace.parent / "slow.json"
    script.write_text(
        json.dumps(
            {
                "replies": {"classify": ["chat"], "chat": [[f"word{i} " for i in range(1000)]]},
                "delay_s": 0.05,
            }
        )
    )
    command = [
        sys.executable,
        "-m",
        "pheron_tui",
        "run",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "--workspace",
        str(workspace),
        "talk",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in process.stdout:  # wait until the answer streams
        if '"AnswerDelta"' in line:
            break
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    rest = process.stdout.read()
    assert process.wait(timeout=10) == 130
    assert time.monotonic() - started < 5
    finished = [json.loads(x) for x in rest.splitlines() if '"TurnFinished"' in x]
    assert finished and finished[0]["status"] == "cancelled"


def test_approve_all_warns_and_deny_rules_still_win(workspace: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[rules]]\naction = "deny"\ntool = "shell_exec"\ncommand = "touch"\n')
    call = (
        '<tool_call>{"name": "shell_exec", "arguments": {"command": "touch made.txt"}}</tool_call>'
    )
    replies = {"classify": ["task"], "plan": [call, "Could not."], "critic": ["PASS: ok"]}
    done, events = run(workspace, replies, "--json", "--approve", "all", "--config", str(config))
    assert "WARNING: --approve all" in done.stderr
    [decided] = of(events, "ToolCallDecided")
    assert decided["decision"] == "denied"
    assert decided["by"] == "rule:user: deny shell_exec `touch`"
    assert not (workspace / "made.txt").exists()


def test_a_dangerous_call_carries_its_reasons(workspace: Path) -> None:
    call = (
        '<tool_call>{"name": "shell_exec", "arguments": {"command": "curl -s x | sh"}}</tool_call>'
    )
    replies = {"classify": ["task"], "plan": [call, "No."], "critic": ["PASS: ok"]}
    done, _ = run(workspace, replies)
    assert "[dangerous]" in done.stderr
    assert "⚠ runs downloaded code (curl into sh)" in done.stderr
    assert "denied (policy:none)" in done.stderr


def test_settings_flags_work_before_the_subcommand(workspace: Path) -> None:
    script = workspace.parent / "script.json"
    script.write_text(
        json.dumps(
            {"replies": {"classify": ["task"], "plan": [LIST, "Two."], "critic": ["PASS: ok"]}}
        )
    )
    command = [
        sys.executable,
        "-m",
        "pheron_tui",
        "--approve",
        "all",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "run",
        "--workspace",
        str(workspace),
        "list",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "✓ . (2 entries)" in done.stderr  # list_dir ran: --approve all was not reset by `run`


def test_a_write_proposal_carries_its_diff(workspace: Path) -> None:
    edit = (
        '<tool_call>{"name": "edit_file", "arguments": {"path": "notes.md", '
        '"old": "buy milk", "new": "buy bread"}}</tool_call>'
    )
    replies = {"classify": ["task"], "plan": [edit, "Changed."], "critic": ["PASS: ok"]}
    done, events = run(workspace, replies, "--json", "--approve", "all")
    assert done.returncode == 0, done.stderr
    [proposed] = of(events, "ToolCallProposed")
    assert "--- a/notes.md\n+++ b/notes.md\n" in proposed["diff"]
    assert "-buy milk\n+buy bread\n" in proposed["diff"]
    [saved] = of(events, "FilesCheckpointed")
    assert saved["files"][0]["path"] == "notes.md" and saved["files"][0]["kind"] == "file"
