#!/usr/bin/env python3
"""`pe-suite check --family rope --dtype e4m3fn|e5m2 --scale S` on FP8 codes (uint8 .npy), as FlashInfer's
rope_quantize_fp8 and vLLM's fp8 KV cache write them. The codes are made here from the OCP 8-bit float definition
(every finite value enumerated from its sign, exponent and mantissa; round to nearest, ties to even; saturation
at the largest finite value) applied to HF's rotate_half RoPE computed in float32 as an engine does: it passes in
both formats, per head scales aside. A bf16-rounded rotation fails, named as a bfloat16 rotation (and passes
stated with --rotation-dtype bf16: an unfused engine's path); the scale applied twice and the other format fail,
each named; bad input is refused naming the flag.

    fp8_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import numpy as np
from cli_cases import finish, judge, judge_bad, setup

PE, WORK, RNG = setup(20261206)
T, H, D, BASE, SCALE = 48, 4, 128, 500000.0, 0.5
x = RNG.standard_normal((T, H, D)).astype(np.float32)
positions = np.arange(3000, 3000 + T)


def ocp_values(exp_bits, man_bits, bias, fn):
    """The finite non-negative values of an OCP format, ascending, each with its code."""
    out = []
    for e in range(1 << exp_bits):
        for m in range(1 << man_bits):
            if (fn and e == (1 << exp_bits) - 1 and m == (1 << man_bits) - 1) or (not fn and e == (1 << exp_bits) - 1):
                continue  # e4m3fn's NaN; e5m2's infinities and NaNs
            v = (m / (1 << man_bits)) * 2.0 ** (1 - bias) if e == 0 else (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
            out.append((v, (e << man_bits) | m))
    return out


FORMATS = {"e4m3fn": ocp_values(4, 3, 7, True), "e5m2": ocp_values(5, 2, 15, False)}


def quantize(values, fmt):
    grid = FORMATS[fmt]
    vals = np.array([v for v, _ in grid])
    codes = np.array([c for _, c in grid])
    out = np.empty(values.shape, dtype=np.uint8)
    for i, v in np.ndenumerate(values):
        a = abs(float(v))
        if a >= vals[-1]:
            k = len(vals) - 1
        else:
            k = int(np.searchsorted(vals, a))
            lo = k - 1 if k > 0 else 0
            below, above = a - vals[lo], vals[k] - a
            k = lo if below < above or (below == above and codes[lo] % 2 == 0) else k
        out[i] = codes[k] | (0x80 if v < 0 and vals[k] > 0 else 0)
    return out


def rope_f32(angle_bf16=False):
    """HF's LlamaRotaryEmbedding and apply_rotary_pos_emb in float32; with angle_bf16 the result rounded to bfloat16."""
    inv = (1.0 / (BASE ** (np.arange(0, D, 2, dtype=np.int64).astype(np.float32) / D))).astype(np.float32)
    freqs = positions.astype(np.float32)[:, None] * inv[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb).astype(np.float32)[:, None], np.sin(emb).astype(np.float32)[:, None]
    rot = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], axis=-1)
    y = (x * cos + rot * sin).astype(np.float32)
    if angle_bf16:
        b = y.view(np.uint32).astype(np.uint64)
        y = (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    return y.astype(np.float64)


np.save(WORK / "x.npy", x)
np.save(WORK / "pos.npy", positions)


def command(name, codes, fmt="e4m3fn", *extra):
    np.save(WORK / f"{name}.npy", codes)
    return [PE, "check", "--family", "rope", "--input", str(WORK / "x.npy"), "--output", str(WORK / f"{name}.npy"),
            "--positions-file", str(WORK / "pos.npy"), "--base", str(BASE), "--dtype", fmt, *extra]


y = rope_f32()
for fmt in FORMATS:
    judge(f"{fmt}_passes", command(f"good_{fmt}", quantize(y / SCALE, fmt), fmt, "--scale", str(SCALE)), True)
judge("scale_1_default", command("unscaled", quantize(y, "e4m3fn")), True)
judge("bf16_rounded_rotation", command("bf16", quantize(rope_f32(True) / SCALE, "e4m3fn"), "e4m3fn", "--scale",
                                       str(SCALE)), False, "a bfloat16 rotation before the quantization")
judge("bf16_rotation_stated", command("bf16s", quantize(rope_f32(True) / SCALE, "e4m3fn"), "e4m3fn", "--scale",
                                      str(SCALE), "--rotation-dtype", "bf16"), True)
judge("scale_twice", command("twice", quantize(y / SCALE ** 2, "e4m3fn"), "e4m3fn", "--scale", str(SCALE)), False,
      "the scale applied twice")
judge("other_format", command("other", quantize(y / SCALE, "e5m2"), "e4m3fn", "--scale", str(SCALE)), False,
      "the e5m2 format (given: e4m3fn)")
judge_bad("float_output", command("floats", y.astype(np.float32)), ["--output", "uint8"])
judge_bad("scale_not_positive", command("neg", quantize(y, "e4m3fn"), "e4m3fn", "--scale", "0"), ["--scale", "> 0"])
judge_bad("contract_refused", command("c", quantize(y, "e4m3fn"), "e4m3fn", "--contract", "rope.exact"),
          ["--contract", "FP8"])
judge_bad("scale_without_fp8", [PE, "check", "--family", "rope", "--input", str(WORK / "x.npy"), "--output",
                                str(WORK / "x.npy"), "--positions-file", str(WORK / "pos.npy"), "--scale", "2"],
          ["--scale", "e4m3fn|e5m2"])
judge_bad("rotation_dtype_without_fp8", [PE, "check", "--family", "rope", "--input", str(WORK / "x.npy"), "--output",
                                        str(WORK / "x.npy"), "--positions-file", str(WORK / "pos.npy"),
                                        "--rotation-dtype", "bf16"], ["--rotation-dtype", "FP8"])
judge_bad("shape_mismatch", command("short", quantize(y[:-1], "e4m3fn")), ["--output", "x's shape"])
finish("fp8")
