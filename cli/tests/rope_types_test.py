#!/usr/bin/env python3
"""The text rope types as engines compute them (issue 50, item 2), each built here in numpy from the engine's
published definition, not from pe-suite's code, then checked:
  Gemma 4's rope_type "proportional" (transformers' _compute_proportional_rope_parameters: the exponent over
  head_dim, the pairs past int(partial_rotary_factor * head_dim // 2) at frequency 0, rotate_half over the whole
  head) passes under --scaling proportional and fails under HF's partial rotary reading of the same factor
  (rotary_dim = int(head_dim * F), the exponent over it), named;
  vLLM's and SGLang's DynamicNTKScalingRotaryEmbedding (one table, base' at max_len = factor * L) passes under
  --dynamic-semantics static and fails under HF's live length (n = max(seq_len, L)) below factor * L, named; and
  the reverse;
  vLLM's DynamicNTKAlphaRotaryEmbedding (Hunyuan's alpha: base' = base * alpha^(d/(d-2))) passes under --alpha;
  vLLM's YaRN attention (its mscale times attn_factor, where HF's attention_factor replaces it) passes under
  --yarn-attention multiply and is named under HF's precedence, and the reverse;
  the Gemma-4 text config (rope_parameters per layer type, global_head_dim) and Hunyuan's (rope_scaling with
  alpha) read by --hf-config into those types; bad values refused by name.

    rope_types_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import json

import numpy as np
from cli_cases import finish, judge, judge_bad, report, rope_check, said, setup
from hf_rope import get_mscale, rope, yarn_inv_freq

PE, WORK, RNG = setup(20261205)
T, H = 16, 2


def proportional_inv_freq(base, head_dim, partial_rotary_factor, factor=1.0):
    """_compute_proportional_rope_parameters: rope_angles = int(rope_proportion * head_dim // 2);
    1 / base^(arange(0, 2 * rope_angles, 2) / head_dim), then head_dim // 2 - rope_angles zeros; / factor."""
    rope_angles = int(partial_rotary_factor * head_dim // 2)
    rotated = 1.0 / (base ** (np.arange(0, 2 * rope_angles, 2, dtype=np.float64) / head_dim))
    return np.concatenate([rotated, np.zeros(head_dim // 2 - rope_angles)]) / factor


def partial_rotary_inv_freq(base, head_dim, partial_rotary_factor):
    """_compute_default_rope_parameters with partial_rotary_factor: dim = int(head_dim * F), 1 / base^(2j/dim)."""
    dim = int(head_dim * partial_rotary_factor)
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def vllm_dynamic_inv_freq(base, rotary_dim, max_position_embeddings, scaling_factor):
    """vLLM DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache: max_len = max_position_embeddings * s;
    base * ((s * max_len / max_position_embeddings) - (s - 1)) ** (rotary_dim / (rotary_dim - 2))."""
    max_len = max_position_embeddings * scaling_factor
    b = base * ((scaling_factor * max_len / max_position_embeddings) - (scaling_factor - 1)) ** (
        rotary_dim / (rotary_dim - 2))
    return 1.0 / (b ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim))


def hf_dynamic_inv_freq(base, dim, factor, max_position_embeddings, seq_len):
    """HF _compute_dynamic_ntk_parameters at seq_len = max(position_ids) + 1 (dynamic_rope_update), n >= L."""
    n = max(seq_len, max_position_embeddings)
    b = base * ((factor * n / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / (b ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def vllm_alpha_inv_freq(base, rotary_dim, alpha):
    """vLLM DynamicNTKAlphaRotaryEmbedding: base * scaling_alpha ** (rotary_dim / (rotary_dim - 2))."""
    b = base * alpha ** (rotary_dim / (rotary_dim - 2))
    return 1.0 / (b ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim))


def case(name, x, y, positions, args, words):
    """`words` None: the data must pass; else it must fail with every word on the "the data fits:" line."""
    judge(name, rope_check(PE, WORK, name, x, y, positions) + args, words is None, words or ())


# ---- Gemma 4's proportional RoPE: global head 128 here (512 in the checkpoints), F 0.25, rope_theta 1e6 ---------
D, F = 128, 0.25
x = RNG.standard_normal((T, H, D))
pos = list(range(3_000, 3_000 + T))
prop = rope(x, pos, proportional_inv_freq(1e6, D, F), D)
# The transcription's own premise: the pairs at frequency 0 are the input (channels 16..63 and 80..127).
k = int(F * D // 2)
still = np.r_[k:D // 2, D // 2 + k:D]
report("proportional_still_pairs_are_the_input", np.array_equal(prop[..., still], x[..., still]))
prop_args = ["--base", "1e6", "--scaling", "proportional", "--partial-rotary-factor", "0.25"]
case("gemma4_proportional", x, prop, pos, prop_args, None)
case("gemma4_proportional_checked_as_partial_rotary", x, prop, pos, ["--base", "1e6", "--partial-rotary-factor", "0.25"],
     ["proportional (partial_rotary_factor 0.25)", "exponent over head_dim 128",
      "checked as HF's partial rotary (rotary dim 32"])
# The reverse: HF's partial rotary (Phi-style: 32 channels, the exponent over 32) checked as proportional.
partial = rope(x, pos, partial_rotary_inv_freq(1e6, D, F), int(D * F))
case("partial_rotary", x, partial, pos, ["--base", "1e6", "--partial-rotary-factor", "0.25"], None)
case("partial_rotary_checked_as_proportional", x, partial, pos, prop_args,
     ["HF's partial rotary (rotary dim 32", "checked as proportional"])
# Proportional with a factor (inv_freq /= factor after the zeros), F 0.5.
prop_f = rope(x, pos, proportional_inv_freq(1e6, D, 0.5, factor=4.0), D)
case("proportional_factor_4", x, prop_f, pos,
     ["--base", "1e6", "--scaling", "proportional", "--partial-rotary-factor", "0.5", "--factor", "4"], None)

# ---- Dynamic NTK: vLLM's static table against HF's live length (L 4096, factor 2, head 128) --------------------
L, S = 4096, 2.0
dpos = list(range(5_000, 5_000 + T))  # seq_len 5016: below factor * L = 8192
dyn_args = ["--scaling", "dynamic", "--factor", "2", "--original-max-position", str(L)]
vllm = rope(x, dpos, vllm_dynamic_inv_freq(1e4, D, L, S), D)
hf = rope(x, dpos, hf_dynamic_inv_freq(1e4, D, S, L, dpos[-1] + 1), D)
report("vllm_and_hf_dynamic_differ_here", np.max(np.abs(vllm - hf)) > 0.1)
case("vllm_dynamic_static", x, vllm, dpos, dyn_args + ["--dynamic-semantics", "static"], None)
case("vllm_dynamic_checked_live", x, vllm, dpos, dyn_args + ["--seq-len", str(dpos[-1] + 1)],
     ["dynamic NTK computed with vLLM's static base (n = factor·L = 8192", "HF's live length was expected"])
case("hf_dynamic_live", x, hf, dpos, dyn_args + ["--seq-len", str(dpos[-1] + 1)], None)
case("hf_dynamic_checked_static", x, hf, dpos, dyn_args + ["--dynamic-semantics", "static"],
     ["dynamic NTK computed with HF's live length (n = max(seq_len, L) = 5016", "vLLM's static base was expected"])
# Where the sequence is the static table's length (seq_len = factor * L) both readings are one table.
at = list(range(2 * L - T, 2 * L))
hf_at = rope(x, at, hf_dynamic_inv_freq(1e4, D, S, L, at[-1] + 1), D)
case("static_is_live_at_factor_L", x, hf_at, at, dyn_args + ["--dynamic-semantics", "static"], None)

# ---- Hunyuan's alpha (vLLM DynamicNTKAlphaRotaryEmbedding), alpha 1000 -----------------------------------------
alpha = rope(x, dpos, vllm_alpha_inv_freq(1e4, D, 1000.0), D)
case("hunyuan_alpha", x, alpha, dpos, ["--scaling", "dynamic", "--alpha", "1000"], None)
case("dynamic_checked_with_alpha", x, hf, dpos, ["--scaling", "dynamic", "--alpha", "1000", "--factor", "2",
                                                  "--original-max-position", str(L), "--seq-len", str(dpos[-1] + 1)],
     "dynamic without alpha")

# ---- YaRN's attention_factor: HF replaces the mscale by it, vLLM multiplies (YaRNScalingRotaryEmbedding:
# mscale = yarn_get_mscale(s) * attn_factor; its frequencies are HF's find_correction_range and ramp) ----------
yarn_args = ["--base", "1e6", "--scaling", "yarn", "--factor", "4", "--original-max-position", "32768",
             "--attention-factor", "1.25"]
ypos = list(range(40_000, 40_000 + T))
vllm_yarn = rope(x, ypos, yarn_inv_freq(1e6, D, 4.0, 32768), D, get_mscale(4.0) * 1.25)
hf_yarn = rope(x, ypos, yarn_inv_freq(1e6, D, 4.0, 32768), D, 1.25)
case("vllm_yarn_multiply", x, vllm_yarn, ypos, yarn_args + ["--yarn-attention", "multiply"], None)
case("hf_yarn_replace", x, hf_yarn, ypos, yarn_args, None)
case("vllm_yarn_checked_as_hf", x, vllm_yarn, ypos, yarn_args,
     "yarn attention_factor multiplying its mscale (vLLM's and SGLang's yarn_attention multiply")
case("hf_yarn_checked_as_vllm", x, hf_yarn, ypos, yarn_args + ["--yarn-attention", "multiply"],
     "yarn attention_factor replacing its mscale (HF's yarn_attention replace")

# ---- Model configs: Gemma 4's text config and Hunyuan's ---------------------------------------------------------
gemma4 = {"model_type": "gemma4_text", "head_dim": 64, "global_head_dim": D, "num_hidden_layers": 6,
          "num_attention_heads": 8, "hidden_size": 512, "max_position_embeddings": 131072,
          "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
          "rope_parameters": {"full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                                                 "rope_type": "proportional"},
                              "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}}
(WORK / "gemma4.json").write_text(json.dumps(gemma4))
hf_full = ["--hf-config", str(WORK / "gemma4.json"), "--layer-type", "full_attention"]
case("gemma4_config_full_attention", x, prop, pos, hf_full, None)
hunyuan = {"model_type": "hunyuan_v1_dense", "head_dim": D, "num_attention_heads": 32, "hidden_size": 4096,
           "num_hidden_layers": 2, "max_position_embeddings": 262144, "rope_theta": 10000.0,
           "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                            "mscale_all_dim": 1.0, "type": "dynamic"}}
(WORK / "hunyuan.json").write_text(json.dumps(hunyuan))
case("hunyuan_config_alpha", x, alpha, dpos, ["--hf-config", str(WORK / "hunyuan.json")], None)
said("gemma4_config_named", [PE, "check", "--family", "rope", "--input", str(WORK / "gemma4_proportional_x.npy"),
                             "--output", str(WORK / "gemma4_proportional_y.npy"), "--positions",
                             f"{pos[0]}:{pos[-1] + 1}"] + hf_full, 0, ["proportional", "partial_rotary_factor 0.25"])

# ---- Bad values, refused by name ---------------------------------------------------------------------------------
data = rope_check(PE, WORK, "gemma4_proportional", x, prop, pos)
judge_bad("proportional_factor_zero", data + ["--scaling", "proportional", "--partial-rotary-factor", "0"],
          ["--partial-rotary-factor", "(0, 1]"])
judge_bad("proportional_no_pair", data + ["--scaling", "proportional", "--partial-rotary-factor", "0.01"],
          ["--partial-rotary-factor", "no rotating pair"])
judge_bad("dynamic_semantics_unknown", data + dyn_args + ["--dynamic-semantics", "lazy"],
          ["--dynamic-semantics", "live", "static"])
judge_bad("alpha_negative", data + ["--scaling", "dynamic", "--alpha", "-2"], ["--alpha", "> 0"])
judge_bad("yarn_attention_unknown", data + ["--scaling", "yarn", "--factor", "4", "--original-max-position", "4096",
                                           "--yarn-attention", "add"], ["--yarn-attention", "replace", "multiply"])
judge_bad("alpha_not_linear", data + ["--scaling", "linear", "--factor", "2", "--alpha", "3"],
          ["--alpha", "not used by --scaling linear"])

# The census under Gemma 4's type: every instance of a variant within its contract over the bands, the JSON
# recording the method and its share as given.
census_json = WORK / "census_proportional.json"
said("census_proportional", [PE, "census", "--variant", "rope.scalar_f64", "--scaling", "proportional",
                             "--partial-rotary-factor", "0.25", "--factor", "2", "--max-position", "65536",
                             "--out", str(census_json)], 0, ["scaling proportional", "within their contracts"])
recorded = json.loads(census_json.read_text()) if census_json.exists() else {}
report("census_proportional_recorded", recorded.get("rope_scaling") == {
    "type": "proportional", "factor": 2.0, "partial_rotary_factor": 0.25}, str(recorded.get("rope_scaling")))

finish("rope_types_test")
