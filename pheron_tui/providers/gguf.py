"""Importing a llama- or qwen2-architecture GGUF file into an MLX model folder.

mlx-lm cannot load GGUF itself. ``gguf`` (the reader llama.cpp ships) reads the file; the
tensors become MLX arrays, quantised ones staying quantised (``gguf_tensors``); this maps the
tensor names, builds ``config.json`` and the tokenizer from the GGUF metadata, and writes a
folder that ``mlx_lm.load`` loads like any other. Other architectures get a clear ``GGUFError``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pheron_tui.core.errors import PheronError

ARCHITECTURES = ("llama", "qwen2")

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

# The pre-tokenizer split llama.cpp uses for Qwen2 (``tokenizer.ggml.pre == "qwen2"``): unlike
# GPT-2's, it keeps each digit a token of its own.
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# llama.cpp's token types
_CONTROL, _USER_DEFINED = 3, 4


class GGUFError(PheronError, ValueError):
    """A GGUF file this importer cannot handle; the message says what is supported."""


def _scalar(meta: dict[str, Any], key: str) -> Any:
    if key not in meta:
        raise GGUFError(f"the GGUF metadata has no {key!r}")
    return meta[key]


def _config(meta: dict[str, Any], architecture: str, tied: bool) -> dict[str, Any]:
    def field(name: str) -> Any:
        return _scalar(meta, f"{architecture}.{name}")

    config: dict[str, Any] = {
        "model_type": architecture,
        "hidden_size": field("embedding_length"),
        "num_hidden_layers": field("block_count"),
        "intermediate_size": field("feed_forward_length"),
        "num_attention_heads": field("attention.head_count"),
        "num_key_value_heads": field("attention.head_count_kv"),
        "rms_norm_eps": float(field("attention.layer_norm_rms_epsilon")),
        "vocab_size": len(meta["tokenizer.ggml.tokens"]),
        "rope_theta": float(meta.get(f"{architecture}.rope.freq_base", 10000.0)),
        # llama.cpp's converter permutes a llama's Q and K for its rope, and the traditional
        # form undoes that; a qwen2's are stored as trained (NeoX rope).
        "rope_traditional": architecture == "llama",
        "tie_word_embeddings": tied,
        "max_position_embeddings": int(meta.get(f"{architecture}.context_length", 4096)),
        "eos_token_id": [_scalar(meta, "tokenizer.ggml.eos_token_id")],
    }
    # Any quantisation: mlx-lm reads each layer's bits and group size from its shapes.
    config["quantization"] = {"group_size": 32, "bits": 4}
    return config


def mlx_name(name: str) -> str | None:
    """The mlx-lm name of a GGUF tensor; None for one recomputed from the config."""
    parts = name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{parts[3]}"
    if parts[0] == "token_embd":
        return f"model.embed_tokens.{parts[1]}"
    if name == "output_norm.weight":
        return "model.norm.weight"
    if parts[0] == "output":
        return f"lm_head.{parts[1]}"
    if name.endswith("rope_freqs.weight"):
        return None
    raise GGUFError(f"unexpected tensor {name!r}: only plain llama and qwen2 files are supported")


def _weights(reader: Any) -> dict[str, Any]:
    from pheron_tui.providers.gguf_tensors import UnsupportedTensor, tensor_arrays

    out: dict[str, Any] = {}
    for tensor in reader.tensors:
        name = mlx_name(tensor.name)
        if name is None:
            continue
        try:
            arrays = tensor_arrays(tensor)
        except UnsupportedTensor as exc:
            raise GGUFError(f"{exc}, which this importer cannot read") from None
        stem = name.rsplit(".", 1)[0]
        out[name] = arrays.pop("weight")
        out.update({f"{stem}.{key}": value for key, value in arrays.items()})
    return out


def _pre_tokenizer(meta: dict[str, Any]) -> Any:
    from tokenizers import Regex, pre_tokenizers

    if meta.get("tokenizer.ggml.pre") == "qwen2":
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_QWEN2_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    return pre_tokenizers.ByteLevel(add_prefix_space=False)


def _write_tokenizer(meta: dict[str, Any], folder: Path) -> None:
    from tokenizers import AddedToken, Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    kind = meta.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise GGUFError(f"tokenizer model {kind!r} is not supported (only byte-level BPE, 'gpt2')")
    tokens: list[str] = list(meta["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = _pre_tokenizer(meta)
    tokenizer.decoder = decoders.ByteLevel()

    types = [int(t) for t in meta.get("tokenizer.ggml.token_type", [])]
    control = [tokens[i] for i, t in enumerate(types) if t == _CONTROL]
    # Tokens such as Qwen's <tool_call>: one token each in the text, as llama.cpp reads them.
    tokenizer.add_tokens(
        [
            AddedToken(tokens[i], special=False, normalized=False)
            for i, t in enumerate(types)
            if t == _USER_DEFINED
        ]
    )

    def token(key: str) -> str | None:
        value = meta.get(f"tokenizer.ggml.{key}_token_id")
        return tokens[int(value)] if value is not None else None

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
    from gguf import GGUFReader

    from pheron_tui.providers.gguf_tensors import metadata

    try:
        reader = GGUFReader(str(gguf))
        meta = metadata(reader)
    except (RuntimeError, ValueError, OSError, KeyError) as exc:
        raise GGUFError(f"{gguf} could not be read as GGUF: {exc}") from None
    architecture = meta.get("general.architecture")
    if architecture not in ARCHITECTURES:
        raise GGUFError(
            f"{gguf.name}: architecture {architecture!r} is not supported; the GGUF importer "
            "handles llama-architecture files (Llama, SmolLM, Mistral-style) and qwen2 ones "
            "(Qwen2, Qwen2.5). For other models use an MLX folder or a Hugging Face repo id."
        )
    weights = _weights(reader)
    tied = "lm_head.weight" not in weights

    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    mx.save_safetensors(str(staging / "model.safetensors"), weights, metadata={"format": "mlx"})
    (staging / "config.json").write_text(json.dumps(_config(meta, architecture, tied), indent=2))
    _write_tokenizer(meta, staging)
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return folder
