#!/usr/bin/env python3
"""`pe-suite check --family t5`: T5's relative position buckets and the bias gathered from the learned table, as
HF's T5Attention._relative_position_bucket computes them (transcribed here in numpy, float32 as torch runs it:
log(float(d) / max_exact) / float32(log(max_distance / max_exact)) * (buckets - max_exact), truncated). The buckets
and a 4-head bias pass, bidirectional and causal; the causal flag inverted, another num_buckets and max_distance are
named; bad input is refused naming the flag.

    t5_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import math

import numpy as np
from cli_cases import finish, judge, judge_bad, setup

PE, WORK, RNG = setup(2026120605)
Q, K = 300, 300


def hf_bucket(relative, bidirectional=True, num_buckets=32, max_distance=128):
    n = np.asarray(relative, dtype=np.int64)
    ret = np.zeros_like(n)
    if bidirectional:
        num_buckets //= 2
        ret += (n > 0).astype(np.int64) * num_buckets
        n = np.abs(n)
    else:
        n = -np.minimum(n, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    ratio = (n.astype(np.float32) / np.float32(max_exact)).astype(np.float32)
    with np.errstate(divide="ignore"):
        large = np.log(ratio).astype(np.float32) / np.float32(math.log(max_distance / max_exact))
    large = (large * np.float32(num_buckets - max_exact)).astype(np.float32)
    large = max_exact + np.where(is_small, 0, large).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return ret + np.where(is_small, n, large)


relative = np.arange(K)[None, :] - np.arange(Q)[:, None]
table = RNG.standard_normal((32, 4)).astype(np.float32)


def command(name, data, *extra):
    np.save(WORK / f"{name}.npy", data)
    return [PE, "check", "--family", "t5", str(WORK / f"{name}.npy"), "--queries", f"0:{Q}", "--keys", f"0:{K}",
            *extra]


np.save(WORK / "table.npy", table)
bias = np.moveaxis(table[hf_bucket(relative)], -1, 0)
judge("buckets_bidirectional", command("b", hf_bucket(relative)), True)
judge("buckets_causal", command("c", hf_bucket(relative, False), "--causal"), True)
judge("bias_from_table", command("bias", bias, "--t5-table", str(WORK / "table.npy")), True)
judge("causal_flag_inverted", command("inv", hf_bucket(relative, False)), False, "the causal flag inverted")
judge("num_buckets_64", command("nb", hf_bucket(relative, True, 64)), False, "num_buckets 64 (given: 32)")
judge("max_distance_256", command("md", hf_bucket(relative, True, 32, 256)), False, "max_distance 256 (given: 128)")
judge_bad("float_without_table", command("f", bias), ["TABLE", "--t5-table"])
judge_bad("no_keys", [PE, "check", "--family", "t5", str(WORK / "b.npy"), "--queries", f"0:{Q}"], ["--keys"])
judge_bad("table_rows", command("rows", bias, "--t5-table", str(WORK / "table.npy"), "--num-buckets", "64"),
          ["--t5-table", "num_buckets 64"])
judge_bad("t5_flag_elsewhere", [PE, "check", "--family", "alibi", str(WORK / "b.npy"), "--causal"],
          ["--causal", "--family t5 only"])
judge_bad("bad_num_buckets", command("bad", hf_bucket(relative), "--num-buckets", "1"), ["--num-buckets", "got 1"])
finish("t5")
