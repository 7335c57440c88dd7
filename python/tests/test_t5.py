"""T5's relative position buckets (issue 51, item 5): HF's `T5Attention._relative_position_bucket` and
`compute_bias` transcribed in torch from transformers' published modeling_t5.py (float32 log of d / max_exact over
the double math.log(max_distance / max_exact), times the bucket count, truncated), checked against pe-suite's exact
buckets (decided in integers); each of T5's mistakes planted and named."""
import math

import numpy as np
import pytest
import torch

import pe_suite


def hf_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, large)


def hf_bias(table, queries, keys, bidirectional=True, num_buckets=32, max_distance=128):
    """compute_bias: relative_position = memory_position - context_position, the table's rows, [heads, q, k]."""
    relative = torch.as_tensor(keys)[None, :] - torch.as_tensor(queries)[:, None]
    b = hf_bucket(relative, bidirectional, num_buckets, max_distance)
    return torch.nn.functional.embedding(b, table).permute([2, 0, 1])


@pytest.mark.parametrize("num_buckets", [8, 16, 32, 64, 128])
@pytest.mark.parametrize("max_distance", [16, 64, 128, 256, 1024])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_hf_buckets_are_the_exact_ones(num_buckets, max_distance, bidirectional):
    max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    if max_distance <= max_exact:  # HF's log of a ratio at most 1: not a T5 configuration, refused by name
        with pytest.raises(ValueError, match="max_distance"):
            pe_suite.t5_buckets(np.arange(-2 * max_distance, 2 * max_distance), bidirectional, num_buckets,
                                max_distance)
        return
    n = torch.arange(-2 * max_distance, 2 * max_distance)  # beyond max_distance every offset is in the last bucket
    exact = pe_suite.t5_buckets(n.numpy(), bidirectional, num_buckets, max_distance)
    assert np.array_equal(hf_bucket(n, bidirectional, num_buckets, max_distance).numpy(), exact)


def test_the_defaults_boundaries_are_stated():
    # 32 buckets bidirectional: 16 per sign, max_exact 8, t = 8 ln(d/8)/ln 16 is an integer at d = 16, 32, 64.
    _, alt = pe_suite.t5_buckets(np.arange(-200, 200), True, 32, 128, alternatives=True)
    assert sorted(int(v) for v in np.arange(-200, 200)[alt >= 0]) == [-64, -32, -16, 16, 32, 64]


@pytest.mark.parametrize("bidirectional", [True, False])
def test_hf_bias_passes(bidirectional):
    table = torch.randn(32, 6)
    queries, keys = (np.arange(300), np.arange(300)) if bidirectional else (np.array([700]), np.arange(701))
    r = pe_suite.check_t5(hf_bias(table, queries, keys, bidirectional), queries, keys, bidirectional=bidirectional,
                          table=table)
    assert r.passed, str(r)
    # Where float32 may go either way, listed: the bidirectional defaults' t is an integer at d = 16, 32, 64; the
    # causal ones' (32 buckets, max_exact 16, 128/16 = 8) only at d = 128, beyond the last bucket.
    assert r.boundaries == ([-64, -32, -16, 16, 32, 64] if bidirectional else [])


def test_the_causal_flag_inverted_is_named():
    table = torch.randn(32, 4)
    q = k = np.arange(200)
    r = pe_suite.check_t5(hf_bias(table, q, k, bidirectional=False), q, k, bidirectional=True, table=table)
    assert not r.passed and r.wrong > 0
    assert "the causal flag inverted (bidirectional=False)" in r.diagnosis, str(r)


def test_num_buckets_and_max_distance_are_named():
    q = k = np.arange(400)
    relative = torch.as_tensor(k)[None, :] - torch.as_tensor(q)[:, None]
    r = pe_suite.check_t5(hf_bucket(relative, True, 64, 128), q, k, num_buckets=32)
    assert "num_buckets 64 (given: 32)" in r.diagnosis, str(r)
    r = pe_suite.check_t5(hf_bucket(relative, True, 32, 256), q, k)
    assert "max_distance 256 (given: 128)" in r.diagnosis, str(r)
    r = pe_suite.check_t5(hf_bucket(-relative, True, 32, 128), q, k)
    assert "the offset taken as query − key (its sign flipped)" in r.diagnosis, str(r)


def test_a_table_row_off_is_caught_and_undetermined():
    table = torch.randn(32, 2)
    q = k = np.arange(50)
    bias = hf_bias(table, q, k).clone()
    bias[1, 3, 40] = table[0, 1]  # one element from another bucket's row
    r = pe_suite.check_t5(bias, q, k, table=table)
    assert not r.passed and r.wrong == 1 and r.first == [{"head": 1, "query": 3, "key": 40}]
    assert r.diagnosis == [] and "undetermined" in str(r)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_buckets: expected an integer >= 2"):
        pe_suite.check_t5(np.zeros((2, 2), dtype=np.int64), [0, 1], [0, 1], num_buckets=1)
    with pytest.raises(ValueError, match="data: expected shape"):
        pe_suite.check_t5(np.zeros((3, 2), dtype=np.int64), [0, 1], [0, 1])
    with pytest.raises(ValueError, match="table: expected"):
        pe_suite.check_t5(np.zeros((1, 2, 2), dtype=np.float32), [0, 1], [0, 1], table=np.zeros((16, 1)))


def test_garbage_fails_and_the_float32_alternative_only_at_a_boundary():
    q = k = np.arange(80)
    relative = k[None, :] - q[:, None]
    assert not pe_suite.check_t5(np.full((80, 80), -1), q, k, bidirectional=False).passed
    table = np.random.default_rng(5).standard_normal((32, 2)).astype(np.float32)
    assert not pe_suite.check_t5(np.full((2, 80, 80), np.nan, np.float32), q, k, table=table).passed
    exact = pe_suite.t5_buckets(relative, True, 32, 128)
    # At d = 16 (t = 2 exactly) a float32 log one ulp low gives the bucket below: accepted there, and only there.
    low = exact.copy()
    low[relative == 16] -= 1
    r = pe_suite.check_t5(low, q, k)
    assert r.passed and 16 in r.boundaries, str(r)
    off = exact.copy()
    off[relative == 17] -= 1
    assert not pe_suite.check_t5(off, q, k).passed


def test_a_distance_near_max_exact_keeps_hfs_float32_bucket():
    # ln(max_distance / max_exact) small: float32's rounding of d / max_exact moves t by (B − E)·3u/ln(D/E), not by a
    # share of t. HF's function gives 210 at offset −158 (causal, 315 buckets, 160), the exact bucket 209.
    relative = torch.arange(-400, 1)
    r = pe_suite.check_t5(hf_bucket(relative[None, :], False, 315, 160).numpy(), [400], list(range(0, 401)),
                          bidirectional=False, num_buckets=315, max_distance=160)
    assert r.passed, str(r)
    assert -158 in r.boundaries


def test_hfs_compute_bias_shape_with_its_leading_one_passes():
    # compute_bias returns values.permute([2, 0, 1]).unsqueeze(0): [1, heads, queries, keys].
    table = torch.randn(32, 6)
    q, k = list(range(100)), list(range(120))
    bias = hf_bias(table, q, k).unsqueeze(0)
    assert pe_suite.check_t5(bias, q, k, table=table).passed
