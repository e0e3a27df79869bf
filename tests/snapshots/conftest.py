from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def workspace() -> Iterator[Path]:
    """The same files as the suite's workspace, at a path of fixed length: the scripted
    provider's token counts (shown in the status bar) depend on the prompt, which names the
    workspace, and pytest's numbered temporary folders grow a digit now and then."""
    ws = Path(tempfile.gettempdir()) / "pheron-snapshots" / "ws"
    shutil.rmtree(ws.parent, ignore_errors=True)
    ws.mkdir(parents=True)
    (ws / "notes.md").write_text("# Notes\nbuy milk\n")
    (ws / "main.py").write_text("print('hello')\n")
    yield ws
    shutil.rmtree(ws.parent, ignore_errors=True)


class _StoppedClock:
    """Calls take 0.0 s on screen: a loaded machine would show 0.1 s and fail the picture."""

    @staticmethod
    def perf_counter() -> float:
        return 0.0


@pytest.fixture(autouse=True)
def stopped_call_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pheron_tui.core.execution.time", _StoppedClock)


@pytest.fixture(autouse=True)
def stopped_status_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The status bar's spinner and seconds stand still: pictures must not depend on timing."""
    from pheron_tui.ui.widgets.status import StatusBar

    monkeypatch.setattr(StatusBar, "clock", staticmethod(lambda: 0.0))
