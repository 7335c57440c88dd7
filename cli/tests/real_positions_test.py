#!/usr/bin/env python3
"""`pe-suite check --family rope --positions-file` with real positions (issue 50): a float64 or float32 .npy of
fractional positions ([T], or [3, T] under --mrope-section) is checked at the exact values stored; a float .npy
holding integers keeps the integer path (the same output); a non-finite or out-of-bound value, and a setting
that reads integer positions, are refused naming the flag and the value.

The data: Qwen2-VL's M-RoPE (HF's apply_multimodal_rotary_pos_emb: inv_freq = 1/base^(2j/d), cos/sin =
cat(freqs, freqs) in channel chunks of mrope_section * 2, rotate_half) at a CogVideoX-style linspace grid
(diffusers' get_3d_rotary_pos_embed: grid_h = linspace(0, 9, 6, endpoint=False), steps of 1.5), the angle
formed in float32 from the real position, stored as float32.

    real_positions_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import numpy as np
from cli_cases import finish, report, said, setup

PE, WORK, RNG = setup(2026120550)
H, D, BASE = 2, 64, 10000.0
SECTION = (8, 12, 12)

grid_t = np.arange(2, dtype=np.float32)
grid_h = np.linspace(0, 9, 6, endpoint=False, dtype=np.float32)
grid_w = np.linspace(0, 15, 10, endpoint=False, dtype=np.float32)
t, h, w = np.meshgrid(grid_t, grid_h, grid_w, indexing="ij")
GRID = np.stack([t.ravel(), h.ravel(), w.ravel()]).astype(np.float64)
T = GRID.shape[1]
x = RNG.standard_normal((T, H, D)).astype(np.float32)


def mrope(positions):
    inv_freq = (1.0 / BASE ** (np.arange(0, D, 2, dtype=np.float64) / D)).astype(np.float32)
    axis = np.repeat(np.arange(3), SECTION)
    p = np.asarray(positions, dtype=np.float64)[axis, :].T.astype(np.float32)
    emb = np.concatenate([p * inv_freq, p * inv_freq], axis=-1).astype(np.float64)
    rot = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], axis=-1)
    return x * np.cos(emb).astype(np.float32)[:, None, :] + rot * np.sin(emb).astype(np.float32)[:, None, :]


def command(name, y, positions, *extra):
    xf, yf, pf = WORK / f"{name}_x.npy", WORK / f"{name}_y.npy", WORK / f"{name}_pos.npy"
    np.save(xf, x)
    np.save(yf, np.asarray(y, dtype=np.float32))
    np.save(pf, positions)
    return [PE, "check", "--family", "rope", "--input", str(xf), "--output", str(yf), "--positions-file", str(pf),
            "--base", "10000", "--mrope-section", ",".join(map(str, SECTION)), *extra]


y = mrope(GRID)
said("real grid, float64 file", command("f64", y, GRID), 0, ["PASS"])
said("real grid, float32 file", command("f32", y, GRID.astype(np.float32)), 0, ["PASS"])
said("rounded to integers", command("rounded", y, np.round(GRID).astype(np.int64)), 1, ["FAIL"])
said("kernel at integers, told reals", command("other_way", mrope(np.round(GRID)), GRID), 1,
     ["FAIL", "diagnosis: undetermined (the positions are real"])

# Integer-valued float positions: the integer path, the same output as int64.
integers = np.round(GRID)
a = said("integers as int64", command("int64", mrope(integers), integers.astype(np.int64)), 0, ["PASS"])
b = said("integers as float64", command("intf64", mrope(integers), integers), 0, ["PASS"])
report("integer-valued floats print what int64 prints", a.replace("intf64", "int64") == b.replace("intf64", "int64"))

for name, value, words in [("nan", np.nan, f"holds nan at flat index {T + 7}, not a finite position"),
                           ("inf", -np.inf, f"holds -inf at flat index {T + 7}, not a finite position"),
                           ("beyond 2^53", 2.0**60, "beyond the real positions' bound |t| <= 2^53"),
                           ("subnormal", 1e-300, "a real position is 0 or at least 2^-126 in magnitude")]:
    bad = GRID.copy()
    bad[1, 7] = value
    said(f"refused: {name}", command(f"bad_{name.replace(' ', '_')}", y, bad), 2, ["--positions-file", words])

np.save(WORK / "one.npy", GRID[2])  # [T]: text RoPE at real positions
said("refused: temperature at real positions",
     [PE, "check", "--family", "rope", "--input", str(WORK / "f64_x.npy"), "--output", str(WORK / "f64_y.npy"),
      "--positions-file", str(WORK / "one.npy"), "--attn-temperature", "llama4"], 2,
     ["--attn-temperature", "the positions are real"])

# The golden file at real positions: export --reference rotates --input at the stored reals, each element the
# correctly rounded float32 of the exact value. A float64 computation of the same formula in numpy errs by a few
# ulps of double (about 2^-50 relative), so its float32 rounding can differ from the correct one only where the
# exact value lies that close to a rounding midpoint: by one ulp at most, and almost never.
golden = WORK / "golden_real.npy"
said("export at real positions", [PE, "export", "--family", "rope", "--reference", "--dim", "0",
                                  "--mrope-section", ",".join(map(str, SECTION)), "--positions-file",
                                  str(WORK / "f64_pos.npy"), "--input", str(WORK / "f64_x.npy"), "--out", str(golden)],
     0, ["wrote", "reference"])


def mrope_f64(positions):
    inv_freq = 1.0 / BASE ** (np.arange(0, D, 2, dtype=np.float64) / D)
    p = np.asarray(positions, dtype=np.float64)[np.repeat(np.arange(3), SECTION), :].T
    emb = np.concatenate([p * inv_freq, p * inv_freq], axis=-1)[:, None, :]
    xd = x.astype(np.float64)
    rot = np.concatenate([-xd[..., D // 2:], xd[..., :D // 2]], axis=-1)
    return (xd * np.cos(emb) + rot * np.sin(emb)).astype(np.float32)


if golden.exists():
    g, want = np.load(golden), mrope_f64(GRID)
    apart = np.abs(g.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    report("golden at real positions is float64's rounding", g.shape == want.shape and apart.max() <= 1 and
           np.count_nonzero(apart) <= 2, f"{np.count_nonzero(apart)} elements apart, at most {apart.max()} ulp")
    said("golden at real positions checks", command("golden", g, GRID), 0, ["PASS"])
else:
    report("golden at real positions is float64's rounding", False, "no golden file written")
said("refused: a variant at real positions",
     [PE, "export", "--family", "rope", "--variant", "rope.exact", "--dim", "0", "--mrope-section",
      ",".join(map(str, SECTION)), "--positions-file", str(WORK / "f64_pos.npy"), "--input", str(WORK / "f64_x.npy"),
      "--out", str(WORK / "v.npy")], 2, ["--positions-file: real positions are exported by --reference only"])
said("refused: a table at real positions",
     [PE, "export", "--family", "rope", "--reference", "--dim", "64", "--mrope-section", ",".join(map(str, SECTION)),
      "--positions-file", str(WORK / "f64_pos.npy"), "--out", str(WORK / "t.npy")], 2,
     ["--positions-file: at real positions export rotates an --input"])

finish("real positions")
