#!/usr/bin/env python3
"""`check --hf-config`: the shipped configs (examples/hf_configs) resolved into the check's flags, against data
built here the way HF's PyTorch code computes it, in float32 (numpy; sin/cos of the float32 angle in float64,
rounded): modeling_rope_utils.py's inv_freq per rope type (default, linear, llama3, yarn, longrope), freqs =
position * inv_freq, cos/sin times the attention factor, q*cos + rotate_half(q)*sin on the rotary channels
(modeling_llama.py, modeling_phi.py), or the view_as_complex pairs (2j, 2j+1) of modeling_deepseek_v2.py; Llama-4's
NoPE layers q*t(p), t(p) = log(floor((p+1)/floor_scale) + 1)*attn_scale + 1 (modeling_llama4.py).

Correct data passes with the resolution printed; each mistake an engine shipped fails with its cause named on the
diagnosis line.

    hf_config_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import json
import math
import subprocess
from pathlib import Path

import numpy as np
from cli_cases import finish, judge, judge_bad, report, setup
from hf_rope import (F32, get_mscale, llama3_inv_freq_f32, longrope_inv_freq_f32, mrope_f32,
                     qwen_vl_positions, yarn_inv_freq_f32)
from hf_rope import default_inv_freq_f32 as default_inv_freq
from hf_rope import llama3_inv_freq as llama3_inv_freq_f64
from hf_rope import rope as rope_f64
from hf_rope import rope_f32 as rope

PE, WORK, RNG = setup(20260301)
CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "hf_configs"


def span(positions):
    return ["--positions", f"{positions[0]}:{positions[-1] + 1}"]


def cfg(name):
    return json.loads((CONFIGS / f"{name}.json").read_text())


def llama3_inv_freq(base, dim, rs):
    return llama3_inv_freq_f32(base, dim, rs["factor"], rs["original_max_position_embeddings"], rs["low_freq_factor"],
                               rs["high_freq_factor"])


def yarn_inv_freq(base, dim, factor, original, mscale=None, mscale_all_dim=None, truncate=True):
    """The frequencies and HF's attention factor: the mscale ratio when both are given, else 0.1 ln s + 1."""
    att = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) if mscale and mscale_all_dim else \
        get_mscale(factor)
    return yarn_inv_freq_f32(base, dim, factor, original, truncate=truncate), att


def hf_check(x, y, where, config):
    """`check` of WORK/x -> WORK/y with --hf-config at `where`: flags, or a positions file in WORK."""
    where = ["--positions-file", str(WORK / where)] if isinstance(where, str) else where
    return [PE, "check", "--family", "rope", "--input", str(WORK / x), "--output", str(WORK / y)] + where + [
        "--hf-config", str(CONFIGS / f"{config}.json")]


def case(name, config, y, positions, extra, expect_pass, words=(), resolved=()):
    """Checks y with --hf-config; `resolved`: words every one of which the resolution block must show. Returns
    check's stdout."""
    np.save(WORK / f"{name}_x.npy", X[:, :, :y.shape[-1]])
    np.save(WORK / f"{name}_y.npy", y.astype(F32))
    cmd = hf_check(f"{name}_x.npy", f"{name}_y.npy", span(positions), config) + extra
    out = judge(name, cmd, expect_pass, words)
    if resolved:
        block = "\n".join(line for line in out.splitlines() if line.startswith(("hf-config", "  ")))
        report(name + "_resolution", all(w in block for w in resolved), detail=f"want {resolved} in\n{block}")
    return out


T, H = 32, 2
X = RNG.standard_normal((T, H, 256)).astype(F32)
far = list(range(100_000, 100_000 + T))

