"""Tools: confinement to the workspace, validation, the shell's limits."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from pheron_tui.core.capped import CappedOutput
from pheron_tui.core.tools import ToolCallError, ToolContext
from pheron_tui.tools.builtin import default_registry
from pheron_tui.tools.files import PathRefused, resolve_path
from pheron_tui.tools.sandbox import run_shell

from ..processes import alive


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.py").write_text("print('beta')\n")
    (tmp_path / "secret.txt").write_text("top secret")
    (ws / "out_link").symlink_to(tmp_path / "secret.txt")
    (ws / "in_link").symlink_to(ws / "a.txt")
    (ws / "loop1").symlink_to(ws / "loop2")
    (ws / "loop2").symlink_to(ws / "loop1")
    return ws


_SEEN: dict[Path, dict] = {}
"""Per workspace, the files read or written by earlier calls: one session per workspace."""


_WARNED: dict[Path, set] = {}
"""Per workspace, the calls held back once (``ToolContext.warned``)."""


async def call(ws: Path, name: str, **arguments):
    registry = default_registry()
    prepared = registry.prepare(name, arguments)
    context = ToolContext(
        workspace=ws,
        shell_timeout_s=5,
        seen=_SEEN.setdefault(ws, {}),
        warned=_WARNED.setdefault(ws, set()),
    )
    return await prepared.tool.run(prepared.args, context)


@pytest.mark.parametrize(
    "raw",
    [
        "../secret.txt",
        "sub/../../secret.txt",
        "/etc/passwd",
        "out_link",
        "~/.bashrc",
        "loop1",
        "a.txt\x00",
        "",
        "x" * 5000 + "/../../secret.txt",
    ],
)
def test_paths_that_leave_the_workspace_are_refused(workspace: Path, raw: str) -> None:
    with pytest.raises(PathRefused):
        resolve_path(workspace, raw)


def test_paths_inside_are_accepted(workspace: Path) -> None:
    assert resolve_path(workspace, "sub/../a.txt") == workspace.resolve() / "a.txt"
    assert resolve_path(workspace, str(workspace / "a.txt")) == workspace.resolve() / "a.txt"
    assert resolve_path(workspace, "in_link") == workspace.resolve() / "a.txt"


async def test_read_file_through_a_link_out_is_refused_with_a_clear_observation(
    workspace: Path,
) -> None:
    result = await call(workspace, "read_file", path="out_link")
    assert not result.ok
    assert "outside the workspace" in result.observation
    assert "top secret" not in result.observation


async def test_read_file_with_offset_and_limit(workspace: Path) -> None:
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 201)))
    result = await call(workspace, "read_file", path="long.txt", offset=2, limit=1)
    assert result.ok
    assert "line 2" in result.observation and "line 1\n" not in result.observation
    past = await call(workspace, "read_file", path="a.txt", offset=10, limit=20)
    assert past.ok and "alpha" in past.observation and "past the end (3 lines)" in past.observation


async def test_read_file_refuses_directories_and_devices(workspace: Path) -> None:
    assert "directory" in (await call(workspace, "read_file", path="sub")).observation
    os.symlink("/dev/zero", workspace / "zero")
    assert not (await call(workspace, "read_file", path="zero")).ok


async def test_list_dir_and_search_files(workspace: Path) -> None:
    listing = await call(workspace, "list_dir", path=".")
    assert "a.txt" in listing.observation and "sub/" in listing.observation
    found = await call(workspace, "search_files", pattern="beta")
    assert "a.txt:2: beta" in found.observation
    assert "sub/b.py:1:" in found.observation
    assert "top secret" not in found.observation


async def test_a_search_with_few_matches_shows_the_lines_around_them(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef average(numbers):\n"
        "    return sum(numbers) / (len(numbers) - 1)\n"
    )
    found = (await call(tmp_path, "search_files", pattern="average")).observation
    assert found.splitlines() == [
        '1 matching line in 1 file (marked "path:N:"; the lines around them "path-N-"):',
        "calc.py-4- ",
        "calc.py:5: def average(numbers):",
        "calc.py-6-     return sum(numbers) / (len(numbers) - 1)",
    ]
    # None in the one file searched: a short file is shown whole, a long one is to be read.
    none = (await call(tmp_path, "search_files", pattern="hi", path="calc.py")).observation
    assert none.startswith("no matches for 'hi' in calc.py, but the file is short")
    assert "in other words. calc.py (6 lines):\n    1  def add" in none
    (tmp_path / "long.py").write_text("x = 1\n" * 250)
    none = (await call(tmp_path, "search_files", pattern="hi", path="long.py")).observation
    assert none == "no matches for 'hi' in long.py; read_file long.py shows all of it"
    (tmp_path / "min.js").write_text("var x=1;" * 5000)  # one line, 40 kB
    none = (await call(tmp_path, "search_files", pattern="hi", path="min.js")).observation
    assert none == "no matches for 'hi' in min.js; read_file min.js shows all of it"
    # A file's name searched for in the text of files: where files of that name are is said.
    none = (await call(tmp_path, "search_files", pattern="long.py")).observation
    assert none.startswith("no matches for 'long.py' in .; files named so: long.py (")
    none = (await call(tmp_path, "search_files", pattern="*.js")).observation
    assert "files named so: min.js" in none
    none = (await call(tmp_path, "search_files", pattern="average numbers")).observation
    assert none == "no matches for 'average numbers' in ."
    # Many matches: one line each, as before.
    (tmp_path / "many.txt").write_text("average\nfiller\n" * 6)
    found = (await call(tmp_path, "search_files", pattern="average")).observation
    assert "filler" not in found and found.count("average") == 7
    assert found.startswith("7 matching lines in 2 files:\n")


async def test_a_search_says_how_many_lines_match_apart_from_the_lines_around_them(
    tmp_path: Path,
) -> None:
    # Shown among its neighbours, a match is easy to miscount: the count is said first.
    (tmp_path / "app.log").write_text("INFO start\nERROR kiwi\nINFO order 17\nERROR bank\n")
    found = (await call(tmp_path, "search_files", pattern="ERROR", path="app.log")).observation
    assert found.splitlines()[0].startswith("2 matching lines in 1 file")
    assert "app.log-3- INFO order 17" in found


async def test_read_file_says_how_many_lines_there_are(workspace: Path) -> None:
    whole = (await call(workspace, "read_file", path="a.txt")).observation
    assert whole.splitlines()[0] == "a.txt (3 lines):"
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 201)))
    part = (await call(workspace, "read_file", path="long.txt", offset=2, limit=1)).observation
    assert part.splitlines()[0] == "long.txt (lines 2-2 of 200):"


async def test_part_of_a_short_file_is_shown_whole(workspace: Path) -> None:
    """The 1.5B model read line 5 of a doc because a note named it, and only the header of a
    CSV asked how many rows it has (then gave the line count). A short file is shown whole,
    with the lines asked for noted."""
    (workspace / "data.csv").write_text("name,score\nana,3\nbo,5\ncy,8\ndee,1\n")
    head = (await call(workspace, "read_file", path="data.csv", limit=1)).observation
    assert head.startswith("data.csv (5 lines: a header and 4 data rows):\n")
    assert "dee,1" in head and head.endswith(
        "[lines 1-1 were asked for; the file is short, so all of it is shown]"
    )
    line = (await call(workspace, "read_file", path="a.txt", offset=2, limit=1)).observation
    assert line.splitlines()[0] == "a.txt (3 lines):" and "alpha" in line and "gamma" in line


async def test_copy_path_copies_a_file_and_never_over_one(workspace: Path) -> None:
    copied = await call(workspace, "copy_path", source="a.txt", destination="backup/a.txt")
    assert copied.ok and copied.observation == "copied a.txt to backup/a.txt"
    assert (workspace / "backup" / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    (workspace / "b.txt").write_text("keep me")
    again = await call(workspace, "copy_path", source="a.txt", destination="b.txt")
    assert not again.ok and "already exists" in again.observation
    assert (workspace / "b.txt").read_text() == "keep me"
    outside = await call(workspace, "copy_path", source="out_link", destination="c.txt")
    assert not outside.ok and not (workspace / "c.txt").exists()
    escape = await call(workspace, "copy_path", source="a.txt", destination="../a.txt")
    assert not escape.ok and not (workspace.parent / "a.txt").exists()
    missing = await call(workspace, "copy_path", source="nope.txt", destination="d.txt")
    assert not missing.ok and "does not exist" in missing.observation
    folder = await call(workspace, "copy_path", source="sub", destination="sub2")
    assert not folder.ok and "make_dir" in folder.observation and not (workspace / "sub2").exists()
    assert not [p for p in workspace.rglob("*pheron-tmp*")]  # no temporary file left


async def test_make_dir_creates_a_folder_with_its_parents(workspace: Path) -> None:
    made = await call(workspace, "make_dir", path="build/out")
    assert made.ok and (workspace / "build" / "out").is_dir()
    again = await call(workspace, "make_dir", path="build/out")
    assert again.ok and "already exists" in again.observation
    over_file = await call(workspace, "make_dir", path="a.txt")
    assert not over_file.ok and (workspace / "a.txt").is_file()
    escape = await call(workspace, "make_dir", path="../elsewhere")
    assert not escape.ok and not (workspace.parent / "elsewhere").exists()


async def test_an_edit_whose_old_text_is_not_there_is_shown_the_lines_most_like_it(
    workspace: Path,
) -> None:
    """Never having read env.example, the 1.5B model edited "TIMEOUT=60" (its guess) and
    answered that nothing needed changing; elsewhere it wrote `['title']` for `["title"]`."""
    (workspace / "env").write_text("DEBUG=1\nTIMEOUT=30\nDB_URL=sqlite:///x.db\n")
    guessed = await call(workspace, "edit_file", path="env", old="TIMEOUT=60", new="TIMEOUT=90")
    assert not guessed.ok and guessed.observation.endswith(
        "The lines most like it, as the file has them:\n     2  TIMEOUT=30"
    )
    (workspace / "check.py").write_text('x = 1\nassert f(b)["title"] == "Brave New World", 1\n')
    quoted = "assert f(b)['title'] == 'Brave New World'"
    quotes = await call(workspace, "edit_file", path="check.py", old=quoted, new="pass")
    assert (
        '     2  assert f(b)["title"]' in quotes.observation and "x = 1" not in quotes.observation
    )
    unlike = await call(workspace, "edit_file", path="env", old="something else", new="y")
    assert unlike.observation == "`old` does not occur in env; it must occur exactly once"


async def test_write_and_edit_file(workspace: Path) -> None:
    assert (await call(workspace, "write_file", path="new/c.txt", content="one two")).ok
    assert (workspace / "new" / "c.txt").read_text() == "one two"
    assert (await call(workspace, "edit_file", path="new/c.txt", old="two", new="three")).ok
    assert (workspace / "new" / "c.txt").read_text() == "one three"
    missing = await call(workspace, "edit_file", path="new/c.txt", old="zzz", new="y")
    assert not missing.ok and "does not occur" in missing.observation
    assert "swapped" not in missing.observation
    # The fix written as `old`, the faulty text as `new` (the 1.5B model, three times).
    swapped = await call(workspace, "edit_file", path="new/c.txt", old="one four", new="one three")
    assert "`new` does (line 1): were they swapped?" in swapped.observation
    (workspace / "d.py").write_text("x = f(1)\ny = 2\nz = f(1)\n")
    twice = await call(workspace, "edit_file", path="d.py", old="f(1)", new="f(2)")
    assert not twice.ok and "occurs 2 times in d.py (lines 1, 3)" in twice.observation
    assert twice.observation.endswith(
        "The lines, as the file has them:\n     1  x = f(1)\n     3  z = f(1)"
    )
    assert (workspace / "d.py").read_text() == "x = f(1)\ny = 2\nz = f(1)\n"
    refused = await call(workspace, "write_file", path="../evil.txt", content="x")
    assert not refused.ok and not (workspace.parent / "evil.txt").exists()


async def test_a_csv_with_a_header_says_how_many_data_rows_it_has(workspace: Path) -> None:
    """Asked how many data rows data.csv has, the 1.5B model gave its line count."""
    (workspace / "data.csv").write_text("name,score\nana,3\nbo,5\ncy,8\ndee,1\n")
    (workspace / "pairs.csv").write_text("1,2\n3,4\n")
    (workspace / "notes.txt").write_text("name,score\nana,3\n")
    read = await call(workspace, "read_file", path="data.csv")
    assert read.observation.startswith("data.csv (5 lines: a header and 4 data rows):\n")
    assert (await call(workspace, "read_file", path="pairs.csv")).observation.startswith(
        "pairs.csv (2 lines):"
    )  # no header: numbers throughout
    assert (await call(workspace, "read_file", path="notes.txt")).observation.startswith(
        "notes.txt (2 lines):"
    )  # not a CSV file by its name
    (workspace / "big.csv").write_text("n,sq\n" + "".join(f"{n},{n * n}\n" for n in range(200)))
    part = await call(workspace, "read_file", path="big.csv", limit=2)
    assert part.observation.startswith("big.csv (lines 1-2 of 201):")  # rows counted whole only


async def test_an_edit_shows_the_lines_it_changed(workspace: Path) -> None:
    """Told only "edited", a small model read the whole file again to see its change."""
    (workspace / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef average(numbers):\n"
        "    return sum(numbers) / (len(numbers) - 1)\n"
    )
    fixed = await call(
        workspace, "edit_file", path="calc.py", old="(len(numbers) - 1)", new="len(numbers)"
    )
    assert fixed.observation == (
        "edited calc.py; lines 5-6 now:\n"
        "    5  def average(numbers):\n"
        "    6      return sum(numbers) / len(numbers)"
    )
    long = "\n".join(f"    x{i} = {i}" for i in range(30)) + "\n"
    grown = await call(workspace, "edit_file", path="calc.py", old="    return a + b\n", new=long)
    assert grown.observation.startswith("edited calc.py; lines 1-12 now:\n    1  def add(a, b):")
    assert grown.observation.endswith("   12      x10 = 10\n[…]")


def test_unknown_tool_and_bad_arguments_say_what_is_wrong() -> None:
    registry = default_registry()
    with pytest.raises(ToolCallError, match=r"unknown tool 'rm_rf'.*read_file"):
        registry.prepare("rm_rf", {})
    with pytest.raises(ToolCallError, match="path: required but missing"):
        registry.prepare("read_file", {})
    with pytest.raises(ToolCallError, match=r"limit: .*integer"):
        registry.prepare("read_file", {"path": "a", "limit": "lots"})
    with pytest.raises(ToolCallError, match="colour: no such parameter"):
        registry.prepare("list_dir", {"colour": "red"})


def test_what_is_wrong_with_a_call_is_said_briefly_however_big_the_call() -> None:
    """The message goes to the model and the user: a 100,000-letter name or 20,000 made-up
    keys had made it as long (500 KB), filling the context it was meant to correct."""
    registry = default_registry()
    with pytest.raises(ToolCallError) as named:
        registry.prepare("x" * 100_000, {})
    assert len(str(named.value)) < 400 and "read_file" in str(named.value)
    keys = {f"k{i}": i for i in range(20_000)} | {"x" * 100_000: 1}
    with pytest.raises(ToolCallError) as many:
        registry.prepare("list_dir", keys)
    told = str(many.value)
    assert len(told) < 400 and "k0: no such parameter" in told and "and 19,995 more" in told


async def test_shell_exec_reports_exit_code_and_output(workspace: Path) -> None:
    result = await call(workspace, "shell_exec", command="echo hi; exit 3")
    assert not result.ok
    assert result.observation.startswith("exit code 3") and "hi" in result.observation


async def test_a_command_that_leaves_its_files_as_they_were_says_so(workspace: Path) -> None:
    """`sed -i 's/TIMEOUT=60/TIMEOUT=60/'` exits 0 and prints nothing, and the 1.5B model said
    TIMEOUT had been changed. A command whose every named file is as it was says so; one that
    changed or made a file says nothing more."""
    (workspace / "env").write_text("DEBUG=1\nTIMEOUT=30\n")
    same = await call(workspace, "shell_exec", command="sed -i 's/TIMEOUT=60/TIMEOUT=60/' env")
    assert same.ok and same.unchanged == ("env",)
    assert same.observation.endswith("(the command left env as it was: nothing in it changed)")
    changed = await call(workspace, "shell_exec", command="sed -i 's/=30/=60/' env")
    assert changed.ok and changed.unchanged == () and "left" not in changed.observation
    assert (workspace / "env").read_text() == "DEBUG=1\nTIMEOUT=60\n"
    made = await call(workspace, "shell_exec", command="sed -i 's/x/y/' env && echo a > new.txt")
    assert made.ok and made.unchanged == ()
    again = await call(workspace, "shell_exec", command="cd sub && echo \"print('beta')\" > b.py")
    assert again.unchanged == ("sub/b.py",)
    unnamed = await call(workspace, "shell_exec", command="python3 -c 'pass'")
    assert unnamed.unchanged == () and unnamed.observation == "exit code 0\n(no output)"
    os.mkfifo(workspace / "pipe")
    piped = await call(workspace, "shell_exec", command="touch pipe", timeout_s=5)
    assert piped.ok and piped.unchanged == ()  # a pipe is never read


async def test_a_python_failure_names_the_workspace_functions_it_went_through(
    workspace: Path,
) -> None:
    """Asked which test fails, the 1.5B model read the traceback and answered "Test average
    failed". A command that stops on a traceback ends with a sentence naming the error and the
    workspace's functions on its way, innermost first, as the code spells them; frames outside
    the workspace (the standard library, ``-c``) are not named."""
    (workspace / "calc.py").write_text(
        "import json\n\ndef average(numbers):\n    return sum(numbers) / (len(numbers) - 1)\n"
        "\ndef load(text):\n    return json.loads(text)\n"
    )
    (workspace / "test_calc.py").write_text(
        "from calc import average\n\n\ndef test_average():\n"
        "    assert average([2, 4, 6]) == 4\n\n\ntest_average()\n"
    )
    failed = await call(workspace, "shell_exec", command="python3 test_calc.py")
    assert not failed.ok
    assert failed.observation.endswith(
        "(Python stopped with AssertionError in test_average (test_calc.py line 5: "
        "`assert average([2, 4, 6]) == 4`), called from test_calc.py line 8: "
        "`test_average()`.)"
    )
    inside = await call(
        workspace, "shell_exec", command="python3 -c 'import calc; calc.average([1])'"
    )
    assert inside.observation.endswith(
        "(Python stopped with ZeroDivisionError (division by zero) in average (calc.py line "
        "4: `return sum(numbers) / (len(numbers) - 1)`).)"
    )
    library = await call(
        workspace, "shell_exec", command="python3 -c 'import calc; calc.load(\"{\")'"
    )
    assert "JSONDecodeError" in library.observation.splitlines()[-1]
    assert library.observation.splitlines()[-1].count(" in load (calc.py line 7") == 1
    elsewhere = await call(workspace, "shell_exec", command="python3 -c '1/0'")
    assert not elsewhere.observation.endswith(")") and "Python stopped" not in elsewhere.observation
    printed = await call(workspace, "shell_exec", command="cat test_calc.py; exit 0")
    assert "Python stopped" not in printed.observation
    # unittest prints a traceback per failing test, and runs on: each failure is named.
    (workspace / "test_units.py").write_text(
        "import unittest\nfrom calc import average\n\n\nclass T(unittest.TestCase):\n"
        "    def test_average(self):\n        self.assertEqual(average([2, 4, 6]), 4)\n\n"
        "    def test_one(self):\n        self.assertEqual(average([1]), 1)\n\n"
        "    def test_fine(self):\n        self.assertEqual(1, 1)\n\n\nunittest.main()\n"
    )
    units = await call(workspace, "shell_exec", command="python3 test_units.py")
    assert units.observation.splitlines()[-1].startswith("(Python raised 2 errors: ")
    assert "AssertionError (6.0 != 4) in test_average (test_units.py line 7" in units.observation
    assert "ZeroDivisionError (division by zero) in average (calc.py line 4" in units.observation
    assert "called from test_one (test_units.py line 10" in units.observation


def test_a_made_up_traceback_names_nothing_outside_the_workspace(tmp_path: Path) -> None:
    """Output is whatever a program prints: frames of other folders, paths climbing out of
    the workspace and a traceback with no error line name nothing."""
    from pheron_tui.tools.python_failure import python_failure

    outside = (
        'Traceback (most recent call last):\n  File "../../etc/passwd", line 1, in f\n'
        '    x\n  File "/usr/lib/python3/json.py", line 2, in g\n    y\nValueError: no\n'
    )
    assert python_failure(outside, tmp_path) == ""
    unfinished = 'Traceback (most recent call last):\n  File "a.py", line 1, in f\n    x\n'
    assert python_failure(unfinished, tmp_path) == ""
    # A chain: the error handled is not said, the one raised while handling it is.
    chained = (
        'Traceback (most recent call last):\n  File "a.py", line 2, in <module>\n    d["x"]\n'
        "KeyError: 'x'\n\nDuring handling of the above exception, another exception occurred:"
        '\n\nTraceback (most recent call last):\n  File "a.py", line 4, in <module>\n'
        "    raise ValueError('no x')\nValueError: no x\n"
    )
    assert python_failure(chained, tmp_path) == (
        "Python stopped with ValueError (no x) in a.py line 4: `raise ValueError('no x')`."
    )
    huge = "Traceback (most recent call last):\n" + '  File "a.py", line 1, in f\n' * 50_000
    assert python_failure(huge + "KeyError: 'k'\n", tmp_path).startswith(
        "Python stopped with KeyError ('k') in f (a.py line 1), called from f (a.py line 1)"
    )


async def test_shell_secrets_are_scrubbed(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    result = await call(workspace, "shell_exec", command="env")
    assert "sk-do-not-leak" not in result.observation


async def test_shell_timeout_kills_the_whole_process_group(workspace: Path) -> None:
    started = time.monotonic()
    result = await run_shell(
        "sleep 30 & echo $! > child.pid; sleep 30", cwd=workspace, timeout_s=0.5, cap_chars=1000
    )
    assert result.timed_out
    assert time.monotonic() - started < 10
    child = int((workspace / "child.pid").read_text())
    for _ in range(50):
        if not alive(child):
            break
        await asyncio.sleep(0.05)
    assert not alive(child)


async def test_cancelling_shell_kills_the_process_group(workspace: Path) -> None:
    task = asyncio.create_task(
        run_shell("sleep 30 & echo $! > c.pid; wait", cwd=workspace, timeout_s=60, cap_chars=1000)
    )
    for _ in range(100):
        if (workspace / "c.pid").exists() and (workspace / "c.pid").read_text().strip():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    child = int((workspace / "c.pid").read_text())
    for _ in range(50):
        if not alive(child):
            break
        await asyncio.sleep(0.05)
    assert not alive(child)


async def test_shell_output_is_capped_keeping_head_and_tail(workspace: Path) -> None:
    result = await run_shell("seq 1 100000", cwd=workspace, timeout_s=10, cap_chars=2000)
    assert result.truncated
    assert result.output.startswith("1\n2\n")
    assert result.output.rstrip().endswith("100000")
    assert "characters cut" in result.output
    assert len(result.output) < 2200


def test_capped_output_keeps_everything_under_the_cap() -> None:
    capped = CappedOutput(100)
    for piece in ["abc", "def", "ghi"]:
        capped.add(piece)
    assert capped.text() == "abcdefghi"


async def test_move_path_renames_and_never_replaces(workspace: Path) -> None:
    moved = await call(workspace, "move_path", source="a.txt", destination="docs/a2.txt")
    assert moved.ok, moved.observation
    assert (workspace / "docs" / "a2.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert not (workspace / "a.txt").exists()
    clash = await call(workspace, "move_path", source="sub/b.py", destination="docs/a2.txt")
    assert not clash.ok and "already exists" in clash.observation
    assert (workspace / "sub" / "b.py").exists()
    into_itself = await call(workspace, "move_path", source="sub", destination="sub/deeper")
    assert not into_itself.ok and (workspace / "sub" / "b.py").exists()
    out = await call(workspace, "move_path", source="sub/b.py", destination="../b.py")
    assert not out.ok and not (workspace.parent / "b.py").exists()
    missing = await call(workspace, "move_path", source="nope.txt", destination="x.txt")
    assert not missing.ok and "does not exist" in missing.observation


async def test_delete_path_removes_one_thing_and_never_what_a_link_points_to(
    workspace: Path,
) -> None:
    link = await call(workspace, "delete_path", path="in_link")
    assert link.ok and "link" in link.observation
    assert not (workspace / "in_link").is_symlink() and (workspace / "a.txt").exists()
    full = await call(workspace, "delete_path", path="sub")
    # The refusal names what is in the folder: the model deletes those, not guesses.
    assert not full.ok and (workspace / "sub" / "b.py").exists()
    assert "1 entry in it (sub/b.py)" in full.observation
    # The call that deletes the folder is spelled out, to be copied as it is.
    assert 'call delete_path with {"path": "sub", "recursive": true}' in full.observation
    assert (await call(workspace, "delete_path", path="sub/b.py")).ok
    assert (await call(workspace, "delete_path", path="sub")).ok and not (
        workspace / "sub"
    ).exists()
    for outside in ("../secret.txt", "out_link", "."):
        refused = await call(workspace, "delete_path", path=outside)
        assert not refused.ok, outside
    assert (workspace.parent / "secret.txt").read_text() == "top secret"


async def test_a_folder_goes_whole_only_when_asked_and_that_always_asks(workspace: Path) -> None:
    """Asked to remove "the old folder and everything in it", the 1.5B model deleted one of
    its two files and stopped. With "recursive": true the folder goes in one call; that call
    is dangerous (no rule or "always" approves it), a link inside goes, never what it points
    to, and nothing outside the folder changes."""
    from pheron_tui.core.tools import ToolContext
    from pheron_tui.tools.moving import DeletePath

    (workspace / "old" / "deep").mkdir(parents=True)
    (workspace / "old" / "legacy.txt").write_text("x")
    (workspace / "old" / "deep" / "notes.txt").write_text("y")
    os.symlink(workspace / "a.txt", workspace / "old" / "to_a")
    refused = await call(workspace, "delete_path", path="old")
    assert not refused.ok and '"recursive": true' in refused.observation
    tool, ctx = DeletePath(), ToolContext(workspace=workspace)
    assert tool.assess(tool.Args(path="old", recursive=True), ctx).tier == "dangerous"
    assert tool.assess(tool.Args(path="a.txt", recursive=True), ctx).tier == "write"
    gone = await call(workspace, "delete_path", path="old", recursive=True)
    assert gone.ok and gone.observation == "deleted the folder old and 4 entries in it"
    assert not (workspace / "old").exists() and (workspace / "a.txt").read_text()
    (workspace / "empty").mkdir()
    assert tool.assess(tool.Args(path="empty", recursive=True), ctx).tier == "write"
    assert (await call(workspace, "delete_path", path="empty", recursive=True)).ok
    # A folder holding a protected place (the app's files, secrets) is not deleted.
    (workspace / "proj" / "secrets").mkdir(parents=True)
    (workspace / "proj" / "secrets" / "key").write_text("k")
    guarded = ToolContext(
        workspace=workspace, protected=((workspace / "proj" / "secrets").resolve(),)
    )
    kept = await tool.run(tool.Args(path="proj", recursive=True), guarded)
    assert not kept.ok and (workspace / "proj" / "secrets" / "key").read_text() == "k"


async def test_write_file_keeps_an_existing_file_unless_told_to_append_or_overwrite(
    workspace: Path,
) -> None:
    (workspace / "utils.py").write_text("def flip(t):\n    return t[::-1]\n")
    kept = await call(workspace, "write_file", path="utils.py", content="def twice(x): ...")
    assert not kept.ok and '"mode": "append"' in kept.observation
    assert "edit_file" in kept.observation
    assert "overwrite" not in kept.observation  # the way that loses the file is not suggested
    assert "    1  def flip(t):" in kept.observation  # never read before: shown
    assert (workspace / "utils.py").read_text() == "def flip(t):\n    return t[::-1]\n"
    added = await call(
        workspace, "write_file", path="utils.py", content="\ndef twice(x):\n    return 2 * x\n",
        mode="append",
    )  # fmt: skip
    assert added.ok
    assert (workspace / "utils.py").read_text().startswith("def flip(t):\n    return t[::-1]\n\n")
    assert (workspace / "utils.py").read_text().endswith("return 2 * x\n")
    kept = await call(workspace, "write_file", path="utils.py", content="print(3)\n")
    assert not kept.ok and "def flip" not in kept.observation  # seen as it is: not shown again
    # New definitions on a file seen as it is are an addition (see below); other text is not.
    added = await call(workspace, "write_file", path="utils.py", content="def thrice(x): ...")
    assert added.ok and "added at its end" in added.observation
    replaced = await call(
        workspace, "write_file", path="utils.py", content="x = 1\n", mode="overwrite"
    )  # what it wrote itself it knows; dropping most of it is asked about once (below)
    assert not replaced.ok and "lose these" in replaced.observation
    replaced = await call(
        workspace, "write_file", path="utils.py", content="x = 1\n", mode="overwrite"
    )
    assert replaced.ok and (workspace / "utils.py").read_text() == "x = 1\n"
    fresh = await call(workspace, "write_file", path="new.md", content="hi", mode="append")
    assert fresh.ok and (workspace / "new.md").read_text() == "hi"


async def test_part_of_a_file_written_as_a_whole_is_made_as_the_edit_it_means(
    workspace: Path,
) -> None:
    """Asked to change TIMEOUT_S to 60, the 1.5B model replaced config.py with that one line
    and the other settings were gone; told what it would lose, and shown the edit_file call,
    it made the same overwrite three times. What it means is the edit: the changed line is
    put in place and the rest kept, for any kind of file, and the result says so."""
    config = workspace / "limits.txt"
    config.write_text("max_items = 50\ntimeout_s = 30\nname = svc\n")
    await call(workspace, "read_file", path="limits.txt")
    made = await call(
        workspace, "write_file", path="limits.txt", content="timeout_s = 60", mode="overwrite"
    )
    assert made.ok and "changed it in place" in made.observation
    assert config.read_text() == "max_items = 50\ntimeout_s = 60\nname = svc\n"
    two = await call(
        workspace, "write_file", path="limits.txt", content="name = api\nmax_items = 9\n",
        mode="overwrite",
    )  # fmt: skip
    assert two.ok and config.read_text() == "max_items = 9\ntimeout_s = 60\nname = api\n"


async def test_a_python_definition_the_file_has_is_put_in_its_place_not_added_again(
    workspace: Path,
) -> None:
    """Asked for a docstring on add, the 1.5B model appended a second ``def add`` to calc.py
    (told on its "create" that the file exists, it took "append"); asked to change a constant,
    it overwrote config.py with that one assignment. A text made only of definitions the file
    has is put in place of them, whatever the mode, the rest of the file kept. New
    definitions are added as before; a whole file rewritten (all its definitions) is written
    as given."""
    calc = workspace / "calc.py"
    before = "import math\n\n\ndef add(a, b):\n    return a + b\n\n\ndef average(xs):\n    return sum(xs)\n"
    calc.write_text(before)
    documented = 'def add(a, b):\n    """Add a and b."""\n    return a + b\n'
    blind = await call(workspace, "write_file", path="calc.py", content=documented)
    assert not blind.ok and calc.read_text() == before  # not seen yet: shown first
    for mode in ("create", "append", "overwrite"):
        calc.write_text(before)
        await call(workspace, "read_file", path="calc.py")
        made = await call(workspace, "write_file", path="calc.py", content=documented, mode=mode)
        assert made.ok and "replaced the old one" in made.observation, mode
        assert calc.read_text() == before.replace(
            "def add(a, b):\n", 'def add(a, b):\n    """Add a and b."""\n'
        ), mode
    same = await call(workspace, "write_file", path="calc.py", content=documented, mode="append")
    assert not same.ok and "nothing to change" in same.observation
    added = await call(
        workspace, "write_file", path="calc.py", content="\ndef twice(x):\n    return 2 * x\n",
        mode="append",
    )  # fmt: skip
    assert added.ok and calc.read_text().endswith("def twice(x):\n    return 2 * x\n")
    assert calc.read_text().count("def add") == 1
    whole = "def add(a, b):\n    return b + a\n\n\ndef average(xs):\n    return 0\n\n\ndef twice(x):\n    return x\n"
    rewritten = await call(workspace, "write_file", path="calc.py", content=whole, mode="overwrite")
    assert not rewritten.ok and "lose these" in rewritten.observation  # most lines go: once
    rewritten = await call(workspace, "write_file", path="calc.py", content=whole, mode="overwrite")
    assert rewritten.ok and calc.read_text() == whole  # the import it no longer needs is gone
    notes = workspace / "notes.md"
    notes.write_text("name: a\n")
    await call(workspace, "read_file", path="notes.md")
    more = await call(workspace, "write_file", path="notes.md", content="name: b\n", mode="append")
    assert more.ok and notes.read_text() == "name: a\nname: b\n"


async def test_an_overwrite_that_drops_most_of_a_file_is_held_back_once(workspace: Path) -> None:
    """Any other replacement shorter than the file that keeps under half of it is told which
    lines it would lose; the same call made again goes ahead (a whole rewrite is sometimes
    what was asked). A rewrite that keeps the file's length does not wait."""
    config = workspace / "config.py"
    before = "MAX_ITEMS = 50\nTIMEOUT_S = 30\nNAME = 'svc'\n"
    config.write_text(before)
    await call(workspace, "read_file", path="config.py")
    held = await call(
        workspace, "write_file", path="config.py", content="# cleared\n", mode="overwrite"
    )
    assert not held.ok and config.read_text() == before
    assert "  MAX_ITEMS = 50\n  TIMEOUT_S = 30\n  NAME = 'svc'\n" in held.observation
    assert "same arguments" in held.observation
    other = await call(
        workspace, "write_file", path="config.py", content="# emptied\n", mode="overwrite"
    )
    assert not other.ok and config.read_text() == before  # another call is asked about anew
    again = await call(
        workspace, "write_file", path="config.py", content="# cleared\n", mode="overwrite"
    )
    assert again.ok and config.read_text() == "# cleared\n"
    rewrite = "LIMIT = 9\nRETRIES = 5\n"
    config.write_text(before)
    await call(workspace, "read_file", path="config.py")
    whole = await call(
        workspace, "write_file", path="config.py", content=rewrite + "DEBUG = 1\n", mode="overwrite"
    )
    assert whole.ok and config.read_text() == rewrite + "DEBUG = 1\n"


