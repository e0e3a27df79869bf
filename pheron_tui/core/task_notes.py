"""What a task tells the model when a reply or a call does not move it.

Each note answers one kind of reply (a repeated call, an echo of the request, a number no
result shows, a write to the check's script...); ``TaskState``, ``send_back`` and
``reply_calls`` decide when. The wording is measured: each sentence was kept because a small
model did the right thing after it (see the bench notes in the README).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pheron_tui.core.tools import LIKELY_MEANT


def unsummarised_answer(result: tuple[str, str]) -> str:
    tool, observation = result
    return (
        f"The model did not put the result into words, so here it is as {tool} returned it:"
        f"\n\n```\n{observation}\n```"
    )


ALREADY_CALLED = "You already made this exact call; its result is above."
REPEATED_CALL_MESSAGE = (
    f"{ALREADY_CALLED} Do not call it again. Answer the request from that result."
)
UNMADE_CHANGE_MESSAGE = (
    "Nothing has changed since: your last call did not go through. Its result says why; "
    "make the call it asks for instead."
)
SAME_FAILURE_MESSAGE = (
    "You already made this exact call and it failed; nothing has changed since, so it would "
    "fail the same way. Its result above says why: correct the call, or answer from what "
    "you have."
)


def same_failure_message(failure: str) -> str:
    """``SAME_FAILURE_MESSAGE``, and the entry the failure named as likely meant, if it did:
    told only to correct the call, the 1.5B model searched the missing folder a third time."""
    meant = re.search(rf"{LIKELY_MEANT}([^\s?]{{1,200}})\?", failure)
    if meant is None:
        return SAME_FAILURE_MESSAGE
    return f"{SAME_FAILURE_MESSAGE} It asked: did you mean {meant.group(1)}? Use that path."


QUESTION_ONLY_MESSAGE = (
    "The request only asks a question; nothing should be changed. Find the answer with the "
    "read-only tools, then give it."
)

RUN_ONLY_MESSAGE = (
    "The request asks for something to be run, not for files to be changed: this call did not "
    "run. Run what the request names, then answer from its output."
)

UNCHANGED_BY_COMMAND_MESSAGE = (
    "The request asks you to change something, and no file has been changed yet: the command "
    "you ran left the files it writes as they were. Make the change now with a tool call, "
    "then say what you did."
)
UNDONE_CHANGE_MESSAGE = (
    "The request asks you to change something, and no file has been changed yet: your reply "
    "only talks about it. Make the change now with a tool call, then say what "
    "you did."
)
UNDONE_FIX_MESSAGE = (
    "The check still fails, and no file has been changed yet: your reply only talks about the "
    "fix. Make it now with edit_file: as `old`, the line that computes the wrong value, "
    "exactly as the file has it; as `new`, that line corrected. Keep every function's name "
    "and parameters as they are: the check calls them so."
)
UNDONE_RUN_MESSAGE = (
    "The request asks you to run something, and nothing has been run yet. Run it now with a "
    "tool call, then say what it printed."
)


def unchecked_change_message(command: str) -> str:
    """What the model is told when it answers a request that names a check without having
    run it since its last change."""
    return (
        f"You changed files but have not run `{command}` since, and the request says it must "
        "pass. Run it now, then answer from what it printed."
    )


def failed_check_message(command: str, defined: Sequence[str] = ()) -> str:
    """What the model is told when it reports the failure of the check it is to make pass;
    ``defined``: where the code its output calls is defined (``path:line``)."""
    where = f" What it calls is defined at {', '.join(defined)}: start there." if defined else ""
    return (
        f"That failure of `{command}` is what the request asks you to fix, not something to "
        f"report.{where} Read that code, change it so the check passes, then run "
        f"`{command}` again."
    )


def check_kept_message(script: str, defined: Sequence[str] = ()) -> str:
    """What the model is told when it writes to the script of the check the request says must
    pass, which is not the fix's to change. ``defined``: where the code its failure calls is
    defined (``path:line``); told only "where its failure points", the 1.5B model made the
    same edit of the check twice more."""
    where = (
        f" What its failure calls is defined at {', '.join(defined)}: change that."
        if defined
        else " Change the code it tests, where its failure points."
    )
    return (
        f"This call did not run: {script} is the check the request says must pass, and it is "
        f"not to be changed.{where} If the check itself is wrong, say so in your answer."
    )


UNSUPPORTED_NUMBER_MESSAGE = (
    "Your answer says {number}, but no tool result above shows {number}. Answer only from what "
    "the results show; if they do not show it, look where it is (read the file that holds it, "
    "or search for it), or say that you could not find it."
)

IGNORED_RESULT_MESSAGE = (
    "Your command printed `{printed}`, and your answer does not say it. Answer the question "
    "from what it printed; if the command worked out the wrong thing, say so."
)

PASSED_OVER_FAILURE_MESSAGE = (
    "`{command}` failed: its output above shows that {name} does not do what that check "
    "expects. Unless you can show the check itself is wrong, {name} has a bug: say what it "
    "gets wrong and which of its lines causes it."
)

CONTRADICTED_SETTING_MESSAGE = (
    "Your answer says {said}, but a tool result above shows `{setting}`. Answer from what the "
    "results show."
)

FAILED_CHANGE_MESSAGE = (
    "Your last tool call failed, so nothing has been changed yet; its result above says why. "
    "Correct the call and try again. If it cannot be done, say why."
)


def guessed_values_message(tool: str, values: list[float | str]) -> str:
    """What the model is told about a call it filled with values no one gave."""
    shown = ", ".join(
        json.dumps(v) if isinstance(v, str) else f"{v:g}" for v in dict.fromkeys(values)
    )
    return (
        f"Not run: {tool} needs {shown}, and nobody gave that. Do not make values up. If you "
        "know the answer, give it; if it needs values only the user has, ask for them with "
        "CLARIFY."
    )


def unfit_call_message(tool: str) -> str:
    """What the model is told about a call to a tool not made for what was asked."""
    return (
        f"Not run: {tool} does not do what the user asked. If you know the answer, give it; "
        "if none of your tools can do this, say so."
    )


REFUSAL_ECHO_MESSAGE = (
    "That repeats the note about the call that did not run; it is not an answer. Tell the "
    "user in your own words what you did not do and why, and what you found before it, if "
    "anything."
)
NOTE_ECHO_MESSAGE = (
    "That repeats a note from an earlier tool result; it is not an answer. Tell the user in "
    "your own words what you did and what came of it."
)
REPEAT_NOTES = (
    f"{ALREADY_CALLED} {UNMADE_CHANGE_MESSAGE}",
    REPEATED_CALL_MESSAGE,
    SAME_FAILURE_MESSAGE,
)
EMPTY_MESSAGE = "Your reply was empty. Call a tool, or give the final answer."
ECHO_MESSAGE = (
    "That repeats the request; it is not an answer. Do what it asks with the tools, then "
    "say what you did or found."
)
RETRY_MESSAGE = (
    "Your last tool call failed; its result above says why. Do not ask the user yet: correct "
    "the call and try again."
)


def undeleted_message(names: Sequence[str]) -> str:
    shown = ", ".join(f"`{name}`" for name in names)
    verb = "still exists" if len(names) == 1 else "still exist"
    return (
        f"{shown} {verb}, and the request asks for it to be deleted. Delete it with "
        'delete_path (a folder and everything in it: "recursive": true), then say what you did.'
    )


def unread_file_message(path: str) -> str:
    return (
        f"That asks the user nothing, and {path}, the file the request names, has not been "
        f"read yet. Read it with read_file, then answer from what it holds."
    )


PARROT_MESSAGE = (
    "That repeats the request instead of asking something new. Do not ask: use the tools to "
    "find out, then answer."
)
