"""check_scores (issue 51, item 4, ALiBi and none; RoPE in test_scores_rope.py): attention's pre-softmax scores with
the encoding inside. The
kernel is flash-attention's documented `alibi_slopes` semantics transcribed in torch: "a bias of
(-alibi_slope * |i + seqlen_k - seqlen_q - j|) is added to the attention score of query i and key j", scores
scale·q·kᵀ accumulated in float32 from bfloat16 q and k, the causal mask j > i + seqlen_k - seqlen_q at -inf; the
slopes are the ALiBi paper's get_slopes (ofirpress/attention_with_linear_biases), in float32."""
import math

import numpy as np
import pytest
import torch

import pe_suite


def get_slopes(n):
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def flash_scores(q, k, scale=None, query_offset=True, causal=True):
    """q [Q, H, d], k [K, Hk, d] in bf16 -> scores [H, Q, K] float32, bottom-right aligned as flash-attention."""
    nq, heads, d = q.shape
    nk = k.shape[0]
    kk = k.repeat_interleave(heads // k.shape[1], dim=1)
    s = torch.einsum("ihc,jhc->hij", q.float(), kk.float()) * (d ** -0.5 if scale is None else scale)
    i = torch.arange(nq)[:, None] + (nk - nq if query_offset else 0)
    j = torch.arange(nk)[None, :]
    slopes = torch.tensor(get_slopes(heads), dtype=torch.float32)[:, None, None]
    s = s + (-slopes * (i - j).abs().float())
    if causal:
        s = s.masked_fill((j > i)[None], float("-inf"))
    return s


@pytest.fixture
def qk():
    g = torch.Generator().manual_seed(51)
    return (torch.randn(4, 8, 64, generator=g).to(torch.bfloat16),
            torch.randn(96, 8, 64, generator=g).to(torch.bfloat16))


@pytest.mark.parametrize("form", ["causal", "symmetric"])
def test_flash_attention_alibi_scores_bottom_right_pass(qk, form):
    q, k = qk
    r = pe_suite.check_scores(flash_scores(q, k), q, k, alibi_form=form)
    assert r.passed, str(r)
    assert "positions 92..95" in str(r)


def test_the_query_offset_dropped_fails_named(qk):
    q, k = qk
    r = pe_suite.check_scores(flash_scores(q, k, query_offset=False), q, k)
    assert not r.passed and r.wrong > 0
    assert any(d.startswith("the query offset dropped: queries numbered from 0, not from 92 (keys − queries")
               for d in r.diagnosis), str(r)


def test_no_scale_and_no_bias_are_named(qk):
    q, k = qk
    r = pe_suite.check_scores(flash_scores(q, k, scale=1.0), q, k)
    assert r.diagnosis == ["no softmax scale (1, not 1/sqrt(d))"], str(r)
    plain = torch.einsum("ihc,jhc->hij", q.float(), k.float()) * 64 ** -0.5
    assert pe_suite.check_scores(plain, q, k, encoding="none").passed
    assert "no bias" in pe_suite.check_scores(plain, q, k).diagnosis


def test_grouped_query_heads_and_one_score_off(qk):
    q, k = qk
    k2 = k[:, :2].contiguous()  # 8 query heads over 2 kv heads
    s = flash_scores(q, k2)
    assert pe_suite.check_scores(s, q, k2).passed
    bad = s.clone()
    bad[3, 2, 10] += 1e-2 * abs(float(bad[3, 2, 10])) + 1e-3  # far past float32 accumulation's error
    r = pe_suite.check_scores(bad, q, k2)
    assert not r.passed and r.wrong == 1 and (r.worst["head"], r.worst["query"], r.worst["key"]) == (3, 2, 10)


def test_bad_arguments_are_named(qk):
    q, k = qk
    with pytest.raises(ValueError, match="encoding"):
        pe_suite.check_scores(flash_scores(q, k), q, k, encoding="t5")
    with pytest.raises(ValueError, match="max_bias: applies to encoding='alibi'"):
        pe_suite.check_scores(flash_scores(q, k), q, k, encoding="none", max_bias=8.0)
    with pytest.raises(ValueError, match="base: applies to encoding='rope'"):
        pe_suite.check_scores(flash_scores(q, k), q, k, base=10000.0)
    with pytest.raises(ValueError, match="scores: expected"):
        pe_suite.check_scores(flash_scores(q, k)[:, :2], q, k)
    with pytest.raises(ValueError, match="k: expected"):
        pe_suite.check_scores(flash_scores(q, k), q, k[:, :3])


def test_falcon_scales_the_bias_and_more_queries_than_keys_are_refused(qk):
    q, k = qk
    nq, nk = q.shape[0], k.shape[0]
    i = torch.arange(nq)[:, None] + nk - nq
    j = torch.arange(nk)[None, :]
    slopes = torch.tensor(get_slopes(8), dtype=torch.float32)[:, None, None]
    falcon = (torch.einsum("ihc,jhc->hij", q.float(), k.float()) - slopes * (i - j).float()) * 64 ** -0.5
    assert pe_suite.check_scores(falcon, q, k, scale_bias=True).passed
    assert "the scale applied to the bias too: scale*(q.k + bias)" in pe_suite.check_scores(falcon, q, k).diagnosis
    with pytest.raises(ValueError, match="queries: 96 queries over 4 keys"):
        pe_suite.check_scores(torch.zeros(8, 96, 4), k, q)


def test_hf_eager_masks_with_the_types_lowest_and_a_finite_score_there_fails(qk):
    # HF's eager attention adds torch.finfo(dtype).min where a key lies after the query: accepted as masked.
    q, k = qk
    s = flash_scores(q, k)
    hf = torch.where(torch.isinf(s), torch.finfo(torch.float32).min + s.nan_to_num(neginf=0.0), s)
    assert pe_suite.check_scores(hf, q, k).passed
    leaked = s.clone()
    leaked[0, 0, -1] = 0.0  # a masked position holding a score
    assert not pe_suite.check_scores(leaked, q, k).passed
