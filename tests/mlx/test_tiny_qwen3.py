"""The native tool path end to end on a tiny Qwen3-style model with forced replies."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import CompletionRequest, Message
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.core.provider import ScoringUnavailable
from pheron_tui.providers.mlx import MLXProvider
from pheron_tui.tools.builtin import default_registry

from .tiny_models import ForcedReplies, build_qwen3_style

pytestmark = pytest.mark.slow

CALL_LIST = '<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>'
CALL_TWO = (
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.md"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "search_files", "arguments": {"pattern": "hello"}}\n</tool_call>'
)
CALL_BROKEN = '<tool_call>\n{"name": "read_file", "arguments": {"path": }\n</tool_call>'


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qwen3_style(tmp_path_factory.mktemp("models") / "qwen3-tiny")


class TaskFirst(MLXProvider):
    """Random weights cannot classify; the label scoring itself is tested separately."""

    async def score_choices(self, request, options):
        scores = await super().score_choices(request, options)
        assert all(v < 0 for v in scores.values())  # real log-probabilities
        if request.purpose == "classify":
            return {"task": 0.0, "chat": -1.0}
        return {"PASS": 0.0, "FAIL": -1.0}


async def run_task(tiny_folder: Path, workspace: Path, plans: list[str], critic: list[str]):
    provider = TaskFirst(str(tiny_folder))
    await provider.load()
    assert provider.native_tools
    provider.logits_processors = ForcedReplies(provider.tokenizer, plan=plans, critic=critic)
    bus = EventBus("tiny")
    events = bus.add_subscriber(maxsize=1_000_000)
    orchestrator = Orchestrator(
        provider, default_registry(), bus, AgentSettings(workspace=workspace, policy="all")
    )
    result = await orchestrator.submit("What is in this folder?")
    await provider.aclose()
    return result, events.drain(), provider


def of(events, name):
    return [e for e in events if type(e).__name__ == name]


async def test_native_tool_loop_with_thinking_several_calls_and_a_malformed_one(
    tiny_folder: Path, workspace: Path
) -> None:
    plans = [
        f"<think>\nI will list the folder.\n</think>\n\n{CALL_LIST}",
        f"<think>\nRead the notes and search.\n</think>\n\n{CALL_TWO}",
        f"<think>\nOne more look.\n</think>\n\n{CALL_BROKEN}",
        "<think>\nI have it.\n</think>\n\nThe folder has main.py and notes.md.",
    ]
    result, events, _provider = await run_task(tiny_folder, workspace, plans, ["It is right."])
    assert result.status == "finished", result.reason
    assert result.answer == "The folder has main.py and notes.md."
    assert [p.tool for p in of(events, "ToolCallProposed")] == [
        "list_dir",
        "read_file",
        "search_files",
    ]
    assert all(f.ok for f in of(events, "ToolCallFinished"))
    think = "".join(e.text for e in of(events, "ThinkDelta") if e.phase == "plan")
    assert "I will list the folder." in think and "<think>" not in think
    shown = "".join(e.text for e in of(events, "AnswerDelta"))
    assert "<tool_call>" not in shown and "The folder has main.py and notes.md." in shown
    assert "not valid JSON" in of(events, "ErrorRaised")[0].message
    assert of(events, "CriticVerdict")[0].reason == "It is right."

    # From the second planning cycle on, all the previous cycle read comes from the cache: only
    # the reply and the tool results after it are new (their length is the tools' to decide).
    plan_usage = [u for u in of(events, "Usage") if u.purpose == "plan"]
    assert len(plan_usage) == 4
    for before, usage in itertools.pairwise(plan_usage):
        assert usage.cached_tokens >= before.prompt_tokens, (before, usage)


async def test_thinking_is_off_for_chat_and_on_for_planning(tiny_folder: Path) -> None:
    provider = MLXProvider(str(tiny_folder))
    await provider.load()
    messages = [Message(role="user", content="hi")]
    off = await provider._on_thread(
        provider._render, CompletionRequest(messages=messages, purpose="chat"), True, False
    )
    on = await provider._on_thread(
        provider._render, CompletionRequest(messages=messages, purpose="plan"), True, True
    )
    decode = provider.tokenizer.decode
    assert decode(off).endswith("<think>\n\n</think>\n\n")
    assert decode(on).endswith("<|im_start|>assistant\n")
    await provider.aclose()


async def test_label_scoring_is_one_forward_pass_over_real_logits(tiny_folder: Path) -> None:
    provider = MLXProvider(str(tiny_folder))
    await provider.load()
    request = CompletionRequest(
        messages=[Message(role="user", content="list files")], purpose="classify"
    )
    scores = await provider.score_choices(request, ["chat", "task"])
    assert set(scores) == {"chat", "task"} and all(v < 0 for v in scores.values())
    again = await provider.score_choices(request, ["chat", "task"])
    assert again == pytest.approx(scores, abs=1e-4)  # from the cached prompt, same answer
    assert provider.last_usage.cached_tokens >= provider.last_usage.prompt_tokens - 2
    await provider.aclose()


async def test_options_with_the_same_first_token_fall_back_to_generating(
    tiny_folder: Path,
) -> None:
    provider = MLXProvider(str(tiny_folder))
    await provider.load()
    request = CompletionRequest(messages=[Message(role="user", content="hi")], purpose="classify")
    with pytest.raises(ScoringUnavailable):  # not a ProviderError that fails the turn
        await provider.score_choices(request, ["task", "tasks"])
    await provider.aclose()


async def test_cancel_stops_generation_within_a_token(tiny_folder: Path) -> None:
    import asyncio

    provider = MLXProvider(str(tiny_folder))
    await provider.load()
    request = CompletionRequest(messages=[Message(role="user", content="go")], max_tokens=100_000)
    seen = 0

    async def consume() -> None:
        nonlocal seen
        async for _chunk in provider.stream(request):
            seen += 1
            if seen == 5:
                task.cancel()

    task = asyncio.create_task(consume())
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == 5
    await provider.aclose()  # the let-go generation ends first: it stopped at its next token
    assert provider.last_usage is not None and provider.last_usage.completion_tokens <= 8


async def test_an_unconstrained_reply_that_must_call_starts_with_the_call(
    tiny_folder: Path,
) -> None:
    """With constraining off, "required" is held by starting the reply with the call's
    marker in the prompt; a reply free to answer starts as the model likes."""
    provider = MLXProvider(str(tiny_folder), constrained=False)
    await provider.load()
    texts = {}
    for choice in ("required", "auto"):
        request = CompletionRequest(
            messages=[Message(role="user", content="list the files")],
            tools=default_registry().specs(),
            tool_choice=choice,
            purpose="plan",
            max_tokens=4,
        )
        chunks = [c async for c in provider.stream(request)]
        texts[choice] = "".join(c.text for c in chunks if c.kind == "text")
    await provider.aclose()
    assert texts["required"].startswith("<tool_call>"), texts
    assert not texts["auto"].startswith("<tool_call>"), texts
