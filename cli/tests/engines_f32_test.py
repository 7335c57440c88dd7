#!/usr/bin/env python3
"""No false alarm on real engines' float32 kernels: `pe-suite check`'s default budget accepts what every
known float32 formulation achieves, and its "contracts:" line names the accuracy class the data meets.
Each kernel is written here from its published source, in float32 step by step (numpy float32 arithmetic:
every product and sum rounded, no FMA; sin/cos of the float32 angle evaluated in float64 and rounded to
float32, as a correctly rounding libm would):

  ggml      ggml-cpu rope (ggml_rope_cache_init): theta_scale = powf(base, -2/n_dims), theta starts at p (times
            freq_scale under linear scaling) and is multiplied by theta_scale pair after pair; NORMAL pairs
            (2i, 2i+1), NEOX pairs (i, i + n_dims/2); channels past n_dims pass through
  HF        modeling_llama.py LlamaRotaryEmbedding: inv_freq = 1 / base ** (arange(0, d, 2).float() / d),
            freqs = inv_freq * position (float32), q*cos + rotate_half(q)*sin
  HF M-RoPE modeling_qwen2_vl.py / modeling_qwen3_vl.py: freqs = inv_freq @ position_ids per axis (t, h, w) in
            float32, cos/sin taken per channel chunk (apply_multimodal_rotary_pos_emb, mrope_section * 2) or
            per pair (apply_interleaved_mrope: h at pairs 1, 4, ..., w at 2, 5, ...)
  PyTorch   the tutorial's PositionalEncoding: div_term = exp(arange(0, d, 2) * (-ln 10000 / d)),
            pe[:, 0::2] = sin(position * div_term), pe[:, 1::2] = cos(...), all float32

    engines_f32_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import math
import subprocess

import numpy as np
from cli_cases import finish, judge, report, rope_check, setup
from hf_rope import (default_inv_freq_f32, dynamic_inv_freq_f32, get_mscale, llama3_inv_freq_f32, longrope_attention,
                     longrope_inv_freq_f32, mrope_f32, qwen_vl_positions, rope_f32, yarn_inv_freq_f32)

PE, WORK, RNG = setup(20261201)
F32 = np.float32


def sincos32(angle32):
    a = angle32.astype(np.float64)
    return np.sin(a).astype(F32), np.cos(a).astype(F32)


def ggml_rope(x, positions, base, n_dims, neox, freq_scale=1.0):
    """x [T, H, D] float32; ggml's recurrence for theta, float32 throughout."""
    x = x.astype(F32)
    y = x.copy()
    theta_scale = F32(np.power(F32(base), F32(-2.0) / F32(n_dims), dtype=F32))
    for t, p in enumerate(positions):
        theta = F32(p)
        for i0 in range(0, n_dims, 2):
            s, c = sincos32(np.array([F32(F32(freq_scale) * theta)], dtype=F32))
            s, c = s[0], c[0]
            a, b = (i0 // 2, i0 // 2 + n_dims // 2) if neox else (i0, i0 + 1)
            x0, x1 = x[t, :, a], x[t, :, b]
            y[t, :, a] = x0 * c - x1 * s
            y[t, :, b] = x0 * s + x1 * c
            theta = F32(theta * theta_scale)
    return y


def torch_tutorial_table(positions, d):
    div_term = np.exp(np.arange(0, d, 2).astype(F32) * F32(-math.log(10000.0) / d), dtype=F32)
    angle = np.asarray(positions, dtype=F32)[:, None] * div_term[None, :]
    s, c = sincos32(angle.astype(F32))
    pe = np.empty((len(positions), d), dtype=F32)
    pe[:, 0::2], pe[:, 1::2] = s, c
    return pe


def check(name, args, expect_pass, words=()):
    """A check that must pass (or fail) with every word on its "contracts:" (or pass-through) lines."""
    r = subprocess.run([PE, "check"] + args, capture_output=True, text=True)
    out = r.stdout + r.stderr
    lines = [line for line in out.splitlines() if line.startswith(("contracts:", "pass-through:"))]
    ok = r.returncode == (0 if expect_pass else 1) and all(any(w in line for line in lines) for w in words)
    verdict = next((line for line in out.splitlines() if line.startswith("verdict:")), "(no verdict)")
    report(name, ok, f"exit {r.returncode}; {verdict}\n       " + "\n       ".join(lines), out[-3000:])


def rope_case(name, x, y, positions, args, expect_pass, words=()):
    check(name, rope_check(PE, WORK, name, x, y, positions)[2:] + args, expect_pass, words)


T, H, D = 32, 2, 128
x = RNG.standard_normal((T, H, D)).astype(F32)
near, far = list(range(0, T)), list(range(1_000_000 - T, 1_000_000))
for neox, layout in ((True, "halfsplit"), (False, "interleaved")):
    for pos, where in ((near, "0"), (far, "1e6")):
        tag = f"ggml_{'neox' if neox else 'normal'}_{where}"
        rope_case(tag, x, ggml_rope(x, pos, 10000.0, D, neox), pos, ["--layout", layout], True, ["rope.ggml_f32"])
        rope_case(tag + "_linear4", x, ggml_rope(x, pos, 10000.0, D, neox, 0.25), pos,
                  ["--layout", layout, "--scaling", "linear", "--factor", "4"], True, ["meets"])
    rope_case(f"ggml_{layout}_partial", x, ggml_rope(x, far, 5e5, 64, neox), far,
              ["--layout", layout, "--rotary-dim", "64", "--base", "5e5"], True)
# ggml's recurrence is a looser accuracy class than one pow per pair: named, and refused when asked for.
rope_case("ggml_neox_as_scalar_f32", x, ggml_rope(x, near, 10000.0, D, True), near,
          ["--contract", "rope.scalar_f32"], False, ["misses", "rope.scalar_f32"])
for pos, where in ((near, "0"), (list(range(4064, 4096)), "4k"), (far, "1e6")):
    rope_case(f"hf_llama_{where}", x, rope_f32(x, pos, default_inv_freq_f32(5e5, D)), pos, ["--base", "5e5"], True,
              ["meets"])

# Every scaling method as HF computes it in float32 (hf_rope.py's *_f32), near 0 and near 10^6; ggml's YaRN
# (ggml-cpu rope_yarn: theta_interp = freq_scale * theta_extrap, blended by rope_yarn_ramp over
# ggml_rope_yarn_corr_dims, mscale 1 + 0.1 ln(1/freq_scale)); packed positions that restart per sequence.
scaled = (("llama3", llama3_inv_freq_f32(5e5, D, 8.0, 8192), 1.0,
           ["--base", "5e5", "--scaling", "llama3", "--factor", "8", "--original-max-position", "8192"]),
          ("yarn", yarn_inv_freq_f32(1e6, D, 4.0, 32768), get_mscale(4.0),
           ["--base", "1e6", "--scaling", "yarn", "--factor", "4", "--original-max-position", "32768"]),
          ("longrope", longrope_inv_freq_f32(1e4, D, np.linspace(1, 40, D // 2)), longrope_attention(32.0, 4096),
           ["--scaling", "longrope", "--factor", "32", "--original-max-position", "4096", "--seq-len", "1000000",
            "--short-factors", str(WORK / "short.npy"), "--long-factors", str(WORK / "long.npy")]),
          ("dynamic", dynamic_inv_freq_f32(1e4, D, 2.0, 4096, far[-1] + 1), 1.0,
           ["--scaling", "dynamic", "--factor", "2", "--original-max-position", "4096", "--seq-len", str(far[-1] + 1)]))
np.save(WORK / "short.npy", np.linspace(1, 1.2, D // 2))
np.save(WORK / "long.npy", np.linspace(1, 40, D // 2))
for method, inv, attention, args in scaled:
    rope_case(f"hf_{method}_1e6", x, rope_f32(x, far, inv, attention=attention), far, args, True, ["meets"])


def ggml_yarn(x, positions, base, n_dims, factor, n_ctx_orig, beta_fast=32.0, beta_slow=1.0):
    """NEOX pairs; ext_factor 1, attn_factor 1; float32 throughout as ggml-cpu."""
    def corr_dim(n_rot):
        return F32(n_dims * math.log(n_ctx_orig / (n_rot * 2 * math.pi)) / (2 * math.log(base)))
    low, high = max(F32(0), F32(math.floor(corr_dim(beta_fast)))), min(F32(n_dims - 1), F32(math.ceil(corr_dim(beta_slow))))
    freq_scale = F32(1.0 / factor)
    mscale = F32(F32(1) + F32(0.1) * F32(math.log(1.0 / freq_scale)))
    theta_scale = F32(np.power(F32(base), F32(-2.0) / F32(n_dims), dtype=F32))
    y = x.astype(F32).copy()
    for t, p in enumerate(positions):
        theta_extrap = F32(p)
        for i0 in range(0, n_dims, 2):
            ramp = F32(1) - min(F32(1), max(F32(0), F32((F32(i0 // 2) - low) / max(F32(0.001), F32(high - low)))))
            theta_interp = F32(freq_scale * theta_extrap)
            theta = F32(F32(theta_interp * F32(F32(1) - ramp)) + F32(theta_extrap * ramp))
            s, c = sincos32(np.array([theta], dtype=F32))
            s, c = F32(s[0] * mscale), F32(c[0] * mscale)
            a, b = i0 // 2, i0 // 2 + n_dims // 2
            x0, x1 = y[t, :, a].copy(), y[t, :, b].copy()
            y[t, :, a] = x0 * c - x1 * s
            y[t, :, b] = x0 * s + x1 * c
            theta_extrap = F32(theta_extrap * theta_scale)
    return y


for pos, where in ((near, "0"), (far, "1e6")):
    rope_case(f"ggml_yarn_{where}", x, ggml_yarn(x, pos, 1e4, D, 4.0, 4096), pos,
              ["--scaling", "yarn", "--factor", "4", "--original-max-position", "4096"], True, ["meets"])
# Three sequences packed in one batch, each from its own start (HF's position_ids restart).
packed = np.concatenate([np.arange(10) + 999_000, np.arange(11), np.arange(11) + 500_000])
np.save(WORK / "packed_pos.npy", packed)
np.save(WORK / "packed_x.npy", x)
np.save(WORK / "packed_y.npy", rope_f32(x, packed, default_inv_freq_f32(5e5, D)))
check("hf_packed", ["--family", "rope", "--input", str(WORK / "packed_x.npy"), "--output", str(WORK / "packed_y.npy"),
                    "--positions-file", str(WORK / "packed_pos.npy"), "--base", "5e5"], True, ["meets"])

# The other HF float32 forms near 10^6: linear scaling (inv_freq / factor), partial rotary (phi-2's
# partial_rotary_factor: rotate_half over the first rotary_dim channels), pairs (2j, 2j+1) (view_as_complex).
rope_case("hf_linear_1e6", x, rope_f32(x, far, (default_inv_freq_f32(1e4, D) / F32(4)).astype(F32)), far,
          ["--scaling", "linear", "--factor", "4"], True, ["meets"])
rope_case("hf_partial_1e6", x, rope_f32(x, far, default_inv_freq_f32(1e4, 64), rotary_dim=64), far,
          ["--rotary-dim", "64"], True, ["meets"])
rope_case("hf_interleaved_1e6", x, rope_f32(x, far, default_inv_freq_f32(5e5, D), interleaved=True), far,
          ["--base", "5e5", "--layout", "interleaved"], True, ["meets"])


mpos = qwen_vl_positions(999_000)
np.save(WORK / "mrope_pos.npy", mpos)
xm = RNG.standard_normal((mpos.shape[1], H, D)).astype(F32)
np.save(WORK / "mrope_x.npy", xm)
for tag, base, section, extra in (("qwen25vl", 1e6, (16, 24, 24), []),
                                  ("qwen3vl", 5e6, (24, 20, 20), ["--mrope-layout", "interleaved"])):
    np.save(WORK / f"{tag}_f32_y.npy", mrope_f32(xm, mpos, base, section, bool(extra)))
    check(f"hf_mrope_{tag}_1e6", ["--family", "rope", "--input", str(WORK / "mrope_x.npy"), "--output",
                                  str(WORK / f"{tag}_f32_y.npy"), "--positions-file", str(WORK / "mrope_pos.npy"),
                                  "--base", str(base), "--mrope-section", ",".join(map(str, section))] + extra,
          True, ["meets"])

# A fused kernel that moves a pass-through channel by one ulp: named as such.
moved = ggml_rope(x, far, 1e4, 64, True)
moved[3, 1, 100] = np.nextafter(moved[3, 1, 100], F32(np.inf))
rope_case("pass_through_moved", x, moved, far, ["--rotary-dim", "64"], False,
          ["pass-through: channel 100 of token 3 head 1", "[0, 64)"])

for pos, where in ((list(range(0, 64)), "0"), (list(range(500_000, 500_064)), "5e5"),
                   (list(range(1_000_000 - 64, 1_000_000)), "1e6")):
    f = WORK / f"torch_tutorial_{where}.npy"
    np.save(f, torch_tutorial_table(pos, 128))
    check(f"torch_tutorial_{where}", ["--family", "sinusoidal", str(f), "--positions", f"{pos[0]}:{pos[-1] + 1}"],
          True, ["sinusoidal.torch_f32"])

# The band table's last columns are one element's: its |err|, its budget, their ratio.
r = subprocess.run([PE, "check", "--family", "sinusoidal", str(WORK / "torch_tutorial_0.npy"), "--positions", "0:64"],
                   capture_output=True, text=True)
report("band_table_header", "worst: err" in r.stdout, detail=r.stdout)
judge("given_residual_shown", [PE, "check", "--family", "rope", "--input", str(WORK / "hf_llama_0_x.npy"), "--output",
                               str(WORK / "hf_llama_0_y.npy"), "--positions", "0:32", "--base", "5e5",
                               "--rotary-dim", "64"], False)

finish("engines_f32_test")
