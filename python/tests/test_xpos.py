"""xPos (issue 50): RoPE with a gain per pair and position, q multiplied and k divided. The kernel below is
transcribed in numpy from flash-attention's published `layers/rotary.py` (RotaryEmbedding with scale_base), not
from pe-suite's code:

    inv_freq = 1 / base ** (arange(0, dim, 2, float32) / dim)
    t = arange(seqlen, float32); freqs = outer(t, inv_freq)
    scale = (arange(0, dim, 2, float32) + 0.4 * dim) / (1.4 * dim)
    power = (arange(seqlen, float32) - seqlen // 2) / scale_base
    scale = scale ** power[:, None]
    cos_q, sin_q = (cos(freqs) * scale).to(dtype), (sin(freqs) * scale).to(dtype)
    cos_k, sin_k = (cos(freqs) / scale).to(dtype), (sin(freqs) / scale).to(dtype)

and apply_rotary (not interleaved: rotate_half's halves) in float32 from x's type, the result cast back.
`seqlen` is the length the cache was built to: flash-attention grows it to seqlen_offset + the new tokens.
"""

import os
import subprocess

import numpy as np
import pytest

import pe_suite
from bf16_util import bf16, bf16_bits

HEADS, DIM, SEQLEN = 4, 64, 2048


def flash_tables(seqlen, scale_base, keys, base=10000.0, gain=True):
    f32 = np.float32
    inv_freq = (f32(1.0) / (f32(base) ** (np.arange(0, DIM, 2, dtype=f32) / f32(DIM)))).astype(f32)
    t = np.arange(seqlen, dtype=f32)
    freqs = np.outer(t, inv_freq).astype(f32)
    cos, sin = np.cos(freqs).astype(f32), np.sin(freqs).astype(f32)
    if not gain:
        return cos, sin
    scale = ((np.arange(0, DIM, 2, dtype=f32) + f32(0.4 * DIM)) / f32(1.4 * DIM)).astype(f32)
    power = ((np.arange(seqlen, dtype=f32) - f32(seqlen // 2)) / f32(scale_base)).astype(f32)
    g = (scale[None, :] ** power[:, None]).astype(f32)
    return ((cos / g), (sin / g)) if keys else ((cos * g), (sin * g))


def apply_rotary(x, cos, sin, round_out):
    """x [T, H, D] in its type (as float32 values); cos, sin [T, D/2] in the data type; float32 arithmetic."""
    c, s = cos[: len(x), None, :], sin[: len(x), None, :]
    x1, x2 = x[..., : DIM // 2].astype(np.float32), x[..., DIM // 2 :].astype(np.float32)
    return round_out(np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).astype(np.float32))


def case(keys, dtype="float32", seqlen=SEQLEN, scale_base=512.0, tokens=SEQLEN, base=10000.0, gain=True):
    """x, y and the positions 0..tokens-1, y from tables built to `seqlen`, in float32 or bf16."""
    round_out = (lambda a: a.astype(np.float32)) if dtype == "float32" else bf16
    x = round_out(np.random.default_rng(52).standard_normal((tokens, HEADS, DIM)).astype(np.float32))
    cos, sin = flash_tables(seqlen, scale_base, keys, base, gain)
    y = apply_rotary(x, round_out(cos), round_out(sin), round_out)
    positions = np.arange(tokens, dtype=np.int64)
    if dtype == "float32":
        return x, y, positions, {}
    return bf16_bits(x), bf16_bits(y), positions, {"dtype": "bfloat16"}


def fits(report):
    return " | ".join(report.diagnosis)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("keys", [False, True])
def test_flash_attention_xpos_passes(keys, dtype):
    x, y, positions, kw = case(keys, dtype)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=512, xpos_keys=keys, **kw)
    assert r.passed, str(r)
    assert "xPos on " + ("k" if keys else "q") in str(r)


def test_queries_checked_as_keys_fail_named():
    x, y, positions, _ = case(keys=False)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=512, xpos_keys=True)
    assert not r.passed
    assert "q's gain (multiplying) where k's (dividing) is given" in fits(r), str(r)


def test_a_cache_built_longer_moves_the_centre_named():
    # A cache built to 4096 positions (a longer prompt before) centres the gain at 2048, not at 1024.
    x, y, positions, _ = case(keys=False, seqlen=4096)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=512)
    assert not r.passed
    assert "centre 2048 where 1024 is given" in fits(r), str(r)
    assert pe_suite.check_rope(x, y, positions, xpos_scale_base=512, xpos_centre=2048).passed


def test_a_centre_one_position_off_fails_in_float32():
    # The model's tightness: the centre one position off moves every gain by zeta_j^(1/512), far past float32's budget.
    x, y, positions, _ = case(keys=False)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=512, xpos_centre=SEQLEN // 2 + 1)
    assert not r.passed
    assert "centre 1024 where 1025 is given" in fits(r), str(r)


