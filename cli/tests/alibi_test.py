#!/usr/bin/env python3
"""`pe-suite check --family alibi` against ALiBi built here from the published definitions, not from
pe-suite's code:

  HF transformers  modeling_bloom.py build_alibi_tensor: closest_power_of_2 = 2**floor(log2 n),
                   base = 2**(-(2**-(log2(cp2) - 3))), slopes = base**arange(1, 1 + cp2), the extra heads
                   extra_base**arange(1, 1 + 2*rem, 2); alibi = slopes[:, None] * arange(keys) (m·j)
  ggml             ggml_soft_max_ext(max_bias): n_head_log2 = 1 << floor(log2 n), m0 = powf(2, -b/n_head_log2),
                   m1 = powf(2, -(b/2)/n_head_log2), slope = powf(m0, h+1) or powf(m1, 2(h-n_head_log2)+1),
                   all float32; llama.cpp's KQ mask holds -|i - j|, the bias slope·mask
  the paper        Press et al. 2022: for a power of two n the geometric sequence starting at 2^(-8/n);
                   the "direct" port applies it to any n: 2^(-8(h+1)/n)

Correct data built each way passes under the default budget (alibi.scalar_f32's contract), at head counts
12, 40 and 80 (not powers of two: where the conventions differ); each shipped mistake fails with the
convention named on the diagnosis line. Bad input exits 2 naming the parameter, writing nothing.

    alibi_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import math

import numpy as np
from cli_cases import finish, judge, judge_bad, setup

PE, WORK, _ = setup()


def hf_bloom_slopes(n):
    cp2 = 2 ** math.floor(math.log2(n))
    base = np.float32(2 ** (-(2 ** -(math.log2(cp2) - 3))))
    slopes = np.power(base, np.arange(1, 1 + cp2, dtype=np.int32)).astype(np.float32)
    if cp2 != n:
        extra_base = np.float32(2 ** (-(2 ** -(math.log2(2 * cp2) - 3))))
        rem = min(cp2, n - cp2)
        extra = np.power(extra_base, np.arange(1, 1 + 2 * rem, 2, dtype=np.int32)).astype(np.float32)
        slopes = np.concatenate([slopes, extra])
    return slopes


def ggml_slopes(n, b=8.0, exponent_shift=0):
    n2 = 1 << int(math.floor(math.log2(n)))
    m0 = np.power(np.float32(2.0), np.float32(-b / n2), dtype=np.float32)
    m1 = np.power(np.float32(2.0), np.float32(-(b / 2) / n2), dtype=np.float32)
    return np.array([np.power(m0, np.float32(h + 1 + exponent_shift), dtype=np.float32) if h < n2
                     else np.power(m1, np.float32(2 * (h - n2) + 1), dtype=np.float32) for h in range(n)],
                    dtype=np.float32)


def direct_slopes(n, b=8.0):
    return np.array([2.0 ** (-b * (h + 1) / n) for h in range(n)], dtype=np.float64)


def table(slopes, queries, keys, form):
    i = np.asarray(queries, dtype=np.float64)[:, None]
    j = np.asarray(keys, dtype=np.float64)[None, :]
    dist = {"causal": j - i, "symmetric": -np.abs(i - j), "bloom": np.broadcast_to(j, (len(queries), len(keys)))}[form]
    return np.asarray(slopes, dtype=np.float64)[:, None, None] * dist[None, :, :]


def run_check(name, data, args, expect_pass, expect_words=None):
    f = WORK / f"{name}.npy"
    np.save(f, data.astype(np.float32))
    judge(name, [PE, "check", "--family", "alibi", str(f)] + args, expect_pass, expect_words or ())


def run_bad(name, args, words):
    judge_bad(name, [PE] + args, words, WORK / f"{name}_out.npy")


# A prefill chunk at a KV-cache offset: queries 70000..70015 against keys 69984..70015 (each check
# evaluates every element in MPFR: small shapes keep the ASan run short).
queries, keys = list(range(70000, 70016)), list(range(69984, 70016))
pos = ["--queries", "70000:70016", "--keys", "69984:70016"]
for n in (12, 40, 80):
    bloom = hf_bloom_slopes(n)
    ggml = ggml_slopes(n)
    # The same rule, two float32 formulations: agree to float32's few roundings.
    assert np.allclose(bloom, ggml, rtol=1e-6, atol=0), (n, bloom, ggml)
    run_check(f"hf_bloom_{n}", table(bloom, queries, keys, "bloom"), pos + ["--alibi-form", "bloom"], True)
    run_check(f"hf_bloom_{n}_as_causal", table(bloom, queries, keys, "bloom"), pos, False, "BLOOM's form")
    run_check(f"ggml_{n}", table(ggml, queries, keys, "symmetric"), pos + ["--alibi-form", "symmetric"], True)
    run_check(f"ggml_{n}_causal_part", table(ggml, queries, keys, "symmetric"), pos, True)
    run_check(f"ggml_{n}_as_bloom", table(ggml, queries, keys, "symmetric"), pos + ["--alibi-form", "bloom"],
              False, "form")
    run_check(f"slopes_{n}", ggml, [], True)
    run_check(f"direct_{n}", table(direct_slopes(n), queries, keys, "causal"), pos, False, "direct rule")
    run_check(f"direct_{n}_declared", table(direct_slopes(n), queries, keys, "causal"),
              pos + ["--alibi-slopes", "direct"], True)
    run_check(f"off_by_one_{n}", table(ggml_slopes(n, exponent_shift=-1), queries, keys, "causal"), pos, False,
              "off by one (m0^h")
    run_check(f"sign_{n}", -table(ggml, queries, keys, "causal"), pos, False, "sign flipped")
    run_check(f"slopes_direct_{n}", direct_slopes(n), [], False, "direct rule")

# bias[h, j, i] written for bias[h, i, j]: queries 100..131 against keys 90..121 (equal counts, other positions).
tq, tk = list(range(100, 132)), list(range(90, 122))
transposed = np.asarray(ggml_slopes(12), dtype=np.float64)[:, None, None] * (
    np.asarray(tk, dtype=np.float64)[:, None] - np.asarray(tq, dtype=np.float64)[None, :])[None, :, :]
run_check("transposed", transposed, ["--queries", "100:132", "--keys", "90:122"], False, "transposed")

# Decode: one query at the end of 2^16 keys, the default positions (keys 0.., the query the last).
run_check("decode", table(ggml_slopes(4), [65535], range(65536), "causal"), [], True)
run_check("max_bias_16", table(ggml_slopes(16, b=16.0), queries, keys, "causal"), pos + ["--max-bias", "16"], True)
# max_bias ignored (the default 8 where the model states 16): read back from head 0's slope, as slopes and
# as a bias.
run_check("max_bias_ignored", table(ggml_slopes(12), queries, keys, "causal"), pos + ["--max-bias", "16"], False,
          "max_bias 8 (given 16")
run_check("slopes_max_bias_ignored", ggml_slopes(12), ["--max-bias", "16"], False, "max_bias 8 (given 16")

# Fewer queries than keys sit bottom-right (the default positions: keys 0.., the queries the last ones), and
# the query offset dropped (queries numbered from 0, the twin of RoPE's dropped decode offset) is named.
run_check("bottom_right_default", table(ggml_slopes(8), range(32, 48), range(48), "causal"), [], True)
for form in ("causal", "symmetric"):
    flag = [] if form == "causal" else ["--alibi-form", "symmetric"]
    run_check(f"query_offset_dropped_{form}", table(ggml_slopes(12), range(16), keys, form), pos + flag, False,
              "the query offset dropped: queries numbered from 0 instead of from 70000")
run_check("query_offset_dropped_default", table(ggml_slopes(8), range(16), range(48), "causal"), [], False,
          "the query offset dropped: queries numbered from 0 instead of from 32")

golden = ["export", "--family", "alibi", "--reference"]
run_bad("zero_heads", golden + ["--heads", "0", "--queries", "0:4", "--keys", "0:4", "--out",
                                str(WORK / "zero_heads_out.npy")], ["--heads", "got 0"])
run_bad("negative_bias", golden + ["--heads", "4", "--max-bias", "-1", "--queries", "0:4", "--keys", "0:4",
                                   "--out", str(WORK / "negative_bias_out.npy")], ["--max-bias", "-1"])
run_bad("nan_bias", golden + ["--heads", "4", "--max-bias", "nan", "--queries", "0:4", "--keys", "0:4",
                              "--out", str(WORK / "nan_bias_out.npy")], ["--max-bias", "nan"])
run_bad("inverted_range", golden + ["--heads", "4", "--queries", "8:4", "--keys", "0:4", "--out",
                                    str(WORK / "inverted_range_out.npy")], ["--queries", "8:4"])
run_bad("empty_range", golden + ["--heads", "4", "--queries", "4:4", "--keys", "0:4", "--out",
                                 str(WORK / "empty_range_out.npy")], ["--queries", "4:4"])
np.save(WORK / "rank2.npy", np.zeros((4, 4), dtype=np.float32))
run_bad("wrong_shape", ["check", "--family", "alibi", str(WORK / "rank2.npy")], ["TABLE", "rank 2"])
run_bad("wrong_keys", ["check", "--family", "alibi", str(WORK / "hf_bloom_12.npy"), "--queries", "0:32", "--keys",
                       "0:63"], ["--keys", "63 positions"])

finish("alibi_test")
