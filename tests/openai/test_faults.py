"""The OpenAI-compatible provider against a local server that misbehaves on purpose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pheron_tui.core.bus import EventBus
from pheron_tui.core.messages import CompletionRequest, Message, ReasoningChunk, TextChunk
from pheron_tui.core.orchestrator import AgentSettings, Orchestrator
from pheron_tui.core.provider import ProviderError
from pheron_tui.providers.openai_compat import OpenAIProvider
from pheron_tui.tools.builtin import default_registry

from ..command import pheron
from .fake_server import (
    FakeServer,
    Reply,
    chunk_event,
    finish_event,
    logprobs_reply,
    sse_reply,
    usage_event,
)

KEY = "sk-test-4242-very-secret"


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.close()


def provider(server: FakeServer, **kwargs) -> OpenAIProvider:
    options = {"backoff_s": 0.01, "api_key": KEY, "max_retries": 3, **kwargs}
    return OpenAIProvider(server.base_url, "tiny", **options)


def ask(text: str = "hi", **kwargs) -> CompletionRequest:
    return CompletionRequest(messages=[Message(role="user", content=text)], **kwargs)


async def collect(p: OpenAIProvider, request: CompletionRequest) -> list:
    return [chunk async for chunk in p.stream(request)]


async def test_content_reasoning_keepalives_and_usage(server: FakeServer) -> None:
    events = [
        {
            "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
            "x-unknown": 1,
        },
        chunk_event(reasoning="thinking it over"),
        chunk_event(reasoning_content=" more"),
        chunk_event("Hello "),
        chunk_event("world", extra_field={"ignored": True}),
        finish_event(),
        usage_event(prompt=40, completion=2, cached=32),
        "[DONE]",
    ]
    server.replies.append(Reply(events=events, raw_lines=[": keepalive", "", "event: ping", ""]))
    p = provider(server)
    chunks = await collect(p, ask())
    await p.aclose()
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Hello world"
    assert (
        "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == "thinking it over more"
    )
    usage = next(c.usage for c in chunks if c.kind == "usage")
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (40, 32, 2)
    assert chunks[-1].kind == "done" and chunks[-1].finish_reason == "stop"
    sent = server.requests[0]
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert sent["json"]["stream"] is True and sent["json"]["stream_options"] == {
        "include_usage": True
    }
    assert sent["json"]["chat_template_kwargs"] == {"enable_thinking": False}


async def test_tool_call_arguments_arrive_in_pieces(server: FakeServer) -> None:
    pieces = [
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "list_dir", "arguments": ""},
        },
        {"index": 0, "function": {"arguments": '{"pa'}},
        {"index": 1, "id": "call_b", "function": {"name": "read_file", "arguments": '{"path": '}},
        {"index": 0, "function": {"arguments": 'th": "."}'}},
        {"index": 1, "function": {"arguments": '"notes.md"}'}},
    ]
    events = [chunk_event(tool_calls=[piece]) for piece in pieces]
    server.replies.append(Reply(events=[*events, finish_event("tool_calls"), "[DONE]"]))
    p = provider(server)
    chunks = await collect(p, ask())
    await p.aclose()
    calls = [(c.id, c.name, json.loads(c.arguments)) for c in chunks if c.kind == "tool_call"]
    assert calls == [
        ("call_a", "list_dir", {"path": "."}),
        ("call_b", "read_file", {"path": "notes.md"}),
    ]


async def test_a_whole_task_through_the_server(server: FakeServer, workspace: Path) -> None:
    """Scored classification, a native tool call, the observation sent back, a final answer
    with a <think> block in the content, and a scored critic."""
    call = {"index": 0, "id": "c1", "function": {"name": "list_dir", "arguments": '{"path": "."}'}}
    server.replies += [
        logprobs_reply(("task", -0.1), ("chat", -2.5)),
        Reply(events=[chunk_event(tool_calls=[call]), finish_event("tool_calls"), "[DONE]"]),
        sse_reply("<think>two files</think>", "There are ", "two files."),
        sse_reply("The listing shows them."),  # the critic says what it saw, then
        logprobs_reply(("PASS", -0.05), ("FAIL", -3.0)),  # its verdict is scored
    ]
    p = provider(server)
    bus = EventBus("t")
    seen = bus.add_subscriber(maxsize=100_000)
    agent = Orchestrator(
        p, default_registry(), bus, AgentSettings(workspace=workspace, policy="all")
    )
    result = await agent.submit("what is here?")
    await p.aclose()
    assert result.status == "finished" and result.answer == "There are two files."
    events = seen.drain()
    thoughts = "".join(e.text for e in events if e.type == "ThinkDelta")
    assert "two files" in thoughts
    [verdict] = [e for e in events if e.type == "CriticVerdict"]
    assert (verdict.verdict, verdict.reason) == ("PASS", "The listing shows them.")
    plan2 = server.requests[2]["json"]
    assert plan2["tools"][0]["type"] == "function" and plan2["tool_choice"] == "auto"
    tool_message = plan2["messages"][-1]
    assistant = plan2["messages"][-2]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "notes.md" in tool_message["content"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "."}
    classify = server.requests[0]["json"]
    assert classify["max_tokens"] == 1 and classify["logprobs"] is True
    assert classify["chat_template_kwargs"] == {"enable_thinking": False}
    assert server.requests[1]["json"]["chat_template_kwargs"] == {"enable_thinking": True}


async def test_429_then_success_honours_retry_after(server: FakeServer) -> None:
    server.replies += [
        Reply(status=429, body='{"error": {"message": "slow down"}}', headers={"retry-after": "0"}),
        sse_reply("ok"),
    ]
    p = provider(server)
    chunks = await collect(p, ask())
    await p.aclose()
    assert [c.text for c in chunks if c.kind == "text"] == ["ok"]
    assert len(server.requests) == 2


async def test_500_three_times(server: FakeServer) -> None:
    server.replies += [Reply(status=500, body="boom")] * 3 + [sse_reply("finally")]
    p = provider(server, max_retries=3)
    assert [c.text for c in await collect(p, ask()) if c.kind == "text"] == ["finally"]
    server.replies += [Reply(status=500, body='{"error": "still broken"}')] * 3
    server.requests.clear()
    p.max_retries = 2
    with pytest.raises(ProviderError, match="answered 500: still broken"):
        await collect(p, ask())
    await p.aclose()
    assert len(server.requests) == 3  # one try and two retries, then a clear failure


async def test_malformed_sse(server: FakeServer) -> None:
    server.replies.append(Reply(events=[chunk_event("fine "), "{not json", "[DONE]"]))
    p = provider(server)
    with pytest.raises(ProviderError, match="malformed data"):
        await collect(p, ask())
    await p.aclose()


async def test_a_stream_cut_in_the_middle(server: FakeServer, workspace: Path) -> None:
    """The turn fails, and what arrived is kept in the events (and so in the session log)."""
    server.replies += [
        logprobs_reply(("chat", -0.1), ("task", -3.0)),
        Reply(
            events=[chunk_event("The capital "), chunk_event("of France "), chunk_event("is")],
            cut_after=2,
        ),
    ]
    p = provider(server, max_retries=0)
    bus = EventBus("t")
    seen = bus.add_subscriber(maxsize=100_000)
    agent = Orchestrator(p, default_registry(), bus, AgentSettings(workspace=workspace))
    result = await agent.submit("capital of France?")
    await p.aclose()
    events = seen.drain()
    assert result.status == "failed"
    assert "stream was cut after" in events[-1].reason
    assert "".join(e.text for e in events if e.type == "AnswerDelta") == "The capital of France "


async def test_slow_first_byte(server: FakeServer) -> None:
    server.replies.append(sse_reply("late but fine", first_byte_delay_s=0.5))
    p = provider(server, read_timeout_s=5)
    assert [c.text for c in await collect(p, ask()) if c.kind == "text"] == ["late but fine"]
    await p.aclose()
    server.replies += [sse_reply("too late", first_byte_delay_s=1.0)] * 2
    server.requests.clear()
    impatient = provider(server, read_timeout_s=0.2, max_retries=1)
    with pytest.raises(ProviderError, match="ReadTimeout"):
        await collect(impatient, ask())
    await impatient.aclose()
    assert len(server.requests) == 2


async def test_401_fails_at_once_and_never_shows_the_key(server: FakeServer) -> None:
    server.replies.append(
        Reply(status=401, body=json.dumps({"error": {"message": f"bad key {KEY}"}}))
    )
    p = provider(server, key_env="MY_KEY")
    with pytest.raises(ProviderError) as failed:
        await collect(p, ask())
    await p.aclose()
    message = str(failed.value)
    assert "refused the API key (401)" in message and "MY_KEY" in message
    assert KEY not in message and "***" in message
    assert len(server.requests) == 1


async def test_404_says_what_to_fix(server: FakeServer) -> None:
    server.replies.append(Reply(status=404, body='{"detail": "Not Found"}'))
    p = provider(server)
    with pytest.raises(ProviderError, match="check --base-url"):
        await collect(p, ask())
    await p.aclose()


async def test_auto_falls_back_to_legacy_when_tools_are_rejected(
    server: FakeServer, workspace: Path
) -> None:
    server.replies += [
        logprobs_reply(("task", -0.1)),
        Reply(status=400, body='{"error": {"message": "tools are not supported by this model"}}'),
        logprobs_reply(("CALL", -0.1)),  # would the model start with a call? likely: forced
        sse_reply('CALL(list_dir) WITH {"path": "."}'),
        sse_reply("<final>two files</final>"),
        logprobs_reply(("PASS", -0.1)),
        sse_reply("fine"),
    ]
    p = provider(server, tool_mode="auto")
    bus = EventBus("t")
    seen = bus.add_subscriber(maxsize=100_000)
    agent = Orchestrator(
        p, default_registry(), bus, AgentSettings(workspace=workspace, policy="all")
    )
    result = await agent.submit("list")
    await p.aclose()
    assert result.status == "finished", result
    assert p.tool_mode == "legacy"
    retried = server.requests[3]["json"]
    assert "tools" not in retried and "CALL(" in retried["messages"][0]["content"]
    assert server.requests[2]["json"]["max_tokens"] == 1  # the first call's odds, scored
    observation = server.requests[4]["json"]["messages"][-1]
    assert observation["role"] == "user" and "notes.md" in observation["content"]
    notes = [e.message for e in seen.drain() if e.type == "ErrorRaised"]
    assert any("does not take tools" in n for n in notes)


async def test_without_logprobs_classification_is_generated(
    server: FakeServer, workspace: Path
) -> None:
    no_logprobs = Reply(body=json.dumps({"choices": [{"index": 0, "message": {"content": "x"}}]}))
    server.replies += [no_logprobs, sse_reply("chat"), sse_reply("Paris.")]
    p = provider(server)
    bus = EventBus("t")
    agent = Orchestrator(p, default_registry(), bus, AgentSettings(workspace=workspace))
    result = await agent.submit("capital of France?")
    assert result.status == "finished" and result.answer == "Paris."
    # Asked once; the next classification goes straight to generation.
    server.replies += [sse_reply("chat"), sse_reply("Rome.")]
    await agent.submit("and Italy?")
    await p.aclose()
    assert [r["json"].get("logprobs") for r in server.requests] == [True, None, None, None, None]


def test_thinking_switch_per_server() -> None:
    request = ask(enable_thinking=False)
    local = OpenAIProvider("http://127.0.0.1:8000/v1", "m")._payload(request)
    assert local["chat_template_kwargs"] == {"enable_thinking": False} and "reasoning" not in local
    routed = OpenAIProvider("https://openrouter.ai/api/v1", "q", api_key="k")._payload(request)
    assert routed["reasoning"] == {"enabled": False} and "chat_template_kwargs" not in routed
    official = OpenAIProvider("https://api.openai.com/v1", "g", api_key="k")._payload(request)
    assert "reasoning" not in official and "chat_template_kwargs" not in official


async def test_a_remote_server_without_a_key_says_which_variable() -> None:
    p = OpenAIProvider("https://openrouter.ai/api/v1", "q", key_env="OPENROUTER_API_KEY")
    with pytest.raises(ProviderError, match="set OPENROUTER_API_KEY"):
        await p.load()
    await p.aclose()


async def test_unreachable_server(server: FakeServer) -> None:
    port = server.port
    server.close()
    p = OpenAIProvider(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff_s=0.01)
    with pytest.raises(ProviderError, match=r"cannot reach .* is the server running"):
        await collect(p, ask())
    await p.aclose()


def test_the_key_never_reaches_output_events_or_the_session_log(
    server: FakeServer, workspace: Path, tmp_path: Path
) -> None:

    echo = json.dumps({"error": {"message": f"invalid request from key {KEY}"}})
    models = Reply(body='{"data": [{"id": "tiny"}]}')
    server.replies += [models, logprobs_reply(("chat", -0.1)), Reply(status=400, body=echo)]
    data = tmp_path / "data"
    done = pheron(
        "run", "--json", "--provider", "openai", "--base-url", server.base_url, "--model",
        "tiny", "--workspace", str(workspace), "hi",
        env={"OPENAI_API_KEY": KEY, "XDG_DATA_HOME": str(data)},
    )  # fmt: skip
    assert done.returncode == 1
    assert "invalid request from key ***" in done.stdout
    [log] = (data / "pheron-tui" / "sessions").glob("*.jsonl")
    for text in (done.stdout, done.stderr, log.read_text()):
        assert KEY not in text
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.requests)