@pytest.mark.parametrize("mode", ["append", "overwrite"])
async def test_a_file_is_added_to_or_replaced_only_as_last_seen(workspace: Path, mode) -> None:
    """Written blind, a small model appended a second copy of a function to a file it never
    looked at. A file not seen as it is now (never read, or changed since, by the user or a
    command) is left as it is and shown; the next call may then write it."""
    test_file = workspace / "test_calc.py"
    test_file.write_text("assert 1 + 1 == 2\n")
    blind = await call(workspace, "write_file", path="test_calc.py", content="x\n", mode=mode)
    assert not blind.ok and "    1  assert 1 + 1 == 2" in blind.observation
    assert test_file.read_text() == "assert 1 + 1 == 2\n"
    test_file.write_text("assert 2 + 2 == 4, 'sum'\n")  # changed after it was shown
    stale = await call(workspace, "write_file", path="test_calc.py", content="x\n", mode=mode)
    assert not stale.ok and "    1  assert 2 + 2 == 4, 'sum'" in stale.observation
    assert test_file.read_text() == "assert 2 + 2 == 4, 'sum'\n"
    written = await call(workspace, "write_file", path="test_calc.py", content="x\n", mode=mode)
    assert written.ok and test_file.read_text().endswith("x\n")
    test_file.write_text("y\n")
    await call(workspace, "read_file", path="test_calc.py", limit=1)  # any part read counts
    again = await call(workspace, "write_file", path="test_calc.py", content="x\n", mode=mode)
    assert again.ok


