#!/usr/bin/env python3
"""`pe-suite export --variant` of the forms diffusion code uses (real timesteps from a float .npy, a scale, an
odd dim, flip_sin_to_cos, downscale_freq_shift), against diffusers' get_timestep_embedding transcribed here in
numpy float32 from the published code (diffusers 0.31 models/embeddings.py), not from pe-suite's:

    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    if flip_sin_to_cos: emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    if embedding_dim % 2 == 1: emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))

Error model of the comparison (units u = 2^-24, |phi| = |scale * t * omega_i|): both tables are diffusers'
float32 arithmetic. sinusoidal.diffusers_f32 is within (1 + 54.4|phi|)u of the exact value (its contract);
the transcription is the same formula with NumPy's float32 exp, sin and cos, charged 4 ULP each (8u relative
for exp, 4u absolute for sin/cos): exponent 3.0001 ln P, exp 8, fl(t) 1, the product 1, fl(scale) and its
product 2: (4 + 60.4|phi|)u. So they agree within (5 + 114.8|phi|)u; the pad channel is 0 in both exactly.
A table with one switch flipped differs by O(1) somewhere: the comparison is shown able to fail.

    variant_forms_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""
import math
import subprocess

import numpy as np
from cli_cases import finish, report, setup

PE, WORK, RNG = setup(seed=49)
U = 2.0 ** -24


def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos, downscale_freq_shift, scale,
                           max_period=10000):
    half_dim = embedding_dim // 2
    exponent = np.float32(-math.log(max_period)) * np.arange(0, half_dim, dtype=np.float32)
    exponent = exponent / np.float32(half_dim - downscale_freq_shift)
    emb = np.exp(exponent)
    emb = timesteps.astype(np.float32)[:, None] * emb[None, :]
    emb = np.float32(scale) * emb
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    if flip_sin_to_cos:
        emb = np.concatenate([emb[:, half_dim:], emb[:, :half_dim]], axis=-1)
    if embedding_dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb


def angles(t, dim, shift, scale):
    """|phi| per (row, channel) in float64 (the exact angle to far below the tolerance's resolution)."""
    half = dim // 2
    omega = np.exp(-math.log(10000) * np.arange(half) / (half - shift))
    phi = np.abs(scale * t.astype(np.float64)[:, None] * omega[None, :])
    out = np.concatenate([phi, phi], axis=1)
    return np.pad(out, ((0, 0), (0, dim % 2)))


def case(name, t, dim, flip, shift, scale):
    np.save(WORK / f"{name}_t.npy", t)
    out = WORK / f"{name}.npy"
    cmd = [PE, "export", "--family", "sinusoidal", "--variant", "sinusoidal.diffusers_f32", "--dim", str(dim),
           "--positions-file", str(WORK / f"{name}_t.npy"), "--layout", "concatenated",
           "--downscale-freq-shift", str(shift), "--scale", repr(scale), "--dtype", "f32", "--out", str(out)]
    if flip:
        cmd.append("--flip-sin-to-cos")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if not report(f"{name}_exported", r.returncode == 0, f"exit {r.returncode}", r.stdout + r.stderr):
        return
    got = np.load(out).astype(np.float64)
    want = get_timestep_embedding(t, dim, flip, shift, scale).astype(np.float64)
    if not report(f"{name}_shape", got.shape == want.shape, f"{got.shape} vs {want.shape}"):
        return
    tol = (5 + 114.8 * angles(t, dim, shift, scale)) * U
    err = np.abs(got - want)
    worst = np.unravel_index(np.argmax(err / tol), err.shape)
    report(f"{name}_agrees", bool(np.all(err <= tol)),
           f"worst {err[worst]:.3g} at {worst} (tolerance {tol[worst]:.3g})")
    if dim % 2 == 1:
        report(f"{name}_pad_zero", bool(np.all(got[:, -1] == 0.0)), "the last channel of an odd dim")
    # One switch flipped in the transcription: the comparison must fail somewhere.
    other = get_timestep_embedding(t, dim, not flip, shift, scale).astype(np.float64)
    report(f"{name}_flipped_differs", bool(np.any(np.abs(got - other) > tol)), "the same comparison, flip wrong")


# Fractional timesteps t*1000 for t in [0, 1), as a sampler draws them, float32 as the .npy holds them.
timesteps = (RNG.random(24) * 1000).astype(np.float32)
case("sd_timesteps", timesteps, 320, flip=True, shift=0, scale=1.0)
case("odd_dim_shift_1", timesteps, 321, flip=False, shift=1, scale=1.0)
# A scale on t in [0, 1) (diffusers' `scale`): the angle scale*t, as large as t*1000.
unit = RNG.random(16).astype(np.float32)
case("scaled_unit_t", unit, 257, flip=True, shift=1, scale=1000.0)

# A position the variant refuses (a float32-angle kernel takes t = 0 or a normal float32 magnitude) is named by
# the table's row (the API numbers the positions of one call: a block's, zero rows left out).
refused = np.array([0, 1, 2, 3, 1e-40, 5], dtype=np.float64)
np.save(WORK / "refused_t.npy", refused)
r = subprocess.run([PE, "export", "--family", "sinusoidal", "--variant", "sinusoidal.diffusers_f32", "--dim", "8",
                    "--positions-file", str(WORK / "refused_t.npy"), "--dtype", "f32",
                    "--out", str(WORK / "refused.npy")], capture_output=True, text=True)
report("refused_position_names_its_row", r.returncode != 0 and "row 4" in r.stderr and "positions" in r.stderr,
       f"exit {r.returncode}", r.stdout + r.stderr)

finish("variant_forms")