# Llama-3.1: llama3 scaling resolved from rope_scaling; dropped, plain RoPE at 500000 is "scaling ignored".
ll = cfg("Llama-3.1-8B")
x128 = X[:, :, :128]
case("llama31", "Llama-3.1-8B", rope(x128, far, llama3_inv_freq(5e5, 128, ll["rope_scaling"])), far, [], True,
     resolved=["base 500000 (rope_theta)", "scaling llama3 (rope_scaling.rope_type)", "factor 8 (rope_scaling.factor)",
               "head_dim 128 (hidden_size/num_attention_heads)"])
case("llama31_scaling_dropped", "Llama-3.1-8B", rope(x128, far, default_inv_freq(5e5, 128)), far, [], False,
     ["scaling ignored"])
case("llama31_base_override", "Llama-3.1-8B", rope(x128, far, llama3_inv_freq(5e5, 128, ll["rope_scaling"])), far,
     ["--base", "500000"], True, resolved=["override: --base 500000 overrides rope_theta 500000"])

# FlashInfer PR #847: the decode offset dropped, read back under Llama-3's scaling.
case("llama31_offset_dropped", "Llama-3.1-8B",
     rope(x128, [p - 4096 for p in far], llama3_inv_freq(5e5, 128, ll["rope_scaling"])), far, [], False,
     ["every row rotated by p-4096"])

# Qwen2.5 with its model card's YaRN block: attention factor 0.1*ln(4)+1; made with factor 2 it is named.
inv, att = yarn_inv_freq(1e6, 128, 4.0, 32768)
case("qwen25_yarn", "Qwen2.5-7B-Instruct-yarn", rope(x128, far, inv, attention=att), far, [], True,
     resolved=["scaling yarn (rope_scaling.type)", "original_max_position 32768"])
inv2, att2 = yarn_inv_freq(1e6, 128, 2.0, 32768)
case("qwen25_yarn_factor_wrong", "Qwen2.5-7B-Instruct-yarn", rope(x128, far, inv2, attention=att2), far, [], False,
     ["factor 2"])
# torchtitan PR #3787 and vLLM PR #28244: the betas swapped; truncate ignored; the attention factor left out.
case("qwen25_yarn_betas_swapped", "Qwen2.5-7B-Instruct-yarn",
     rope(x128, far, yarn_inv_freq_f32(1e6, 128, 4.0, 32768, beta_fast=1, beta_slow=32), attention=att), far, [],
     False, ["yarn beta_fast and beta_slow swapped"])
case("qwen25_yarn_truncate_ignored", "Qwen2.5-7B-Instruct-yarn",
     rope(x128, far, yarn_inv_freq(1e6, 128, 4.0, 32768, truncate=False)[0], attention=att), far, [], False,
     ["yarn truncate off (given: on)"])
case("qwen25_yarn_no_attention", "Qwen2.5-7B-Instruct-yarn", rope(x128, far, inv), far, [], False,
     ["yarn attention factor 1 (none)"])
# exllama PR #101: one arange across a packed batch (the given positions restart at each sequence);
# MLX before 0.32: rows left unrotated by a fast path.
restart = np.concatenate([np.arange(16), np.arange(16)]) + 100_000
np.save(WORK / "restart.npy", restart)
llama_packed = rope(x128, far, llama3_inv_freq(5e5, 128, ll["rope_scaling"]))
np.save(WORK / "packed_x.npy", x128)
np.save(WORK / "packed_y.npy", llama_packed)
judge("llama31_packed_not_reset", hf_check("packed_x.npy", "packed_y.npy", "restart.npy", "Llama-3.1-8B"), False,
      ["consecutive positions 100000, 100001"])
skipped = llama_packed.copy()
skipped[24:] = x128[24:]
case("llama31_rows_unrotated", "Llama-3.1-8B", skipped, far, [], False, ["16 of 64 rows", "rows left unrotated"])

# mlx-lm #1805/#1806: the KV-cache offset added twice; unsloth #3699: one cache_position for a left-padded
# batch (rows 0..7 are padding, the given positions start at the first real token, the kernel's at row 0).
case("llama31_offset_twice", "Llama-3.1-8B",
     rope(x128, [p + 4096 for p in far], llama3_inv_freq(5e5, 128, ll["rope_scaling"])), far, [], False,
     ["every row rotated by p+4096"])
