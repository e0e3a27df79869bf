"""A task's running record, and the rules that keep a small model's task moving.

What the orchestrator remembers between planning steps (calls that failed or were denied in a
row, reads already done, the steps the critic will see), the rules that find a reply that does
not move the task (their notes are in ``task_notes``), and the limits that end a task going
round in circles.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pheron_tui.core import events as ev
from pheron_tui.core.correctness_question import RightQuestion, admits_a_fault
from pheron_tui.core.critic import Step
from pheron_tui.core.intent import code_places, defines
from pheron_tui.core.request_check import runs_check
from pheron_tui.core.task_notes import (
    NOTE_ECHO_MESSAGE,
    QUESTION_ONLY_MESSAGE,
    REFUSAL_ECHO_MESSAGE,
    REPEAT_NOTES,
    RUN_ONLY_MESSAGE,
    UNCHANGED_BY_COMMAND_MESSAGE,
    UNDONE_CHANGE_MESSAGE,
    UNDONE_FIX_MESSAGE,
    UNDONE_RUN_MESSAGE,
    unchecked_change_message,
)

REPEATED_FAILURE_LIMIT = 3
DENIAL_LIMIT = 3
MALFORMED = "malformed"
"""The first half of the failure key of a call that could not be run (its second: why)."""


def words(text: str) -> list[str]:
    """Lower-case words, names with dots kept whole (``notes.md``), a sentence's full stop
    not part of its last word."""
    return [w for w in (w.strip(".") for w in re.findall(r"[a-z0-9_.]+", text.lower())) if w]


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w]|\.\d)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def numbers(text: str) -> list[str]:
    """The numbers written in ``text`` on their own (not inside names like ``TIMEOUT_S2`` or
    ``v1.2.3``), as written, thousands separators dropped."""
    return _NUMBER.findall(_THOUSANDS.sub("", text))


_ANSWERING_WORDS = frozenset({"yes", "no", "true", "false", "none"})
_FILLER_WORDS = frozenset({"the", "and", "are", "was", "were", "this", "that", "file", "its"})
"""Words a reply adds to the request's without saying anything found."""


def _collapsed(text: str) -> str:
    return " ".join(text.lower().split())


def parrots(question: str, request: str) -> bool:
    """Whether a CLARIFY question (or an answer) is just the request said back (most of its
    words, in the request, and none of the others a number or a yes or no: "2 TODO items
    are in notes.md" for "How many TODO items are in notes.md?" answers it)."""
    asked, said = words(question), set(words(request))
    new = [w for w in asked if w not in said]
    if any(w in _ANSWERING_WORDS or any(c.isdigit() for c in w) for w in new):
        return False
    return bool(asked) and len(asked) - len(new) >= 0.8 * len(asked)


def _with_hint(note: str, hint: str) -> str:
    return f"{note} {hint}" if hint else note


class TaskEnded(Exception):
    """Ends a task early with a status and a reason for the user."""

    def __init__(self, reason: str, status: ev.TurnStatus = "failed") -> None:
        super().__init__(reason)
        self.status: ev.TurnStatus = status


