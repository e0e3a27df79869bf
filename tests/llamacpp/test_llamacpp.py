"""The llama.cpp engine (xllamacpp, prebuilt) on the bundled GGUF: answers, native and legacy
tool calls, cancel, prompt reuse, scoring, constrained calls."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("xllamacpp", reason="xllamacpp is not installed")

from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import CompletionRequest, Message, TextChunk, UsageChunk
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.core.parsing import parse_reply
from pheron_tui.providers.llamacpp import LlamaCppProvider
from pheron_tui.tools.builtin import default_registry

from ..command import pheron
from ..mlx.tiny_models import QWEN3_STYLE_TEMPLATE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gguf() -> Path:
    """The bundled model in the real cache (the conftest isolates XDG dirs); the test command
    pulls it first."""
    path = Path.home() / ".cache" / "pheron-tui" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        pytest.skip("the bundled model is not pulled (pheron-tui models pull)")
    return path


def forced(**replies: list[str]):
    """Makes the model say scripted text, per purpose: a grammar that allows only that text.
    llama.cpp takes no grammar beside tools, so a forced reply goes without them; its tool
    call is then read from the text by pheron-tui's parser rather than the server's."""
    queues = {purpose: list(texts) for purpose, texts in replies.items()}

    def extra(request: CompletionRequest) -> dict:
        texts = queues.get(request.purpose)
        if not texts:
            return {}
        return {
            "grammar": "root ::= " + json.dumps(texts.pop(0)),
            "tools": None,
            "tool_choice": None,
        }

    return extra


class TaskFirst(LlamaCppProvider):
    """The bundled model's own label scores decide chat vs task; a tool test needs a task."""

    async def score_choices(self, request, options):
        scores = await super().score_choices(request, options)
        assert all(v < 0 for v in scores.values() if v != float("-inf"))  # real logprobs
        if set(options) == {"chat", "task"}:
            return {"task": 0.0, "chat": -10.0}
        return scores


def agent(provider, workspace: Path, **kw) -> tuple[Orchestrator, object]:
    bus = EventBus("llamacpp")
    events = bus.add_subscriber(maxsize=1_000_000)
    settings = AgentSettings(workspace=workspace, policy="all", **kw)
    return Orchestrator(provider, default_registry(), bus, settings), events


