"""Importing a llama-architecture GGUF file into an MLX model folder.

mlx-lm cannot load GGUF itself, but ``mx.load`` reads GGUF tensors, and Q4_0, Q4_1 and Q8_0
arrive already in MLX's quantised layout. This maps the tensor names, builds ``config.json``
and the tokenizer from the GGUF metadata, and writes a folder that ``mlx_lm.load`` loads like any
other. Other architectures and K-quants get a clear ``GGUFError``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, cast

from pheron_tui.core.errors import PheronError

# llama.cpp's LLAMA_FTYPE values that map onto MLX without loss.
SUPPORTED_FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0"}
GROUP_SIZE = 32  # every supported GGUF block format uses blocks of 32

_LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}


class GGUFError(PheronError, ValueError):
    """A GGUF file this importer cannot handle; the message says what is supported."""


def _scalar(meta: dict[str, Any], key: str) -> Any:
    if key not in meta:
        raise GGUFError(f"the GGUF metadata has no {key!r}")
    value = meta[key]
    return value.item() if hasattr(value, "item") else value


def _config(meta: dict[str, Any], tied: bool, quantized: bool) -> dict[str, Any]:
    config: dict[str, Any] = {
        "model_type": "llama",
        "hidden_size": _scalar(meta, "llama.embedding_length"),
        "num_hidden_layers": _scalar(meta, "llama.block_count"),
        "intermediate_size": _scalar(meta, "llama.feed_forward_length"),
        "num_attention_heads": _scalar(meta, "llama.attention.head_count"),
        "num_key_value_heads": _scalar(meta, "llama.attention.head_count_kv"),
        "rms_norm_eps": float(_scalar(meta, "llama.attention.layer_norm_rms_epsilon")),
        "vocab_size": len(meta["tokenizer.ggml.tokens"]),
        "rope_theta": float(meta.get("llama.rope.freq_base", 10000.0)),
        # llama.cpp stores Q and K permuted for its rope; the traditional form undoes that.
        "rope_traditional": True,
        "tie_word_embeddings": tied,
        "max_position_embeddings": int(meta.get("llama.context_length", 4096)),
        "eos_token_id": [_scalar(meta, "tokenizer.ggml.eos_token_id")],
    }
    if quantized:
        # Per-layer bits (8-bit embeddings, 4-bit layers) are inferred by mlx-lm from shapes.
        config["quantization"] = {"group_size": GROUP_SIZE, "bits": 4}
    return config


def _weights(tensors: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in tensors.items():
        parts = name.split(".")
        if parts[0] == "blk" and len(parts) == 4 and parts[2] in _LAYER_NAMES:
            out[f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{parts[3]}"] = value
        elif parts[0] == "token_embd":
            out[f"model.embed_tokens.{parts[1]}"] = value
        elif name == "output_norm.weight":
            out["model.norm.weight"] = value
        elif parts[0] == "output":
            out[f"lm_head.{parts[1]}"] = value
        elif name.endswith("rope_freqs.weight"):
            continue  # recomputed from rope_theta
        else:
            raise GGUFError(
                f"unexpected tensor {name!r}: only plain llama GGUF files are supported"
            )
    return out


def _write_tokenizer(meta: dict[str, Any], folder: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    kind = meta.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise GGUFError(f"tokenizer model {kind!r} is not supported (only byte-level BPE, 'gpt2')")
    tokens: list[str] = list(meta["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()

    types = [int(t) for t in meta.get("tokenizer.ggml.token_type", [])]
    control = [tokens[i] for i, t in enumerate(types) if t == 3]  # llama.cpp: 3 = control

    def token(key: str) -> str | None:
        value = meta.get(f"tokenizer.ggml.{key}_token_id")
        return (
            tokens[int(value.item() if hasattr(value, "item") else value)]
            if value is not None
            else None
        )

    wrapper = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=token("bos"),
        eos_token=token("eos"),
        unk_token=token("unknown"),
        pad_token=token("padding"),
        additional_special_tokens=control,
    )
    template = meta.get("tokenizer.chat_template")
    if template:
        wrapper.chat_template = template
    wrapper.save_pretrained(str(folder))


def import_gguf(gguf: Path, folder: Path) -> Path:
    """Write an MLX model folder for ``gguf`` at ``folder`` (atomically); return the folder."""
    import mlx.core as mx

    try:
        loaded = mx.load(str(gguf), return_metadata=True)
        tensors, meta = cast(tuple[dict[str, Any], dict[str, Any]], loaded)
    except (RuntimeError, ValueError, OSError) as exc:
        raise GGUFError(f"{gguf} could not be read as GGUF: {exc}") from None
    architecture = meta.get("general.architecture")
    if architecture != "llama":
        raise GGUFError(
            f"{gguf.name}: architecture {architecture!r} is not supported; the GGUF importer "
            "handles llama-architecture files (Llama, SmolLM, Mistral-style) in Q4_0, Q4_1, "
            "Q8_0, F16 or F32. For other models use an MLX folder or a Hugging Face repo id."
        )
    file_type = int(_scalar(meta, "general.file_type")) if "general.file_type" in meta else 1
    if file_type not in SUPPORTED_FILE_TYPES:
        raise GGUFError(
            f"{gguf.name}: GGUF file type {file_type} (a K-quant or other format) is not "
            f"supported; use one quantised as {', '.join(SUPPORTED_FILE_TYPES.values())}"
        )
    weights = _weights(tensors)
    tied = "lm_head.weight" not in weights
    quantized = any(name.endswith(".scales") for name in weights)

    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    mx.save_safetensors(str(staging / "model.safetensors"), weights, metadata={"format": "mlx"})
    (staging / "config.json").write_text(json.dumps(_config(meta, tied, quantized), indent=2))
    _write_tokenizer(meta, staging)
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return folder
