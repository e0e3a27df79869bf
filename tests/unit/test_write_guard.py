"""The write guard reads whatever a model writes: it never breaks, and a merge keeps the file."""

from __future__ import annotations

import ast
import re

from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.tools import write_guard
from pheron_tui.tools.write_guard import (
    added_definitions,
    merged_definitions,
    merged_keys,
    merged_lines,
    merged_settings,
    rewritten,
)

pieces = st.sampled_from(
    ["x = 1", "x = 2", "y: int = 3", "def f():", "    return 1", "    return 2", "class C:",
     "", "# note", "@wrap", "import os", "\t", "z == 4", "def g(a,", "    b):", "é = 5"]
)  # fmt: skip
texts = st.lists(pieces, max_size=12).map("\n".join) | st.text(max_size=80)


@given(texts, texts)
def test_a_merge_never_breaks_and_changes_only_lines_in_place(old: str, new: str) -> None:
    merge = merged_lines(old, new)
    if merge is not None:
        assert len(merge.text.splitlines()) == len(old.splitlines())
        kept = [a for a, b in zip(old.splitlines(), merge.text.splitlines(), strict=True) if a == b]
        assert len(kept) >= len(old.splitlines()) - len(
            [ln for ln in new.splitlines() if ln.strip()]
        )


@given(texts, texts)
def test_a_definition_merge_never_breaks_and_leaves_no_line_outside_definitions(
    old: str, new: str
) -> None:
    merge = merged_definitions("m.py", old, new)
    if merge is not None:
        ast.parse(merge.text)  # whole statements put in place of whole statements
        outside = [ln for ln in old.splitlines() if ln and not ln[0].isspace()]
        for line in outside:
            if not any(line.startswith(p) for p in ("def ", "class ", "x", "y", "é")):
                assert line in merge.text.splitlines()


def test_a_definition_spanning_lines_is_replaced_whole() -> None:
    """A definition is what the parser says it is: a string over three lines, a decorated
    function. Put in place by lines alone, "DOC = 'x'" left the old string's rest behind."""
    old = 'DOC = """\nline\n"""\n\n\n@cache\ndef f():\n    return 1\n\n\nprint(f())\n'
    merge = merged_definitions("m.py", old, "DOC = 'x'\n\ndef f():\n    return 2\n")
    assert merge is not None
    assert merge.text == "DOC = 'x'\n\n\ndef f():\n    return 2\n\n\nprint(f())\n"
    assert merged_definitions("m.py", old, "print(f())\n") is None  # not a definition
    assert merged_definitions("m.txt", old, "DOC = 'x'\n") is None  # not Python


@given(texts, texts)
def test_a_rewrite_is_what_was_written_and_keeps_half_the_file(old: str, new: str) -> None:
    merge = rewritten(old, new)
    if merge is not None:
        assert merge.text == new
        kept = [ln.strip() for ln in old.splitlines() if ln.strip()]
        written = [ln.strip() for ln in new.splitlines() if ln.strip()]
        assert 2 * sum(1 for ln in kept if ln in written) >= len(kept)


@given(texts, texts)
def test_added_definitions_keep_the_whole_file_before_them(old: str, new: str) -> None:
    merge = added_definitions("m.py", old, new)
    if merge is not None:
        assert merge.text.startswith(old.rstrip("\r\n"))
        ast.parse(merge.text)


json_texts = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
).map(lambda value: __import__("json").dumps(value, indent=2)) | st.text(max_size=40)


@given(json_texts, json_texts)
def test_a_json_key_merge_keeps_every_key_and_reads_as_json(old: str, new: str) -> None:
    import json

    merge = merged_keys("s.json", old, new)
    if merge is not None:
        before, after = json.loads(old), json.loads(merge.text)
        assert after.keys() == before.keys()


setting_lines = st.lists(
    st.sampled_from(["[a]", "[b]", "x = 1", "y: 2", "x=3", "# c", "", "z = [", "]"]),
    max_size=8,
).map("\n".join)


@given(setting_lines, setting_lines)
def test_a_settings_merge_changes_only_values_in_place(old: str, new: str) -> None:
    """Every line keeps its place, its key and its section; only what follows a key changes."""
    merge = merged_settings("c.ini", old, new)
    if merge is not None:
        before, after = old.splitlines(), merge.text.splitlines()
        assert len(after) == len(before)
        for was, now in zip(before, after, strict=True):
            assert was == now or was.split("=")[0].split(":")[0] == now.split("=")[0].split(":")[0]


# The patterns as they were before they were written not to backtrack (quadratic on a long
# run of spaces or brackets, a second on 10,000 characters): the same readings, line by line.
_OLD_SETTING = re.compile(r"^(\s*)([A-Za-z_][\w.-]*)(\s*[=:]\s*)(.*?)\s*$")
_OLD_SECTION = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")
_OLD_COMMENT = re.compile(r"\s+[#;]")


@given(st.text(alphabet=" \t[]=:#;ab.\n", max_size=24))
def test_settings_lines_read_as_before_the_patterns_were_bounded(line: str) -> None:
    old, new = _OLD_SETTING.match(line), write_guard._SETTING.match(line)
    assert (old and old.groups()) == (new and new.groups())
    old_section = _OLD_SECTION.match(line)
    old_name = (old_section.group(1).strip() or None) if old_section else None
    if "[" not in (old_name or ""):  # "[[]" named a section "[" before; now none
        assert write_guard._section(line) == old_name
    old_comment, new_comment = _OLD_COMMENT.search(line), write_guard._COMMENT.search(line)
    assert (old_comment and old_comment.start()) == (new_comment and new_comment.start())
