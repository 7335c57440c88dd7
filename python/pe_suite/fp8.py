"""RoPE written as FP8 (issue 51, item 1): FlashInfer's `rope_quantize_fp8` / `mla_rope_quantize_fp8`, vLLM's fp8 KV
cache. The formats are the OCP 8-bit floats: e4m3fn (bias 7, 3 mantissa bits, no infinity, NaN at S.1111.111,
largest 448) and e5m2 (bias 15, 2 mantissa bits, IEEE-like: infinities and NaNs at exponent 31, largest 57344);
out-of-range values saturate to the largest finite one, as the fused kernels clamp before they cast.

The reference: the exact RoPE (reference_rope in float64, within 2^-53 relative) divided by the scale (per
tensor, or per head), rounded to nearest, ties to even, in the format. The contract: every element is the rounding
of some value within ε of that exact one, ε the rotation's own float32 error, (8 + 4·|φ|)·2^-24·(|x_a| + |x_b|)/scale
with φ = p·θ_j the pair's angle (fl(p·θ) and θ's rounding, sin and cos, the two products and the sum; |x_a| + |x_b|
bounded by twice the row's largest |x|): its correctly rounded value, or across a boundary that lies within ε.
Values are compared, so -0 and +0 agree. The pass-through channels are quantized only: their value exactly. A
failing array is matched against the mistakes fused kernels make: the rotation rounded to bfloat16 (or float16)
before the quantization, the scale applied twice, multiplied instead of divided, or not at all, the other format."""
import numpy as np

from . import _native
from ._keywords import checked
from ._verdict import Verdict, closing

_reference_rope = checked(_native.reference_rope)
_rope_cos_sin = checked(_native.rope_cos_sin)
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


def _round16(values, kind):
    if kind == "bfloat16":
        b = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
        return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    return np.asarray(values, dtype=np.float16).astype(np.float64)


def _judge(codes, exact_scaled, eps, fmt, through):
    """(ok mask, neighbour mask): each code's value is RN of some value within eps of the scaled exact one, i.e.
    lies between RN(v - eps) and RN(v + eps) (RN is monotone); a pass-through channel's is RN(v) itself. Values are
    compared, so -0 and +0 (a negative value rounded to zero keeps its sign in CUDA's and torch's casts) agree."""
    values = fp8_values(fmt)
    got = values[codes]
    want = values[quantize(exact_scaled, fmt)]
    lo = values[quantize(exact_scaled - eps, fmt)]
    hi = values[quantize(exact_scaled + eps, fmt)]
    exact_code = got == want
    near = ~exact_code & ~through & (lo <= got) & (got <= hi)
    return exact_code | near, near


