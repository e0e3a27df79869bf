"""Tool-call grammars: valid calls pass, every kind of malformed call is impossible."""

from __future__ import annotations

import llguidance
import llguidance.hf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pheron_tui.core.messages import FunctionSpec, ToolSpec
from pheron_tui.providers.constrain import build_constraint
from pheron_tui.providers.grammar import FREE_LEAD, MAX_CALLS, body_grammar, detect_format
from pheron_tui.tools.builtin import default_registry

from ..mlx.tiny_models import QWEN3_STYLE_TEMPLATE, QWEN35_STYLE_TEMPLATE, _tokenizer

WEATHER = ToolSpec(
    function=FunctionSpec(
        name="get_weather",
        description="weather",
        parameters={
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "unit": {"type": "string", "enum": ["C", "F"]},
            },
            "required": ["city", "days"],
        },
    )
)
TOOLS = [*default_registry().specs(), WEATHER]


@pytest.fixture(scope="module")
def tokenizers():
    hf = _tokenizer(QWEN3_STYLE_TEMPLATE)
    return hf, llguidance.hf.from_tokenizer(hf, eos_token=hf.convert_tokens_to_ids("<|im_end|>"))


def grammar_for(tokenizers, fmt: str) -> str:
    """As build_constraint writes it: the end marker referenced as the one token it is."""
    hf, _ = tokenizers
    return body_grammar(fmt, TOOLS, end=f"<[{hf.convert_tokens_to_ids('</tool_call>')}]>")


def accepts(tokenizers, grammar: str, text: str) -> bool:
    hf, lltok = tokenizers
    matcher = llguidance.LLMatcher(lltok, grammar)
    assert not matcher.get_error(), matcher.get_error()
    tokens = hf.encode(text, add_special_tokens=False)
    return matcher.consume_tokens(tokens) and (matcher.is_accepting() or matcher.is_stopped())


JSON_OK = [
    '\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>',
    '\n{"name": "list_dir", "arguments": {}}\n</tool_call>',
    '\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3, "unit": "C"}}\n</tool_call>',
    '\n{"name": "shell_exec", "arguments": {"command": "ls -la"}}\n</tool_call>',
]
JSON_BAD = [
    '\n{"name": "delete_everything", "arguments": {}}\n</tool_call>',  # unknown tool
    '\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',  # missing days
    '\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": "3"}}\n</tool_call>',  # type
    '\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3, "unit": "K"}}\n</tool_call>',
    '\n{"name": "list_dir", "arguments": {"path": ".", "recursive": true}}\n</tool_call>',  # invented
    '\n{"name": "list_dir", "arguments": {"path": "."}\n</tool_call>',  # broken JSON
    '\n{"name": "list_dir", "arguments":   {"path":   "."}}\n</tool_call>',  # padding
]


@pytest.mark.parametrize("text", JSON_OK)
def test_qwen_json_accepts_valid_calls(tokenizers, text: str) -> None:
    assert accepts(tokenizers, grammar_for(tokenizers, "qwen_json"), text)


@pytest.mark.parametrize("text", JSON_BAD)
def test_qwen_json_rejects_malformed_calls(tokenizers, text: str) -> None:
    assert not accepts(tokenizers, grammar_for(tokenizers, "qwen_json"), text)