async def test_a_missing_file_says_where_files_of_that_name_are(workspace) -> None:
    from pheron_tui.core.tools import ToolContext
    from pheron_tui.tools.reading import ReadFile

    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "config.py").write_text("MAX_ITEMS = 50\n")
    tool = ReadFile()
    # One file of that name: a read shows it, and says so (the 1.5B model read the same
    # missing path again after "did you mean").
    shown = await tool.run(tool.Args(path="project/config.py"), ToolContext(workspace=workspace))
    assert shown.ok and shown.observation.startswith(
        "[project/config.py does not exist; shown instead: pkg/config.py, the one file here "
        "with that name]\npkg/config.py (1 line):\n    1  MAX_ITEMS = 50"
    )
    (workspace / "pkg2").mkdir()
    (workspace / "pkg2" / "config.py").write_text("MAX_ITEMS = 60\n")
    result = await tool.run(tool.Args(path="project/config.py"), ToolContext(workspace=workspace))
    assert not result.ok
    assert result.observation == (
        "project/config.py does not exist; did you mean pkg/config.py? Files with that name "
        "here: pkg/config.py, pkg2/config.py"
    )
    nothing = await tool.run(tool.Args(path="pkg/sub/nowhere.py"), ToolContext(workspace=workspace))
    assert nothing.observation == "pkg/sub/nowhere.py does not exist; pkg holds: config.py"


