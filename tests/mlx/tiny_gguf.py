"""A tiny qwen2 GGUF written by the tests: random weights in the block formats a Q4_K_M release
mixes (Q4_K, Q6_K, Q5_0, Q8_0) and the older ones (Q4_0, Q4_1), a byte-level vocabulary with
Qwen's pre-tokenizer name, control tokens and a user-defined <tool_call>. Small enough for
llama.cpp and MLX to run in well under a second, real enough that both must read every tensor
the same way to agree."""

from __future__ import annotations

from pathlib import Path

import numpy as np

HIDDEN = 256  # K-quant blocks hold 256 values: rows must be a multiple of that
HEADS, KV_HEADS, LAYERS, FFN = 4, 2, 2, 512
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
USER_DEFINED = ["<tool_call>"]
MERGES = ["Ġ t", "h e", "Ġt he"]

# The format of each weight: enough of each kind that every decoder is exercised.
FORMATS = {
    "token_embd": "Q4_K",
    "output": "Q6_K",
    "attn_q": "Q4_K",
    "attn_k": "Q4_0",
    "attn_v": "Q6_K",
    "attn_output": "Q4_1",
    "ffn_gate": "Q8_0",
    "ffn_up": "Q5_0",
    "ffn_down": "Q6_K",
}


def _byte_tokens() -> list[str]:
    """GPT-2's byte-to-character table: the 256 base tokens of a byte-level BPE."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def _blocks(kind: str, rows: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """Raw blocks for a ``rows × columns`` weight, scales chosen so values stay below ~0.5."""
    from gguf import GGMLQuantizationType
    from gguf.quants import quantize

    qtype = GGMLQuantizationType[kind]
    if kind in ("Q4_0", "Q4_1", "Q5_0", "Q8_0"):  # gguf can quantise these itself
        return quantize(rng.normal(0, 0.08, (rows, columns)).astype(np.float32), qtype)
    n = rows * columns // 256
    if kind == "Q4_K":  # d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
        raw = rng.integers(0, 256, (n, 144), dtype=np.uint8)
        raw[:, 0:2] = rng.uniform(1e-4, 5e-4, (n, 1)).astype(np.float16).view(np.uint8)
        raw[:, 2:4] = rng.uniform(0, 5e-4, (n, 1)).astype(np.float16).view(np.uint8)
    else:  # Q6_K: 128 + 64 bytes of 6-bit values, 16 int8 scales, d
        raw = rng.integers(0, 256, (n, 210), dtype=np.uint8)
        raw[:, 192:208] = rng.integers(-16, 17, (n, 16), dtype=np.int8).view(np.uint8)
        raw[:, 208:210] = rng.uniform(5e-4, 1e-3, (n, 1)).astype(np.float16).view(np.uint8)
    return raw.reshape(rows, -1)


def write_tiny_qwen2(path: Path, seed: int = 0) -> Path:
    from gguf import GGMLQuantizationType, GGUFWriter, TokenType

    rng = np.random.default_rng(seed)
    tokens = [*_byte_tokens(), "Ġt", "he", "Ġthe", *SPECIALS, *USER_DEFINED]
    types = [TokenType.NORMAL] * (len(tokens) - len(SPECIALS) - len(USER_DEFINED))
    types += [TokenType.CONTROL] * len(SPECIALS) + [TokenType.USER_DEFINED] * len(USER_DEFINED)
    vocab = len(tokens)
    head_dim = HIDDEN // HEADS

    writer = GGUFWriter(str(path), "qwen2")
    writer.add_context_length(512)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(15)  # Q4_K_M, as the real releases say
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(MERGES)
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_add_bos_token(False)

    def weight(name: str, kind: str, rows: int, columns: int) -> None:
        writer.add_tensor(
            name,
            _blocks(kind, rows, columns, rng),  # (rows, bytes per row): gguf works out the shape
            raw_dtype=GGMLQuantizationType[kind],
        )

    def vector(name: str, size: int, mean: float = 0.0) -> None:
        writer.add_tensor(name, (mean + rng.normal(0, 0.05, size)).astype(np.float32))

    weight("token_embd.weight", FORMATS["token_embd"], vocab, HIDDEN)
    weight("output.weight", FORMATS["output"], vocab, HIDDEN)
    vector("output_norm.weight", HIDDEN, 1.0)
    shapes = {
        "attn_q": (HIDDEN, HIDDEN),
        "attn_k": (KV_HEADS * head_dim, HIDDEN),
        "attn_v": (KV_HEADS * head_dim, HIDDEN),
        "attn_output": (HIDDEN, HIDDEN),
        "ffn_gate": (FFN, HIDDEN),
        "ffn_up": (FFN, HIDDEN),
        "ffn_down": (HIDDEN, FFN),
    }
    for layer in range(LAYERS):
        vector(f"blk.{layer}.attn_norm.weight", HIDDEN, 1.0)
        vector(f"blk.{layer}.ffn_norm.weight", HIDDEN, 1.0)
        for part, (rows, columns) in shapes.items():
            weight(f"blk.{layer}.{part}.weight", FORMATS[part], rows, columns)
        for part in ("attn_q", "attn_k", "attn_v"):  # qwen2's attention has biases
            vector(f"blk.{layer}.{part}.bias", shapes[part][0])

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
