"""Diffs and per-hunk application: what a person takes is exactly what is written."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.core.diffs import FileChange, apply_hunks, describe_hunks, split_hunks

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "\n", "tail"]), max_size=40)


def text(parts: list[str]) -> str:
    # "tail" (no newline) only last, as in a real file
    return "".join(p if p != "tail" else "x\n" for p in parts[:-1]) + (parts[-1] if parts else "")


@given(lines, lines)
def test_taking_every_hunk_gives_the_new_file_and_none_the_old(
    old: list[str], new: list[str]
) -> None:
    change = FileChange("f.txt", text(old), text(new))
    count = len(change.hunks)
    assert apply_hunks(change, set(range(count))) == change.after
    assert apply_hunks(change, set()) == change.before


def patch(before: str, hunks: list[str], taken: set[int]) -> str:
    """An independent oracle: apply the taken hunks' text to the old file, as patch would
    (last hunk first, so the old line numbers stay right)."""
    old = before.splitlines(keepends=True)
    for number in sorted(taken, reverse=True):
        head, *body = hunks[number].splitlines(keepends=True)
        start, length = (int(x) for x in head.split()[1][1:].split(","))
        start = start - 1 if length else start
        new: list[str] = []
        previous = ""
        for line in body:
            if line.startswith("\\"):
                if previous in " +":  # the marker is about the line before it
                    new[-1] = new[-1].rstrip("\n")
                continue
            previous = line[0]
            if line[0] in " +":
                new.append(line[1:])
        old[start : start + length] = new
    return "".join(old)


@given(lines, lines, st.data())
def test_a_subset_applies_exactly_the_hunks_taken(old, new, data) -> None:
    change = FileChange("f.txt", text(old), text(new))
    count = len(change.hunks)
    taken = data.draw(st.sets(st.integers(0, count - 1)) if count else st.just(set()))
    assert apply_hunks(change, taken) == patch(change.before or "", change.hunks, taken)


def test_the_diff_splits_into_the_same_hunks_a_person_reviews() -> None:
    before = "".join(f"line {i}\n" for i in range(40))
    after = before.replace("line 2\n", "line two\n").replace("line 30\n", "line thirty\n")
    change = FileChange("f.txt", before, after)
    assert len(change.hunks) == 2
    assert split_hunks(change.diff) == change.hunks
    assert change.diff.startswith("--- a/f.txt\n+++ b/f.txt\n@@ -1,6 +1,6 @@")
    only_second = apply_hunks(change, {1})
    assert "line 2\n" in only_second and "line thirty\n" in only_second
    told = describe_hunks(change, {1})
    assert "applied 2 of 2, rejected 1" in told and "-line 2" in told


def test_a_new_file_diffs_against_nothing() -> None:
    change = FileChange("new.py", None, "print(1)\n")
    assert change.diff.startswith("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,1 @@\n+print(1)")