async def test_a_missing_path_shows_what_the_nearest_folder_holds(tmp_path) -> None:
    from pheron_tui.core.tools import ToolContext
    from pheron_tui.tools.moving import DeletePath, MovePath
    from pheron_tui.tools.path_tool import NEARBY_SHOWN
    from pheron_tui.tools.reading import ListDir, ReadFile

    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "docs").mkdir()
    (workspace / "secrets").mkdir()
    (workspace / ".git").mkdir()
    for n in range(NEARBY_SHOWN + 3):
        (workspace / f"f{n:02d}.txt").write_text("x")
    ctx = ToolContext(workspace=workspace, protected=(workspace / "secrets",))
    guessed = await ReadFile().run(ReadFile.Args(path="config/max_items.txt"), ctx)
    assert not guessed.ok and guessed.observation.startswith(
        "config/max_items.txt does not exist; . holds: docs/, f00.txt, f01.txt"
    )
    # Protected places and tool folders are not named; a long folder is cut, with a count.
    assert "secrets" not in guessed.observation and ".git" not in guessed.observation
    assert guessed.observation.endswith("and 4 more")
    for result in (
        await ListDir().run(ListDir.Args(path="src/lib"), ctx),
        await DeletePath().run(DeletePath.Args(path="old.log"), ctx),
        await MovePath().run(MovePath.Args(source="a.csv", destination="b.csv"), ctx),
    ):
        assert not result.ok and "does not exist; . holds: docs/" in result.observation


