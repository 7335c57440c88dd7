#!/usr/bin/env python3
"""`check A --against B`: two implementations of one op on the same input, each held to the exact
reference; the band table must say which is wrong in which position band, the verdict which one, the
diagnosis must be the wrong one's, and two correct ones must pass. The data is HF's RoPE and the
tutorial's sinusoidal table in float64 (hf_rope.py), stored as float32; B's mistakes are made here.

    against_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import json

import numpy as np
from cli_cases import finish, judge, report, said, setup
from hf_rope import default_inv_freq, rope

PE, WORK, RNG = setup(20261204)
T, H, D = 16, 1, 64
x = RNG.standard_normal((T, H, D))
# Two bands: 8 tokens at 100.., 8 at 200000..
pos = np.concatenate([np.arange(100, 108), np.arange(200_000, 200_008)])
a = rope(x, pos, default_inv_freq(1e4, D), D)
b_late = a.copy()  # B drops the offset of the later sequence's rows by one (p - 1 there)
b_late[8:] = rope(x[8:], pos[8:] - 1, default_inv_freq(1e4, D), D)
for name, arr in (("x", x), ("a", a), ("b_late", b_late)):
    np.save(WORK / f"{name}.npy", arr.astype(np.float32))
np.save(WORK / "pos.npy", pos)
rope_cmd = [PE, "check", "--family", "rope", "--input", str(WORK / "x.npy"), "--positions-file",
            str(WORK / "pos.npy")]


judge("rope_both_correct", rope_cmd + ["--output", str(WORK / "a.npy"), "--against", str(WORK / "a.npy")], True)
out = said("rope_b_wrong_late", rope_cmd + ["--output", str(WORK / "a.npy"), "--against", str(WORK / "b_late.npy"),
                                            "--json", str(WORK / "late.json")], 1,
           ["against: B is wrong, A is within budget", f"B ({WORK / 'b_late.npy'}):"])
bands = {line.split()[0]: line.split()[-1] for line in out.splitlines() if line.strip().startswith(("0..", "100000.."))}
report("rope_band_columns", bands == {"0..999": "neither", "100000..999999": "B"}, bands)
j = json.loads((WORK / "late.json").read_text())
want = {b["lo"]: b.get("wrong") for b in j["against"]["bands"]}
report("rope_json", want == {0: "neither", 100000: "B"} and not j["against"]["passed"] and j["passed"], want)
# A wrong, B right: the diagnosis is A's (the order does not decide which one is blamed).
said("rope_a_wrong", rope_cmd + ["--output", str(WORK / "b_late.npy"), "--against", str(WORK / "a.npy")], 1,
     ["against: A is wrong, B is within budget"])

# Sinusoidal: the tutorial's table against one with sin and cos swapped (diffusers' flip_sin_to_cos).
L, Dm = 64, 32
p = np.arange(L)[:, None] * (1.0 / 1e4 ** (np.arange(0, Dm, 2) / Dm))[None, :]
good = np.zeros((L, Dm))
good[:, 0::2], good[:, 1::2] = np.sin(p), np.cos(p)
swapped = good[:, [k ^ 1 for k in range(Dm)]]
np.save(WORK / "good.npy", good.astype(np.float32))
np.save(WORK / "swapped.npy", swapped.astype(np.float32))
table = [PE, "check", "--family", "sinusoidal", "--positions", f"0:{L}"]
out = said("sinusoidal_b_swapped", table + [str(WORK / "good.npy"), "--against", str(WORK / "swapped.npy")], 1,
           ["against: B is wrong, A is within budget"])
fit = next((line for line in out.splitlines() if line.startswith("the data fits:")), "")
report("sinusoidal_b_diagnosis", "flip_sin_to_cos true (given: false)" in fit, repr(fit))

# Bad input: another shape, ALiBi.
np.save(WORK / "short.npy", good[:8].astype(np.float32))
said("against_other_shape", table + [str(WORK / "good.npy"), "--against", str(WORK / "short.npy")], 2,
     ["--against:", "[8, 32]", "[64, 32]"])
finish("against_test")