left = np.concatenate([np.zeros(8, dtype=np.int64), np.arange(T - 8)]) + 100_000
np.save(WORK / "left.npy", left)
np.save(WORK / "left_y.npy", rope(x128, far, llama3_inv_freq(5e5, 128, ll["rope_scaling"])))
judge("llama31_left_padding", hf_check("packed_x.npy", "left_y.npy", "left.npy", "Llama-3.1-8B"), False,
      ["consecutive positions 100000, 100001"])
# FlashInfer PR #1129: int64 position ids read as int32, at positions past 2^32 (float64 angles, so the check
# can hold them to rope.hwy's contract: the float32 class allows errors of order one there).
big = np.arange(2 ** 32 + 100, 2 ** 32 + 100 + T)
np.save(WORK / "big.npy", big)
np.save(WORK / "int32_y.npy", rope_f64(x128.astype(np.float64), big - 2 ** 32, llama3_inv_freq_f64(
    5e5, 128, 8.0, 8192), 128).astype(F32))
judge("llama31_int32_positions", hf_check("packed_x.npy", "int32_y.npy", "big.npy", "Llama-3.1-8B") + [
    "--contract", "rope.hwy"], False, ["truncated to 32 bits"])
# Llama-3.2-1B (factor 32): llama-models #241's wrong factor (8), the wavelength taken as 1/theta, and vLLM
# #16904's shared rope object that halved rotary_dim (32 of head_dim 64 rotated).
l32 = cfg("Llama-3.2-1B")["rope_scaling"]
x64 = X[:, :, :64]
case("llama32", "Llama-3.2-1B", rope(x64, far, llama3_inv_freq(5e5, 64, l32)), far, [], True,
     resolved=["factor 32 (rope_scaling.factor)", "head_dim 64 (head_dim)"])
case("llama32_factor_8", "Llama-3.2-1B", rope(x64, far, llama3_inv_freq(5e5, 64, dict(l32, factor=8.0))), far, [],
     False, ["llama3 factor 8 (given 32)"])
case("llama32_wavelength_1_over_theta", "Llama-3.2-1B",
     rope(x64, far, llama3_inv_freq_f64(5e5, 64, 32.0, 8192, wavelength=lambda w: 1 / w).astype(F32)), far, [], False,
     ["llama3 wavelength taken as 1/theta"])
case("llama32_rotary_dim_halved", "Llama-3.2-1B", rope(x64, far, llama3_inv_freq(5e5, 32, l32), rotary_dim=32), far,
     [], False, ["rotary dim 32 (given: 64)"])

# Gemma-3: layer i is sliding unless (i+1) % 6 == 0; sliding layers: rope_local_base_freq 10000, no scaling.
x256 = X[:, :, :256]
sliding = rope(x256, far, default_inv_freq(1e4, 256))
case("gemma3_sliding", "Gemma-3-4B", sliding, far, ["--layer-type", "sliding_attention"], True,
     resolved=["base 10000 (Gemma3TextConfig default)", "head_dim 256 (Gemma3TextConfig default)",
               "no scaling"])
case("gemma3_layer4_is_sliding", "Gemma-3-4B", sliding, far, ["--layer", "4"], True)
case("gemma3_sliding_as_full", "Gemma-3-4B", sliding, far, ["--layer-type", "full_attention"], False,
     ["the sliding_attention layers' RoPE"])
full = rope(x256, far, (default_inv_freq(1e6, 256) / F32(8)).astype(F32))
case("gemma3_full", "Gemma-3-4B", full, far, ["--layer", "5"], True, resolved=["factor 8 (text_config.rope_scaling.factor)"])
np.save(WORK / "g_x.npy", x256)
np.save(WORK / "g_y.npy", sliding)
g = hf_check("g_x.npy", "g_y.npy", span(far), "Gemma-3-4B")
judge_bad("gemma3_no_layer", g, ["--layer", "sliding_attention", "full_attention"])
judge_bad("gemma3_layer_out_of_range", g + ["--layer", "34"], ["--layer 34", "0 to 33"])
judge_bad("gemma3_layer_type_unknown", g + ["--layer-type", "global"], ["--layer-type global", "full_attention"])

