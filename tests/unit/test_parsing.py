"""Reply parsing: CLARIFY → native (JSON, XML) → legacy CALL → final."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pheron_tui.core.parsing import MarkupHold, ParsedReply, parse_reply
from pheron_tui.core.tools import ubid
from pheron_tui.tools.builtin import default_registry

SCHEMAS = default_registry().schemas()


def test_clarify_comes_first_even_with_a_tool_call() -> None:
    reply = parse_reply('CLARIFY("Which folder?") <tool_call>{"name": "list_dir"}</tool_call>')
    assert reply.kind == "clarify"
    assert reply.text == "Which folder?"


def test_clarify_with_single_quotes_and_bare_text() -> None:
    assert parse_reply("CLARIFY('Which one?')").text == "Which one?"
    assert parse_reply("CLARIFY(which file do you mean?)").text == "which file do you mean?"


def test_native_json_call() -> None:
    reply = parse_reply(
        'Looking.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>'
    )
    assert reply.kind == "tool_calls"
    assert reply.text == "Looking."
    [call] = reply.calls
    assert (call.name, call.arguments, call.error) == ("read_file", {"path": "a.txt"}, None)


def test_native_json_call_with_stringified_arguments() -> None:
    reply = parse_reply(
        '<tool_call>{"name": "list_dir", "arguments": "{\\"path\\": \\"src\\"}"}</tool_call>'
    )
    assert reply.calls[0].arguments == {"path": "src"}


def test_native_xml_call_values_are_typed_by_schema() -> None:
    text = (
        "<tool_call>\n<function=read_file>\n<parameter=path>\nnotes.md\n</parameter>\n"
        "<parameter=offset>\n10\n</parameter>\n</function>\n</tool_call>"
    )
    [call] = parse_reply(text, SCHEMAS).calls
    assert call.form == "xml"
    assert call.arguments == {"path": "notes.md", "offset": 10}
    assert call.error is None


MEASURE = {
    "measure": {
        "type": "object",
        "properties": {
            "points": {"type": "array", "items": {"type": "number"}},
            "count": {"type": "integer"},
            "exact": {"type": "boolean"},
            "box": {"type": "object", "properties": {"width": {"type": "number"}}},
            "label": {"type": "string"},
        },
    }
}


def test_json_call_values_take_the_kinds_the_schema_declares() -> None:
    """Numbers declared as numbers are floats, whole floats declared as integers are ints,
    numeric and true/false strings are read, nested values too; a string stays a string."""
    text = (
        '<tool_call>{"name": "measure", "arguments": {"points": [1, 2.5, "3"], "count": 4.0,'
        ' "exact": "false", "box": {"width": 2}, "label": "7"}}</tool_call>'
    )
    [call] = parse_reply(text, MEASURE).calls
    assert call.arguments == {
        "points": [1.0, 2.5, 3.0],
        "count": 4,
        "exact": False,
        "box": {"width": 2.0},
        "label": "7",
    }
    assert [type(p) for p in call.arguments["points"]] == [float, float, float]
    assert type(call.arguments["count"]) is int
    assert type(call.arguments["box"]["width"]) is float


def test_values_that_do_not_fit_the_schema_are_left_for_validation() -> None:
    text = (
        '<tool_call>{"name": "measure", "arguments": {"points": ["many"], "count": 2.5,'
        ' "exact": 1}}</tool_call>'
    )
    [call] = parse_reply(text, MEASURE).calls
    assert call.arguments == {"points": ["many"], "count": 2.5, "exact": 1}
    # A number too big for a float is left as written, not a crash.
    huge = "9" * 400
    text = f'<tool_call>{{"name": "measure", "arguments": {{"points": [{huge}]}}}}</tool_call>'
    [call] = parse_reply(text, MEASURE).calls
    assert call.arguments == {"points": [int(huge)]}


def test_xml_multiline_string_value_is_kept_exactly() -> None:
    text = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\nx.py\n</parameter>\n"
        "<parameter=content>\nline 1\n  line 2\n</parameter>\n</function>\n</tool_call>"
    )
    [call] = parse_reply(text, SCHEMAS).calls
    assert call.arguments["content"] == "line 1\n  line 2"


def test_several_calls_are_all_returned_in_order() -> None:
    text = (
        '<tool_call>{"name": "list_dir", "arguments": {}}</tool_call>\n'
        "<tool_call><function=read_file><parameter=path>a</parameter></function></tool_call>\n"
        '<tool_call>{"name": "search_files", "arguments": {"pattern": "x"}}</tool_call>'
    )
    names = [c.name for c in parse_reply(text, SCHEMAS).calls]
    assert names == ["list_dir", "read_file", "search_files"]


def test_bad_json_call_is_reported_not_dropped() -> None:
    [call] = parse_reply(
        '<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>'
    ).calls
    assert call.name == "read_file"
    assert "not valid JSON" in (call.error or "")


def test_truncated_call_is_reported() -> None:
    [call] = parse_reply('<tool_call>{"name": "list_dir", "arguments": {}}').calls
    assert "cut off" in (call.error or "")


def test_legacy_call_by_name_and_by_ubid_with_and_without_brackets() -> None:
    code = ubid("read_file")
    for target in ("read_file", code, f"[{code}]", f" [ {code} ] "):
        reply = parse_reply(f'I will read it. CALL({target}) WITH {{"path": "a.txt"}}')
        assert reply.kind == "tool_calls"
        assert reply.calls[0].name in ("read_file", code)
        assert reply.calls[0].arguments == {"path": "a.txt"}


def test_a_tool_named_in_other_case_is_that_tool_with_typed_arguments() -> None:
    """``CALL(READ_FILE)``: the 1.5B model, its reply started with ``CALL(``, wrote names in
    capitals. One tool differs in case only: it is that tool, its arguments typed by it."""
    [call] = parse_reply('CALL(READ_FILE) WITH {"path": "a.txt", "offset": "3"}', SCHEMAS).calls
    assert (call.name, call.error) == ("read_file", None)
    assert call.arguments["offset"] == 3
    schemas = {"Lookup": {"type": "object"}, "lookup": {"type": "object"}, **SCHEMAS}
    [call] = parse_reply('CALL(LOOKUP) WITH {"q": "x"}', schemas).calls
    assert call.name == "LOOKUP"  # two tools differ only in case: neither is guessed


def test_a_tool_named_without_its_namespace_is_that_tool_when_only_one_fits() -> None:
    """Unconstrained, the 1.5B model wrote ``shortest_path`` for ``maps.shortest_path``."""
    number = {"type": "object", "properties": {"n": {"type": "integer"}}}
    schemas = {"maps.shortest_path": number, "git__git_status": number, "route": number}
    for written, meant in [
        ("shortest_path", "maps.shortest_path"),
        ("GIT_STATUS", "git__git_status"),
    ]:
        [call] = parse_reply(f'CALL({written}) WITH {{"n": "2"}}', schemas).calls
        assert (call.name, call.arguments) == (meant, {"n": 2})
    two = {"maps.route": number, "trains.route": number}
    assert parse_reply('CALL(route) WITH {"n": 2}', two).calls[0].name == "route"
    # a tool of that very name comes before any namespaced one
    assert parse_reply('CALL(route) WITH {"n": 2}', schemas).calls[0].name == "route"


def test_legacy_call_with_nested_json_and_braces_in_strings() -> None:
    [call] = parse_reply('CALL(write_file) WITH {"path": "a", "content": "{x} }"} trailing').calls
    assert call.arguments == {"path": "a", "content": "{x} }"}


def test_a_tool_name_misspelt_is_that_tool_when_only_one_is_spelt_like_it() -> None:
    """Unconstrained, the 1.5B model wrote ``emagnetic_force`` for ``electromagnetic_force``."""
    number = {"type": "object", "properties": {"n": {"type": "integer"}}}
    schemas = {"electromagnetic_force": number, **SCHEMAS}
    for written, meant in [
        ("emagnetic_force", "electromagnetic_force"),
        ("read_files", "read_file"),
        ("Search_File", "search_files"),
    ]:
        [call] = parse_reply(f'CALL({written}) WITH {{"n": "2"}}', schemas).calls
        assert call.name == meant, written
    assert parse_reply('CALL(emagnetic_force) WITH {"n": "2"}', schemas).calls[0].arguments == {
        "n": 2
    }
    # not alike enough, or alike two tools: the name stays, and the call fails as unknown
    tools = {name: number for name in ("delete_path", "list_dir", "get_rate", "get_date")}
    for written in ("delete_files", "list_directory", "get_ate", "x" * 150):
        assert parse_reply(f'CALL({written}) WITH {{"n": 2}}', tools).calls[0].name == written


def test_python_constants_in_arguments_are_read_as_json_ones() -> None:
    """Unconstrained, the 1.5B model writes ``{"standardize": True}``: 5 of the 8 BFCL multiple
    calls it got wrong were that alone. Every call form reads them; inside a string they stay."""
    arguments = '{"path": "True None.txt", "flag": True, "off": False, "limit": None}'
    meant = {"path": "True None.txt", "flag": True, "off": False, "limit": None}
    for reply in [
        f"CALL(read_file) WITH {arguments}",
        f'<tool_call>{{"name": "read_file", "arguments": {arguments}}}</tool_call>',
        f'```json\n{{"name": "read_file", "arguments": {arguments}}}\n```',
    ]:
        [call] = parse_reply(reply, {"read_file": {"type": "object"}}).calls
        assert (call.name, call.error, call.arguments) == ("read_file", None, meant), reply


def test_json_broken_past_its_python_constants_is_reported_where_it_breaks() -> None:
    [call] = parse_reply('CALL(read_file) WITH {"flag": True, "path": }').calls
    assert "position 23" in (call.error or "")  # at the "}", not at True (9)


def _python_style(value: object) -> str:
    """``value`` as JSON but for Python's spelling of true, false and null, and of strings
    where Python puts them in single quotes (with its own escapes)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return repr(value) if repr(value).startswith("'") else json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_python_style(v) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{_python_style(k)}: {_python_style(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    return json.dumps(value)


_WORDY = st.lists(
    st.sampled_from(["True", "None", "False", " ", '"', "'", "\\", "x", "\n", "\x07", "é"]),
    max_size=6,
).map("".join)


@given(
    st.dictionaries(
        _WORDY,
        st.recursive(
            st.none() | st.booleans() | st.integers() | _WORDY,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_WORDY, inner, max_size=3),
            max_leaves=8,
        ),
        max_size=4,
    )
)
def test_arguments_in_python_style_read_as_their_value(arguments: dict) -> None:
    [call] = parse_reply(f"CALL(measure) WITH {_python_style(arguments)}").calls
    assert (call.error, call.arguments) == (None, arguments)


def test_strings_in_single_quotes_are_read_as_strings() -> None:
    """Unconstrained, the 1.5B model writes Python's quotes in its JSON (``"categories":
    ['red', 'blue']``, a JSON object passed as ``'{"style": "modern"}'``): 2 of the BFCL
    live_simple calls it made were unreadable for that alone. The error of one still broken
    further on points into what the model wrote."""
    schemas = {"report": {"type": "object"}}
    reply = (
        """CALL(report) WITH {"data": [2.5], 'tags': ['red', 'it\\'s'], "prefs": '{"a": "b"}'}"""
    )
    [call] = parse_reply(reply, schemas).calls
    assert (call.error, call.arguments) == (
        None,
        {"data": [2.5], "tags": ["red", "it's"], "prefs": '{"a": "b"}'},
    )
    fenced = """```json\n{'name': 'report', 'arguments': {'path': 'a.py'}}\n```"""
    [call] = parse_reply(fenced, schemas).calls
    assert (call.name, call.arguments) == ("report", {"path": "a.py"})
    [call] = parse_reply("""CALL(report) WITH {'a': 'say "hi"', "b": }""", schemas).calls
    assert "position 23" in (call.error or "")  # at the "}" as written (25 once escaped)
    # an apostrophe in the prose after a call is not read as a string
    reply = parse_reply("""CALL(report) WITH {"a": 'x'} and that's it""", schemas)
    assert reply.calls[0].arguments == {"a": "x"}


def test_backslashes_that_start_no_escape_are_read_as_written() -> None:
    """Windows paths and regular expressions are written with single backslashes (the 1.5B
    model, BFCL live_simple: ``"%userprofile%\\Desktop\\putty.lnk"``); JSON's own escapes
    keep their meaning."""
    schemas = {"search": {"type": "object"}}
    reply = r'CALL(search) WITH {"pattern": "\d+\.py", "path": "C:\Users\me", "sep": "a\tb\u0041"}'
    [call] = parse_reply(reply, schemas).calls
    assert (call.error, call.arguments) == (
        None,
        {"pattern": "\\d+\\.py", "path": "C:\\Users\\me", "sep": "a\tbA"},
    )


def test_a_file_written_with_real_newlines_in_its_string_is_read() -> None:
    """A model writing a file's lines into a call puts real newlines and tabs in the JSON
    string; the call was refused as invalid JSON."""
    schemas = {"write_file": {"type": "object"}}
    content = "def f():\n\treturn 1\n"
    for reply in [
        f'<tool_call>{{"name": "write_file", "arguments": {{"path": "a.py", "content": "{content}"}}}}</tool_call>',
        f'CALL(write_file) WITH {{"path": "a.py", "content": "{content}"}}',
    ]:
        [call] = parse_reply(reply, schemas).calls
        assert (call.error, call.arguments) == (None, {"path": "a.py", "content": content}), reply


def test_a_call_naming_its_tool_as_the_prompt_lists_it_calls_that_tool() -> None:
    """The legacy prompt lists ``- name [UBID]: description``; the 0.5B model copies the line
    into the call (7 of 200 BFCL multiple cases), which named no tool."""
    schemas = {"lawyer.search": {"type": "object"}}
    for written in [
        "lawyer.search [U3D702E]",
        "lawyer.search [U3D702E]: Find lawyers by place and field",
        "lawyer.search[U3D702E]",
    ]:
        [call] = parse_reply(f'CALL({written}) WITH {{"location": "LA"}}', schemas).calls
        assert (call.name, call.error, call.arguments) == (
            "lawyer.search",
            None,
            {"location": "LA"},
        )
    [call] = parse_reply('CALL([U3D702E]) WITH {"location": "LA"}', schemas).calls
    assert call.name == "U3D702E"  # the id alone, as before: the registry knows it


def test_a_call_whose_name_has_a_space_is_a_call_not_the_answer() -> None:
    """``CALL(l lawsuits_search)`` (the 1.5B model) was read as the final answer, markup and
    all: the user was shown it. Now it is a call, named by the one tool spelt like it."""
    schemas = {"lawsuits_search": {"type": "object"}, **SCHEMAS}
    reply = parse_reply('Sure. CALL(l lawsuits_search) WITH {"company": "Google"}', schemas)
    assert (reply.kind, reply.text) == ("tool_calls", "Sure.")
    assert (reply.calls[0].name, reply.calls[0].arguments) == (
        "lawsuits_search",
        {"company": "Google"},
    )
    [call] = parse_reply("CALL(no such tool) WITH {}", schemas).calls
    assert call.name == "no such tool"  # refused as unknown when it is run


def test_a_reply_that_opens_a_call_it_never_closes_is_no_answer() -> None:
    """Shown as the answer, ``CALL(read_file WITH {…}`` put markup in the chat; a call that
    could not be read goes back to the model as one. Prose that mentions it stays the answer."""
    for text in ['CALL(read_file WITH {"path": "a"}', "  CALL(" + " " * 30_000 + "x"]:
        reply = parse_reply(text, SCHEMAS)
        assert reply.kind == "tool_calls"
        assert "not readable" in (reply.calls[0].error or "")
    [call] = parse_reply("CALL(" + " " * 300 + "read_file) WITH {}", SCHEMAS).calls
    assert (call.name, call.error) == ("read_file", None)
    assert parse_reply("It is written CALL(x, as you said.").kind == "final"


@pytest.mark.parametrize(
    "call",
    [
        'CALL(read_file) WITH {"path": "a%d"}\n',
        '<tool_call>{"name": "read_file", "arguments": {"path": "a%d"}}</tool_call>',
    ],
)
def test_a_reply_that_loops_on_calls_gives_the_first_32(call: str) -> None:
    reply = parse_reply("".join(call % n for n in range(500)), SCHEMAS)
    assert [c.arguments["path"] for c in reply.calls] == [f"a{n}" for n in range(32)]


def test_legacy_call_without_arguments_is_an_error() -> None:
    [call] = parse_reply("CALL(list_dir)").calls
    assert "WITH" in (call.error or "")


def test_final_block_and_plain_final_answer() -> None:
    assert parse_reply("ok <final>Done: 3 files.</final>").text == "Done: 3 files."
    reply = parse_reply("  The answer is 4.  ")
    assert (reply.kind, reply.text) == ("final", "The answer is 4.")


def test_markup_hold_shows_prose_and_hides_calls_across_splits() -> None:
    text = 'Let me check. <tool_call>{"name": "list_dir"}</tool_call>'
    for cut in range(1, len(text)):
        hold = MarkupHold()
        shown = hold.feed(text[:cut]) + hold.feed(text[cut:]) + hold.finish()
        assert shown == "Let me check. ", cut


def test_markup_hold_passes_plain_text() -> None:
    hold = MarkupHold()
    assert hold.feed("A < B, ") + hold.feed("C.") + hold.finish() == "A < B, C."


def _held_in_pieces(text: str, cuts: tuple[int, int], tools: dict) -> str:
    hold = MarkupHold(tools)
    a, b = sorted(cuts)
    return hold.feed(text[:a]) + hold.feed(text[a:b]) + hold.feed(text[b:]) + hold.finish()


def test_markup_hold_keeps_a_bare_json_call_out_of_the_chat() -> None:
    """Small models write a call as a bare or fenced JSON object; the chat showed it, and a
    fence left open. Whatever the stream's pieces, the chat gets the prose before it; JSON
    that is no call of the tools, and code in a fence, are shown once the reply is done."""
    tools = {"read_file": {"type": "object"}}
    cases = {
        'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```': (
            "I will read it.\n"
        ),
        "Reading.\n  {'name': 'read_file', 'arguments': {'path': 'a.py'}}": "Reading.\n",
        'The config:\n```json\n{"name": "other", "a": 1}\n```\nDone.': None,
        "Code:\n```python\ndef f():\n    return {}\n```": None,
        'Inline {"name": "read_file", "arguments": {}} stays.': None,
    }
    for text, shown in cases.items():
        for a in range(len(text) + 1):
            for b in (a, a + 1, a + 7):
                assert _held_in_pieces(text, (a, min(b, len(text))), tools) == (shown or text)
        # without tools, nothing is held past the reply's markers (classify, critic)
        assert _held_in_pieces(text, (3, 9), {}) == text


@given(st.lists(st.sampled_from(["{", "}", "`", "```json", "\n", " ", "x", '"name"']), max_size=30))
def test_markup_hold_shows_text_that_is_no_call_whole(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _held_in_pieces(text, (len(text) // 3, len(text) // 2), {"read_file": {}}) == text


PIECES = [
    "<tool_call>",
    "</tool_call>",
    "<function=",
    ">",
    "<parameter=",
    "</parameter>",
    "</function>",
    "CALL(",
    ")",
    " WITH ",
    "{",
    "}",
    '"',
    ":",
    "name",
    "read_file",
    "CLARIFY(",
    "<final>",
    "x",
    "\n",
]


@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_garbage_never_raises(pieces: list[str]) -> None:
    reply = parse_reply("".join(pieces), SCHEMAS)
    assert reply.kind in ("clarify", "tool_calls", "final")


def test_a_number_too_long_for_python_is_a_malformed_call_not_a_crash() -> None:
    huge = "9" * 5000
    native = parse_reply(
        f'<tool_call>{{"name": "read_file", "arguments": {{"offset": {huge}}}}}</tool_call>'
    )
    legacy = parse_reply(f'CALL(read_file) WITH {{"offset": {huge}}}')
    for reply in (native, legacy):
        assert reply.kind == "tool_calls"
        assert "integer string conversion" in reply.calls[0].error


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**500), max_value=10**500)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["points", "count", "exact", "box", "label"]), _JSON))
def test_typing_any_arguments_by_their_schema_never_raises(arguments: dict) -> None:
    call = json.dumps({"name": "measure", "arguments": arguments})
    reply = parse_reply(f"<tool_call>{call}</tool_call>", MEASURE)
    assert reply.kind == "tool_calls"


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        # The 1.5B model's: opened, never closed, ended by </final>.
        (
            '<final>CLARIFY("It has been added to units.py.</final>',
            "It has been added to units.py.",
        ),
        ('CLARIFY("Which of (a) or (b)?', "Which of (a) or (b)?"),  # cut at the token limit
        ("CLARIFY('Which one?')", "Which one?"),
    ],
)
def test_an_unclosed_clarify_is_read_as_its_question(reply: str, question: str) -> None:
    assert parse_reply(reply) == ParsedReply(kind="clarify", text=question)


def test_a_last_string_left_open_before_a_marker_is_closed() -> None:
    """The 1.5B model wrote the right fix with its closing quote missing, three times:
    `"new": "return sum(numbers) / len(numbers)} <final>…`. Where a reply marker follows the
    brace, the string is closed there; cut off with no marker after it, the call stays
    unreadable (the brace may be the value's own)."""
    fix = (
        'CALL(edit_file) WITH {"path": "calc.py", "old": "/ (len(numbers) - 1)", '
        '"new": "/ len(numbers)} <final>Changed.</final> <final>Test passed.</final>'
    )
    [call] = parse_reply(fix).calls
    assert call.error is None
    assert call.arguments == {
        "path": "calc.py",
        "old": "/ (len(numbers) - 1)",
        "new": "/ len(numbers)",
    }
    [cut] = parse_reply('CALL(write_file) WITH {"path": "a.js", "content": "if (x) {y}').calls
    assert cut.error is not None and "not valid JSON" in cut.error
