"""Importing GGUF files into MLX: a qwen2 model in K-quants computes what llama.cpp computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from .tiny_gguf import FORMATS, write_tiny_qwen2

PROMPTS = [
    "<|im_start|>user\nthe theme of the 12 tests<|im_end|>\n<|im_start|>assistant\n",
    "def f(x):\n    return x * 2\n<tool_call>",
    "hello there, the world",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from pheron_tui.providers.gguf import import_gguf

    folder = tmp_path_factory.mktemp("gguf")
    gguf = write_tiny_qwen2(folder / "tiny-q4_k_m.gguf")
    return gguf, import_gguf(gguf, folder / "mlx")


def test_every_block_format_arrives_with_its_values(tiny: tuple[Path, Path]) -> None:
    """Q4_0, Q4_1, Q8_0 and Q4_K are repacked as they are (float16 scales the only rounding);
    Q6_K and Q5_0 are requantised to 8 bits, finer than their own steps."""
    import mlx.core as mx
    from gguf import GGUFReader
    from gguf.quants import dequantize

    from pheron_tui.providers.gguf import mlx_name

    gguf, folder = tiny
    weights = mx.load(str(folder / "model.safetensors"))
    assert isinstance(weights, dict)
    checked = set()
    for tensor in GGUFReader(str(gguf)).tensors:
        if not tensor.name.startswith(("blk.0.", "token_embd", "output.")):
            continue
        if tensor.name.endswith((".bias", "norm.weight")):
            continue
        part = tensor.name.split(".")[-2] if tensor.name.startswith("blk") else tensor.name[:-7]
        kind = FORMATS[part]
        assert tensor.tensor_type.name == kind
        shape = tuple(int(n) for n in reversed(tensor.shape))
        want = dequantize(np.asarray(tensor.data), tensor.tensor_type).reshape(shape)
        stem = mlx_name(tensor.name).removesuffix(".weight")
        bits = weights[f"{stem}.weight"].shape[-1] * 32 // shape[-1]
        got = mx.dequantize(
            weights[f"{stem}.weight"],
            weights[f"{stem}.scales"],
            weights[f"{stem}.biases"],
            group_size=32,
            bits=bits,
        )
        error = float(np.abs(np.array(got.astype(mx.float32)) - want).max())
        scale = float(np.abs(want).max())
        exact = kind in ("Q4_0", "Q4_1", "Q8_0", "Q4_K")
        assert bits == (4 if kind.startswith("Q4") else 8), kind
        assert error <= (0.002 if exact else 0.01) * scale, (tensor.name, kind, error / scale)
        checked.add(kind)
    assert checked == set(FORMATS.values())


def test_imported_model_predicts_what_llamacpp_predicts(tiny: tuple[Path, Path]) -> None:
    """The next-token log-probabilities of llama.cpp's ten likeliest tokens, after prompts with
    digits, control tokens and <tool_call>, as MLX computes them from the import. A wrong rope,
    a lost bias or a misread block moves them by several units; float rounding and llama.cpp's
    8-bit activations by about a tenth."""
    xllamacpp = pytest.importorskip("xllamacpp")
    import mlx.core as mx
    from mlx_lm import load

    gguf, folder = tiny
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = 512
    server = xllamacpp.Server(params)
    model, tokenizer = load(str(folder))[:2]
    for text in PROMPTS:
        reply = server.handle_completions(
            {
                "prompt": text,
                "n_predict": 1,
                "temperature": 0,
                "logprobs": 10,
                "cache_prompt": False,
            }
        )
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert len(ids) == reply["usage"]["prompt_tokens"], text  # the same tokens read
        top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        logits = model(mx.array(ids)[None])[0, -1].astype(mx.float32)
        logprobs = np.array(logits - mx.logsumexp(logits))
        assert int(logprobs.argmax()) == top[0]["id"], text
        worst = max(abs(float(logprobs[t["id"]]) - t["logprob"]) for t in top)
        assert worst < 0.5, (text, worst)


def test_import_refuses_other_architectures(tmp_path: Path) -> None:
    import mlx.core as mx

    from pheron_tui.providers.gguf import GGUFError, import_gguf

    path = tmp_path / "gemma.gguf"
    mx.save_gguf(str(path), {"x": mx.zeros((2,))}, {"general.architecture": "gemma3"})
    with pytest.raises(GGUFError, match=r"architecture 'gemma3' is not supported.*qwen2"):
        import_gguf(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_gguf_is_a_clear_error(tmp_path: Path) -> None:
    from pheron_tui.providers.gguf import GGUFError, import_gguf

    path = tmp_path / "model.gguf"
    path.write_bytes(b"<html>404 Not Found</html>")
    with pytest.raises(GGUFError, match="could not be read as GGUF"):
        import_gguf(path, tmp_path / "out")