@dataclass
class TaskState:
    request: str
    steps: list[Step] = field(default_factory=list)
    """Every call run or refused, for the critic."""
    last_failure: tuple[str, str] | None = None
    failure_streak: int = 0
    denial_streak: int = 0
    last_success: tuple[str, str] | None = None
    reads_done: set[tuple[str, str]] = field(default_factory=set)
    """Read-only calls that worked since the last call that could change anything: their
    results are in the conversation already."""
    answer_now: bool = False
    """The model repeated its last successful call: the next step must answer, not call."""
    last_result: tuple[str, str] = ("", "")
    must_call: bool = False
    """The model said nothing or asked the request back: the next step must call a tool."""
    echoed: bool = False
    """The model once gave the request itself as its answer (told to act; not twice)."""
    refusal_echoed: bool = False
    """The model once gave the note about a call that did not run as its answer."""
    last_failed: bool = False
    """The latest call failed (not denied): its result says what to correct."""
    retried_after: set[str] = field(default_factory=set)
    """When the model, asking the user right after a failed call, was told to retry: after
    "a question", or after each failure it only reported."""
    only_to_know: bool = False
    """The request is a question that asks for no change (``intent.asks_only_to_know``): a
    write the model proposes is refused before the user is asked."""
    orders_change: bool = False
    """The request tells the agent to change something (``intent.orders_a_change``)."""
    orders_run: bool = False
    """The request tells the agent to run something (``intent.orders_a_run``)."""
    numbers_checked: bool = False
    """The answer was once sent back for a number no result shows (``unsupported_number``)."""
    setting_checked: bool = False
    """The answer was once sent back for a Yes or No a setting shown says the opposite of
    (``setting_answer``)."""
    result_checked: bool = False
    """The answer was once sent back for leaving out what its question's run printed."""
    right_question: RightQuestion | None = None
    """The request asks whether a function is right, and these checks call it."""
    fault_checked: bool = False
    """The answer was once sent back for passing over the failure of such a check."""
    only_to_run: bool = False
    """The request orders a run and no other change (``intent.orders_only_a_run``)."""
    told_to_act: bool = False
    """The model, answering such a request without trying what it orders, was once told to
    do it."""
    act_with: tuple[ev.Risk, ...] = ()
    """When set, the next step is offered only tools of these tiers: told to make the change it
    only talked about and made to call, the 1.5B model read the same files again."""
    about_workspace: bool = False
    """The request names a file, folder or code of the workspace, or speaks of files, folders
    or commands: looking comes first."""
    check: str = ""
    """The command the request says must pass (``request_check.named_check``): run first, to see
    what fails, and again after the change."""
    kept_script: str = ""
    """The script the check runs, when the request names it only as the check: what the work
    must not change (told "check_catalog.py is failing, fix the code", the 1.5B model edited
    the check's assertion to what the code returned)."""
    check_told: bool = False
    """The model, answering with its change unchecked, was once told to run the check."""
    checks_reported: set[str] = field(default_factory=set)
    """The check's failures the model only reported and was sent back for."""
    run_hint: str = ""
    """How to run what the request says to use (``intent.python_use_hint``), added to the
    notes that say to run it."""
    held_off_target: set[tuple[str, str]] = field(default_factory=set)
    """Edits held back once for changing a function the failing check does not name
    (``fix_target``)."""
    told_to_read: bool = False
    undeleted_told: bool = False
    """Told once that what the request orders deleted still exists."""
    """The model, handing the task back unread, was once told to read the file the request
    names."""

    @property
    def writes_refused(self) -> tuple[str, str] | None:
        """(why, by what) a write the model proposes is refused before anyone is asked, when
        the request asks for none: it only asks a question, or only orders a run."""
        if self.only_to_know:
            return QUESTION_ONLY_MESSAGE, "question"
        if self.only_to_run:
            return _with_hint(RUN_ONLY_MESSAGE, self.run_hint), "run order"
        return None

    def changes_check(self, written: Sequence[str]) -> bool:
        """Whether a path a call names to write (``Tool.named_writes``) is the check's own
        script (``kept_script``): such a call is refused before anyone is asked
        (``check_kept_message``)."""
        kept = self.kept_script
        for value in written if kept else ():
            if not value.strip():
                continue
            path = posixpath.normpath(value.strip())
            if path == kept or (path.startswith("/") and path.endswith(f"/{kept}")):
                return True
        return False

    def failing_definitions(self, workspace: Path, most: int = 3) -> list[str]:
        """Where the code the failing check's output calls is defined (``path:line``), the
        check's own script left out (its test functions are no place for the fix). Reads
        files: run it off the event loop."""
        places = code_places(self.failing_check() or "", workspace)
        kept = self.kept_script
        found = [f"{p.path}:{p.line}" for p in places if defines(p) and p.path != kept]
        return found[:most]

    def echoes_request(self, answer: str) -> bool:
        """Whether an answer only says the request back (``parrots``), with no word a result
        of this task showed: "The warmest city is Cairo." is four of the request's five
        words, and its fifth is what the run printed."""
        if not parrots(answer, self.request):
            return False
        asked = set(words(self.request))
        new = {w for w in words(answer) if w not in asked and len(w) > 2}
        found = set().union(*(words(s.output) for s in self.steps if s.status == "ok"))
        return not new & found - _FILLER_WORDS

    def ignored_result(self, answer: str) -> str | None:
        """The one short line the question's last successful command printed, when the
        answer does not say it; None otherwise. The 1.5B model, told how to work out the
        warmest city, ran it, got "Cairo", and answered that the file holds no
        temperatures. Only where a run was what answers the question (``run_hint``)."""
        if self.result_checked or not (self.only_to_know and self.run_hint):
            return None
        run = next((s for s in reversed(self.steps) if s.risk == "execute"), None)
        if run is None or run.status != "ok" or not run.output.startswith("exit code 0\n"):
            return None
        printed = run.output.removeprefix("exit code 0\n").strip()
        if not printed or "\n" in printed or len(printed) > 80 or printed == "(no output)":
            return None  # a listing or a report: the answer may rightly say only part of it
        if _collapsed(printed.strip("'\"` ")) in _collapsed(answer):
            return None
        # Or each word it printed that the request did not say ("Cairo"; a list's items in
        # other words). The words of 'big-red-apple' are all the request's: it must be said.
        found = set(words(printed)) - set(words(self.request))
        return None if found and found <= set(words(answer)) else printed

    def passed_over_failure(self, answer: str) -> str | None:
        """The check of a question whether a function is right (``right_question``) that
        failed when last run, when the answer says nothing is wrong; None otherwise. The 1.5B
        model ran test_calc.py, saw average's assertion fail, and answered that average is
        correct and the issue "might be in test_calc.py"."""
        question = self.right_question
        if question is None or self.fault_checked or admits_a_fault(answer):
            return None
        for step in reversed(self.steps):
            command = str(step.arguments.get("command", "")) if step.risk == "execute" else ""
            if any(runs_check(command, check) for check in question.commands):
                failed = step.status == "failed" and step.output.startswith("exit code ")
                return command if failed else None
        return None

    def unsupported_number(self, answer: str) -> str | None:
        """A number the answer to a question states that neither the request nor any tool
        result shows, or None. Asked the value of TIMEOUT_S, the 1.5B model ran ``echo
        $TIMEOUT_S``, got no output and answered 60 (the timeout of its own call). Checked
        once per task: an answer the model works out (a sum, an average) may stand after it."""
        if self.numbers_checked or not self.only_to_know:
            return None
        if self.orders_run and not self.told_to_act and not self._ran_anything():
            return None  # the run that works it out is asked for first (``undone_order``)
        seen = {float(n) for n in numbers(self.request)}
        for step in self.steps:
            seen.update(float(n) for n in numbers(step.output))
        return next((n for n in numbers(answer) if float(n) not in seen), None)

    def change_failed(self) -> bool:
        """The request orders a change, the latest call was a write that failed, and no call
        that changes anything has worked: an answer now reports a failure the model may still
        mend (shown config.py before appending to it, the 1.5B model answered "DEBUG =
        False"). A command that ran and exited non-zero, or a read that failed ("nowhere.md
        does not exist"), is a result to report, not a write to mend."""
        if not (self.orders_change and self.steps):
            return False
        last = self.steps[-1]
        # A command that left its files as they were changed nothing: after one, the 1.5B
        # model's failed edit was answered with "There was no need to change anything".
        changed = any(step.may_have_changed for step in self.steps)
        return last.risk == "write" and last.status == "failed" and not changed

    def undone_order(self) -> str | None:
        """What to tell a model that answers an order before even trying it (small models
        describe the fix instead of making it, or say what a script would print without
        running it), or None. Said once per task, and not right after a failed call, whose
        result the answer may be reporting ("calc.py does not exist")."""
        if self.told_to_act or self.last_failed:
            return None
        # An order only to run is no change: told "no file has been changed yet" after "use
        # units.py to convert 10 miles", the 1.5B model edited units.py, and was refused.
        if (self.orders_change and not self.only_to_run) and (
            all(step.risk == "read" or step.changed_nothing for step in self.steps)
            or self._check_fails_unchanged()
        ):
            if any(step.changed_nothing for step in self.steps):
                return UNCHANGED_BY_COMMAND_MESSAGE
            if self._check_fails_unchanged():
                # Told only "make the change now", the 1.5B model renamed the function the
                # check calls (km_to_miles_corrected, total_sum, oldest_book), or gave it a
                # parameter nothing reads: in each of the four fix tasks of the task sets.
                return UNDONE_FIX_MESSAGE
            return UNDONE_CHANGE_MESSAGE
        if self.orders_run and not self._ran_anything():
            return _with_hint(UNDONE_RUN_MESSAGE, self.run_hint)
        return None

    def _ran_anything(self) -> bool:
        return any(step.risk == "execute" for step in self.steps)

    def _check_fails_unchanged(self) -> bool:
        """The request names a check, the last command run failed, and nothing was written:
        running the check is not the change. The 1.5B model ran the check, read the faulty
        line and answered with the fix for the user to make."""
        ran = [step for step in self.steps if step.risk == "execute"]
        written = any(step.risk == "write" and step.status == "ok" for step in self.steps)
        return bool(self.check and ran and ran[-1].status == "failed" and not written)

    def unchecked_change(self) -> str | None:
        """What to tell a model that answers a request naming a check (``check``) when a
        change it made has not been checked since, or None. Once per task."""
        if not self.check or self.check_told:
            return None
        changed = checked = False
        for step in self.steps:
            if step.status != "ok":
                continue
            if step.risk == "write":
                changed, checked = True, False
            elif step.risk == "execute":
                checked = True
        return unchecked_change_message(self.check) if changed and not checked else None

    def only_reports_check(self) -> bool:
        """Whether an answer, or a question, now comes while the check the request names
        still fails, nothing written since it ran (``check``; ``failed_check_message`` says
        what to do instead). Once for each failure: the 1.5B model ran the check, then asked
        the user to fix what it printed (told to correct its call, it ran the same check
        again); or ran it, read two files and answered that it passed."""
        failing = self.failing_check()
        if failing is None or failing in self.checks_reported:
            return False
        last_run = max(i for i, step in enumerate(self.steps) if step.risk == "execute")
        return not any(
            step.risk == "write" and step.status == "ok" for step in self.steps[last_run:]
        )

    def tell_to_fix(self) -> None:
        """The check's failure was reported back (``only_reports_check``): the next step must
        call, a tool that reads or writes (running the check again tells nothing new)."""
        self.checks_reported.add(self.failing_check() or "")
        self.must_call, self.act_with = True, ("read", "write")

    def tell_to_act(self, undone: str) -> None:
        """The order was answered undone (``undone``, from ``undone_order``): the next step
        must call, and only a tool that carries out what is undone (one that writes for a
        change, one that runs for a run: "write square.py and run it", written, is a run)."""
        self.told_to_act = self.must_call = True
        # After a command that left its files as they were, the 1.5B model, offered the
        # shell again, ran the same no-op sed: the tools that write make the change.
        change = undone in (UNDONE_CHANGE_MESSAGE, UNDONE_FIX_MESSAGE, UNCHANGED_BY_COMMAND_MESSAGE)
        self.act_with = ("write",) if change else ("execute",)

    def echoed_note(self, answer: str) -> str | None:
        """What to tell a model whose ``answer`` only repeats one of our notes about a call
        that did not go through, or None. After a denial the 1.5B model answered "The user
        denied this call; it did not run."; after its docstring went in, it answered with the
        note on its first try ("calc.py already exists… To add to its end, call write_file
        again…"). Once per task."""
        if self.refusal_echoed:
            return None
        if len(words(answer)) >= 6 and any(parrots(answer, note) for note in REPEAT_NOTES):
            # Said instead of a call's result when a call is repeated: not a step's output.
            # Long enough to be more than "It is." or "Changed it.", both of whose words
            # are the notes'.
            return NOTE_ECHO_MESSAGE
        latest, done_since = True, False  # only denials so far; a call that worked after
        for step in reversed(self.steps):
            latest = latest and step.status == "denied"
            if latest and parrots(answer, step.output):
                return REFUSAL_ECHO_MESSAGE
            # A failure with nothing done since may be what the answer rightly reports.
            if done_since and step.status != "ok" and parrots(answer, step.output):
                return NOTE_ECHO_MESSAGE
            done_since = done_since or step.status == "ok"
        return None

    def failing_check(self) -> str | None:
        """The output of the last command run, when the request names a check and that
        command failed: what a fix should change."""
        if not self.check:
            return None
        ran = [step for step in self.steps if step.risk == "execute"]
        return ran[-1].output if ran and ran[-1].status == "failed" else None

    def has_read(self, path: str) -> bool:
        """Whether a read_file of ``path`` went through in this task."""
        wanted = path.removeprefix("./")
        return any(
            step.tool == "read_file"
            and step.status == "ok"
            and str(step.arguments.get("path", "")).removeprefix("./") == wanted
            for step in self.steps
        )

    def note_outcome(self, key: tuple[str, str], status: ev.CallStatus) -> None:
        """Stop a task that repeats the same failing call, or whose calls keep being denied,
        instead of letting it loop."""
        self.last_failed = status == "failed"
        if status == "denied":
            self.denial_streak += 1
            if self.denial_streak >= DENIAL_LIMIT:
                raise TaskEnded(
                    f"{DENIAL_LIMIT} tool calls in a row were not allowed to run, so the task "
                    "stopped",
                    status="denied",
                )
            return
        self.denial_streak = 0
        if status == "ok":
            self.last_failure, self.failure_streak = None, 0
            return
        self.failure_streak = self.failure_streak + 1 if self.last_failure == key else 1
        self.last_failure = key
        if self.failure_streak >= REPEATED_FAILURE_LIMIT:
            raise TaskEnded(
                f"the model made the same failing tool call {REPEATED_FAILURE_LIMIT} times in "
                f"a row ({key[0]})"
            )
