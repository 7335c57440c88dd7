"""The text rope types engines compute (issue 50, item 2), transcribed in torch from the engines' published
definitions and checked through Python's scaling= dict (HF's rope_scaling, read as HF reads it): Gemma 4's
proportional passes as rope_type "proportional" and fails as HF's partial rotary of the same factor, named;
vLLM's static dynamic NTK passes under pe-suite's key "dynamic_semantics": "static" and fails under HF's live
length below factor·L, named; Hunyuan's alpha passes as its config states it."""

import pytest

import pe_suite

torch = pytest.importorskip("torch")

HEADS, TOKENS, DIM = 2, 24, 64


def q_and_positions(positions):
    g = torch.Generator().manual_seed(11)
    return torch.randn(HEADS, len(positions), DIM, generator=g), torch.tensor(positions)


def rotate_half_over_head(q, pos, inv_freq):
    """modeling_llama's apply_rotary_pos_emb over the whole head: emb = cat(freqs, freqs), q·cos + rotate_half(q)·sin,
    in float32 (freqs = inv_freq[None, :] * position[:, None])."""
    freqs = pos.float()[:, None] * inv_freq.float()[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    half = q.shape[-1] // 2
    rot = torch.cat((-q[..., half:], q[..., :half]), dim=-1)
    return q * cos + rot * sin


def proportional_inv_freq(base, head_dim, rope_proportion, factor=1.0):
    """transformers _compute_proportional_rope_parameters."""
    rope_angles = int(rope_proportion * head_dim // 2)
    rotated = 1.0 / (base ** (torch.arange(0, 2 * rope_angles, 2, dtype=torch.int64).float() / head_dim))
    nope = head_dim // 2 - rope_angles
    inv_freq = torch.cat((rotated, torch.zeros(nope, dtype=torch.float32))) if nope > 0 else rotated
    return inv_freq / factor


def vllm_static_dynamic_inv_freq(base, rotary_dim, max_position_embeddings, scaling_factor):
    """vLLM DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache's base, at max_len = L · factor."""
    max_len = max_position_embeddings * scaling_factor
    base = base * ((scaling_factor * max_len / max_position_embeddings) - (scaling_factor - 1)) ** (
        rotary_dim / (rotary_dim - 2))
    return 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim))


def test_gemma4_proportional_passes_as_proportional_and_is_named_when_checked_as_partial_rotary():
    q, pos = q_and_positions(list(range(2000, 2000 + TOKENS)))
    y = rotate_half_over_head(q, pos, proportional_inv_freq(1e6, DIM, 0.25))
    assert torch.equal(y[..., 8:32], q[..., 8:32]) and torch.equal(y[..., 40:], q[..., 40:])  # frequency 0
    gemma4 = {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}
    passed = pe_suite.check_rope(q, y, pos, scaling=gemma4, heads_first=True)
    assert passed.passed, str(passed)
    partial = pe_suite.check_rope(q, y, pos, scaling={"rope_type": "default", "partial_rotary_factor": 0.25,
                                                      "rope_theta": 1e6}, heads_first=True)
    assert not partial.passed
    assert partial.diagnosis and "proportional" in partial.diagnosis[0], str(partial)
    assert "checked as HF's partial rotary" in partial.diagnosis[0], str(partial)


def test_vllm_static_dynamic_passes_static_and_is_named_under_hf_live_length():
    L, factor = 2048, 2.0
    q, pos = q_and_positions(list(range(2500, 2500 + TOKENS)))  # seq_len 2524 < factor·L = 4096
    y = rotate_half_over_head(q, pos, vllm_static_dynamic_inv_freq(10000.0, DIM, L, factor))
    config = {"rope_type": "dynamic", "factor": factor}
    hf_config = {"rope_scaling": config, "max_position_embeddings": L, "head_dim": DIM}
    stated = pe_suite.check_rope(q, y, pos, hf_config={**hf_config, "rope_scaling": {**config,
                                                                                      "dynamic_semantics": "static"}},
                                 heads_first=True)
    assert stated.passed, str(stated)
    live = pe_suite.check_rope(q, y, pos, hf_config=hf_config, heads_first=True)
    assert not live.passed
    assert live.diagnosis and "vLLM's static base (n = factor·L = 4096" in live.diagnosis[0], str(live)
    with pytest.raises(ValueError, match="dynamic_semantics"):
        pe_suite.check_rope(q, y, pos, hf_config={**hf_config, "rope_scaling": {**config, "dynamic_semantics": "x"}},
                            heads_first=True)


def test_hunyuan_alpha_as_its_config_states_it():
    q, pos = q_and_positions(list(range(100, 100 + TOKENS)))
    base = 10000.0 * 1000.0 ** (DIM / (DIM - 2))  # vLLM DynamicNTKAlphaRotaryEmbedding
    y = rotate_half_over_head(q, pos, 1.0 / (base ** (torch.arange(0, DIM, 2, dtype=torch.float) / DIM)))
    hunyuan = {"head_dim": DIM, "max_position_embeddings": 32768, "rope_theta": 10000.0,
               "rope_scaling": {"alpha": 1000.0, "factor": 1.0, "type": "dynamic"}}
    report = pe_suite.check_rope(q, y, pos, hf_config=hunyuan, heads_first=True)
    assert report.passed, str(report)
