#!/usr/bin/env python3
"""Independent conformance oracle for pe-suite's RoPE scaling: Hugging Face's published formulas,
evaluated in 80-digit decimal arithmetic, for documented model configurations.

Writes reference/tests/hf_conformance_cases.inc (scaling rules) and reference/tests/hf_conformance_form_cases.inc
(rotary forms: M-RoPE, 2-D vision RoPE, DeepSeek MLA's decoupled rotary part), which
reference/tests/hf_conformance_test.cc compares RopePlan and the MPFR reference against (each value within
1 ULP in float64; cos/sin also within 1 ULP in float32).

    python3 scripts/hf_conformance.py            # regenerate both .inc files
    python3 scripts/hf_conformance.py --print    # also print a summary of every case

Standard library only. The formulas are transcribed from transformers'
src/transformers/modeling_rope_utils.py (functions _compute_default_rope_parameters,
_compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters, _compute_yarn_parameters
with get_mscale / find_correction_dim / find_correction_range(truncate) / linear_ramp_factor,
_compute_longrope_parameters and _compute_llama3_parameters), plus the NTK-aware rule
base' = b * s**(d/(d-2)) (bloc97; HF has no rope_type for it). They are written here from that
source, not from pe-suite's rope_scaling_math.h, and in a different arithmetic (Python's decimal
module), so the two implementations share no code.

Arithmetic: every operation is carried out at 80 significant digits (ln, exp, sqrt are correctly
rounded by `decimal`; x**y = exp(y*ln x); pi from a 100-digit literal, not math.pi), then each
result is rounded once to float64 (float(Decimal) is correctly rounded). Inputs are the float64
values of the config numbers (Decimal(float) is exact). HF's literal constants 0.1 (get_mscale) and
0.001 (linear_ramp_factor) are taken as Python floats, i.e. Decimal(0.1) and Decimal(0.001) exactly,
as HF's double literals are. Everything else -- dim/(dim-2), 2j/dim, factor*seq_len/L, 2*pi -- is
evaluated exactly (to 80 digits), i.e. the mathematical formula, not HF's float32/float64
rounding of intermediate results: the test is about the formula, and pe-suite evaluates it in long
double / MPFR.

LongRoPE: HF builds ext_factors = torch.tensor(short_factor or long_factor, dtype=torch.float32),
so the config's numbers are rounded to float32 first. The oracle and the C++ test both use those
float32-rounded values (as float64 numbers), so the comparison is about the formula.

Rotary forms (FORM_CASES): which frequency and which position axis each rotated pair uses, and which
channels it reads and writes, are obtained by replaying HF's tensor bookkeeping on index lists, not
by a closed formula: Qwen2VLRotaryEmbedding + apply_multimodal_rotary_pos_emb (modeling_qwen2_vl.py:
cos.split(mrope_section * 2) with chunk i taking axis i % 3), Qwen3VLTextRotaryEmbedding
.apply_interleaved_mrope (modeling_qwen3_vl.py: freqs_t = freqs[0]; freqs_t[offset:3*s:3] =
freqs[dim] for (dim, offset) = (1, 1), (2, 2)), VisionRotaryEmbedding(head_dim // 2) + rot_pos_emb
(modeling_qwen2_vl.py: rotary_pos_emb_full[pos_ids].flatten(1), then cat((emb, emb))),
PixtralRotaryEmbedding (modeling_pixtral.py: cat(outer(h, freqs[::2]), outer(w, freqs[1::2])), then
cat((x, x))) and apply_rotary_pos_emb_interleave (modeling_deepseek_v3.py: view(d//2, 2).transpose
then rotate_half, q = cat(q_pass, q_rot)). Every head then goes through rotate_half, so pair j is
channels (j, j + d/2) of the (reordered) rotary block.
cos and sin of the angle p_axis(j) * inv_freq_j (times HF's attention_scaling) are evaluated in
decimal at 110 digits: the angle is reduced by 2*pi (a 100-digit literal) to [-pi, pi] and the
Taylor series summed until the terms fall below 10^-115; sin^2 + cos^2 = 1 is checked to 10^-100
and small angles against math.sin/math.cos. Each value is then rounded once, to float64 and,
separately (no double rounding), to float32. DeepSeek's softmax-scale multiplier (DeepseekV3Attention:
scaling *= mscale * mscale, mscale = yarn_get_mscale(factor, mscale_all_dim)) is emitted too.
"""

import argparse
import math
import struct
import sys
from decimal import Decimal as D, getcontext, localcontext, ROUND_FLOOR, ROUND_CEILING, ROUND_HALF_EVEN
from pathlib import Path

getcontext().prec = 80

PI = D("3.141592653589793238462643383279502884197169399375105820974944592307816406286"
       "208998628034825342117068")


def pw(x, y):
    """x**y for x > 0, as exp(y ln x)."""
    return (y * x.ln()).exp()