async def test_a_missing_path_names_the_entry_it_likely_meant(workspace: Path) -> None:
    """Asked to remove "the old folder", the 1.5B model deleted old_folder twice and said the
    folder did not exist; old/ was in the listing it was shown. The likely one is named."""
    (workspace / "old").mkdir()
    (workspace / "units.py").write_text("")
    guessed = await call(workspace, "delete_path", path="old_folder")
    assert "old_folder does not exist; did you mean old/? . holds:" in guessed.observation
    typo = await call(workspace, "read_file", path="unit.py")
    assert "did you mean units.py?" in typo.observation
    unlike = await call(workspace, "read_file", path="report.md")
    assert "did you mean" not in unlike.observation
    (workspace / "test_units.py").write_text("")
    plural = await call(workspace, "search_files", pattern="def", path="tests")
    assert "did you mean test_units.py?" in plural.observation
    extension = await call(workspace, "read_file", path="report.py")  # .py is no word of it
    assert "did you mean" not in extension.observation
    # A name without its suffix: asked for the omelette's ingredients, the 1.5B model listed
    # "omelette", and the recipe was recipes/omelette.json.
    (workspace / "recipes").mkdir()
    (workspace / "recipes" / "omelette.json").write_text("{}")
    (workspace / "recipes" / "omelette.md").write_text("")
    stem = await call(workspace, "list_dir", path="omelette")
    assert stem.observation == (
        "omelette does not exist; did you mean recipes/omelette.json? Files named omelette.* "
        "here: recipes/omelette.json, recipes/omelette.md"
    )


async def test_a_file_listed_as_a_folder_is_shown(workspace: Path) -> None:
    """list_dir on a CSV file was "not a directory" twice, and the 1.5B model asked the user
    for the right path. A short file listed is shown as read_file shows it; a long one is
    pointed to read_file."""
    (workspace / "stations.csv").write_text("name,score\nana,3\nbo,5\ncy,8\ndee,1\n")
    listed = await call(workspace, "list_dir", path="stations.csv")
    assert listed.ok and listed.observation.startswith("stations.csv is a file, not a folder.")
    assert "a header and 4 data rows" in listed.observation and "dee,1" in listed.observation
    (workspace / "long.txt").write_text("x\n" * 5000)
    long = await call(workspace, "list_dir", path="long.txt")
    assert not long.ok and "read_file long.txt shows it" in long.observation


async def test_a_search_in_a_folder_that_is_not_there_says_so(workspace: Path) -> None:
    """ "no matches for 'test' in tests", for a folder that does not exist, read as an
    answer: the 1.5B model said test_units.py tested nothing."""
    (workspace / "test_units.py").write_text("def test_one(): pass\n")
    missing = await call(workspace, "search_files", pattern="test", path="tests")
    assert not missing.ok and "tests does not exist" in missing.observation
    assert "test_units.py" in missing.observation and "no matches" not in missing.observation


