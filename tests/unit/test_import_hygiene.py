"""The core runs without the UI toolkit: importing it must not pull in textual or rich."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE_MODULES = [
    "pheron_tui.core.orchestrator",
    "pheron_tui.core.events",
    "pheron_tui.providers.scripted",
    "pheron_tui.providers.base",
    "pheron_tui.tools.builtin",
    "pheron_tui.runtime",
    "pheron_tui.headless",
]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_import_textual_or_rich(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