def f32(x):
    """Round a float64 to float32 (round to nearest even), returned as a float64."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ---------------------------------------------------------------------------------------------
# HF formulas (modeling_rope_utils.py), one function each; dim is the rotary dimension. D(x) of a
# Python int or float is its exact value.
# ---------------------------------------------------------------------------------------------

def hf_default(base, dim):
    # inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
    b = D(base)
    return [1 / pw(b, D(2 * j) / D(dim)) for j in range(dim // 2)]


def hf_linear(base, dim, factor):
    # inv_freq /= factor
    s = D(factor)
    return [w / s for w in hf_default(base, dim)]


def hf_ntk_base(base, dim, factor):
    # NTK-aware (bloc97): base * factor ** (dim / (dim - 2))
    return D(base) * pw(D(factor), D(dim) / D(dim - 2))


def hf_dynamic_base(base, dim, factor, max_pos, seq_len):
    # seq_len = seq_len if seq_len is not None and seq_len > max_pos else max_pos
    # base = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    n = seq_len if seq_len is not None and seq_len > max_pos else max_pos
    s = D(factor)
    inner = (s * D(n) / D(max_pos)) - (s - 1)
    return D(base) * pw(inner, D(dim) / D(dim - 2))


def get_mscale(scale, mscale=D(1)):
    # if scale <= 1: return 1.0; return 0.1 * mscale * math.log(scale) + 1.0
    if scale <= 1:
        return D(1)
    return D(0.1) * mscale * scale.ln() + 1


def hf_yarn(base, dim, factor, orig_max_pos, beta_fast=None, beta_slow=None, mscale=None,
            mscale_all_dim=None, attention_factor=None, truncate=True):
    b, s = D(base), D(factor)
    # attention_factor: explicit, else get_mscale(f, mscale)/get_mscale(f, mscale_all_dim) when both
    # are truthy, else get_mscale(f)
    if attention_factor is not None:
        att = D(attention_factor)
    elif mscale and mscale_all_dim:
        att = get_mscale(s, D(mscale)) / get_mscale(s, D(mscale_all_dim))
    else:
        att = get_mscale(s)
    beta_fast = beta_fast or 32
    beta_slow = beta_slow or 1

    def find_correction_dim(num_rotations):
        # (dim * log(max_pos / (num_rotations * 2 * pi))) / (2 * log(base))
        return (D(dim) * (D(orig_max_pos) / (D(num_rotations) * 2 * PI)).ln()) / (2 * b.ln())

    low = find_correction_dim(beta_fast)
    high = find_correction_dim(beta_slow)
    if truncate:
        low, high = low.to_integral_value(ROUND_FLOOR), high.to_integral_value(ROUND_CEILING)
    low = max(low, D(0))
    high = min(high, D(dim - 1))

    # linear_ramp_factor(low, high, dim // 2): max += 0.001 if min == max; clamp((j - min)/(max - min))
    top = high + D(0.001) if low == high else high
    inv = []
    for j, w in enumerate(hf_default(base, dim)):
        ramp = (D(j) - low) / (top - low)
        ramp = min(max(ramp, D(0)), D(1))
        extrapolation_factor = 1 - ramp
        interpolation = w / s  # 1 / (factor * pos_freqs)
        inv.append(interpolation * (1 - extrapolation_factor) + w * extrapolation_factor)
    return inv, att, (low, high)


def yarn_of(base, dim, sc):
    """hf_yarn with a case's scaling fields."""
    return hf_yarn(base, dim, sc["factor"], sc["original_max_position"], sc.get("beta_fast"), sc.get("beta_slow"),
                   sc.get("mscale"), sc.get("mscale_all_dim"), sc.get("attention_factor"), sc.get("truncate", True))


