"""RoPE written as FP8 (issue 51, item 1): FlashInfer's `rope_quantize_fp8` / `mla_rope_quantize_fp8`, vLLM's fp8 KV
cache. The formats are the OCP 8-bit floats: e4m3fn (bias 7, 3 mantissa bits, no infinity, NaN at S.1111.111,
largest 448) and e5m2 (bias 15, 2 mantissa bits, IEEE-like: infinities and NaNs at exponent 31, largest 57344);
out-of-range values saturate to the largest finite one, as the fused kernels clamp before they cast.

The check is the engine's (pe/check/fp8.h, also `pe-suite check --family rope --dtype e4m3fn|e5m2 --scale S`): the
exact RoPE divided by the scale (per tensor, or per head), rounded to nearest, ties to even, in the format. Every
element is the rounding of some value the quantizer may have met: within ε of that exact one, divided exactly or
as a float32 quantizer does (held in float32, divided by the float32 scale or multiplied by its reciprocal), ε the
rotation's own error as the engine computes it: HF's rotate_half in float32 by default
(the rope.torch_f32 contract's element budget: the angle's, frequency's and scaling's errors at the pair's angle),
or in bfloat16 / float16 (rotation_dtype: a model's RoPE before an unfused fp8 cache). Values are compared, so -0
and +0 agree. The pass-through channels are quantized only. A failing array is matched against the other readings:
a 16-bit rotation before the quantization (correct for an unfused engine: stated so), the scale applied twice,
multiplied instead of divided, or not at all, the other format. This module reads torch's float8 tensors and uint8 arrays,
and keeps the formats' tables for tests and callers (fp8_values, quantize)."""
import numpy as np

from . import _native
from ._keywords import checked
from ._verdict import Verdict

_check_rope_fp8 = checked(_native._check_rope_fp8)
FORMATS = ("e4m3fn", "e5m2")


def fp8_values(fmt):
    """The 256 codes' values (float64; NaN where the code is NaN, ±inf for e5m2's infinities)."""
    exp_bits, man_bits, bias = (4, 3, 7) if fmt == "e4m3fn" else (5, 2, 15)
    out = np.empty(256)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e, m = (code >> man_bits) & ((1 << exp_bits) - 1), code & ((1 << man_bits) - 1)
        if fmt == "e4m3fn" and e == 15 and m == 7:
            out[code] = np.nan
        elif fmt == "e5m2" and e == 31:
            out[code] = sign * np.inf if m == 0 else np.nan
        elif e == 0:
            out[code] = sign * m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            out[code] = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
    return out


def _positive(fmt):
    """The non-negative finite values, ascending, with their codes."""
    v = fp8_values(fmt)
    codes = [c for c in range(128) if np.isfinite(v[c])]
    return v[codes], np.array(codes)


def quantize(values, fmt):
    """Round-to-nearest-even into the format, saturating: codes (uint8) of float64 values."""
    grid, codes = _positive(fmt)
    a = np.abs(np.asarray(values, dtype=np.float64))
    i = np.clip(np.searchsorted(grid, a), 1, len(grid) - 1)
    lo, hi = grid[i - 1], grid[i]
    up = (a - lo > hi - a) | ((a - lo == hi - a) & (codes[i - 1] % 2 == 1))
    pick = np.where(a >= grid[-1], len(grid) - 1, np.where(up, i, i - 1))
    out = codes[pick].astype(np.uint8)
    out = np.where(np.signbit(values) & (grid[pick] > 0), out | 0x80, out).astype(np.uint8)
    return np.where(np.isnan(values), 0x7F, out).astype(np.uint8)


class Fp8Report(Verdict):
    """check_rope_fp8's verdict: `.passed`, `.wrong` (elements neither the value nor an allowed neighbour),
    `.neighbours` (elements accepted as the neighbour near a boundary), `.first` (the first wrong: token, head,
    channel, code, expected code), `.diagnosis`, the text."""

    def __init__(self, passed, wrong, neighbours, first, diagnosis, text):
        self.passed, self.wrong, self.neighbours, self.first = passed, wrong, neighbours, first
        self.diagnosis, self.text = diagnosis, text


def _bits(y):
    if hasattr(y, "detach"):
        t = y.detach().cpu()
        if "float8" in str(t.dtype):
            import torch
            return t.view(torch.uint8).numpy(), str(t.dtype).replace("torch.float8_", "")
        return t.numpy(), None
    return np.asarray(y), None


def check_rope_fp8(x, y, positions, *, scale=1.0, fmt=None, rotation_dtype=None, **rope_keywords):
    """Check an FP8 RoPE output (module docstring): x [tokens, heads, head_dim] before the rotation; y the same
    shape as FP8 codes (uint8, or a torch float8 tensor, whose type names the format); scale: the quantization
    scale, a number or one per head (y = RN(rope(x) / scale)); fmt: "e4m3fn" or "e5m2" (required with uint8);
    rotation_dtype: the type the engine rotated in before quantizing ("float32", the default: a fused kernel;
    "bfloat16" or "float16": an unfused RoPE in the model's type, then an fp8 cache).
    Every other keyword is reference_rope's (base, layout, rotary_dim, scaling, hf_config, ...). Returns an
    Fp8Report."""
    if "heads_first" in rope_keywords:
        raise ValueError("heads_first: not with check_rope_fp8 (x and y are [tokens, heads, head_dim])")
    codes, from_type = _bits(y)
    if from_type is not None and fmt is not None and fmt != from_type:
        raise ValueError(f"fmt: {fmt!r} given, but y is a float8_{from_type} tensor")
    fmt = fmt or from_type
    if fmt not in FORMATS:
        raise ValueError(f"fmt: expected one of {', '.join(FORMATS)} (uint8 codes do not say which); got {fmt!r}")
    if codes.dtype != np.uint8:
        raise TypeError(f"y: expected FP8 codes as uint8 or a torch float8 tensor, got {codes.dtype}")
    # x is read where it lies in its own type where that is a float type the check reads (a CPU tensor or array;
    # a CUDA one is brought to the host); anything else (integers, bools, longdouble, lists) as float64.
    xd = x.detach().cpu() if hasattr(x, "detach") else np.asarray(x)
    if str(xd.dtype).replace("torch.", "") not in ("float16", "bfloat16", "float32", "float64"):
        xd = xd.double() if hasattr(xd, "double") else np.asarray(xd, dtype=np.float64)
    if xd.ndim != 3:
        raise ValueError(f"x: expected [tokens, heads, head_dim], got shape {tuple(xd.shape)}")
    if codes.shape != tuple(xd.shape):
        raise ValueError(f"y: expected x's shape {tuple(xd.shape)}, got {codes.shape}")
    pos = np.asarray(positions.cpu() if hasattr(positions, "cpu") else positions, dtype=np.int64)
    given = np.asarray(scale.cpu() if hasattr(scale, "cpu") else scale, dtype=np.float64).reshape(-1)
    report = _check_rope_fp8(xd, np.ascontiguousarray(codes), pos, scale=given.tolist(), fmt=fmt,
                             rotation_dtype=rotation_dtype, **rope_keywords)
    doc = report.to_dict()
    worst = doc.get("worst") or [None]
    first = worst[0] and {"token": worst[0]["row"], "head": worst[0]["head"], "channel": worst[0]["channel"],
                          "code": worst[0]["code"], "expected": worst[0]["expected"]}
    return Fp8Report(report.passed, doc["violations"], doc["parameters"]["fp8"]["neighbours"], first,
                     [e["fits"] for e in doc.get("explanations") or []], report.text)
