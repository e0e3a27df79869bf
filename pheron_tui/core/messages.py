"""Conversation messages, tool specs, requests and the provider's stream chunks."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]
Purpose = Literal["classify", "chat", "plan", "critic", "compact"]
Intent = Literal["chat", "task"]


class ToolCall(BaseModel):
    """One call the model asked for, with arguments already decoded."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    role: Role
    content: str = ""
    reasoning_content: str | None = None
    """The assistant's think text, kept so a re-rendered history matches what was generated."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    """For role ``tool``: the tool that produced this observation."""

    def to_chat_dict(self) -> dict[str, Any]:
        """The OpenAI / Hugging Face chat-template form of this message."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.reasoning_content:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name and self.role == "tool":
            out["name"] = self.name
        return out


class FunctionSpec(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]


class ToolSpec(BaseModel):
    """A tool in OpenAI function-calling format."""

    type: Literal["function"] = "function"
    function: FunctionSpec


class CompletionRequest(BaseModel):
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    enable_thinking: bool = False
    max_tokens: int = 1024
    purpose: Purpose = "chat"
    temperature: float = 0.0
    tool_choice: Literal["auto", "required", "none"] = "auto"
    stop: list[str] = Field(default_factory=list)
    """Generation ends before any of these (OpenAI's ``stop``); the reply holds text up to it."""
    parallel_tool_calls: bool = True
    """Whether a reply may hold several calls (OpenAI's field of that name); False asks for
    one a reply, and an engine that constrains calls holds a reply that must call to one."""


class Usage(BaseModel):
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    tokens_per_s: float = 0.0
    ttft_ms: float = 0.0
    mask_ms_per_token: float = 0.0
    """Time spent building tool-call masks per constrained token (0 when unconstrained)."""
    estimated: bool = False
    """The provider reported nothing: streamed chunks stand in for tokens, and the prompt is
    unknown (0)."""


# --- stream chunks ---------------------------------------------------------------------------
# Chunks are on the hottest path in the program (one per token), so they are frozen models
# without per-instance validation cost beyond their few fields.

_CHUNK = ConfigDict(frozen=True)


class TextChunk(BaseModel):
    """Raw text from the model; may contain think tags and tool-call markup."""

    model_config = _CHUNK
    kind: Literal["text"] = "text"
    text: str


class ReasoningChunk(BaseModel):
    """Think text a server already separated from the answer (``reasoning_content``)."""

    model_config = _CHUNK
    kind: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallChunk(BaseModel):
    """A tool call the provider parsed itself (servers, native engines)."""

    model_config = _CHUNK
    kind: Literal["tool_call"] = "tool_call"
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class UsageChunk(BaseModel):
    model_config = _CHUNK
    kind: Literal["usage"] = "usage"
    usage: Usage


class StartChunk(BaseModel):
    """Sent first when the prompt already opened a think block (Qwen3.5 style)."""

    model_config = _CHUNK
    kind: Literal["start"] = "start"
    starts_in_think: bool = False


class DoneChunk(BaseModel):
    model_config = _CHUNK
    kind: Literal["done"] = "done"
    finish_reason: str | None = None


class PromptProgressChunk(BaseModel):
    """How much of the prompt the engine has read, before the first token (llama.cpp)."""

    model_config = _CHUNK
    kind: Literal["prompt_progress"] = "prompt_progress"
    processed: int
    total: int


Chunk = (
    TextChunk
    | ReasoningChunk
    | ToolCallChunk
    | UsageChunk
    | StartChunk
    | PromptProgressChunk
    | DoneChunk
)
