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
  PyTorch   the tutorial's PositionalEncoding: div_term = exp(arange(0, d, 2) * (-ln 10000 / d)),
            pe[:, 0::2] = sin(position * div_term), pe[:, 1::2] = cos(...), all float32

    engines_f32_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
from cli_cases import failures, finish, judge

PE, WORK = sys.argv[1], Path(sys.argv[2])
WORK.mkdir(parents=True, exist_ok=True)
RNG = np.random.default_rng(20261201)
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


def hf_rope(x, positions, base):
    d = x.shape[-1]
    inv_freq = (F32(1.0) / np.power(F32(base), np.arange(0, d, 2, dtype=np.int64).astype(F32) / F32(d),
                                    dtype=F32)).astype(F32)
    freqs = np.asarray(positions, dtype=F32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1).astype(F32)
    sin, cos = sincos32(emb)
    x = x.astype(F32)
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * cos[:, None, :] + rot * sin[:, None, :]


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
    print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {r.returncode}; {verdict}\n       " + "\n       ".join(lines))
    if not ok:
        failures.append(name)
        print(out[-3000:])


def rope_case(name, x, y, positions, args, expect_pass, words=()):
    xf, yf = WORK / f"{name}_x.npy", WORK / f"{name}_y.npy"
    np.save(xf, x.astype(F32))
    np.save(yf, y.astype(F32))
    check(name, ["--family", "rope", "--input", str(xf), "--output", str(yf), "--positions",
                 f"{positions[0]}:{positions[-1] + 1}"] + args, expect_pass, words)


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
    rope_case(f"hf_llama_{where}", x, hf_rope(x, pos, 5e5), pos, ["--base", "5e5"], True, ["meets"])

# A fused kernel that moves a pass-through channel by one ulp: named as such.
moved = ggml_rope(x, far, 1e4, 64, True)
moved[3, 1, 100] = np.nextafter(moved[3, 1, 100], F32(np.inf))
rope_case("pass_through_moved", x, moved, far, ["--rotary-dim", "64"], False,
          ["pass-through: channel 100 of token 3 head 1", "[0, 64)"])

for pos, where in ((list(range(0, 64)), "0"), (list(range(500_000, 500_064)), "5e5")):
    f = WORK / f"torch_tutorial_{where}.npy"
    np.save(f, torch_tutorial_table(pos, 128))
    check(f"torch_tutorial_{where}", ["--family", "sinusoidal", str(f), "--positions", f"{pos[0]}:{pos[-1] + 1}"],
          True, ["sinusoidal.torch_f32"])

# The band table's last columns are one element's: its |err|, its budget, their ratio.
r = subprocess.run([PE, "check", "--family", "sinusoidal", str(WORK / "torch_tutorial_0.npy"), "--positions", "0:64"],
                   capture_output=True, text=True)
if "worst: err" not in r.stdout:
    failures.append("band_table_header")
    print("FAIL band_table_header\n" + r.stdout)
judge("given_residual_shown", [PE, "check", "--family", "rope", "--input", str(WORK / "hf_llama_0_x.npy"), "--output",
                               str(WORK / "hf_llama_0_y.npy"), "--positions", "0:32", "--base", "5e5",
                               "--rotary-dim", "64"], False)

finish("engines_f32_test")