def test_bundled_model_answers_through_the_command(workspace: Path, gguf: Path) -> None:
    done = pheron(
        "run",
        "--provider",
        "llamacpp",
        "--model",
        str(gguf),
        "--workspace",
        str(workspace),
        "What is the capital of France? Answer briefly.",
        env={"PIP_NO_INDEX": "1", "HF_HUB_OFFLINE": "1"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Paris" in done.stdout


async def test_a_native_tool_task_on_a_template_with_tools(workspace: Path, gguf: Path) -> None:
    provider = TaskFirst(str(gguf), chat_template=QWEN3_STYLE_TEMPLATE)
    await provider.load()
    assert provider.native_tools
    call = '<think>I should look.</think>\n<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>'
    provider.extra_payload = forced(
        plan=[call, "The folder holds main.py and notes.md."], critic=["PASS"] * 3
    )
    orchestrator, events = agent(provider, workspace)
    result = await orchestrator.submit("What files are here?")
    await provider.aclose()
    assert result.status == "finished", result
    assert result.answer == "The folder holds main.py and notes.md."
    seen = events.drain()
    [finished] = [e for e in seen if e.type == "ToolCallFinished"]
    assert finished.ok and "notes.md" in finished.observation
    thoughts = "".join(e.text for e in seen if e.type == "ThinkDelta" and e.phase == "plan")
    assert "I should look." in thoughts
    plans = [e for e in seen if e.type == "Usage" and e.purpose == "plan"]
    assert len(plans) == 2
    # The second planning cycle re-evaluates only what the first one added.
    assert plans[1].cached_tokens >= plans[0].prompt_tokens - 1, plans


async def test_cancel_stops_generation_at_once(gguf: Path) -> None:
    """Closing the stream stops the server's generation: the next request is answered at
    once, not after the 400 tokens the first one asked for."""
    provider = LlamaCppProvider(str(gguf))
    await provider.load()
    provider.extra_payload = forced(chat=[" ".join(["word"] * 300), "Short."])
    request = CompletionRequest(messages=[Message(role="user", content="talk")], max_tokens=400)
    stream = provider.stream(request)
    received = ""
    async for chunk in stream:
        received += chunk.text if chunk.kind == "text" else ""
        if received.count("word") >= 20:
            break
    await stream.aclose()
    again = [c async for c in provider.stream(request)]
    await provider.aclose()
    assert "".join(c.text for c in again if c.kind == "text") == "Short."
    [usage] = [c.usage for c in again if c.kind == "usage"]
    assert usage.completion_tokens <= 5


async def test_a_long_prompt_reports_progress_and_a_cancel_does_not_wait_for_it(
    gguf: Path,
) -> None:
    """While llama.cpp reads a long prompt it reports how far it got; a consumer that lets go
    then is not held until the reading ends, and the next request still gets its answer."""
    provider = LlamaCppProvider(str(gguf))
    await provider.load()
    provider.extra_payload = forced(chat=["Short.", "Short."])  # one each request
    words = " ".join(f"item{i}" for i in range(1500))  # several prompt batches
    long = CompletionRequest(messages=[Message(role="user", content=words)], max_tokens=4)
    stream = provider.stream(long)
    first = await anext(stream)
    assert first.kind == "prompt_progress" and first.total > 1500
    await stream.aclose()
    assert provider._letting_go  # the reading goes on, stopped at its next batch, unwaited
    short = CompletionRequest(messages=[Message(role="user", content="hi")], max_tokens=4)
    again = [c async for c in provider.stream(short)]
    await provider.aclose()
    assert "".join(c.text for c in again if c.kind == "text") == "Short."
    assert not any(w.is_alive() for w in provider._letting_go)  # joined on close


async def test_prompt_is_reused_across_turns_and_requests(workspace: Path, gguf: Path) -> None:
    provider = LlamaCppProvider(str(gguf))
    orchestrator, events = agent(provider, workspace, chat_max_tokens=12)
    await orchestrator.submit("Say hello.")
    await orchestrator.submit("Say it again.")
    await provider.aclose()
    usages = [e for e in events.drain() if e.type == "Usage"]
    chats = [e for e in usages if e.purpose == "chat"]
    assert len(chats) == 2
    # A classification request ran in between; the conversation still came from the cache.
    assert chats[1].cached_tokens >= chats[0].prompt_tokens - 1
    assert chats[1].prompt_tokens > chats[0].prompt_tokens


async def test_scores_are_log_probabilities(gguf: Path) -> None:
    provider = LlamaCppProvider(str(gguf))
    await provider.load()
    request = CompletionRequest(
        messages=[Message(role="user", content="Answer yes or no: is Paris in France?")]
    )
    scores = await provider.score_choices(request, ["yes", "no"])
    await provider.aclose()
    finite = [v for v in scores.values() if v != float("-inf")]
    assert finite and all(v < 0 for v in finite)
    assert 0 < sum(math.exp(v) for v in finite) <= 1.0 + 1e-9


async def test_a_legacy_reply_that_must_be_a_call_is_one(workspace: Path, gguf: Path) -> None:
    """The bundled template takes no tools: the legacy format, and the first step's call is
    constrained by our llguidance grammar to a real tool with valid arguments."""
    provider = TaskFirst(str(gguf))
    await provider.load()
    assert not provider.native_tools
    orchestrator, events = agent(provider, workspace, max_steps=2, plan_max_tokens=64)
    await orchestrator.submit("Read notes.md")
    await provider.aclose()
    proposed = [e for e in events.drain() if e.type == "ToolCallProposed"]
    assert proposed, "no call was made"
    assert proposed[0].tool in {t.name for t in default_registry()}


async def legacy_reply(gguf: Path, ask: str, tool_choice: str, constrained: bool = True) -> str:
    """The text of one legacy planning reply to ``ask``, the built-in tools offered."""
    provider = LlamaCppProvider(str(gguf), constrained=constrained)
    request = CompletionRequest(
        messages=[
            Message(
                role="system",
                content='To read a file, write CALL(read_file) WITH {"path": "the file"}.',
            ),
            Message(role="user", content=ask),
        ],
        tools=default_registry().specs(),
        tool_choice=tool_choice,
        max_tokens=48,
        purpose="plan",
    )
    try:
        chunks = [chunk async for chunk in provider.stream(request)]
        assert provider.tool_mode == "legacy"
    finally:
        await provider.aclose()
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


async def test_a_legacy_reply_that_may_call_keeps_any_call_well_formed(gguf: Path) -> None:
    """A legacy step that may call (tool_choice auto) goes with a grammar that leaves prose
    free and holds a call to the tools from ``CALL(`` on: llama.cpp takes it (its llguidance
    reads the lazy lead and the text-without-marker terminal), and whatever the model writes
    parses, with every call it makes a valid one."""
    text = await legacy_reply(gguf, "Read notes.md", "auto")
    parsed = parse_reply(text, default_registry().schemas())
    assert all(call.error is None for call in parsed.calls), text
    if "CALL(" in text:
        assert parsed.kind == "tool_calls", text


async def test_an_unconstrained_legacy_reply_that_must_call_starts_as_a_call(gguf: Path) -> None:
    """With constraining off no grammar holds a step that must call: the reply is started
    with ``CALL`` for the model (a prefill), so "required" still means a call, not prose."""
    text = await legacy_reply(gguf, "What is in notes.md? Tell me.", "required", False)
    assert text.startswith("CALL"), text
    assert parse_reply(text, default_registry().schemas()).kind == "tool_calls", text


async def test_a_constrained_reply_in_free_text_still_ends_with_the_turn(gguf: Path) -> None:
    """Under a grammar, llama.cpp lets the model stop only at a token the grammar names: a
    free answer, or an answer-now step, once ran on to ``max_tokens``. Both end where the
    model ends its turn, as unconstrained."""
    specs = default_registry().specs()
    replies = {}
    for constrained in (False, True):
        provider = LlamaCppProvider(str(gguf), constrained=constrained)
        try:
            for choice in ("auto", "none"):
                request = CompletionRequest(
                    messages=[Message(role="user", content="Say hi in two words.")],
                    tools=specs,
                    tool_choice=choice,
                    max_tokens=120,
                    purpose="plan",
                )
                chunks = [chunk async for chunk in provider.stream(request)]
                used = next(c for c in chunks if isinstance(c, UsageChunk))
                replies[constrained, choice] = used.usage.completion_tokens
        finally:
            await provider.aclose()
    assert replies[True, "auto"] == replies[False, "auto"] < 120, replies
    assert replies[True, "none"] < 120, replies  # "<final>…" then the end of the turn


async def test_context_is_counted_with_the_models_tokenizer(workspace: Path, gguf: Path) -> None:
    provider = LlamaCppProvider(str(gguf))
    await provider.load()
    try:
        short, long = await provider.count_tokens(["hello", "hello " * 50])
        assert 0 < short < long and 40 <= long <= 110
        orchestrator, _bus = agent(provider, workspace)
        parts = await orchestrator.context_parts()
    finally:
        await provider.aclose()
    assert parts and not any(part.estimated for part in parts)
    assert parts[0].tokens > 50  # the system prompt
