"""The bundled model, for real: pulled by the test command, run offline here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_cache() -> dict[str, str]:
    """The developer's real cache (the conftest isolates XDG dirs): the model lives there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHERON_", "XDG_"))}
    return env


def test_bundled_model_answers_paris_offline(tmp_path: Path, real_cache: dict[str, str]) -> None:
    env = {
        **real_cache,
        # Any attempt to reach a package index now fails at once: the run must be offline.
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_NO_INDEX": "1",
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pheron_tui",
            "run",
            "--provider",
            "mlx",
            "--model",
            "smollm2-135m",
            "--workspace",
            str(tmp_path),
            "What is the capital of France? Answer briefly.",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "Paris" in done.stdout


async def test_a_model_that_fails_to_load_is_a_clear_error(tmp_path: Path) -> None:
    from pheron_tui.core.provider import ProviderError
    from pheron_tui.providers.mlx import MLXProvider

    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    provider = MLXProvider(str(folder))
    with pytest.raises(ProviderError, match="could not load model"):
        await provider.load()
    missing = MLXProvider(str(tmp_path / "nowhere" / "x.gguf"))
    with pytest.raises(ProviderError, match="no such GGUF file"):
        await missing.load()
    await provider.aclose()
    await missing.aclose()
