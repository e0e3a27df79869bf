"""The critic: what it is shown, the verdict it needs no model for, and judging after looking."""

from __future__ import annotations

from collections.abc import Sequence

from pheron_tui.core.critic import CriticAgent, Step, critic_user
from pheron_tui.core.messages import CompletionRequest
from pheron_tui.core.provider import ScoringUnavailable
from pheron_tui.providers.scripted import Script, ScriptedProvider

WRITE = (
    '<tool_call>{"name": "write_file", "arguments": {"path": "x.txt", "content": "y"}}</tool_call>'
)


def test_each_call_is_shown_with_its_outcome_and_the_changes_that_succeeded() -> None:
    steps = [
        Step("write_file", {"path": "u.py", "mode": "create"}, "write", "failed", "u.py exists"),
        Step("write_file", {"path": "u.py", "mode": "append"}, "write", "ok", "appended 9 bytes"),
        Step("read_file", {"path": "u.py"}, "read", "ok", "def f(): ..."),
        Step("delete_path", {"path": "old"}, "write", "denied", "denied by the user"),
    ]
    prompt = critic_user("Add f to u.py", steps, "Added.")
    assert '1. write_file {"path": "u.py", "mode": "create"}: FAILED' in prompt
    assert '2. write_file {"path": "u.py", "mode": "append"}: succeeded\nappended 9 bytes' in prompt
    assert "4. delete_path" in prompt and "NOT RUN (denied)" in prompt
    assert "changed files or ran commands and succeeded: 2 (write_file)." in prompt
    assert critic_user("hi", [], "hello").count("(no tools were used)") == 1


def test_a_call_that_did_not_go_through_is_shown_by_why() -> None:
    """Shown a refused write's whole file, the 1.5B critic spent its words on that call and
    judged the change a later call made as never made. A failed command's output is kept: it
    may be the answer."""
    refused = "config.ini was not read since it last changed. It holds now:\n[cache]\nsize = 1"
    steps = [
        Step("write_file", {"path": "config.ini"}, "write", "failed", refused),
        Step("read_file", {"path": "nope"}, "read", "failed", "nope does not exist. . holds: a"),
        Step("shell_exec", {"command": "python3 t.py"}, "execute", "failed", "Error.\nline 2"),
    ]
    prompt = critic_user("Set size to 2", steps, "Done.")
    assert "not read since it last changed." in prompt and "size = 1" not in prompt
    assert "nope does not exist." in prompt and "holds: a" not in prompt
    assert "Error.\nline 2" in prompt


def test_long_arguments_are_shortened_for_the_critic() -> None:
    step = Step("write_file", {"path": "big.txt", "content": "z" * 5000}, "write", "ok", "wrote")
    prompt = critic_user("write it", [step], "done")
    assert len(prompt) < 1000 and "…" in prompt


async def test_a_change_that_never_happened_fails_without_asking_the_model(make_agent) -> None:
    # Every write refused (policy none) and the model claims success: not done. The script
    # has no critic reply, so a model verdict would be an error, not this.
    agent = make_agent(policy="none", classify=["task"], plan=[WRITE, "Done, x.txt is written."])
    await agent.orchestrator.submit("Write y to x.txt")
    [verdict] = agent.of("CriticVerdict")
    assert (verdict.verdict, verdict.auto) == ("FAIL", True)
    assert "Nothing was changed" in verdict.reason
    assert not agent.of("ToolCallStarted")


async def test_a_command_that_left_its_files_as_they_were_changed_nothing(make_agent) -> None:
    """`sed -i` with the new value on both sides ran, and the 1.5B critic passed "TIMEOUT=60
    has been updated". Told so, the model makes the change; had it not, the critic fails it."""
    noop = 'CALL(shell_exec) WITH {"command": "sed -i s/TIMEOUT=60/TIMEOUT=60/ env.example"}'
    edit = 'CALL(edit_file) WITH {"path": "env.example", "old": "TIMEOUT=30", "new": "TIMEOUT=60"}'
    agent = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[noop, "<final>TIMEOUT is 60 now.</final>", edit, "<final>Done.</final>"],
        critic=["PASS: changed"],
    )
    ws = agent.orchestrator.settings.workspace
    (ws / "env.example").write_text("DEBUG=1\nTIMEOUT=30\n")
    result = await agent.orchestrator.submit("Change TIMEOUT in env.example to 60.")
    assert result.status == "finished" and (ws / "env.example").read_text().endswith("=60\n")
    told = [str(m.content) for r in agent.provider.requests for m in r.messages]
    assert any("the command you ran left the files it writes as they were" in t for t in told)
    plans = [r for r in agent.provider.requests if r.purpose == "plan"]
    offered = {spec.function.name for spec in plans[2].tools}  # the step after the note
    assert "edit_file" in offered and "shell_exec" not in offered

    guessed = 'CALL(edit_file) WITH {"path": "env.example", "old": "TIMEOUT=60", "new": "T=6"}'
    stays = make_agent(
        native_tools=False,
        classify=["task"],
        plan=[noop, "<final>It is 60 now.</final>", guessed, "<final>It is.</final>", "It is."],
    )
    (ws / "env.example").write_text("DEBUG=1\nTIMEOUT=30\n")
    await stays.orchestrator.submit("Change TIMEOUT in env.example to 60.")
    told = [str(m.content) for r in stays.provider.requests for m in r.messages]
    assert any("Your last tool call failed, so nothing has been changed yet" in t for t in told)
    [verdict] = stays.of("CriticVerdict")
    assert (verdict.verdict, verdict.auto) == ("FAIL", True)
    assert "left them as they were" in verdict.reason