async def test_a_path_through_the_workspace_own_name_finds_the_file(tmp_path) -> None:
    from pheron_tui.core.tools import ToolContext
    from pheron_tui.tools.reading import ReadFile
    from pheron_tui.tools.writing import EditFile

    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "config.py").write_text("MAX_ITEMS = 50\n")
    ctx = ToolContext(workspace=workspace)
    read = await ReadFile().run(ReadFile.Args(path="project/config.py"), ctx)
    assert read.ok and "MAX_ITEMS = 50" in read.observation
    edit = EditFile()
    edited = await edit.run(edit.Args(path="project/config.py", old="50", new="60"), ctx)
    assert edited.ok and (workspace / "config.py").read_text() == "MAX_ITEMS = 60\n"
    (workspace / "project").mkdir()  # now a real folder of that name: not the workspace
    missing = await ReadFile().run(ReadFile.Args(path="project/config.py"), ctx)
    assert missing.observation.startswith("[project/config.py does not exist; shown instead:")
    outside = await ReadFile().run(ReadFile.Args(path="project/../../x"), ctx)
    assert not outside.ok


async def test_json_written_as_part_of_an_object_sets_those_keys(workspace: Path) -> None:
    """Told to set the port in settings.json, the 1.5B model appended ``{"port": 9090}``,
    leaving two objects in the file. An object (or its "key": value lines) whose keys the
    file's object has sets them, the rest and the layout kept, whatever the mode."""
    settings = workspace / "settings.json"
    before = '{\n  "debug": false,\n  "port": 8080\n}\n'
    for mode, written in [("append", '{"port": 9090}'), ("create", '"port": 9090,')]:
        settings.write_text(before)
        await call(workspace, "read_file", path="settings.json")
        made = await call(workspace, "write_file", path="settings.json", content=written, mode=mode)
        # Said as a change, not as "already in the file": the model then answered that the
        # port was already 9090 and nothing had changed.
        assert made.ok and "changed port from 8080 to 9090 in place" in made.observation, mode
        assert "already" not in made.observation, mode
        assert settings.read_text() == '{\n  "debug": false,\n  "port": 9090\n}\n', mode
    same = await call(workspace, "write_file", path="settings.json", content='{"port": 9090}')
    assert not same.ok and "nothing to change" in same.observation
    new_key = await call(
        workspace, "write_file", path="settings.json", content='{"host": "x"}', mode="append"
    )
    assert not new_key.ok and "valid JSON" in new_key.observation  # not merged: would break


async def test_settings_written_over_a_settings_file_are_set_in_place(workspace: Path) -> None:
    """Asked to change the cache size in config.ini, the 1.5B model overwrote the file with
    ``cache_size = 256`` and, told what it would lose, made the same call again: the file
    lost its six other lines. ``key = value`` lines naming one setting each are set where the
    file has them (by key, under a written section, or as section_key), whatever the mode."""
    config = workspace / "config.ini"
    before = "[server]\nhost = localhost\nport = 5000\n\n[cache]\nenabled = yes\nsize = 128\n"
    after = before.replace("size = 128", "size = 256")
    for mode, written in [
        ("overwrite", "cache_size = 256"),
        ("append", "size = 256"),
        ("overwrite", "[cache]\nsize = 256\n"),
    ]:
        config.write_text(before)
        await call(workspace, "read_file", path="config.ini")
        made = await call(workspace, "write_file", path="config.ini", content=written, mode=mode)
        assert made.ok and "changed size from 128 to 256 in place" in made.observation, written
        assert config.read_text() == after, written
    # A key the file does not have, or has in two sections, is no setting to set.
    config.write_text("[a]\nx = 1\n[b]\nx = 2\n")
    await call(workspace, "read_file", path="config.ini")
    ambiguous = await call(
        workspace, "write_file", path="config.ini", content="x = 3", mode="append"
    )
    assert ambiguous.ok and config.read_text().endswith("x = 3")  # appended as asked


async def test_a_change_that_breaks_a_json_or_python_file_is_not_made(workspace: Path) -> None:
    """A file that parses is not left unparseable: the parser's message goes back instead.
    Held only once, the 1.5B model made the same breaking edit again at once. A file that
    did not parse before is not judged; an edit that changes nothing is said to."""
    code = workspace / "m.py"
    code.write_text("def f():\n    return 1\n")
    await call(workspace, "read_file", path="m.py")
    bad = {"path": "m.py", "old": "    return 1", "new": "  return 1\n    x"}
    for _ in range(2):
        held = await call(workspace, "edit_file", **bad)
        assert not held.ok and "would not be valid Python (line 3" in held.observation
        assert "Those lines would read:\n    1  def f():\n    2    return 1\n    3      x" in (
            held.observation
        )
        assert code.read_text() == "def f():\n    return 1\n"
    same = await call(workspace, "edit_file", path="m.py", old="return 1", new="return 1")
    assert not same.ok and "the same text" in same.observation
    assert (await call(workspace, "edit_file", path="m.py", old="return 1", new="return 2")).ok
    code.write_text("def f(:\n")
    await call(workspace, "read_file", path="m.py")
    assert (await call(workspace, "edit_file", path="m.py", old="f(", new="g(")).ok


async def test_an_edit_of_only_a_functions_first_line_shows_the_whole_function(
    workspace: Path,
) -> None:
    """Wanting to replace average(), the 1.5B model gave its def line as `old` and a one-line
    function as `new`; the old body stayed below it, unreadable, and it made the same edit
    again. The refusal says so and gives the function's lines, as the file has them, to
    put in `old`; following it, the edit goes through. (A one-line function of the same name
    is now made as meant: ``test_a_function_rewritten_on_its_def_line_replaces_the_function``;
    one of another name is refused so.)"""
    code = workspace / "calc.py"
    body = '    """The mean."""\n    return sum(numbers) / (len(numbers) - 1)\n'
    code.write_text(f"def add(a, b):\n    return a + b\n\n\ndef average(numbers):\n{body}")
    await call(workspace, "read_file", path="calc.py")
    one_line = "def average(numbers): return sum(numbers) / len(numbers)"
    renamed = one_line.replace("def average", "def mean")
    held = await call(
        workspace, "edit_file", path="calc.py", old="def average(numbers):", new=renamed
    )
    assert not held.ok
    assert "`old` is only the first line of the function average (line 5)" in held.observation
    assert "lines 6-7, would stay below `new`" in held.observation
    whole = held.observation.split("as the file has them:\n")[1].split("\nCorrect the call")[0]
    assert whole == f"def average(numbers):\n{body}".rstrip("\n")
    fixed = await call(workspace, "edit_file", path="calc.py", old=whole, new=one_line)
    assert fixed.ok and code.read_text().endswith(one_line + "\n")
    # Any other breaking edit gets the parser's words only.
    other = await call(workspace, "edit_file", path="calc.py", old="return a + b", new=" x\n  y")
    assert not other.ok and "only the first line" not in other.observation


async def test_a_bracket_closing_the_calls_json_inside_new_is_left_out(workspace: Path) -> None:
    """The 1.5B model wrote `"new": "return sum(numbers) / len(numbers)}"`, closing its JSON
    inside the string, three times, shown the parser's "unmatched '}'". A closing bracket
    at the end of `new` that nothing in it opens is left out when the file reads only
    without it, and the result says so; a bracket that closes something of the file's stays."""
    code = workspace / "calc.py"
    code.write_text("def average(numbers):\n    return sum(numbers) / (len(numbers) - 1)\n")
    await call(workspace, "read_file", path="calc.py")
    done = await call(
        workspace,
        "edit_file",
        path="calc.py",
        old="return sum(numbers) / (len(numbers) - 1)",
        new="return sum(numbers) / len(numbers)}",
    )
    assert done.ok and code.read_text().endswith("return sum(numbers) / len(numbers)\n")
    assert "The `}` at the end of `new` was left out" in done.observation
    settings = workspace / "s.py"
    settings.write_text("S = {\n    'a': 1,\n    'b': 2,\n}\n")
    await call(workspace, "read_file", path="s.py")
    closes = await call(workspace, "edit_file", path="s.py", old="    'b': 2,\n}", new="}")
    assert closes.ok and "left out" not in closes.observation  # the file's own brace
    assert settings.read_text() == "S = {\n    'a': 1,\n}\n"
    # Without the bracket the file still would not read: refused, with the parser's words.
    stray = await call(workspace, "edit_file", path="s.py", old="'a': 1,", new="'a': 1 +)")
    assert not stray.ok and "would not be valid Python" in stray.observation


