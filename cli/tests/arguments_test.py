#!/usr/bin/env python3
"""A wrong check argument is named, not blamed on the implementation: correct RoPE data checked with a
wrong --rotary-dim, a missing, dropped or mistaken scaling, or YaRN's truncate or betas the other way must
fail with the argument named on the "the data fits:" line. The data is HF's RoPE written here from
modeling_rope_utils.py (_compute_default_rope_parameters, _compute_linear_scaling_rope_parameters,
_compute_yarn_parameters: hf_rope.py) in float64, stored as float32.

    arguments_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import json
import math

import numpy as np
from cli_cases import finish, judge, report, rope_check, setup
from hf_rope import default_inv_freq, rope, yarn_inv_freq

PE, WORK, RNG = setup(20261202)


T, H, D = 32, 1, 128
x = RNG.standard_normal((T, H, D))
pos = list(range(30_000, 30_000 + T))
span = ["--positions", f"{pos[0]}:{pos[-1] + 1}"]


def case(name, y, args, words):
    judge(name, rope_check(PE, WORK, name, x, y, pos) + args, words is None, words or ())


full = rope(x, pos, default_inv_freq(1e4, D), D)
half = rope(x, pos, default_inv_freq(1e4, D // 2), D // 2)
linear4 = rope(x, pos, default_inv_freq(1e4, D) / 4, D)
yarn = yarn_inv_freq(1e4, D, 4.0, 4096)
yarn_args = ["--scaling", "yarn", "--factor", "4", "--original-max-position", "4096"]
yarn_data = rope(x, pos, yarn, D, 0.1 * math.log(4.0) + 1.0)

case("correct_full", full, [], None)
case("correct_partial", half, ["--rotary-dim", "64"], None)
case("correct_linear", linear4, ["--scaling", "linear", "--factor", "4"], None)
case("correct_yarn", yarn_data, yarn_args, None)
case("rotary_dim_too_small", full, ["--rotary-dim", "64"], "rotary dim 128 (given: 64)")
case("rotary_dim_missing", half, [], "rotary dim 64 (given: 128)")
case("scaling_missing", linear4, [], "scaling linear factor 4 (given: none)")
case("scaling_dropped", full, ["--scaling", "linear", "--factor", "4"], "scaling ignored: plain RoPE")
case("factor_mistaken", linear4, ["--scaling", "linear", "--factor", "2"], "linear factor 4 (given 2)")
case("yarn_as_linear", yarn_data, ["--scaling", "linear", "--factor", "4"],
     "scaling yarn factor 4, original_max_position 4096 (given: linear factor 4)")
# --threads: the pass in parts, the same verdict and diagnosis (rope_threads_test pins the whole report).
case("correct_full_threads", full, ["--threads", "3"], None)
case("scaling_missing_threads", linear4, ["--threads", "4"], "scaling linear factor 4 (given: none)")
case("yarn_truncate_off", rope(x, pos, yarn_inv_freq(1e4, D, 4.0, 4096, truncate=False), D,
                               0.1 * math.log(4.0) + 1.0), yarn_args, "yarn truncate off (given: on)")

# check --json: the same verdict, typed (schema pe-suite/check/2); its keys are pinned here.
out = WORK / "rotary_dim_missing.json"
judge("json", [PE, "check", "--family", "rope", "--input", str(WORK / "rotary_dim_missing_x.npy"), "--output",
               str(WORK / "rotary_dim_missing_y.npy"), "--json", str(out)] + span, False, "rotary dim 64")
j = json.loads(out.read_text())
want = {"schema": "pe-suite/check/2", "family": "rope", "passed": False, "fits": "rotary dim 64 (given: 128)"}
band_keys = {"lo", "hi", "samples", "violations", "undecidable", "max_abs", "p99_abs", "max_ulp", "p99_ulp", "ulp_floor", "worst",
             "verdict", "p99_samples"}
record_keys = {"row", "head", "position", "channel", "value", "exact", "abs_error", "ulp", "budget", "ratio"}
problems = [k for k, v in want.items() if j.get(k) != v]
problems += [] if set(j["bands"][0]) == band_keys else ["band keys " + str(sorted(j["bands"][0]))]
problems += [] if set(j["worst"][0]) == record_keys else ["record keys " + str(sorted(j["worst"][0]))]
problems += [] if {"contract", "worst_ratio", "met"} == set(j["contracts"][0]) else ["contract keys"]
problems += [] if j["diagnosis"][0] == {"convention": j["fits"], "residual": j["diagnosis"][0]["residual"]} else ["diagnosis"]
problems += [] if j["parameters"]["rotary_dim"] == 128 and j["elements"] == T * H * D else ["parameters"]
report("json_schema", not problems, ", ".join(problems))

finish("arguments_test")