# phi-2: rotary dim int(80 * 0.4) = 32, the rest passes through; all 80 rotated is named.
x80 = X[:, :, :80]
near = list(range(0, T))
case("phi2", "phi-2", rope(x80, near, default_inv_freq(1e4, 32), rotary_dim=32), near, [], True,
     resolved=["rotary_dim 32 (int(head_dim * partial_rotary_factor))"])
case("phi2_rotary_dim_ignored", "phi-2", rope(x80, near, default_inv_freq(1e4, 80)), near, [], False, ["rotary dim 80"])

# Phi-3: longrope, factor 131072/4096 = 32, attention sqrt(1 + ln 32 / ln 4096); past 4096 the long factors.
p3 = cfg("Phi-3-mini-128k-instruct")
x96 = X[:, :, :96]
inv_long = longrope_inv_freq_f32(1e4, 96, p3["rope_scaling"]["long_factor"])
att3 = math.sqrt(1 + math.log(32) / math.log(4096))
case("phi3_long", "Phi-3-mini-128k-instruct", rope(x96, far, inv_long, attention=att3), far, [], True,
     resolved=["seq_len 100032 = max(position_ids) + 1", "factor 32 (max_position_embeddings/original_max_position_embeddings)"])
# llama.cpp #24823: the list chosen by the allocated context, not the sequence: short factors past 4096.
inv_short = longrope_inv_freq_f32(1e4, 96, p3["rope_scaling"]["short_factor"])
case("phi3_short_past_original", "Phi-3-mini-128k-instruct", rope(x96, far, inv_short, attention=att3), far, [],
     False, ["longrope short_factor (given: long_factor"])

# DeepSeek-V2-Lite: the rope head (qk_rope_head_dim 64), YaRN factor 40 with mscale = mscale_all_dim (attention
# 1), pairs (2j, 2j+1) as modeling_deepseek_v2.py's view_as_complex.
inv_ds, att_ds = yarn_inv_freq(1e4, 64, 40.0, 4096, mscale=0.707, mscale_all_dim=0.707)
case("deepseek_v2_lite", "DeepSeek-V2-Lite", rope(X[:, :, :64], far, inv_ds, attention=att_ds, interleaved=True), far,
     [], True, resolved=["layout interleaved"])
# vLLM #48621: get_mscale(s, mscale_all_dim) on cos and sin instead of HF's ratio (1 here).
case("deepseek_v2_lite_mscale", "DeepSeek-V2-Lite",
     rope(X[:, :, :64], far, inv_ds, attention=get_mscale(40.0, 0.707), interleaved=True), far, [], False,
     ["yarn attention factor 0.1*mscale_all_dim*ln(s) + 1"])

# The full q of DeepSeek MLA, [q_nope (qk_nope_head_dim 128) | q_pe (64)] as modeling_deepseek_v2.py splits it:
# read as such (the rope part at offset 128, the nope part passing through), and its rope part's mistake named.
full_q = np.concatenate([X[:, :, :128], rope(X[:, :, 128:192], far, inv_ds, attention=att_ds, interleaved=True)], -1)
full_out = case("deepseek_v2_lite_full_q", "DeepSeek-V2-Lite", full_q, far, [], True)
report("deepseek_v2_lite_full_q_said",
       "MLA: the data holds the full q/k, qk_nope_head_dim 128 + qk_rope_head_dim 64 = 192 channels" in full_out,
       detail=full_out)
full_q_mscale = np.concatenate(
    [X[:, :, :128], rope(X[:, :, 128:192], far, inv_ds, attention=get_mscale(40.0, 0.707), interleaved=True)], -1)