def test_qwen_xml(tokenizers) -> None:
    grammar = grammar_for(tokenizers, "qwen_xml")
    ok = (
        "\n<function=get_weather>\n<parameter=city>\nNew York <b>\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    )
    assert accepts(tokenizers, grammar, ok)
    assert not accepts(tokenizers, grammar, ok.replace("3\n", "three\n"))
    missing = (
        "\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
    )
    assert not accepts(tokenizers, grammar, missing)
    enum = ok.replace("</function>", "<parameter=unit>\nK\n</parameter>\n</function>")
    assert not accepts(tokenizers, grammar, enum)


def test_legacy(tokenizers) -> None:
    grammar = grammar_for(tokenizers, "legacy")
    assert accepts(tokenizers, grammar, 'list_dir) WITH {"path": "."}')
    assert not accepts(tokenizers, grammar, 'list_files) WITH {"path": "."}')
    assert not accepts(tokenizers, grammar, 'read_file) WITH {"paht": "x"}')


def test_a_reply_that_may_call_keeps_its_prose_free_and_its_calls_well_formed(tokenizers) -> None:
    """tool_choice ``auto`` in the prompted format (llama.cpp): prose or an answer pass as
    written; a call, wherever it starts, is held to the tools' schemas up to its end."""
    grammar = body_grammar("legacy", TOOLS, lead=FREE_LEAD)
    for text in (
        "The answer is 4.",
        "<final>Done: calc.py adds two numbers.</final>",
        'CALL(list_dir) WITH {"path": "."}',
        'I will look first.\nCALL(read_file) WITH {"path": "calc.py"}',
        'CALL(list_dir) WITH {"path": "."}\nCALL(read_file) WITH {"path": "a.py"}',
    ):
        assert accepts(tokenizers, grammar, text), text
    for text in (
        'CALL(read_file) WITH {"path": "calc.py"',  # the string or object never closed
        "CALL(delete_everything) WITH {}",
        'Let me CALL(get_weather) WITH {"city": "Oslo", "days": "3"}',
        'CALL(read_file) WITH {"paht": "calc.py"}',
    ):
        assert not accepts(tokenizers, grammar, text), text


def test_a_nested_object_takes_only_the_keys_it_lists(tokenizers) -> None:
    control = ToolSpec(
        function=FunctionSpec(
            name="control",
            description="",
            parameters={
                "type": "object",
                "properties": {
                    "body": {
                        "type": "object",
                        "properties": {"windStrength": {"type": "string", "enum": ["LOW", "HIGH"]}},
                    },
                    "extra": {"type": "object"},  # lists no keys: any key goes
                },
                "required": ["body"],
            },
        )
    )
    grammar = body_grammar("legacy", [control])
    assert accepts(tokenizers, grammar, 'control) WITH {"body": {"windStrength": "HIGH"}}')
    assert not accepts(tokenizers, grammar, 'control) WITH {"body": {"wind_strength": "HIGH"}}')
    assert accepts(tokenizers, grammar, 'control) WITH {"body": {}, "extra": {"any": 1}}')


def test_formats_are_read_from_the_template() -> None:
    assert detect_format(QWEN3_STYLE_TEMPLATE) == "qwen_json"
    assert detect_format(QWEN35_STYLE_TEMPLATE) == "qwen_xml"
    assert detect_format("{{ messages }}") == "legacy"


def codec(hf):
    """How the engines tokenise (special tokens read), a token's text, the end of turn."""

    def encode(text: str) -> list[int]:
        return hf.encode(text, add_special_tokens=False)

    def decode(token: int) -> str:
        return hf.decode([token])

    return encode, decode, hf.convert_tokens_to_ids("<|im_end|>")


def masked_choice(constraint, tokens: list[int], vocab: int, wanted: int) -> bool:
    mask = constraint.allowed(tokens, vocab)
    return mask is None or bool(mask[wanted])


def test_auto_is_free_until_the_start_marker_then_constrained(tokenizers) -> None:
    hf, lltok = tokenizers
    vocab = len(hf)
    encode, decode, eos = codec(hf)
    constraint = build_constraint(lltok, "qwen_json", TOOLS, "auto", encode, eos, decode)
    prompt = encode("system prompt and question")
    assert constraint.allowed(prompt, vocab) is None  # the prompt
    prose = prompt + encode("Let me look. ")
    assert constraint.allowed(prose, vocab) is None  # prose is free
    started = prose + encode("<tool_call>")
    mask = constraint.allowed(started, vocab)
    assert mask is not None and mask.sum() < vocab / 2
    assert not mask[encode("Hello")[0]]  # nothing but the call's JSON may follow
    body = encode('\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>')
    sequence = started
    for token in body:
        assert masked_choice(constraint, sequence, vocab, token), hf.decode(
            sequence[len(started) :]
        )
        sequence = [*sequence, token]
    assert constraint.allowed(sequence, vocab) is None  # free again after the call
    assert constraint.masked_tokens == len(body) + 1  # the mask at the marker was asked twice


def test_required_starts_with_the_call_then_ends_or_makes_another(tokenizers) -> None:
    """A reply that must call holds one call, or several a line each (a request for several
    things at once), and nothing else: after each call only the end or the next line."""
    hf, lltok = tokenizers
    vocab = len(hf)
    encode, decode, eos = codec(hf)
    constraint = build_constraint(lltok, "legacy", TOOLS, "required", encode, eos, decode)
    sequence = encode("prompt")
    mask = constraint.allowed(sequence, vocab)
    assert mask is not None and not mask[eos] and not mask[encode("Hello")[0]]
    newline = encode("\n")
    assert len(newline) == 1
    for number in range(1, MAX_CALLS + 1):
        text = ("\n" if number > 1 else "") + f'CALL(list_dir) WITH {{"path": "d{number}"}}'
        for token in encode(text):
            mask = constraint.allowed(sequence, vocab)
            assert mask is not None and mask[token], hf.decode(sequence[-8:])
            if sequence[-1] == newline[0]:
                assert not mask[encode("Hello")[0]]  # a line after a call is a call
            sequence = [*sequence, token]
        mask = constraint.allowed(sequence, vocab)
        assert mask is not None and mask[eos] and mask[newline[0]] == (number < MAX_CALLS)
        assert mask.sum() == (2 if number < MAX_CALLS else 1)  # the end, or the next line


def test_names_lark_would_misread_still_make_a_valid_grammar(tokenizers) -> None:
    """Upper case, dots and names equal but for case (BFCL has them all)."""
    odd = [
        ToolSpec(
            function=FunctionSpec(
                name=name,
                description="",
                parameters={
                    "type": "object",
                    "properties": {"Answer": {"type": "string"}, "answer": {"type": "integer"}},
                    "required": ["Answer"],
                },
            )
        )
        for name in ("parseAnswer", "parseanswer", "math.factorial")
    ]
    for fmt in ("qwen_json", "qwen_xml", "legacy"):
        grammar = body_grammar(fmt, odd, end='"</tool_call>"')
        assert not llguidance.LLMatcher.validate_grammar(grammar, tokenizers[1]), fmt
    assert accepts(
        tokenizers, body_grammar("legacy", odd), 'math.factorial) WITH {"Answer": "x", "answer": 3}'
    )


def test_a_schema_that_contradicts_itself_still_constrains_the_call(tokenizers) -> None:
    """An enum on an array (as BFCL's live tools and hand-written MCP schemas have) is read
    as the items' options; a contradiction nothing reads leaves that value free, and the
    other tools' calls stay held to their schemas."""
    readings = ToolSpec(
        function=FunctionSpec(
            name="readings",
            description="",
            parameters={
                "type": "object",
                "properties": {
                    "metrics": {
                        "type": "array",
                        "items": {"type": "string"},
                        "enum": ["temp", "co2"],
                    },
                },
                "required": ["metrics"],
            },
        )
    )
    impossible = ToolSpec(
        function=FunctionSpec(
            name="impossible",
            description="",
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string", "minLength": 5, "maxLength": 2}},
                "required": ["code"],
            },
        )
    )
    tools = [readings, impossible, WEATHER]
    grammar = body_grammar("legacy", tools)
    assert not llguidance.LLMatcher.validate_grammar(grammar, tokenizers[1])
    assert accepts(tokenizers, grammar, 'readings) WITH {"metrics": ["temp", "co2"]}')
    assert not accepts(tokenizers, grammar, 'readings) WITH {"metrics": ["rain"]}')
    assert accepts(tokenizers, grammar, 'impossible) WITH {"code": "abc"}')
    assert not accepts(tokenizers, grammar, 'get_weather) WITH {"city": "Oslo", "days": "3"}')


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.sampled_from(["string", "integer", "array", "object", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "enum",
                    "items",
                    "properties",
                    "required",
                    "minLength",
                    "maxLength",
                    "minimum",
                    "maximum",
                    "a",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), _JSON, max_size=3),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
)
def test_whatever_schema_a_server_sends_the_grammar_compiles(
    properties: dict, required: list
) -> None:
    """An MCP server's schema is not ours to trust: whatever it says, the grammar for its
    tool (and so for every tool offered beside it) compiles."""
    tool = ToolSpec(
        function=FunctionSpec(
            name="odd",
            description="",
            parameters={"type": "object", "properties": properties, "required": required},
        )
    )
    for fmt in ("legacy", "qwen_json"):
        failed, warnings = llguidance.LLMatcher.validate_grammar_with_warnings(
            body_grammar(fmt, [tool, WEATHER])
        )
        assert not failed, warnings


def test_required_holds_one_call_when_several_are_not_asked_for(tokenizers) -> None:
    """``parallel_tool_calls`` off (a task about the workspace): after the call, only the end."""
    hf, lltok = tokenizers
    vocab = len(hf)
    encode, decode, eos = codec(hf)
    constraint = build_constraint(
        lltok, "legacy", TOOLS, "required", encode, eos, decode, several=False
    )
    sequence = encode("prompt")
    for token in encode('CALL(list_dir) WITH {"path": "d"}'):
        mask = constraint.allowed(sequence, vocab)
        assert mask is not None and mask[token]
        sequence = [*sequence, token]
    mask = constraint.allowed(sequence, vocab)
    assert mask is not None and mask[eos] and mask.sum() == 1
