"""Running the real ``pheron-tui`` command from tests, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def pheron(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    cwd: Path | None = None,
    input_bytes: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m pheron_tui ARGS`` with the test's environment (no PHERON_* leaking in)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PHERON_")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pheron_tui", *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        env=environment,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def run_scripted(
    workspace: Path,
    replies: dict[str, Any],
    *args: str,
    prompt: str = "do it",
    script_text: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """One headless turn on the scripted provider; the events too when ``--json`` is given."""
    script = workspace.parent / "script.json"
    script.write_text(script_text if script_text is not None else json.dumps({"replies": replies}))
    done = pheron(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "--workspace",
        str(workspace),
        *args,
        prompt,
        env=env,
        timeout=timeout,
    )
    events = []
    if "--json" in args:
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done, events


def tool_call(name: str, **arguments: Any) -> str:
    """A Qwen-style native tool call, as a model would write it."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"