async def test_an_edit_that_leaves_a_function_reading_an_unknown_name_is_not_made(
    workspace: Path,
) -> None:
    """Told to fix average(), the 1.5B model put average's fixed return line into add(a, b):
    valid Python, a NameError when add runs. A name the edit leaves read but defined nowhere
    (no parameter, local, enclosing or module name, no builtin) is refused with where it is;
    names that were already so, and names defined anywhere the function can see, are not."""
    calc = workspace / "calc.py"
    source = (
        "import math\nLIMIT = 3\n\n\ndef add(a, b):\n    return a + b\n\n\n"
        "def average(numbers):\n    return sum(numbers) / (len(numbers) - 1)\n"
    )
    calc.write_text(source)
    await call(workspace, "read_file", path="calc.py")
    wrong = await call(
        workspace, "edit_file", path="calc.py", old="return a + b", new="return sum(numbers)"
    )
    assert not wrong.ok and "add() would read `numbers` (line 6)" in wrong.observation
    assert "`numbers` belongs to average() (line 9): was the change meant" in wrong.observation
    assert calc.read_text() == source
    for old, new in [
        ("(len(numbers) - 1)", "len(numbers)"),  # the right fix
        ("return a + b", "return math.floor(a + b + LIMIT)"),  # module names and imports
        ("return math.floor(a + b + LIMIT)", "total = [x for x in (a, b)]\n    return sum(total)"),
    ]:
        assert (await call(workspace, "edit_file", path="calc.py", old=old, new=new)).ok, new
    # A long expression is a deep tree: judged without running out of stack.
    deep = await call(
        workspace,
        "edit_file",
        path="calc.py",
        old="return sum(total)",
        new="return " + "+".join(["a"] * 2000),
    )
    assert deep.ok


async def test_an_edit_that_repeats_a_line_after_a_return_is_not_made(workspace: Path) -> None:
    """Asked for a docstring on add, the 1.5B model replaced `def add(a, b):` with itself and
    `return a + b`: the return twice, no docstring, and the critic passed it. A statement left
    after its block's return (raise, break, continue) that repeats one above it is refused;
    dead code that repeats nothing (stubbed out on purpose) and what was already there are
    not."""
    calc = workspace / "calc.py"
    source = "def add(a, b):\n    return a + b\n"
    calc.write_text(source)
    await call(workspace, "read_file", path="calc.py")
    doubled = await call(
        workspace,
        "edit_file",
        path="calc.py",
        old="def add(a, b):",
        new="def add(a, b):\n    return a + b",
    )
    # The def line and the function as it is: the function as the file has it, said so.
    assert not doubled.ok and calc.read_text() == source
    assert "`new` is the function as the file already has it." in doubled.observation
    again = await call(
        workspace,
        "edit_file",
        path="calc.py",
        old="return a + b",
        new="return a + b\n    return a + b",
    )
    assert not again.ok and calc.read_text() == source
    assert "line 3 (`return a + b`) would never run" in again.observation
    assert "after the return on line 2" in again.observation
    documented = await call(
        workspace,
        "edit_file",
        path="calc.py",
        old="def add(a, b):",
        new='def add(a, b):\n    """The sum of a and b."""',
    )
    assert documented.ok
    stub = await call(
        workspace, "edit_file", path="calc.py", old='"""The sum of a and b."""', new="return 0"
    )
    assert stub.ok  # `return a + b` is dead now, but repeats nothing
    calc.write_text("def f(x):\n    return x\n    return x\n")
    await call(workspace, "read_file", path="calc.py")
    kept = await call(workspace, "edit_file", path="calc.py", old="f(x)", new="g(x)")
    assert kept.ok  # the repeat was there before the edit


async def test_a_whole_file_written_anew_replaces_it(workspace: Path) -> None:
    """Asked to sort names.txt, the 1.5B model had no way: edit_file changes one place, and
    the whole sorted file written as "create" was refused as already there. A new version of
    the file (at least half its lines kept, the others changed) replaces it in any mode; a
    text that is not a version of it does not."""
    names = workspace / "names.txt"
    names.write_text("Maya\nBen\nZoe\nAlex\nOmar\n")
    await call(workspace, "read_file", path="names.txt")
    made = await call(
        workspace, "write_file", path="names.txt", content="Alex\nBen\nMaya\nOmar\nZoe\n"
    )
    assert made.ok and "replaced the file" in made.observation
    assert names.read_text() == "Alex\nBen\nMaya\nOmar\nZoe\n"
    other = await call(workspace, "write_file", path="names.txt", content="one\ntwo\n")
    assert not other.ok and names.read_text() == "Alex\nBen\nMaya\nOmar\nZoe\n"


async def test_new_python_definitions_written_as_a_new_file_are_added(workspace: Path) -> None:
    """Asked to add is_empty to inventory.py, the 1.5B model wrote it as a new file three
    times, though told to append. Definitions the file does not have, written to it as new,
    go at its end once the file was seen."""
    inventory = workspace / "inventory.py"
    before = "PRICES = {}\n\n\ndef total(items):\n    return 0\n"
    inventory.write_text(before)
    function = "def is_empty(items):\n    return len(items) == 0\n"
    blind = await call(workspace, "write_file", path="inventory.py", content=function)
    assert not blind.ok and inventory.read_text() == before  # shown first
    made = await call(workspace, "write_file", path="inventory.py", content=function)
    assert made.ok and "added at its end" in made.observation
    assert inventory.read_text() == before + "\n\n" + function


async def test_a_move_into_a_folder_goes_inside_it(workspace: Path) -> None:
    """As mv does: a folder as the destination receives the entry (made when the destination
    ends in "/"); a file given a name without a suffix is said to be renamed so."""
    (workspace / "greet.sh").write_text("echo hi\n")
    (workspace / "run.sh").write_text("echo run\n")
    (workspace / "tool.py").write_text("x = 1\n")
    (workspace / "scripts").mkdir()
    into = await call(workspace, "move_path", source="greet.sh", destination="scripts")
    assert into.ok and (workspace / "scripts" / "greet.sh").read_text() == "echo hi\n"
    made = await call(workspace, "move_path", source="run.sh", destination="bin/")
    assert made.ok and (workspace / "bin" / "run.sh").is_file()
    renamed = await call(workspace, "move_path", source="tool.py", destination="tools")
    assert renamed.ok and "is now the file's name" in renamed.observation
    assert (workspace / "tools").is_file()
    (workspace / "a.md").write_text("a")
    (workspace / "scripts" / "a.md").write_text("other")
    clash = await call(workspace, "move_path", source="a.md", destination="scripts")
    assert not clash.ok and (workspace / "scripts" / "a.md").read_text() == "other"


