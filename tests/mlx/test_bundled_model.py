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


def test_import_refuses_other_architectures(tmp_path: Path) -> None:
    import mlx.core as mx

    from pheron_tui.providers.gguf import GGUFError, import_gguf

    path = tmp_path / "qwen.gguf"
    mx.save_gguf(str(path), {"x": mx.zeros((2,))}, {"general.architecture": "qwen2"})
    with pytest.raises(GGUFError, match=r"architecture 'qwen2' is not supported.*llama"):
        import_gguf(path, tmp_path / "out")


def test_import_refuses_k_quants(tmp_path: Path) -> None:
    import mlx.core as mx

    from pheron_tui.providers.gguf import GGUFError, import_gguf

    path = tmp_path / "k.gguf"
    meta = {"general.architecture": "llama", "general.file_type": mx.array(15, dtype=mx.uint32)}
    mx.save_gguf(str(path), {"x": mx.zeros((2,))}, meta)
    with pytest.raises(GGUFError, match=r"file type 15.*Q4_0, Q4_1, Q8_0"):
        import_gguf(path, tmp_path / "out")


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