case("deepseek_v2_lite_full_q_mscale", "DeepSeek-V2-Lite", full_q_mscale, far, [], False,
     ["yarn attention factor 0.1*mscale_all_dim*ln(s) + 1"])
case("deepseek_v2_lite_full_q_given_offset", "DeepSeek-V2-Lite", full_q, far, ["--rotary-offset", "128"], True)

# NoPE layers: SmolLM3's list (layer 3 is (3+1) % 4 == 0) leaves q as it is; Llama-4's scales it by t(p).
case("smollm3_nope", "SmolLM3-3B", x128.copy(), far, ["--layer", "3"], True, resolved=["no_rope true (no_rope_layers)"])
pos = np.asarray(far, dtype=F32)
t = (np.log(np.floor((pos + F32(1)) / F32(8192)) + F32(1)) * F32(0.1) + F32(1)).astype(F32)
case("llama4_nope_temperature", "Llama-4-Scout-17B-16E", (x128 * t[:, None, None]).astype(F32), far,
     ["--layer", "3"], True, resolved=["attn_temperature llama4 (text_config.attn_temperature_tuning)"])

# SmolLM3's NoPE layer rotated anyway (the layer list ignored), and a RoPE layer left unrotated.
case("smollm3_nope_rotated", "SmolLM3-3B", rope(x128, far, default_inv_freq(5e6, 128)), far, ["--layer", "3"],
     False, ["rotated a NoPE layer"])
case("smollm3_rope_layer_not_rotated", "SmolLM3-3B", x128.copy(), far, ["--layer", "0"], False,
     ["the data was not rotated"])
# Llama-4's NoPE layer without its attention temperature.
case("llama4_temperature_forgotten", "Llama-4-Scout-17B-16E", x128.copy(), far, ["--layer", "3"], False,
     ["no attention temperature"])

# Llama-4's RoPE layers: llama3 (the base model's factor 8, low 1, high 4; the Instruct model's 16, 1, 1 is
# in scaling_bugs_test.py), base 500000,
# the complex pairs (2j, 2j+1) of modeling_llama4.py.
l4 = cfg("Llama-4-Scout-17B-16E")["text_config"]
inv_l4 = llama3_inv_freq(l4["rope_theta"], 128, l4["rope_scaling"])
case("llama4_rope_layer", "Llama-4-Scout-17B-16E", rope(x128, far, inv_l4, interleaved=True), far, ["--layer", "0"],
     True, resolved=["layout interleaved"])

# Qwen2.5-VL: M-RoPE sections [16, 24, 24] from rope_scaling.mrope_section; h and w swapped is named.
mpos = qwen_vl_positions(100_000)
np.save(WORK / "mrope_pos.npy", mpos)
xm = RNG.standard_normal((mpos.shape[1], H, 128)).astype(F32)
np.save(WORK / "mrope_x.npy", xm)
for name, axes, ok, words in (("qwen25vl", [0, 1, 2], True, ()), ("qwen25vl_h_w_swapped", [0, 2, 1], False,
                                                                 ["axes h and w swapped"])):
    np.save(WORK / f"{name}_y.npy", mrope_f32(xm, mpos[axes], 1e6, (16, 24, 24), False))
    judge(name, hf_check("mrope_x.npy", f"{name}_y.npy", "mrope_pos.npy", "Qwen2.5-VL-7B-Instruct"), ok, words)

# --json: the resolution beside the existing keys.
jf = WORK / "llama31.json"
subprocess.run(hf_check("llama31_x.npy", "llama31_y.npy", span(far), "Llama-3.1-8B") + ["--json", str(jf)],
               capture_output=True)
doc = json.loads(jf.read_text()) if jf.exists() else {}
hf = doc.get("hf_config", {})
report("json_hf_config", hf.get("resolved", {}).get("base", {}).get("key") == "rope_theta" and "parameters" in doc,
       hf.get("summary"))

finish("hf_config_test")