async def test_a_refused_write_for_a_question_is_not_a_failed_change(make_agent) -> None:
    agent = make_agent(
        classify=["task"], plan=[WRITE, "It says y."], critic=["PASS: the answer is given"]
    )
    await agent.orchestrator.submit("What does x.txt say?")
    assert agent.of("ToolCallDecided")[0].by == "question"
    [verdict] = agent.of("CriticVerdict")
    assert (verdict.verdict, verdict.auto) == ("PASS", False)


class _ScoringScript(ScriptedProvider):
    """A scripted model that can also score: it prefers FAIL unless told what it said."""

    def __init__(self, critic: list[str], scorable: bool = True) -> None:
        super().__init__(Script.model_validate({"replies": {"critic": critic}}))
        self.scorable = scorable
        self.scored: list[CompletionRequest] = []

    async def score_choices(
        self, request: CompletionRequest, options: Sequence[str]
    ) -> dict[str, float]:
        self.scored.append(request)
        if not self.scorable:
            raise ScoringUnavailable("no logprobs")
        looked = "renamed" in (request.messages[-2].content or "")
        return {"PASS": -0.1 if looked else -2.0, "FAIL": -1.0}


async def _generate(provider: ScriptedProvider, request: CompletionRequest) -> str:
    text = ""
    async for chunk in provider.stream(request):
        text += getattr(chunk, "text", "") or ""
    return text


async def test_the_verdict_is_scored_after_the_critic_says_what_it_saw() -> None:
    provider = _ScoringScript(["It asks for a rename. The file was renamed. So it is a"])
    critic = CriticAgent(provider, lambda r: _generate(provider, r))
    step = Step("move_path", {"source": "a", "destination": "b"}, "write", "ok", "moved a to b")
    review = await critic.review("Rename a to b", "Done", [step])
    assert review.verdict == "PASS" and not review.auto
    assert review.reason == "It asks for a rename. The file was renamed."  # whole sentences
    [scored] = provider.scored
    assert [m.role for m in scored.messages] == ["system", "user", "assistant", "user"]
    assert "Verdict (PASS or FAIL)" in (scored.messages[-1].content or "")


async def test_what_the_critic_saw_is_kept_past_a_list() -> None:
    """The 1.5B critic began a list ("The agent did the following:") and the calls that
    worked came after it: the verdict was judged from the list's heading alone."""
    provider = _ScoringScript(
        ["It asks for a rename. The agent did the following:\n\n1. It renamed a. 2. It"]
    )
    critic = CriticAgent(provider, lambda r: _generate(provider, r))
    step = Step("move_path", {"source": "a", "destination": "b"}, "write", "ok", "moved a to b")
    review = await critic.review("Rename a to b", "Done", [step])
    assert review.verdict == "PASS"
    assert review.reason.endswith("1. It renamed a.")


async def test_without_logprobs_the_verdict_is_asked_for_in_words() -> None:
    provider = _ScoringScript(["The file was renamed.", "FAIL: hmm"], scorable=False)
    critic = CriticAgent(provider, lambda r: _generate(provider, r))
    step = Step("move_path", {"source": "a", "destination": "b"}, "write", "ok", "moved a to b")
    review = await critic.review("Rename a to b", "Done", [step])
    assert (review.verdict, review.reason) == ("FAIL", "The file was renamed.")


