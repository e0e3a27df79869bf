"""Qwen3.5 style: XML calls with schema-typed values, a prompt that opens <think>, and a
cache that cannot be trimmed (hybrid DeltaNet), on a tiny model with forced replies."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_tiny_qwen3 import of, run_task
from .tiny_models import build_qwen35_style

pytestmark = pytest.mark.slow

XML_LIST = (
    "<tool_call>\n<function=list_dir>\n<parameter=path>\n.\n</parameter>\n</function>\n</tool_call>"
)
XML_READ = (
    "<tool_call>\n<function=read_file>\n<parameter=path>\nnotes.md\n</parameter>\n"
    "<parameter=limit>\n1\n</parameter>\n</function>\n</tool_call>"
)


@pytest.fixture(scope="module")
def tiny35(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qwen35_style(tmp_path_factory.mktemp("models") / "qwen35-tiny")


async def test_xml_calls_prompt_opened_thinking_and_cache_reuse(
    tiny35: Path, workspace: Path
) -> None:
    # The prompt already holds "<think>\n": replies start inside the think block.
    plans = [
        f"I will list the folder.\n</think>\n\n{XML_LIST}",
        f"Now the notes.\n</think>\n\n{XML_READ}",
        "Done.\n</think>\n\nThe notes start with a heading.",
    ]
    result, events, provider = await run_task(tiny35, workspace, plans, ["Fine."])
    assert provider.native_tools
    assert result.status == "finished", result.reason
    assert result.answer == "The notes start with a heading."
    think = "".join(e.text for e in of(events, "ThinkDelta") if e.phase == "plan")
    assert "I will list the folder." in think and "Now the notes." in think
    shown = "".join(e.text for e in of(events, "AnswerDelta"))
    assert "I will list" not in shown and "<function=" not in shown
    read = next(p for p in of(events, "ToolCallProposed") if p.tool == "read_file")
    assert read.arguments == {"path": "notes.md", "limit": 1}  # "1" typed as an integer
    finished = of(events, "ToolCallFinished")
    assert all(f.ok for f in finished) and "# Notes" in finished[1].observation
    plan_usage = [u for u in of(events, "Usage") if u.purpose == "plan"]
    for usage in plan_usage[1:]:
        assert usage.cached_tokens / usage.prompt_tokens >= 0.9, usage
