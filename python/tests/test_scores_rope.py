"""check_scores(encoding="rope"): scores with RoPE inside, as FlashInfer's pos_encoding_mode="ROPE_LLAMA" and
flash-attention's flash_attn_with_kvcache(rotary_cos, rotary_sin) compute them: q and k rotated by HF's
rotate_half in float32 (inv_freq = 1/base^(2j/d), angles p·inv_freq in float32, cat(freqs, freqs)), stored in
bfloat16, then scale·q'·k'ᵀ accumulated in float32. Written here from HF's LlamaRotaryEmbedding and
apply_rotary_pos_emb, not from pe-suite's code. A decode step (4 queries after 92 cached keys) passes at positions
below 100 and past 500 000; the query offset dropped (the queries rotated from 0), keys cached unrotated and the
interleaved layout are named."""
import pytest
import torch

import pe_suite

BASE = 500000.0


def rotate(x, positions, layout="halfsplit"):
    """x [T, H, d] rotated at positions [T], HF's float32 rotate_half (or GPT-J's pairs), stored in x's type."""
    d = x.shape[-1]
    inv = 1.0 / (BASE ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = positions.float()[:, None] * inv[None, :]
    xf = x.float()
    if layout == "interleaved":
        emb = freqs.repeat_interleave(2, dim=-1)
        rot = torch.stack((-xf[..., 1::2], xf[..., ::2]), dim=-1).flatten(-2)
    else:
        emb = torch.cat((freqs, freqs), dim=-1)
        rot = torch.cat((-xf[..., d // 2:], xf[..., :d // 2]), dim=-1)
    return (xf * emb.cos()[:, None] + rot * emb.sin()[:, None]).to(x.dtype)


def scores_with_rope(q, k, start=0, query_offset=True, rotate_keys=True, layout="halfsplit"):
    nq, nk, d = q.shape[0], k.shape[0], q.shape[-1]
    keys = torch.arange(start, start + nk)
    queries = keys[nk - nq:] if query_offset else torch.arange(nq)
    rq, rk = rotate(q, queries, layout), rotate(k, keys, layout) if rotate_keys else k
    kk = rk.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    return torch.einsum("ihc,jhc->hij", rq.float(), kk.float()) * d ** -0.5


@pytest.fixture
def qk():
    g = torch.Generator().manual_seed(5151)
    return (torch.randn(4, 8, 128, generator=g).to(torch.bfloat16),
            torch.randn(96, 2, 128, generator=g).to(torch.bfloat16))


@pytest.mark.parametrize("start", [0, 500000])
def test_rope_inside_the_scores_passes(qk, start):
    q, k = qk
    keys = list(range(start, start + 96))
    r = pe_suite.check_scores(scores_with_rope(q, k, start), q, k, keys=keys, encoding="rope", base=BASE)
    assert r.passed, str(r)
    assert "rope (base 500000, halfsplit)" in str(r)


def test_float32_inputs_pass_too(qk):
    q, k = (t.float() for t in qk)
    assert pe_suite.check_scores(scores_with_rope(q, k), q, k, encoding="rope", base=BASE).passed


def test_the_query_offset_dropped_is_named(qk):
    q, k = qk
    r = pe_suite.check_scores(scores_with_rope(q, k, query_offset=False), q, k, encoding="rope", base=BASE)
    assert not r.passed
    assert any(d.startswith("the query offset dropped: queries numbered from 0, not from 92") for d in r.diagnosis), \
        str(r)


def test_unrotated_keys_and_the_other_layout_are_named(qk):
    q, k = qk
    r = pe_suite.check_scores(scores_with_rope(q, k, rotate_keys=False), q, k, encoding="rope", base=BASE)
    assert r.diagnosis == ["keys not rotated (a cache of unrotated keys, or k's rotation skipped)"], str(r)
    r = pe_suite.check_scores(scores_with_rope(q, k, layout="interleaved"), q, k, encoding="rope", base=BASE)
    assert r.diagnosis == ["layout interleaved (given: halfsplit)"], str(r)


def test_another_base_fails(qk):
    q, k = qk
    r = pe_suite.check_scores(scores_with_rope(q, k), q, k, encoding="rope", base=10000.0)
    assert not r.passed and r.wrong > 0