def check_rope_fp8(x, y, positions, *, scale=1.0, fmt=None, **rope_keywords):
    """Check an FP8 RoPE output (module docstring): x [tokens, heads, head_dim] before the rotation; y the same
    shape as FP8 codes (uint8, or a torch float8 tensor, whose type names the format); scale: the quantization
    scale, a number or one per head (y = RN(rope(x) / scale)); fmt: "e4m3fn" or "e5m2" (required with uint8).
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
    xd = x.detach().cpu().double().numpy() if hasattr(x, "detach") else np.asarray(x, dtype=np.float64)
    if xd.ndim != 3:
        raise ValueError(f"x: expected [tokens, heads, head_dim], got shape {xd.shape}")
    if codes.shape != xd.shape:
        raise ValueError(f"y: expected x's shape {xd.shape}, got {codes.shape}")
    pos = np.asarray(positions.cpu() if hasattr(positions, "cpu") else positions, dtype=np.int64)
    exact = np.asarray(_reference_rope(xd, pos, dtype="float64", **rope_keywords), dtype=np.float64)
    given = np.asarray(scale.cpu() if hasattr(scale, "cpu") else scale, dtype=np.float64)
    if given.size not in (1, xd.shape[1]):
        raise ValueError(f"scale: expected one value or one per head ({xd.shape[1]}), got {given.size}")
    s = np.broadcast_to(given.reshape(-1, 1), (xd.shape[1], 1))
    if not (np.isfinite(s).all() and (s > 0).all()):
        raise ValueError(f"scale: expected finite values > 0, got {scale!r}")
    through = exact == xd  # a pass-through channel (or a pair at angle 0, exact either way)
    eps = _allowance(xd, pos, exact, rope_keywords) / s[None, :, :]
    ok, near = _judge(codes, exact / s[None, :, :], eps, fmt, through)
    wrong = int((~ok).sum())
    first = None
    if wrong:
        t, h, c = (int(v) for v in np.argwhere(~ok)[0])
        first = {"token": t, "head": h, "channel": c, "code": int(codes[t, h, c]),
                 "expected": int(quantize(exact[t, h, c] / s[h, 0], fmt))}
    lines = [f"FP8 RoPE: {fmt}, {xd.shape[0]} tokens x {xd.shape[1]} heads x {xd.shape[2]}, scale "
             f"{'per head' if given.size > 1 else format(float(given.reshape(-1)[0]), 'g')}",
             f"contract: RN_{fmt}(rope(x)/scale), or the rounding of a value within the float32 rotation's error "
             f"of rope(x)/scale: {int(near.sum())} element(s) so"]
    diagnosis = []
    if wrong:
        lines.append(f"{wrong} of {codes.size} elements differ; first: {first}")
        diagnosis = _diagnose(codes, exact, s, eps, fmt, through)
    text = closing(lines, wrong, diagnosis, "none of the known mistakes reproduces the codes")
    return Fp8Report(not wrong, wrong, int(near.sum()), first, diagnosis, text)


def _allowance(xd, pos, exact, keywords):
    """(8 + 4|φ|)·2^-24·(|x_a| + |x_b|) per element, φ = p·θ_c the channel's angle at the token's largest position
    (θ_c read from the exact cos and sin at position 1, attention factor aside); 8·2^-24·|x| on channels that do
    not turn."""
    d = xd.shape[-1]
    probe = np.ones((pos.shape[0], 1), dtype=np.int64) if pos.ndim == 2 else np.array([1])
    kw = {k: v for k, v in keywords.items() if k not in ("dtype",)}
    if kw.get("rotary_dim") is None and kw.get("hf_config") is None:
        kw["rotary_dim"] = d - int(kw.get("rotary_offset") or 0)  # all of the head, as reference_rope's default
    cos, sin = (np.asarray(a, dtype=np.float64)[0] for a in _rope_cos_sin(probe, dtype="float64", **kw))
    theta = np.zeros(d)
    offset = int(kw.get("rotary_offset") or 0)
    theta[offset:offset + cos.shape[0]] = np.abs(np.arctan2(sin, cos))
    p = np.abs(pos).max(axis=0) if pos.ndim == 2 else np.abs(pos)
    phi = p.astype(np.float64)[:, None, None] * theta[None, None, :]
    pair = 2 * np.abs(xd).max(axis=-1, keepdims=True)  # bounds |x_a| + |x_b| of every pair of the row
    return (8 + 4 * phi) * 2.0 ** -24 * pair


def _diagnose(codes, exact, s, eps, fmt, through):
    other = "e5m2" if fmt == "e4m3fn" else "e4m3fn"
    candidates = [("the rotation rounded to bfloat16 before the quantization", _round16(exact, "bfloat16") / s, fmt),
                  ("the rotation rounded to float16 before the quantization", _round16(exact, "float16") / s, fmt),
                  ("the scale applied twice (divided by scale²)", exact / s ** 2, fmt),
                  ("the scale multiplied instead of divided", exact * s, fmt),
                  ("no scale", exact, fmt),
                  (f"the {other} format (given: {fmt})", exact / s, other)]
    fits = []
    for words, scaled, f in candidates:
        if np.allclose(scaled, exact / s) and f == fmt:
            continue  # the candidate is the given model here (a scale of 1)
        ok, _ = _judge(codes, np.broadcast_to(scaled, exact.shape), eps, f, through)
        if ok.all():
            fits.append(words)
    return fits