def test_heads_first_and_a_partial_rotary_dim():
    # flash-attention's RotaryEmbedding(dim < head_dim): the gain's d is the rotary dim, the rest passes through.
    rng = np.random.default_rng(7)
    head_dim, tokens = DIM + 32, 512
    x = rng.standard_normal((tokens, HEADS, head_dim)).astype(np.float32)
    cos, sin = flash_tables(tokens, 512.0, keys=True)
    y = x.copy()
    y[..., :DIM] = apply_rotary(x[..., :DIM], cos, sin, lambda a: a.astype(np.float32))
    hf = lambda a: np.ascontiguousarray(a.transpose(1, 0, 2))  # [heads, tokens, head_dim]
    positions = np.arange(tokens)
    r = pe_suite.check_rope(hf(x), hf(y), positions, rotary_dim=DIM, heads_first=True, xpos_scale_base=512,
                            xpos_keys=True)
    assert r.passed, str(r)
    assert r.parameters["xpos"] == {"scale_base": 512.0, "centre": 256, "keys": True}
    y[5, 1, DIM + 3] += 1  # a pass-through channel moved
    assert not pe_suite.check_rope(hf(x), hf(y), positions, rotary_dim=DIM, heads_first=True,
                                   xpos_scale_base=512, xpos_keys=True).passed


def test_interleaved_data_checked_as_halfsplit_is_named():
    x, y, positions, _ = case(keys=False, tokens=512, seqlen=512)
    d = DIM // 2  # half-split's pairs (j, j + d/2) into GPT-J's (2j, 2j + 1): the same rotation, other channels
    order = np.empty(DIM, dtype=int)
    order[0::2], order[1::2] = np.arange(d), np.arange(d) + d
    r = pe_suite.check_rope(x[..., order], y[..., order], positions, xpos_scale_base=512)
    assert not r.passed
    assert "pairs as interleaved pairs them (given: halfsplit)" in str(r)  # read from the gains' line
    assert "layout interleaved (given: halfsplit)" in fits(r), str(r)  # and the rotation's, under the gains


def test_scale_base_wrong_named():
    x, y, positions, _ = case(keys=True, scale_base=512.0)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=256, xpos_keys=True)
    assert not r.passed
    assert "scale_base 512 where 256 is given" in fits(r), str(r)


def test_a_plain_rotation_is_named_as_having_no_gain():
    x, y, positions, _ = case(keys=False, gain=False)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=512)
    assert not r.passed
    assert "no xPos gain" in fits(r), str(r)


def test_the_rotation_under_a_right_gain_is_diagnosed():
    # The gain as given, the rotation at another base: the gain read back matches, the base is named.
    x, y, positions, _ = case(keys=False, base=500000.0)
    r = pe_suite.check_rope(x, y, positions, xpos_scale_base=512)
    assert not r.passed
    assert "the gain is xPos's as given" in str(r)
    assert "500000" in fits(r), str(r)


def test_cli_flags_and_refusals(cli, tmp_path):
    x, y, positions, _ = case(keys=True, tokens=256, seqlen=256)
    np.save(tmp_path / "k.npy", x)
    np.save(tmp_path / "k_rot.npy", y)
    args = ["check", "--family", "rope", "--input", "k.npy", "--output", "k_rot.npy", "--positions", "0:256"]
    out = cli(args + ["--xpos-scale-base", "512", "--xpos-keys"], tmp_path)
    assert "PASS" in out and "xPos on k" in out
    for bad, words in ((["--xpos-centre", "128"], ("--xpos-centre", "--xpos-scale-base")),
                       (["--xpos-scale-base", "-1"], ("--xpos-scale-base", "got -1"))):
        r = subprocess.run([os.environ["PE_SUITE_CLI"], *args, *bad], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 2, r.stdout + r.stderr
        assert all(w in r.stderr for w in words), r.stderr


def test_keywords_refused_by_name():
    x, y, positions, _ = case(keys=False, tokens=64, seqlen=64)
    with pytest.raises(TypeError, match="xpos_keys: expected True"):
        pe_suite.check_rope(x, y, positions, xpos_scale_base=512, xpos_keys="false")
    with pytest.raises(ValueError, match="xpos_scale_base.*double's range"):
        pe_suite.check_rope(x, y, positions, xpos_scale_base=0.01)
    with pytest.raises(ValueError, match="xpos_keys.*xpos_scale_base"):
        pe_suite.check_rope(x, y, positions, xpos_keys=True)
    with pytest.raises(ValueError, match="xpos_scale_base.*attn|xpos_scale_base.*one position"):
        pe_suite.check_rope(x, y, np.stack([positions] * 3), xpos_scale_base=512, mrope_section=(8, 12, 12))