def hf_longrope(base, dim, factor, orig_max_pos, short_factor, long_factor, seq_len=None,
                attention_factor=None):
    s = D(factor)
    if attention_factor is not None:
        att = D(attention_factor)
    elif s <= 1:
        att = D(1)
    else:
        att = (1 + s.ln() / D(orig_max_pos).ln()).sqrt()
    ext = long_factor if seq_len and seq_len > orig_max_pos else short_factor
    b = D(base)
    # inv_freq = 1.0 / (ext_factors * base ** (arange(0, dim, 2) / dim)), ext_factors float32
    inv = [1 / (D(ext[j]) * pw(b, D(2 * j) / D(dim))) for j in range(dim // 2)]
    return inv, att


def hf_llama3(base, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    s, lo, hi, L = D(factor), D(low_freq_factor), D(high_freq_factor), D(old_context_len)
    low_freq_wavelen = L / lo
    high_freq_wavelen = L / hi
    out = []
    for w in hf_default(base, dim):
        wavelen = 2 * PI / w
        # torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        w_llama = w / s if wavelen > low_freq_wavelen else w
        smooth = (L / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * w_llama / s + smooth * w_llama
        is_medium = (not (wavelen < high_freq_wavelen)) and (not (wavelen > low_freq_wavelen))
        out.append(smoothed if is_medium else w_llama)
    return out


# ---------------------------------------------------------------------------------------------
# Documented inputs.
# ---------------------------------------------------------------------------------------------

# microsoft/Phi-3-mini-128k-instruct, first release (April 2024, rope_scaling type "su"): the
# LONG_FACTORS / SHORT_FACTORS of a torchtune phi3_mini_128k() model builder found in the stored
# public code index (it mirrors the model's config.json). 48 = head_dim 96 / 2 values each.
PHI3_MINI_128K_LONG = [
    1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0799999237060547,
    1.2299998998641968, 1.2299998998641968, 1.2999999523162842, 1.4499999284744263,
    1.5999999046325684, 1.6499998569488525, 1.8999998569488525, 2.859999895095825,
    3.68999981880188, 5.419999599456787, 5.489999771118164, 5.489999771118164,
    9.09000015258789, 11.579999923706055, 15.65999984741211, 15.769999504089355,
    15.789999961853027, 18.360000610351562, 21.989999771118164, 23.079999923706055,
    30.009998321533203, 32.35000228881836, 32.590003967285156, 35.56000518798828,
    39.95000457763672, 53.840003967285156, 56.20000457763672, 57.95000457763672,
    59.29000473022461, 59.77000427246094, 59.920005798339844, 61.190006256103516,
    61.96000671386719, 62.50000762939453, 63.3700065612793, 63.48000717163086,
    63.48000717163086, 63.66000747680664, 63.850006103515625, 64.08000946044922,
    64.760009765625, 64.80001068115234, 64.81001281738281, 64.81001281738281,
]
PHI3_MINI_128K_SHORT = [
    1.05, 1.05, 1.05, 1.1, 1.1, 1.1500000000000001, 1.2000000000000002, 1.2500000000000002,
    1.3000000000000003, 1.3500000000000003, 1.5000000000000004, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.1000000000000005,
    2.1000000000000005, 2.1000000000000005, 2.1500000000000004, 2.1500000000000004,
    2.3499999999999996, 2.549999999999999, 2.5999999999999988, 2.5999999999999988,
    2.7499999999999982, 2.849999999999998, 2.849999999999998, 2.9499999999999975,
]
# microsoft/Phi-3.5-mini-instruct config.json (transformers_version 4.46.3), rope_scaling type
# "longrope", as embedded verbatim in two public benchmark scripts of the stored code index.
PHI35_MINI_LONG = [
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601,
    1.5899999141693115, 1.600000023841858, 1.6200000047683716, 2.620000123977661,
    3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432,
    7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945,
    24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992,
    50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305,
    58.21000289916992, 60.1400032043457, 62.61000442504883, 62.62000274658203,
    62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094,
    63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
    64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938,
    64.4800033569336, 64.51000213623047, 64.52999877929688, 64.83999633789062,
]
PHI35_MINI_SHORT = [
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842,
    1.0699999332427979, 1.0999999046325684, 1.1099998950958252, 1.1599998474121094,
    1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022,
    1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
    1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
    2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533,
    2.729999542236328, 2.749999523162842, 2.8399994373321533,
]
assert len(PHI3_MINI_128K_LONG) == len(PHI3_MINI_128K_SHORT) == 48
assert len(PHI35_MINI_LONG) == len(PHI35_MINI_SHORT) == 48

# Each case: name, source (a comment in the .inc), head_dim, base, the scaling and the rotary dim (int,
# default head_dim, or ("partial", factor) for HF's int(head_dim * partial_rotary_factor)). `scaling` keys
# are pe::RopeScaling field names; `type` is the pe::RopeScalingType enumerator.
NO_SCALING = dict(type="None")
DEEPSEEK_YARN = dict(type="Yarn", factor=40.0, original_max_position=4096, beta_fast=32.0, beta_slow=1.0)
PHI3_LONGROPE = dict(type="LongRope", factor=32.0, original_max_position=4096, short_factor=PHI3_MINI_128K_SHORT,
                     long_factor=PHI3_MINI_128K_LONG)
PHI35_LONGROPE = dict(PHI3_LONGROPE, short_factor=PHI35_MINI_SHORT, long_factor=PHI35_MINI_LONG)


def case(name, source, head_dim, base, scaling=NO_SCALING, rotary=None, **form):
    """One case as a dict; `form` (FORM_CASES) adds layout, rotary_offset, form and positions."""
    return dict(name=name, source=source, head_dim=head_dim, rotary=rotary or head_dim, base=base, scaling=scaling,
                **form)


CASES = [
    case("llama2_7b_default", "Llama-2-7b: rope_theta 10000, head_dim 4096/32 = 128, no rope_scaling", 128, 10000.0),
    case("llama31_8b", "meta-llama/Llama-3.1-8B config.json: rope_theta 500000, head_dim 128, "
         "rope_scaling {rope_type llama3, factor 8, low_freq_factor 1, high_freq_factor 4, "
         "original_max_position_embeddings 8192}", 128, 500000.0,
         dict(type="Llama3", factor=8.0, original_max_position=8192, low_freq_factor=1.0, high_freq_factor=4.0)),
    case("llama32_3b", "meta-llama/Llama-3.2-3B config.json: rope_theta 500000, head_dim 3072/24 = 128, "
         "rope_scaling {rope_type llama3, factor 32, low_freq_factor 1, high_freq_factor 4, "
         "original_max_position_embeddings 8192}", 128, 500000.0,
         dict(type="Llama3", factor=32.0, original_max_position=8192, low_freq_factor=1.0, high_freq_factor=4.0)),
    case("linear_f4", "linear (position interpolation, kaiokendev): factor 4, head_dim 128, theta 10000",
         128, 10000.0, dict(type="Linear", factor=4.0)),
    case("ntk_f4", "NTK-aware (bloc97): factor 4, head_dim 128, theta 10000; base' = b*s^(d/(d-2))",
         128, 10000.0, dict(type="Ntk", factor=4.0)),
] + [
    case(f"dynamic_f2_n{n}", f"HF dynamic: factor 2, max_position_embeddings 4096, seq_len {n}, "
         "head_dim 128, theta 10000", 128, 10000.0,
         dict(type="Dynamic", factor=2.0, original_max_position=4096, seq_len=n))
    for n in (4095, 4096, 4097, 16384)
] + [
    case("qwen25_yarn_f4", "Qwen2.5-7B-Instruct README long-context recipe: rope_scaling {type yarn, "
         "factor 4, original_max_position_embeddings 32768}; rope_theta 1e6, head_dim 3584/28 = 128",
         128, 1000000.0, dict(type="Yarn", factor=4.0, original_max_position=32768)),
    case("deepseek_v3_yarn", "deepseek-ai/DeepSeek-V3 config.json: rope_theta 10000, "
         "qk_rope_head_dim 64, rope_scaling {type yarn, factor 40, beta_fast 32, beta_slow 1, mscale 1.0, "
         "mscale_all_dim 1.0, original_max_position_embeddings 4096}",
         64, 10000.0, dict(DEEPSEEK_YARN, mscale=1.0, mscale_all_dim=1.0)),
    case("deepseek_v2_yarn", "deepseek-ai/DeepSeek-V2 config.json: rope_theta 10000, "
         "qk_rope_head_dim 64, rope_scaling {type yarn, factor 40, beta_fast 32, beta_slow 1, mscale 0.707, "
         "mscale_all_dim 0.707, original_max_position_embeddings 4096}",
         64, 10000.0, dict(DEEPSEEK_YARN, mscale=0.707, mscale_all_dim=0.707)),
    case("yarn_mscale_ne_all_dim", "SYNTHETIC (DeepSeek-V2 shape with mscale 1.0 != mscale_all_dim "
         "0.707, so the attention factor is not 1): factor 40, original 4096, theta 10000, dim 64",
         64, 10000.0, dict(DEEPSEEK_YARN, mscale=1.0, mscale_all_dim=0.707)),
    case("yarn_explicit_attention", "SYNTHETIC: YaRN with an explicit attention_factor 0.8 "
         "(overrides mscale), factor 8, original 4096, theta 10000, dim 128",
         128, 10000.0, dict(type="Yarn", factor=8.0, original_max_position=4096, attention_factor=0.8)),
    case("gpt_oss_yarn_untruncated", "openai/gpt-oss-20b config.json: rope_theta 150000, head_dim 64, "
         "rope_scaling {rope_type yarn, factor 32, beta_fast 32, beta_slow 1, "
         "original_max_position_embeddings 4096, truncate false}",
         64, 150000.0, dict(DEEPSEEK_YARN, factor=32.0, truncate=False)),
    case("yarn_equal_betas_untruncated", "SYNTHETIC: YaRN with beta_fast = beta_slow = 8 and "
         "truncate false, so low == high and linear_ramp_factor adds its 0.001; factor 4, original 4096, "
         "theta 10000, dim 128",
         128, 10000.0, dict(DEEPSEEK_YARN, factor=4.0, beta_fast=8.0, beta_slow=8.0, truncate=False)),
    case("phi3_mini_128k_short", "microsoft/Phi-3-mini-128k-instruct (first release, type su/longrope): "
         "rope_theta 10000, head_dim 3072/32 = 96, original_max_position_embeddings 4096, "
         "factor = 131072/4096 = 32, short_factor, seq_len 4096", 96, 10000.0, dict(PHI3_LONGROPE, seq_len=4096)),
    case("phi3_mini_128k_long", "microsoft/Phi-3-mini-128k-instruct as above, seq_len 8192 > 4096: "
         "long_factor", 96, 10000.0, dict(PHI3_LONGROPE, seq_len=8192)),
    case("phi35_mini_short", "microsoft/Phi-3.5-mini-instruct config.json: rope_theta 10000, "
         "head_dim 96, original 4096, factor 131072/4096 = 32, short_factor, seq_len 0 (HF None)",
         96, 10000.0, dict(PHI35_LONGROPE, seq_len=0)),
    case("phi35_mini_long", "microsoft/Phi-3.5-mini-instruct as above, seq_len 131072: long_factor",
         96, 10000.0, dict(PHI35_LONGROPE, seq_len=131072)),
    case("phi2_partial_rotary", "microsoft/phi-2 config.json: head_dim 2560/32 = 80, "
         "partial_rotary_factor 0.4 -> int(80*0.4) = 32, rope_theta 10000, no scaling",
         80, 10000.0, rotary=("partial", 0.4)),
    case("phi2_partial_rotary_yarn", "SYNTHETIC: phi-2 shape (head_dim 80, partial_rotary_factor 0.4 "
         "-> dim 32, theta 10000) with YaRN factor 4, original 2048, beta 32/1",
         80, 10000.0, dict(type="Yarn", factor=4.0, original_max_position=2048), rotary=("partial", 0.4)),
    case("yarn_high_clamped_to_dim_minus_1", "SYNTHETIC: YaRN whose raw correction range [4, 8] "
         "passes dim/2 - 1 = 7: HF clamps high to dim - 1 = 15 only, so the ramp still runs over pairs 4..7 "
         "(pair 7: ramp 0.75); dim 16, theta 10000, factor 4, original 32768, beta 32/1",
         16, 10000.0, dict(type="Yarn", factor=4.0, original_max_position=32768)),
]


def evaluate(case):
    """Returns (inv_freq list of Decimal, attention Decimal, effective base Decimal, rotary dim, note)."""
    head_dim, base, sc = case["head_dim"], case["base"], case["scaling"]
    rot = case["rotary"]
    dim = int(head_dim * rot[1]) if isinstance(rot, tuple) else rot  # HF: int(head_dim * prf), in float
    t = sc["type"]
    att, eff, note = D(1), D(base), ""
    if t == "None":
        inv = hf_default(base, dim)
    elif t == "Linear":
        inv = hf_linear(base, dim, sc["factor"])
    elif t in ("Ntk", "Dynamic"):
        eff = hf_ntk_base(base, dim, sc["factor"]) if t == "Ntk" else \
            hf_dynamic_base(base, dim, sc["factor"], sc["original_max_position"], sc.get("seq_len"))
        inv = hf_default(eff, dim)
    elif t == "Yarn":
        inv, att, (lo, hi) = yarn_of(base, dim, sc)
        note = f"correction range [{float(lo):.17g}, {float(hi):.17g}]"
    elif t == "LongRope":
        short = [f32(x) for x in sc["short_factor"]]
        long_ = [f32(x) for x in sc["long_factor"]]
        inv, att = hf_longrope(base, dim, sc["factor"], sc["original_max_position"], short, long_,
                               sc.get("seq_len"), sc.get("attention_factor"))
        sl = sc.get("seq_len")
        note = "long_factor" if sl and sl > sc["original_max_position"] else "short_factor"
    elif t == "Llama3":
        inv = hf_llama3(base, dim, sc["factor"], sc["low_freq_factor"], sc["high_freq_factor"],
                        sc["original_max_position"])
    else:
        raise ValueError(t)
    return inv, att, eff, dim, note


def hexf(x):
    """A float64 as an exact C++ hex literal."""
    if isinstance(x, D):
        x = float(x)  # correctly rounded
    assert math.isfinite(x)
    return x.hex() if x != 0 else "0x0p+0"


def cxx_params(case):
    sc = case["scaling"]
    rot = case["rotary"]
    parts = [f"p.head_dim = {case['head_dim']};"]
    if isinstance(rot, tuple):
        parts.append(f"p.rotary_dim = pe::partial_rotary_dim({case['head_dim']}, {hexf(rot[1])});")
    else:
        parts.append(f"p.rotary_dim = {rot};")
    if case.get("rotary_offset"):
        parts.append(f"p.rotary_offset = {int(case['rotary_offset'])};")
    parts.append(f"p.base = {hexf(case['base'])};")
    parts.append(f"p.layout = pe::Layout::{case.get('layout', 'HalfSplit')};")
    parts.append(f"p.scaling.type = pe::RopeScalingType::{sc['type']};")
    for key in ("factor", "beta_fast", "beta_slow", "low_freq_factor", "high_freq_factor", "original_max_position",
                "seq_len", "truncate", "mscale", "mscale_all_dim", "attention_factor", "short_factor", "long_factor"):
        v = sc.get(key)
        if key in ("original_max_position", "seq_len") and v is not None:
            parts.append(f"p.scaling.{key} = {int(v)};")
        elif key == "truncate" and v is not None:
            parts.append(f"p.scaling.truncate = {'true' if v else 'false'};")
        elif isinstance(v, list):
            parts.append(f"p.scaling.{key} = {{{', '.join(hexf(f32(x)) for x in v)}}};")
        elif v is not None:
            parts.append(f"p.scaling.{key} = {hexf(v)};")
    form = case.get("form", {})
    if "mrope_section" in form:
        parts.append("p.form.mrope_section = {" + ", ".join(str(int(x)) for x in form["mrope_section"]) + "};")
        parts.append(f"p.form.mrope_layout = pe::MropeLayout::{form['mrope_layout']};")
    if "vision" in form:
        parts.append(f"p.form.vision = pe::VisionRope::{form['vision']};")
    return "[] { pe::RopeParams p; " + " ".join(parts) + " return p; }()"


# ---------------------------------------------------------------------------------------------
# Rotary forms: HF's bookkeeping replayed on index lists, and cos/sin in 110-digit decimal.
# ---------------------------------------------------------------------------------------------

TRIG_PREC = 110  # digits for the angle reduction and the Taylor series


def cos_sin_dec(x):
    """(cos x, sin x) to about 100 significant digits (absolute error < 1e-100 for |x| <= 1e7)."""
    with localcontext() as ctx:
        ctx.prec = TRIG_PREC
        two_pi = 2 * PI
        k = (x / two_pi).to_integral_value(rounding=ROUND_HALF_EVEN)
        r = x - k * two_pi  # |r| <= pi (+ a rounding); the 100-digit pi costs |k| * 1e-99
        eps = D(10) ** -(TRIG_PREC + 5)
        r2 = r * r
        # sin r = sum (-1)^n r^(2n+1)/(2n+1)!, cos r = sum (-1)^n r^(2n)/(2n)!; for |r| <= pi the
        # terms fall monotonically after n = 2, and the largest is < 5, so at most one digit cancels.
        s_term, s_sum = r, r
        c_term, c_sum = D(1), D(1)
        n = 1
        while True:
            s_term = -s_term * r2 / ((2 * n) * (2 * n + 1))
            c_term = -c_term * r2 / ((2 * n - 1) * (2 * n))
            s_sum += s_term
            c_sum += c_term
            n += 1
            if abs(s_term) < eps and abs(c_term) < eps:
                break
        # Self-checks: the identity, and small arguments against the C library.
        assert abs(s_sum * s_sum + c_sum * c_sum - 1) < D(10) ** -100, x
        if abs(x) < 100:
            assert abs(float(c_sum) - math.cos(float(x))) < 1e-14 and abs(float(s_sum) - math.sin(float(x))) < 1e-14
        return +c_sum, +s_sum


def round_binary(x, mant_bits, min_exp):
    """x (Decimal) rounded once, to nearest even, to a binary format with `mant_bits` fraction bits
    and normal exponents >= min_exp (below it, the subnormal spacing); returned as a Python float."""
    if x == 0:
        return 0.0
    with localcontext() as ctx:
        ctx.prec = 250
        a = abs(x)
        _, e2 = math.frexp(float(a))
        e = e2 - 1  # 2^e <= a < 2^(e+1), up to float(a) rounding across a power of two
        while D(2) ** e > a:
            e -= 1
        while D(2) ** (e + 1) <= a:
            e += 1
        e = max(e, min_exp)
        m = (a * D(2) ** (mant_bits - e)).to_integral_value(rounding=ROUND_HALF_EVEN)
        v = math.ldexp(int(m), e - mant_bits)
    return -v if x < 0 else v


def to_f64(x):
    v = round_binary(x, 52, -1022)
    assert v == float(x), x  # CPython's float(Decimal) is correctly rounded too
    return v


def to_f32(x):
    v = round_binary(x, 23, -126)
    assert f32(v) == v
    return v


def hf_mrope_sectioned_axes(n_pairs, mrope_section):
    """apply_multimodal_rotary_pos_emb: cos (2n channels, = cat(freqs, freqs)) is split into
    mrope_section * 2 chunks and chunk i takes the rows of axis i % 3. Returns each channel's axis."""
    axis = [i % 3 for i, size in enumerate(list(mrope_section) * 2) for _ in range(size)]
    assert len(axis) == 2 * n_pairs
    return axis


def hf_mrope_interleaved_axes(n_pairs, mrope_section):
    """Qwen3VL apply_interleaved_mrope: freqs_t = freqs[0] (axis t); for dim, offset in ((1, 1), (2, 2)):
    freqs_t[..., offset:mrope_section[dim]*3:3] = freqs[dim]. Then emb = cat((freqs, freqs))."""
    freqs_axis = [0] * n_pairs
    for dim, offset in enumerate((1, 2), start=1):
        length = mrope_section[dim] * 3
        for idx in range(offset, min(length, n_pairs), 3):
            freqs_axis[idx] = dim
    return freqs_axis + freqs_axis


def form_pairs(case):
    """Per rotated pair j: (inv_freq Decimal, axis, (in0, in1, out0, out1)), from HF's code."""
    head_dim, rot, base = case["head_dim"], case["rotary"], case["base"]
    offset = case.get("rotary_offset", 0)
    form = case.get("form", {})
    n = rot // 2
    sc = case["scaling"]
    if sc["type"] == "Yarn":  # DeepSeek: DeepseekV3RotaryEmbedding over qk_rope_head_dim
        inv, att, _ = yarn_of(base, rot, sc)
    else:
        assert sc["type"] == "None"
        inv, att = None, D(1)
    # Per channel of the rotary block (after any reordering): (frequency, axis), the cos/sin row.
    if form.get("vision") == "Qwen2vl":
        # VisionRotaryEmbedding(head_dim // 2): inv_freq = 1/theta^(arange(0, dim, 2)/dim), dim = D/2;
        # rot_pos_emb: freqs[pos_ids] with pos_ids (h, w) -> (N, 2, D/4).flatten(1) = [h*w_k | w*w_k].
        vdim = head_dim // 2
        w = [1 / pw(D(base), D(k) / D(vdim)) for k in range(0, vdim, 2)]
        row = [(wk, 0) for wk in w] + [(wk, 1) for wk in w]
        row = row + row  # emb = cat((rotary_pos_emb, rotary_pos_emb))
    elif form.get("vision") == "Pixtral":
        # freqs = 1/theta^(arange(0, D, 2)/D); [outer(h, freqs[::2]) | outer(w, freqs[1::2])], cat((x, x)).
        freqs = [1 / pw(D(base), D(k) / D(head_dim)) for k in range(0, head_dim, 2)]
        row = [(f, 0) for f in freqs[::2]] + [(f, 1) for f in freqs[1::2]]
        row = row + row
    elif "mrope_section" in form:
        inv = hf_default(base, rot)
        if form["mrope_layout"] == "Sectioned":
            axes = hf_mrope_sectioned_axes(n, form["mrope_section"])
        else:
            axes = hf_mrope_interleaved_axes(n, form["mrope_section"])
        row = [(inv[c % n], axes[c]) for c in range(2 * n)]  # emb = cat((freqs, freqs))
    else:
        row = [(w, 0) for w in inv] * 2
    assert len(row) == 2 * n
    # Input channel of each position of the rotary block: identity, or DeepSeek's
    # q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d).
    if case.get("layout") == "Deinterleave":
        perm = list(range(0, 2 * n, 2)) + list(range(1, 2 * n, 2))
    else:
        perm = list(range(2 * n))
    pairs = []
    for j in range(n):
        # rotate_half pairs channel j with j + n; both must carry the same frequency and axis.
        assert row[j] == row[j + n], (case["name"], j)
        pairs.append((row[j][0], row[j][1], (offset + perm[j], offset + perm[j + n], offset + j, offset + j + n)))
    return pairs, att


def deepseek_softmax_multiplier(sc):
    """DeepseekV3Attention: if mscale_all_dim: scaling *= mscale * mscale, mscale = yarn_get_mscale(
    factor, mscale_all_dim) = 0.1 * mscale_all_dim * ln(factor) + 1 (factor > 1)."""
    m = get_mscale(D(sc["factor"]), D(sc["mscale_all_dim"]))
    return m * m


# Each form case: as CASES, plus layout, rotary_offset, form (pe::RopeForm fields) and positions, one
# tuple per token with one entry per position axis (t, h, w for M-RoPE; h, w for vision).
MROPE_POSITIONS = [(7, 3, 5), (12345, 12345, 12345), (4096, 4000, 3999), (1000000, 999990, 999975)]
VISION_POSITIONS = [(37, 5), (63, 0), (1000, 999)]
DEEPSEEK_POSITIONS = [(1,), (4095,), (163839,), (1000000,)]

FORM_CASES = [
    case("qwen25_vl_7b_mrope", "Qwen/Qwen2.5-VL-7B-Instruct config.json (as embedded in public "
         "test and eval configs of the stored code index): hidden_size 3584 / num_attention_heads 28 = head_dim "
         "128, rope_theta 1000000.0, rope_scaling {type mrope, mrope_section [16, 24, 24]} (HF maps mrope to "
         "default); HF apply_multimodal_rotary_pos_emb (sectioned)", 128, 1000000.0,
         form=dict(mrope_section=[16, 24, 24], mrope_layout="Sectioned"), positions=MROPE_POSITIONS),
    case("qwen3_vl_8b_imrope", "Qwen/Qwen3-VL-8B-Instruct text_config (config.json not read "
         "directly; values as in a Qwen3-VL transformers-4.57.1 config in the stored code index and NVIDIA "
         "Megatron-Bridge Qwen3VLModelProvider): head_dim 128, rope_theta 5000000, rope_scaling "
         "{rope_type default, mrope_interleaved true, mrope_section [24, 20, 20]}; HF apply_interleaved_mrope", 128, 5000000.0,
         form=dict(mrope_section=[24, 20, 20], mrope_layout="Interleaved"), positions=MROPE_POSITIONS),
    case("qwen2_vl_vit_rope", "Qwen2-VL / Qwen2.5-VL ViT (vision_config embed_dim/hidden_size 1280, "
         "num_heads 16 -> head_dim 80): HF VisionRotaryEmbedding(head_dim // 2 = 40, theta 10000) + rot_pos_emb "
         "(h, w); positions past the image grid extrapolate the formula", 80, 10000.0,
         form=dict(vision="Qwen2vl"), positions=VISION_POSITIONS),
    case("pixtral_12b_vision_rope", "mistral-community/pixtral-12b vision_config (well-known values, "
         "= HF PixtralVisionConfig defaults): hidden_size 1024 / num_attention_heads 16 = head_dim 64, rope_theta "
         "10000.0, image_size 1024 / patch_size 16 = 64 patches a side; HF PixtralRotaryEmbedding (positions "
         "past 63 extrapolate the formula: HF's table stops at 64 a side)", 64, 10000.0,
         form=dict(vision="Pixtral"), positions=VISION_POSITIONS),
    case("deepseek_v2_lite_mla", "deepseek-ai/DeepSeek-V2-Lite config.json: qk_nope_head_dim 128, "
         "qk_rope_head_dim 64 (q = cat(q_pass, q_rot): rotary_offset 128, head_dim 192), rope_theta 10000, "
         "rope_scaling {type yarn, factor 40, original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, "
         "mscale 0.707, mscale_all_dim 0.707} (max_position_embeddings 163840 = 40 * 4096); HF "
         "apply_rotary_pos_emb_interleave", 192, 10000.0, dict(DEEPSEEK_YARN, mscale=0.707, mscale_all_dim=0.707),
         rotary=64, rotary_offset=128, layout="Deinterleave", positions=DEEPSEEK_POSITIONS),
    case("deepseek_v3_mla", "deepseek-ai/DeepSeek-V3 config.json: qk_nope_head_dim 128, "
         "qk_rope_head_dim 64 (rotary_offset 128, head_dim 192), rope_theta 10000, rope_scaling {type yarn, "
         "factor 40, original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, mscale 1.0, "
         "mscale_all_dim 1.0} (max_position_embeddings 163840); HF apply_rotary_pos_emb_interleave",
         192, 10000.0, dict(DEEPSEEK_YARN, mscale=1.0, mscale_all_dim=1.0), rotary=64, rotary_offset=128,
         layout="Deinterleave", positions=DEEPSEEK_POSITIONS),
]


def form_case_lines(case, verbose):
    pairs, att = form_pairs(case)
    n_axes = len(case["positions"][0])
    assert all(len(p) == n_axes for p in case["positions"])
    assert max(a for _, a, _ in pairs) < n_axes
    sc = case["scaling"]
    softmax = deepseek_softmax_multiplier(sc) if sc.get("mscale_all_dim") else D(0)
    values = []
    for pos in case["positions"]:
        for w, axis, _ in pairs:
            c, s_ = cos_sin_dec(D(pos[axis]) * w)
            c, s_ = c * att, s_ * att  # HF: cos = emb.cos() * attention_scaling
            values += [to_f64(c), to_f64(s_), to_f32(c), to_f32(s_)]
    if verbose:
        print(f"{case['name']}: {len(pairs)} pairs, {n_axes} axes, attention {float(att)!r}, "
              f"softmax multiplier {float(softmax)!r}, axes {''.join(str(a) for _, a, _ in pairs)}",
              file=sys.stderr)
    inv_s = ", ".join(hexf(w) for w, _, _ in pairs)
    axis_s = ", ".join(str(a) for _, a, _ in pairs)
    chan_s = ", ".join(str(x) for _, _, ch in pairs for x in ch)
    pos_s = ", ".join(str(x) for pos in case["positions"] for x in pos)
    val_s = ", ".join(hexf(v) for v in values)
    return [f"// {case['name']}: {case['source']}",
            f'{{"{case["name"]}", {cxx_params(case)}, /*n_axes*/ {n_axes}, /*attention*/ {hexf(att)}, '
            f"/*softmax_multiplier*/ {hexf(softmax)},",
            f" /*inv_freq*/ {{{inv_s}}},",
            f" /*axis*/ {{{axis_s}}},",
            f" /*channels*/ {{{chan_s}}},",
            f" /*positions*/ {{{pos_s}}},",
            f" /*cos_sin*/ {{{val_s}}}}},"], len(pairs), len(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tests = Path(__file__).resolve().parent.parent / "reference" / "tests"
    ap.add_argument("--out", default=str(tests / "hf_conformance_cases.inc"))
    ap.add_argument("--form-out", default=str(tests / "hf_conformance_form_cases.inc"))
    ap.add_argument("--print", action="store_true", help="print a summary of every case")
    args = ap.parse_args()

    generated = ["// GENERATED by scripts/hf_conformance.py -- do not edit by hand.",
                 "// Regenerate: python3 scripts/hf_conformance.py   (standard library only)", "//"]
    lines = generated + [
        "// Expected RoPE inverse frequencies, attention factors and effective bases, computed from",
        "// Hugging Face transformers' modeling_rope_utils.py formulas in 80-digit decimal arithmetic",
        "// and rounded once to float64 (see the script's docstring for the exact conventions).",
        "// Entry: {name, pe::RopeParams, attention, effective_base, {inv_freq[j] for j < rotary_dim/2}}.",
        "// LongRoPE: HF keeps short_factor/long_factor as float32 tensors, so the config's numbers are",
        "// rounded to float32 here and the same float32 values (written as float64) feed both sides.",
        "",
    ]
    total_pairs = 0
    for case in CASES:
        inv, att, eff, dim, note = evaluate(case)
        total_pairs += len(inv)
        if args.print:
            print(f"{case['name']}: dim {dim}, attention {float(att)!r}, effective_base {float(eff)!r}"
                  f"{', ' + note if note else ''}", file=sys.stderr)
            print(f"  inv_freq[0..2] = {[float(v) for v in inv[:3]]}, last = {float(inv[-1])!r}", file=sys.stderr)
        lines.append(f"// {case['name']}: {case['source']}" + (f" ({note})" if note else ""))
        inv_s = ", ".join(hexf(v) for v in inv)
        lines.append(f'{{"{case["name"]}", {cxx_params(case)}, /*attention*/ {hexf(att)}, '
                     f"/*effective_base*/ {hexf(eff)}, {{{inv_s}}}}},")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {len(CASES)} cases, {total_pairs} pairs", file=sys.stderr)

    lines = generated + [
        "// Rotary forms (M-RoPE, 2-D vision RoPE, DeepSeek MLA's decoupled rotary part): per rotated pair j,",
        "// the frequency, the position axis and the channels HF's code gives it, and cos/sin (times",
        "// attention_scaling) at the listed positions, in 80/110-digit decimal, each rounded once to",
        "// float64 and to float32 (see the script's docstring).",
        "// Entry: {name, pe::RopeParams, n_axes, attention, softmax_multiplier (DeepSeek's mscale^2, else 0),",
        "//         inv_freq[j], axis[j], channels[4j..4j+3] = {input first, input second, output first,",
        "//         output second}, positions[t*n_axes + a], cos_sin[(t*n_pairs + j)*4 + {cos f64, sin f64,",
        "//         cos f32, sin f32}]}.",
        "",
    ]
    total_pairs = total_values = 0
    for case in FORM_CASES:
        case_lines, n_pairs, n_values = form_case_lines(case, args.print)
        lines += case_lines
        total_pairs += n_pairs
        total_values += n_values
    Path(args.form_out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.form_out}: {len(FORM_CASES)} cases, {total_pairs} pairs, {total_values} cos/sin values",
          file=sys.stderr)


if __name__ == "__main__":
    main()
