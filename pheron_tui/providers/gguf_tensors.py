"""GGUF tensors as MLX arrays, quantised ones kept quantised.

MLX's affine quantisation stores ``scale * q + bias`` per group of 32 (or more) values, which is
exactly the form of GGUF's Q4_0, Q4_1, Q8_0 and Q4_K blocks: those are repacked bit for bit, no
rounding. Every other block format (Q6_K, Q5_0, Q5_K, Q3_K, …) is dequantised by ``gguf`` (the
reader llama.cpp ships) and requantised to MLX 8-bit, which is finer than any of them, so the
imported model computes what llama.cpp computes up to float rounding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import mlx.core as mx
    from gguf import ReaderTensor

GROUP_SIZE = 32
REQUANTISED_BITS = 8

_F16 = np.float16


class UnsupportedTensor(ValueError):
    """A tensor in a block format ``gguf`` cannot dequantise."""


def _halves(blocks: np.ndarray, start: int) -> np.ndarray:
    """The float16 at byte ``start`` of every block, as float32 (one column)."""
    return blocks[:, start : start + 2].copy().view(_F16).astype(np.float32)


def _nibbles_low_then_high(qs: np.ndarray) -> np.ndarray:
    """Q4_0 / Q4_1 order: the 16 low nibbles are values 0–15, the high ones 16–31."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def _q4_0(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = _halves(blocks, 0)
    return _nibbles_low_then_high(blocks[:, 2:]), d, -8 * d


def _q4_1(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _nibbles_low_then_high(blocks[:, 4:]), _halves(blocks, 0), _halves(blocks, 2)


def _q8_0(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = _halves(blocks, 0)
    signed = blocks[:, 2:].copy().view(np.int8).astype(np.int16)
    return (signed + 128).astype(np.uint8), d, -128 * d


def _q4_k(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """256 values per block in 8 groups of 32, each ``d·sc·q − dmin·m`` with 6-bit sc and m."""
    from gguf.quants import Q4_K

    n = blocks.shape[0]
    d, dmin = _halves(blocks, 0), _halves(blocks, 2)
    sc, m = Q4_K.get_scale_min(blocks[:, 4:16])
    # Each 32 bytes hold two groups: the low nibbles, then the high ones.
    qs = blocks[:, 16:].reshape(n, 4, 1, 32) >> np.array([0, 4], np.uint8).reshape(1, 1, 2, 1)
    q = (qs & 0x0F).reshape(n * 8, 32)
    scale = (d * sc.astype(np.float32)).reshape(-1, 1)
    bias = (-dmin * m.astype(np.float32)).reshape(-1, 1)
    return q, scale, bias


# block format name -> (bits, block bytes, decoder to (q per group of 32, scale, bias))
_EXACT = {
    "Q4_0": (4, 18, _q4_0),
    "Q4_1": (4, 20, _q4_1),
    "Q8_0": (8, 34, _q8_0),
    "Q4_K": (4, 144, _q4_k),
}


def _pack(q: np.ndarray, bits: int) -> np.ndarray:
    """MLX's packing: ``32 // bits`` values per uint32, the first in the lowest bits."""
    per_word = 32 // bits
    words = q.reshape(q.shape[0], -1, per_word).astype(np.uint32)
    shifts = (np.arange(per_word, dtype=np.uint32) * bits).reshape(1, 1, -1)
    return np.bitwise_or.reduce(words << shifts, axis=-1)


def tensor_arrays(tensor: ReaderTensor) -> dict[str, mx.array]:
    """``{"weight": …}`` for a float tensor; ``{"weight", "scales", "biases"}`` (MLX's quantised
    layout, rows of the GGUF's first dimension) for a quantised one."""
    import mlx.core as mx
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize

    kind = GGMLQuantizationType(tensor.tensor_type)
    shape = tuple(int(n) for n in reversed(tensor.shape))
    data = np.asarray(tensor.data)
    if kind in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
        return {"weight": mx.array(data.reshape(shape))}
    if kind == GGMLQuantizationType.BF16:
        return {"weight": mx.array(dequantize(data, kind).reshape(shape))}
    rows, columns = int(np.prod(shape[:-1])), shape[-1]
    if kind.name in _EXACT:
        bits, block_bytes, decode = _EXACT[kind.name]
        q, scale, bias = decode(data.reshape(-1, block_bytes))
        return {
            "weight": mx.array(_pack(q.reshape(rows, columns), bits)),
            "scales": mx.array(scale.reshape(rows, -1).astype(_F16)),
            "biases": mx.array(bias.reshape(rows, -1).astype(_F16)),
        }
    try:
        values = dequantize(data, kind)
    except NotImplementedError:
        raise UnsupportedTensor(f"{tensor.name} is in block format {kind.name}") from None
    weight, scales, biases = mx.quantize(
        mx.array(values.reshape(rows, columns)), group_size=GROUP_SIZE, bits=REQUANTISED_BITS
    )
    return {
        "weight": weight,
        "scales": scales.astype(mx.float16),
        "biases": biases.astype(mx.float16),
    }


def metadata(reader: Any) -> dict[str, Any]:
    """The GGUF's key/value metadata as plain Python values."""
    return {name: field.contents() for name, field in reader.fields.items()}