async def test_a_copy_into_a_folder_goes_inside_it(workspace: Path) -> None:
    """As cp does: "backup/" had been written as a file named backup, and the 1.5B model,
    asked to copy books.json into a new folder, was told the copy was made."""
    made = await call(workspace, "copy_path", source="a.txt", destination="backup/")
    assert made.ok and made.observation == "copied a.txt to backup/a.txt"
    assert (workspace / "backup" / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert (workspace / "a.txt").is_file()
    into = await call(workspace, "copy_path", source="sub/b.py", destination="backup")
    assert into.ok and (workspace / "backup" / "b.py").read_text() == "print('beta')\n"
    named = await call(workspace, "copy_path", source="a.txt", destination="notes")
    assert named.ok and "is now the file's name" in named.observation
    assert (workspace / "notes").is_file()
    clash = await call(workspace, "copy_path", source="a.txt", destination="backup")
    assert not clash.ok and "already exists" in clash.observation


def test_a_checkpoint_names_the_entry_made_inside_a_folder(workspace: Path) -> None:
    """What a rewind removes is the copy or the moved entry, not the folder's old contents."""
    registry = default_registry()
    ctx = ToolContext(workspace=workspace, shell_timeout_s=5)
    for name, destination in (("copy_path", "sub"), ("move_path", "sub/"), ("copy_path", "c")):
        prepared = registry.prepare(name, {"source": "a.txt", "destination": destination})
        touched = prepared.tool.touches(prepared.args, ctx)
        assert touched[-1] == ("c" if destination == "c" else "sub/a.txt")


async def test_a_missing_path_that_is_a_pattern_is_answered_with_the_files_it_matches(
    workspace: Path,
) -> None:
    """Told to delete every .log file, the 1.5B model called delete_path(".log") twice. A
    path names one file; the files the pattern matches are named back."""
    (workspace / "app.log").write_text("x")
    (workspace / "sub" / "old.log").write_text("y")
    for given in (".log", "*.log"):
        missing = await call(workspace, "delete_path", path=given)
        assert not missing.ok and "a path names one file" in missing.observation
        assert "one call for each of the files matching '*.log' here: app.log, sub/old.log" in (
            missing.observation
        )
        assert "did you mean app.log?" in missing.observation  # an answer now is sent back
    assert (workspace / "app.log").exists()


async def test_a_whole_file_written_back_as_it_is_is_said_to_change_nothing(
    workspace: Path,
) -> None:
    """Asked to sort names.txt, the 1.5B model wrote it back unsorted and said it was sorted."""
    names = workspace / "names.txt"
    names.write_text("Maya\nBen\n")
    await call(workspace, "read_file", path="names.txt")
    for mode in ("create", "overwrite"):
        same = await call(workspace, "write_file", path="names.txt", content="Maya\nBen", mode=mode)
        assert not same.ok and "already holds exactly this text" in same.observation
    again = await call(
        workspace, "write_file", path="names.txt", content="Maya\nBen\n", mode="append"
    )
    assert again.ok and names.read_text() == "Maya\nBen\nMaya\nBen\n"  # an addition is one


async def test_text_copied_from_read_files_view_is_written_as_the_files_own_lines(
    workspace: Path,
) -> None:
    """Asked to sort names.txt, the 1.5B model wrote back what read_file showed it, heading
    and line numbers included: the file then held "names.txt (3 lines):" and "    1  Maya"."""
    names = workspace / "names.txt"
    names.write_text("Maya\nBen\nAlex\n")
    shown = (await call(workspace, "read_file", path="names.txt")).observation
    same = await call(workspace, "write_file", path="names.txt", content=shown, mode="overwrite")
    assert not same.ok and "already holds exactly this text" in same.observation
    assert "line numbers read_file shows are not part of a file" in same.observation
    assert names.read_text() == "Maya\nBen\nAlex\n"
    # Refused at its preview, the call fails there, with no card: the note is said there too.
    prepared = default_registry().prepare(
        "write_file", {"path": "names.txt", "content": shown, "mode": "overwrite"}
    )
    context = ToolContext(workspace=workspace, seen=_SEEN[workspace], warned=_WARNED[workspace])
    previewed = await prepared.tool.preview(prepared.args, context)
    assert "line numbers read_file shows are not part of a file" in previewed.observation
    sorted_view = "    3  Alex\n    2  Ben\n    1  Maya\n"  # sorted, numbers kept
    done = await call(
        workspace, "write_file", path="names.txt", content=sorted_view, mode="overwrite"
    )
    assert done.ok and names.read_text() == "Alex\nBen\nMaya\n"
    edited = await call(workspace, "edit_file", path="names.txt", old="    2  Ben", new="Bo")
    assert edited.ok and names.read_text() == "Alex\nBo\nMaya\n"
    # A list numbered otherwise is text of its own.
    listed = "1  first\n2  second\n"
    await call(workspace, "write_file", path="steps.txt", content=listed)
    assert (workspace / "steps.txt").read_text() == listed


async def test_a_function_rewritten_on_its_def_line_replaces_the_function(
    workspace: Path,
) -> None:
    """Asked to fix oldest() and km_to_miles(), the 1.5B model gave the def line as `old` and
    the def line with the fixed return after its colon as `new`, again after being told it
    left the old body below: the whole function becomes the one it wrote, its docstring
    kept, the body on a line of its own."""
    catalog = workspace / "catalog.py"
    catalog.write_text(
        "def oldest(books):\n"
        '    """The book published first."""\n'
        '    return max(books, key=lambda b: b["year"])\n\n\nX = 1\n'
    )
    fixed = await call(
        workspace,
        "edit_file",
        path="catalog.py",
        old="def oldest(books):",
        new="def oldest(books):    return min(books, key=lambda b: b['year'])",
    )
    assert fixed.ok, fixed.observation
    assert catalog.read_text() == (
        "def oldest(books):\n"
        '    """The book published first."""\n'
        "    return min(books, key=lambda b: b['year'])\n\n\nX = 1\n"
    )
    assert "the whole function (lines 1-3) was replaced by it, its docstring kept" in (
        fixed.observation
    )
    units = workspace / "units.py"
    units.write_text("class U:\n    def km(self, km):\n        return km * 1.6\n")
    method = await call(
        workspace,
        "edit_file",
        path="units.py",
        old="def km(self, km):",
        new="def km(self, km): return km / 1.6",
    )
    assert method.ok and units.read_text() == (
        "class U:\n    def km(self, km):\n        return km / 1.6\n"
    )
    # The whole new function, on several lines, after its def line as `old` (held-out 3).
    shop = workspace / "shop.py"
    shop.write_text(
        'P = {"a": 1}\n\n\ndef total(items):\n    """The summed price."""\n    cost = 0\n'
        "    for item in items:\n        cost = P[item]\n    return cost\n"
    )
    whole = await call(
        workspace,
        "edit_file",
        path="shop.py",
        old="def total(items):",
        new="def total(items):\n    cost = 0\n    for item in items:\n"
        "        cost += P[item]\n    return cost",
    )
    assert whole.ok, whole.observation
    assert shop.read_text() == (
        'P = {"a": 1}\n\n\ndef total(items):\n    """The summed price."""\n    cost = 0\n'
        "    for item in items:\n        cost += P[item]\n    return cost\n"
    )
    assert "a whole new function after its def line" in whole.observation
    # A signature on several lines, the body after its closing colon.
    units.write_text("def km(x,\n       y):\n    return x * 1.6\n")
    signature = await call(
        workspace,
        "edit_file",
        path="units.py",
        old="def km(x,",
        new="def km(x,\n       y): return x / 1.6",
    )
    assert signature.ok, signature.observation
    assert units.read_text() == "def km(x,\n       y):\n    return x / 1.6\n"
    # The function as it is, on one line: nothing would change, and that is said.
    units.write_text("def km(x):\n    return x * 1.6\n")
    same = await call(
        workspace, "edit_file", path="units.py", old="def km(x):", new="def km(x): return x * 1.6"
    )
    assert not same.ok and "`new` is the function as the file already has it." in same.observation
    # Another function's name, or a body that is not on the def line: not this mistake.
    units.write_text("def km(x):\n    return x * 1.6\n")
    other = await call(
        workspace, "edit_file", path="units.py", old="def km(x):", new="def mi(x): return x"
    )
    assert not other.ok and units.read_text() == "def km(x):\n    return x * 1.6\n"


async def test_an_edit_that_takes_away_a_name_another_file_imports_is_held_once(
    workspace: Path,
) -> None:
    """Told to make test_units.py pass, the 1.5B model renamed km_to_miles to
    km_to_miles_corrected; the check then failed on its import."""
    units = workspace / "units.py"
    units.write_text("def km_to_miles(km):\n    return km * 1.6\n")
    (workspace / "test_units.py").write_text("from units import km_to_miles\n")
    rename = {"path": "units.py", "old": "def km_to_miles(", "new": "def km_to_miles_fixed("}
    held = await call(workspace, "edit_file", **rename)
    assert not held.ok and "would no longer define km_to_miles, which test_units.py uses" in (
        held.observation
    )
    assert units.read_text() == "def km_to_miles(km):\n    return km * 1.6\n"
    body = await call(workspace, "edit_file", path="units.py", old="km * 1.6", new="km / 1.6")
    assert body.ok
    (workspace / "app.py").write_text("import units\nprint(units.km_to_miles(2))\n")
    held = await call(workspace, "edit_file", **rename)
    assert not held.ok and "which app.py uses (line 2)" in held.observation
    assert (await call(workspace, "edit_file", **rename)).ok  # made again: a rename meant


async def test_code_searched_for_as_written_is_found_as_plain_text(tmp_path: Path) -> None:
    """Shown the line "calc.py:5: def average(numbers):", the 1.5B model searched for it; as
    a regular expression its parentheses are a group and it matched nothing, so the model
    said the function was not there."""
    (tmp_path / "calc.py").write_text("def average(numbers):\n    return 0\n")
    found = (await call(tmp_path, "search_files", pattern="def average(numbers):")).observation
    assert found.startswith("1 matching line in 1 file (as plain text")
    assert "calc.py:1: def average(numbers):" in found
    regex = (await call(tmp_path, "search_files", pattern=r"def \w+\(")).observation
    assert regex.startswith("1 matching line in 1 file (marked")  # a real regex stays one


@pytest.mark.parametrize("tool_name", ["move_path", "copy_path"])
async def test_a_destination_name_too_long_for_the_system_is_a_failed_call(
    workspace: Path, tool_name: str
) -> None:
    """A 300-letter file name made the 'is it a folder?' check raise, and the whole turn
    ended on an internal error; it is the call that fails, with the file left where it was."""
    tool = default_registry().get(tool_name)
    assert tool is not None
    ctx = ToolContext(workspace=workspace)
    args = tool.validate({"source": "a.txt", "destination": "b" * 300})
    assert tool.touches(args, ctx)  # recorded before it runs: must not raise either
    result = await tool.run(args, ctx)
    assert not result.ok and "could not" in result.observation
    assert (workspace / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
