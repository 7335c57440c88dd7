#!/usr/bin/env python3
"""`pe-suite check --no-rope` and `--attn-temperature` against q built here with numpy from the
published definitions, not from pe-suite's code:

  NoPE layer         Llama-4 (every 4th layer), SmolLM3, Cohere2: q leaves the layer unrotated
  llama4 temperature HF Llama4TextAttention: t(p) = 1 + attn_scale*ln(floor((p + 1)/floor_scale) + 1)
  mistral            HF Ministral3Attention: t(p) = 1 + beta*ln(1 + floor(p/original_max_position))
  RoPE               HF rotate_half (half-split) and GPT-J (interleaved), inv_freq = base^(-2i/d)

Correct data must pass under the default budget; each mistake must fail with the mistake named on the
diagnosis line: a NoPE layer rotated anyway (TensorRT-LLM PR #3382) with its base and rotary dim, the
temperature read one position off (the llama4 and mistral conventions swapped). Bad flags exit 2
naming the flag.

    nope_temperature_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import json
import subprocess

import numpy as np
from cli_cases import finish, judge, judge_bad, report, rope_check, setup
import hf_rope

PE, WORK, RNG = setup(20261214)


def llama4_t(p, attn_scale=0.1, floor_scale=8192):
    return 1.0 + attn_scale * np.log(np.floor((p + 1.0) / floor_scale) + 1.0)


def mistral_t(p, beta=0.1, original_max_position=16384):
    return 1.0 + beta * np.log(1.0 + np.floor(p / original_max_position))


def rope(x, positions, base, rotary_dim, interleaved=False):
    """x [T, H, D] rotated in its first rotary_dim channels, in float64 (hf_rope.py)."""
    return hf_rope.rope(x, positions, hf_rope.default_inv_freq(base, rotary_dim), rotary_dim, interleaved=interleaved)


def run_check(name, x, y, positions, args, expect_pass, expect_words=()):
    judge(name, rope_check(PE, WORK, name, x, y, positions) + args, expect_pass, expect_words)


T, H, D = 48, 2, 128
x = RNG.standard_normal((T, H, D))

# --- NoPE layers ---------------------------------------------------------------------------------
pos = np.arange(100, 100 + T)
run_check("nope_identity", x, x, pos, ["--no-rope"], True)
# A fused kernel that rounds once more: not bit for bit, within a budget given by the caller.
ulp_off = np.nextafter(x.astype(np.float32), np.float32(np.inf))
run_check("nope_one_ulp_bitwise", x, ulp_off, pos, ["--no-rope"], False)
run_check("nope_one_ulp_fused", x, ulp_off, pos, ["--no-rope", "--max-abs", "1e-5"], True)
# TensorRT-LLM PR #3382: a NoPE layer rotated anyway, here with Llama-4's base on half the head.
run_check("nope_rotated_llama4_base", x, rope(x, pos, 5e5, D // 2), pos, ["--no-rope"], False,
          ["rotated a NoPE layer", "base 500000", "rotary dim 64", "layout halfsplit"])
run_check("nope_rotated_gptj", x, rope(x, pos, 1e4, D, interleaved=True), pos, ["--no-rope"], False,
          ["rotated a NoPE layer", "base 10000", "rotary dim 128", "layout interleaved"])

# --- Attention temperature -----------------------------------------------------------------------
# Small floor scales put many steps among few positions; the defaults' first step is at p = 8191.
F = 4
pos = np.arange(0, T)
small = ["--attn-temperature", "llama4", "--floor-scale", str(F)]
run_check("llama4_nope", x, llama4_t(pos, 0.1, F)[:, None, None] * x, pos, ["--no-rope"] + small, True)
# HF's arithmetic: the gain in float32, the product in float32 (the budget's error model).
p32 = pos.astype(np.float32)
t32 = (np.log(np.floor((p32 + np.float32(1)) / np.float32(F)) + np.float32(1)) * np.float32(0.1)
       + np.float32(1)).astype(np.float32)
run_check("llama4_nope_hf_float32", x, (x.astype(np.float32) * t32[:, None, None]).astype(np.float32), pos,
          ["--no-rope"] + small, True)
far = np.arange(8191 - T // 2, 8191 + T // 2)
run_check("llama4_nope_defaults", x, llama4_t(far)[:, None, None] * x, far,
          ["--no-rope", "--attn-temperature", "llama4"], True)
run_check("llama4_forgotten", x, x, far, ["--no-rope", "--attn-temperature", "llama4"], False,
          ["no attention temperature"])
L = 4
mistral = ["--attn-temperature", "mistral", "--beta", "0.1", "--original-max-position", str(L)]
y_mistral = mistral_t(pos, 0.1, L)[:, None, None] * rope(x, pos, 1e6, D)
run_check("mistral_rope", x, y_mistral, pos, ["--base", "1e6"] + mistral, True)
# One position off: mistral's floor(p/L) checked as llama4's floor((p + 1)/F), and the reverse.
run_check("mistral_data_as_llama4", x, mistral_t(pos, 0.1, L)[:, None, None] * x, pos, ["--no-rope"] + small,
          False, ["position convention off by one", "Mistral's floor(p/L) convention"])
run_check("llama4_data_as_mistral", x, llama4_t(pos, 0.1, F)[:, None, None] * rope(x, pos, 1e6, D), pos,
          ["--base", "1e6"] + mistral, False, ["position convention off by one", "Llama-4's floor((p + 1)/F)"])

# --- export: the temperature per position, and golden q that check accepts -----------------------
t_out = WORK / "table.npy"
r = subprocess.run([PE, "export", "--family", "rope", "--dim", "64", "--positions", f"0:{T}", "--reference",
                    "--out", str(t_out)] + small, capture_output=True, text=True)
t_file = WORK / "table.temperature.npy"
ok = r.returncode == 0 and t_file.exists()
if ok:
    got = np.load(t_file).astype(np.float64)
    exact = llama4_t(pos, 0.1, F)
    # Correctly rounded float32: within half an ulp of the exact value, plus float64's own error here.
    half_ulp = np.spacing(exact.astype(np.float32)).astype(np.float64) / 2
    ok = got.shape == (T,) and bool(np.all(np.abs(got - exact) <= half_ulp + 4 * 2.0**-53 * exact))
    meta = json.loads((WORK / "table.npy.json").read_text())
    ok = ok and meta["attn_temperature"]["type"] == "llama4" and meta["attn_temperature"]["floor_scale"] == F
report("export_temperature", ok, f"exit {r.returncode}", r.stdout + r.stderr)

np.save(WORK / "q.npy", x.astype(np.float32))
g_out = WORK / "golden.npy"
r = subprocess.run([PE, "export", "--family", "rope", "--dim", "0", "--positions", f"0:{T}", "--reference",
                    "--base", "1e6", "--input", str(WORK / "q.npy"), "--out", str(g_out)] + mistral,
                   capture_output=True, text=True)
if report("export_golden", r.returncode == 0, detail=r.stdout + r.stderr):
    run_check("export_golden_roundtrip", x, np.load(g_out), pos, ["--base", "1e6"] + mistral, True)


# --- Bad flags: exit 2 naming the flag ----------------------------------------------------------
def run_bad(name, args, words):
    xf = WORK / "nope_identity_x.npy"
    judge_bad(name, [PE, "check", "--family", "rope", "--input", str(xf), "--output", str(xf), "--positions",
                     f"0:{T}"] + args, words)


run_bad("unknown_type", ["--attn-temperature", "llama5"], ["--attn-temperature", "llama5"])
run_bad("floor_scale_zero", ["--attn-temperature", "llama4", "--floor-scale", "0"], ["--floor-scale", "got 0"])
run_bad("attn_scale_negative", ["--attn-temperature", "llama4", "--attn-scale", "-0.5"],
        ["--attn-scale", "got -0.5"])
run_bad("beta_nan", mistral[:2] + ["--beta", "nan", "--original-max-position", "4"], ["--beta", "got nan"])
run_bad("mistral_without_l", ["--attn-temperature", "mistral"], ["--original-max-position", "required"])
run_bad("mistral_l_zero", ["--attn-temperature", "mistral", "--original-max-position", "0"],
        ["--original-max-position", "got 0"])
run_bad("beta_with_llama4", ["--attn-temperature", "llama4", "--beta", "0.2"], ["--beta", "llama4"])
run_bad("scale_without_type", ["--attn-scale", "0.2"], ["--attn-scale", "--attn-temperature"])
run_bad("nope_rotary_dim", ["--no-rope", "--rotary-dim", "64"], ["--rotary-dim"])
run_bad("nope_contract", ["--no-rope", "--contract", "rope.scalar_f32"], ["--contract"])
run_bad("nope_scaling", ["--no-rope", "--scaling", "linear", "--factor", "2"], ["--scaling"])
sin_table = WORK / "sin.npy"
np.save(sin_table, np.zeros((4, 8), dtype=np.float32))
for name, flag in [("nope_sinusoidal", ["--no-rope"]), ("temperature_sinusoidal", ["--attn-temperature", "llama4"])]:
    r = subprocess.run([PE, "check", "--family", "sinusoidal", str(sin_table), "--positions", "0:4"] + flag,
                       capture_output=True, text=True)
    report(name, r.returncode == 2 and flag[0] in r.stderr, f"exit {r.returncode}: {r.stderr.strip()}")

finish("nope_temperature_test")
