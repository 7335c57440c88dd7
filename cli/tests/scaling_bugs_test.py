#!/usr/bin/env python3
"""The scaling bugs engines shipped, each built here the way the engine did it (hf_rope.py: HF's formulas
with the one mistake), must fail `check` with the mistake named on the "the data fits:" line, and the
correct data must pass:
  Llama-3 scaling dropped by a converter (TensorRT-LLM #1923) or ignored (ik_llama.cpp PR #2291), the wrong
  factor (llama-models #241), the wavelength taken as 1/θ; YaRN's β_fast/β_slow swapped (torchtitan PR
  #3787) and its attention factor as 1, as 0.1·ln s + 1 or as HF's mscale ratio (vLLM #48621, sglang PR
  #22711, exllamav3 #259); LongRoPE's long list where the short one belongs (llama.cpp #24823: chosen by
  the allocated context); dynamic NTK's length never updated; Gemma-3's layer types mixed up (vLLM PR #29111,
  llama.cpp #14367: the other base and scaling).

    scaling_bugs_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import subprocess

import numpy as np
from cli_cases import finish, judge, report, rope_check, setup
from hf_rope import (default_inv_freq, dynamic_inv_freq, get_mscale, llama3_inv_freq, longrope_attention,
                     longrope_inv_freq, rope, yarn_inv_freq)

PE, WORK, RNG = setup(20261201)
T, H = 16, 1
RESTATED = []


def case(name, x, y, positions, args, words):
    """`words` None: the data must pass; else it must fail with every word on the diagnosis line."""
    data = rope_check(PE, WORK, name, x, y, positions)
    out = judge(name, data + args, words is None, words or ())
    # A fit restated as flags is a hypothesis to check: the same data under those flags passes.
    said = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("  as flags, to check")]
    if said:
        rerun = subprocess.run(data + said[0].split(), capture_output=True, text=True)
        report(name + "_restated", rerun.returncode == 0, f"{said[0]}: exit {rerun.returncode}", rerun.stdout[-2000:])
    RESTATED.append(name) if said else None


# Llama-3.1-8B: base 500000, factor 8, low/high 1/4, L 8192, head_dim 128; at the 32k of the perplexity
# report.
D = 128
x = RNG.standard_normal((T, H, D))
pos = list(range(32_000, 32_000 + T))
llama3_args = ["--base", "500000", "--scaling", "llama3", "--factor", "8", "--original-max-position", "8192"]
llama3 = rope(x, pos, llama3_inv_freq(5e5, D, 8.0, 8192), D)
plain = rope(x, pos, default_inv_freq(5e5, D), D)
case("llama3_correct", x, llama3, pos, llama3_args, None)
case("llama3_ignored", x, plain, pos, llama3_args, "scaling ignored: plain RoPE")
# Llama-4 Scout Instruct's block: factor 16, low_freq_factor == high_freq_factor == 1 (a step, no smooth band).
case("llama4_instruct_step_correct", x, rope(x, pos, llama3_inv_freq(5e5, D, 16.0, 8192, 1.0, 1.0), D), pos,
     ["--base", "500000", "--scaling", "llama3", "--factor", "16", "--original-max-position", "8192",
      "--low-freq-factor", "1", "--high-freq-factor", "1"], None)
case("llama3_dropped_by_converter", x, llama3, pos, ["--base", "500000"],
     "scaling llama3 factor 8, original_max_position 8192 (given: none)")
case("llama3_factor_wrong", x, rope(x, pos, llama3_inv_freq(5e5, D, 32.0, 8192), D), pos, llama3_args,
     "llama3 factor 32 (given 8)")
case("llama3_wavelength_1_over_theta", x,
     rope(x, pos, llama3_inv_freq(5e5, D, 8.0, 8192, wavelength=lambda w: 1 / w), D), pos, llama3_args,
     "llama3 wavelength taken as 1/theta")

# YaRN, Qwen2.5's block (factor 4, L 32768, base 1e6) and DeepSeek-V2's (factor 40, L 4096, mscale and
# mscale_all_dim 0.707: HF's ratio is 1).
yarn_args = ["--base", "1000000", "--scaling", "yarn", "--factor", "4", "--original-max-position", "32768"]
yarn_w = yarn_inv_freq(1e6, D, 4.0, 32768)
case("yarn_correct", x, rope(x, pos, yarn_w, D, get_mscale(4.0)), pos, yarn_args, None)
case("yarn_betas_swapped", x, rope(x, pos, yarn_inv_freq(1e6, D, 4.0, 32768, beta_fast=1, beta_slow=32), D,
                                   get_mscale(4.0)), pos, yarn_args, "yarn beta_fast and beta_slow swapped")
case("yarn_attention_none", x, rope(x, pos, yarn_w, D, 1.0), pos, yarn_args, "yarn attention factor 1 (none)")
Dm = 64
xm = RNG.standard_normal((T, H, Dm))
ds_args = ["--scaling", "yarn", "--factor", "40", "--original-max-position", "4096", "--mscale", "0.707",
           "--mscale-all-dim", "0.707"]
ds_w = yarn_inv_freq(1e4, Dm, 40.0, 4096)
ds_ratio = get_mscale(40.0, 0.707) / get_mscale(40.0, 0.707)
case("deepseek_yarn_correct", xm, rope(xm, pos, ds_w, Dm, ds_ratio), pos, ds_args, None)
case("deepseek_yarn_mscale_not_ratio", xm, rope(xm, pos, ds_w, Dm, get_mscale(40.0, 0.707)), pos, ds_args,
     "yarn attention factor 0.1*mscale_all_dim*ln(s) + 1")
case("deepseek_yarn_default_attention", xm, rope(xm, pos, ds_w, Dm, get_mscale(40.0)), pos, ds_args,
     "yarn attention factor 0.1*ln(s) + 1")

# LongRoPE, Phi-3-mini-128k's shape (head_dim 96, L 4096, factor 131072/4096 = 32): at 5000.. the
# sequence is longer than L, so HF takes the long list.
Dl = 96
xl = RNG.standard_normal((T, H, Dl))
short = 1 + np.sort(RNG.uniform(0, 0.2, Dl // 2))
long = 1 + np.sort(RNG.uniform(0, 60, Dl // 2))
np.save(WORK / "short.npy", short)
np.save(WORK / "long.npy", long)
lpos = list(range(5_000, 5_000 + T))
long_args = ["--scaling", "longrope", "--factor", "32", "--original-max-position", "4096", "--short-factors",
             str(WORK / "short.npy"), "--long-factors", str(WORK / "long.npy")]
attention = longrope_attention(32.0, 4096)
long_data = rope(xl, lpos, longrope_inv_freq(1e4, Dl, short, long, 4096, lpos[-1] + 1), Dl, attention)
case("longrope_correct", xl, long_data, lpos, long_args + ["--seq-len", str(lpos[-1] + 1)], None)
case("longrope_list_by_allocated_context", xl,
     rope(xl, lpos, longrope_inv_freq(1e4, Dl, short, long, 4096, 4096), Dl, attention), lpos,
     long_args + ["--seq-len", str(lpos[-1] + 1)], "longrope short_factor (given: long_factor")

# Dynamic NTK at L 4096, factor 2: HF's length is max(position_ids) + 1; an engine that never updates it
# rotates at the unscaled base.
dyn_args = ["--scaling", "dynamic", "--factor", "2", "--original-max-position", "4096"]
dpos = list(range(10_000, 10_000 + T))
dyn = rope(x, dpos, dynamic_inv_freq(1e4, D, 2.0, 4096, dpos[-1] + 1), D)
case("dynamic_correct", x, dyn, dpos, dyn_args + ["--seq-len", str(dpos[-1] + 1)], None)
case("dynamic_length_not_updated", x, dyn, dpos, dyn_args + ["--seq-len", "4096"],
     f"dynamic seq_len {dpos[-1] + 1} (given 4096)")

# Gemma-3's layer types mixed up (vLLM PR #29111, llama.cpp #14367): a sliding layer (base 10^4, no scaling)
# given the full layers' flags, and a full layer (10^6, linear 8) given the sliding ones.
sliding = rope(x, pos, default_inv_freq(1e4, D), D)
full = rope(x, pos, default_inv_freq(1e6, D) / 8, D)
case("gemma3_sliding_with_full_flags", x, sliding, pos, ["--base", "1e6", "--scaling", "linear", "--factor", "8"],
     ["base 10000 (given: 1e+06)", "scaling ignored"])
case("gemma3_full_with_sliding_flags", x, full, pos, ["--base", "1e4"],
     ["base 1e+06 (given: 10000)", "scaling linear factor 8 (given: none)"])

# ---- Issue 32's classes: parameter values on no list the diagnosis tries, each fitted and named --------
# LongRoPE switched per token (TGI's SuRotaryEmbedding: short below L, long from L on) where HF picks one
# list for the sequence; and the same data checked under --longrope-switch per-token passes.
spos = list(range(4096 - T // 2, 4096 + T // 2))
per_token = np.concatenate(
    [rope(xl[i:i + 1], [p], longrope_inv_freq(1e4, Dl, short, long, 4096, 0 if p < 4096 else p + 1), Dl,
          attention) for i, p in enumerate(spos)])
case("longrope_switched_per_token", xl, per_token, spos, long_args + ["--seq-len", str(spos[-1] + 1)],
     "longrope switch per-token (given: per-sequence)")
case("longrope_per_token_stated", xl, per_token, spos, long_args + ["--longrope-switch", "per-token"], None)

# Llama-3 with original_max_position_embeddings taken from the allocated context (2048, not 8192); and
# another checkpoint's factor and high_freq_factor (8 and 4 where Llama-4's block says 16 and 1).
P = 65
xw = RNG.standard_normal((P, 2, D))
wpos = list(range(8192, 8192 + P))
case("llama3_original_2048", xw, rope(xw, wpos, llama3_inv_freq(5e5, D, 8.0, 2048), D), wpos, llama3_args,
     "original_max_position 2048 (given 8192)")
llama4_args = ["--base", "500000", "--scaling", "llama3", "--factor", "16", "--original-max-position", "8192",
               "--low-freq-factor", "1", "--high-freq-factor", "1"]
case("llama3_other_checkpoint", xw, rope(xw, wpos, llama3_inv_freq(5e5, D, 8.0, 8192), D), wpos, llama4_args,
     ["factor 8 (given 16)", "high_freq_factor 4 (given 1)"])

# YaRN whose ramp collapsed (every pair divided by 4) with YaRN's attention factor 0.1*ln(4) + 1 kept.
case("yarn_ramp_collapsed", xw, rope(xw, wpos, default_inv_freq(1e6, D) / 4, D, get_mscale(4.0)), wpos, yarn_args,
     ["linear (given yarn), factor 4", "the given yarn's attention factor"])
# YaRN's blend inverted: the ramp where HF blends by 1 - ramp.
inv = yarn_inv_freq(1e6, D, 4.0, 32768)
theta = default_inv_freq(1e6, D)
inverted = theta / 4 + theta - inv  # HF: θ/s·r + θ·(1 - r); inverted: θ/s·(1 - r) + θ·r
case("yarn_blend_inverted", xw, rope(xw, wpos, inverted, D, get_mscale(4.0)), wpos, yarn_args,
     "yarn, its blend inverted")
# Dynamic NTK at its base for max(position_ids) + 1, with the positions also divided by 2 (linear on top).
dwpos = list(range(20_000, 20_000 + P))
case("dynamic_and_positions_halved", xw,
     rope(xw, [p / 2 for p in dwpos], dynamic_inv_freq(1e4, D, 2.0, 4096, dwpos[-1] + 1), D), dwpos,
     dyn_args + ["--seq-len", str(dwpos[-1] + 1)], "positions divided by 2")
# LongRoPE's attention factor used to divide the positions, its gain on cos/sin dropped.
lwpos = list(range(5_000, 5_000 + P))
xlw = RNG.standard_normal((P, 2, Dl))
long_w = longrope_inv_freq(1e4, Dl, short, long, 4096, lwpos[-1] + 1)
case("longrope_attention_divides_positions", xlw, rope(xlw, [p / attention for p in lwpos], long_w, Dl, 1.0),
     lwpos, long_args + ["--seq-len", str(lwpos[-1] + 1)], ["positions divided by", "(the given attention factor)"])

# A gain that moves with the position (no formula the diagnosis knows) is said to vary: never named as one
# attention factor, never restated as flags.
gpos = list(range(8_160, 8_160 + P))
moving = 1 + (np.asarray(gpos) - gpos[0]) * 2e-3
case("gain_moves_with_position", xw, rope(xw, gpos, default_inv_freq(5e5, D), D) * moving[:, None, None], gpos,
     ["--base", "500000"], ["frequencies as given", "gain |y|/|x| varies from 1 to"])
report("gain_moves_with_position_not_restated", "gain_moves_with_position" not in RESTATED)

# The fits whose parameters flags can state are restated, and pass under them.
for must in ["llama3_original_2048", "llama3_other_checkpoint", "yarn_ramp_collapsed", "dynamic_and_positions_halved"]:
    report(must + "_said_as_flags", must in RESTATED)

finish("scaling_bugs_test")
