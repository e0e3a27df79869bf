"""The core runs without the UI toolkit: importing it must not pull in textual or rich."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE_MODULES = [
    "pheron_tui.core.orchestrator",
    "pheron_tui.core.events",
    "pheron_tui.providers.scripted",
    "pheron_tui.core.provider",
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


def test_first_screen_path_does_not_import_mlx() -> None:
    """The TUI draws before the model loads: building the app must not import mlx."""
    code = (
        "import sys\n"
        "from pheron_tui.config import Settings\n"
        "from pheron_tui.runtime import Runtime\n"
        "from pheron_tui.ui.app import PheronApp\n"
        "runtime = Runtime.create(Settings(provider='mlx', model='bundled'), default_policy='ask')\n"
        "PheronApp(runtime)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mlx', 'mlx_lm', 'transformers')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