async def test_a_scored_fail_says_what_is_wrong() -> None:
    provider = _ScoringScript(
        ["It asks for the top score. cy has 8.", "The answer names dee, who scored 1. More"]
    )
    critic = CriticAgent(provider, lambda r: _generate(provider, r))
    step = Step("read_file", {"path": "data.csv"}, "read", "ok", "ana,3\ncy,8\ndee,1")
    review = await critic.review("Who had the highest score?", "dee", [step])
    assert (review.verdict, review.reason) == ("FAIL", "The answer names dee, who scored 1.")
    why = provider.requests[-1]
    assert [m.role for m in why.messages][-2:] == ["assistant", "user"]
    assert why.messages[-2].content == "FAIL" and "what is wrong" in why.messages[-1].content


async def test_a_refused_write_then_a_command_that_worked_is_judged_by_the_model() -> None:
    provider = _ScoringScript(["The file was renamed with mv.", "FAIL: hmm"], scorable=False)
    critic = CriticAgent(provider, lambda r: _generate(provider, r))
    steps = [
        Step("move_path", {"source": "a", "destination": "b"}, "write", "denied", "denied"),
        Step("shell_exec", {"command": "mv a b"}, "execute", "ok", "exit code 0"),
    ]
    review = await critic.review("Rename a to b", "Done", steps)
    assert not review.auto  # not the automatic "nothing was changed"
    failed_command = Step("shell_exec", {"command": "make"}, "execute", "failed", "exit 2")
    assert "1. shell_exec" in critic_user("build", [failed_command], "x")
    assert "changed nothing" not in critic_user("build", [failed_command], "x")


class _FixedScores(_ScoringScript):
    def __init__(self, critic: list[str], passed: float, failed: float) -> None:
        super().__init__(critic)
        self.fixed = {"PASS": passed, "FAIL": failed}

    async def score_choices(
        self, request: CompletionRequest, options: Sequence[str]
    ) -> dict[str, float]:
        return self.fixed


async def test_a_pass_scored_below_fail_but_not_far_below_is_a_pass() -> None:
    """After its assessment the 1.5B critic leans to FAIL: an even split agreed with the
    checks no more often than passing everything. PASS stands from a share of 0.3."""
    step = Step("move_path", {"source": "a", "destination": "b"}, "write", "ok", "moved a to b")
    leaning = _FixedScores(["The file was renamed."], passed=-1.5, failed=-0.8)  # share 0.33
    review = await CriticAgent(leaning, lambda r: _generate(leaning, r)).review(
        "Rename a to b", "Done", [step]
    )
    assert review.verdict == "PASS"
    sure = _FixedScores(["The file was renamed.", "Nothing was renamed."], -2.5, -0.5)
    review = await CriticAgent(sure, lambda r: _generate(sure, r)).review(
        "Rename a to b", "Done", [step]
    )
    assert (review.verdict, review.reason) == ("FAIL", "Nothing was renamed.")


async def test_a_check_the_request_names_that_failed_last_fails_without_asking_the_model() -> None:
    """The 1.5B model renamed the failing function, saw the check fail on the import and
    answered that it passed; its critic, shown the failure, said PASS."""
    provider = _FixedScores(["It was fixed.", "It was fixed."], passed=-0.1, failed=-3.0)
    critic = CriticAgent(provider, lambda r: _generate(provider, r))
    run = {"command": "python3 check.py"}
    edit = Step("edit_file", {"path": "u.py", "old": "a", "new": "b"}, "write", "ok", "edited")
    failed = Step("shell_exec", run, "execute", "failed", "exit code 1\nImportError")
    passed = Step("shell_exec", run, "execute", "ok", "exit code 0")
    request, check = "Make `python3 check.py` pass.", "python3 check.py"
    review = await critic.review(request, "It passes now.", [failed, edit, failed], check=check)
    assert (review.verdict, review.auto) == ("FAIL", True)
    assert "`python3 check.py`, failed when it last ran" in review.reason
    review = await critic.review(request, "It passes now.", [failed, edit, passed], check=check)
    assert (review.verdict, review.auto) == ("PASS", False)
    other = Step("shell_exec", {"command": "ls"}, "execute", "failed", "exit code 2")
    steps = [failed, edit, passed, other]
    review = await critic.review(request, "It passes now.", steps, check=check)
    assert not review.auto  # another command failing is for the model to judge
    # Run as the model wrote it, not as the check is spelled: still the check.
    python = Step("shell_exec", {"command": "python check.py"}, "execute", "failed", "exit 1")
    review = await critic.review(request, "It passes now.", [edit, python], check=check)
    assert (review.verdict, review.auto) == ("FAIL", True)
