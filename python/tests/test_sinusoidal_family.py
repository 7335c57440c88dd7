"""The sinusoidal family as diffusion, audio and vision code ships it (issue 49).

Each table below is a numpy transcription of a published definition, written from that code, not from
pe-suite's: diffusers' models/embeddings.py (get_timestep_embedding, get_2d_sincos_pos_embed,
get_3d_sincos_pos_embed, v0.31), openai/whisper's model.py `sinusoids`, fairseq's
SinusoidalPositionalEmbedding.get_embedding. torch's float32 arithmetic is numpy's float32 here: a float32
tensor times a Python float computes in float32 with the scalar rounded to float32 first, as numpy does.
Each table must pass under its own switches, in float32 (the published dtype) and float64 (the same formula
in double), and fail with one switch flipped, the diagnosis naming the switch and its value.
"""
import math

import numpy as np
import pytest

import pe_suite

TIMESTEPS = np.array([0.0, 0.5, 1.0, 17.25, 250.0, 499.5, 731.125, 999.875, 999.0])


def timestep_embedding(t, dim, flip=False, shift=1.0, scale=1.0, max_period=10000, dt=np.float32):
    """diffusers.models.embeddings.get_timestep_embedding, in dtype dt (float32 as published)."""
    half = dim // 2
    exponent = dt(-math.log(max_period)) * np.arange(half, dtype=dt)
    exponent = exponent / dt(half - shift)
    emb = np.exp(exponent)
    emb = t.astype(dt)[:, None] * emb[None, :]
    emb = dt(scale) * emb
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    if flip:
        emb = np.concatenate([emb[:, half:], emb[:, :half]], axis=-1)
    if dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb.astype(dt)


def whisper_sinusoids(length, channels, max_timescale=10000, dt=np.float32):
    """openai/whisper model.py `sinusoids`: log_timescale_increment in float64, the rest in the tensor type."""
    increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = np.exp(dt(-increment) * np.arange(channels // 2, dtype=dt))
    scaled_time = np.arange(length, dtype=dt)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)


def fairseq_embedding(num_embeddings, embedding_dim, padding_idx=None, dt=np.float32):
    """fairseq SinusoidalPositionalEmbedding.get_embedding."""
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=dt) * dt(-emb))
    emb = np.arange(num_embeddings, dtype=dt)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1)
    if embedding_dim % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1), dtype=dt)], axis=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


def sincos_1d_from_grid(embed_dim, pos):
    """diffusers get_1d_sincos_pos_embed_from_grid (MAE's util/pos_embed.py): float64 omega."""
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000**omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def sincos_2d_from_grid(embed_dim, grid, swap_halves=False):
    emb_h = sincos_1d_from_grid(embed_dim // 2, grid[0])  # diffusers' name; grid[0] holds w
    emb_w = sincos_1d_from_grid(embed_dim // 2, grid[1])
    return np.concatenate([emb_w, emb_h] if swap_halves else [emb_h, emb_w], axis=1)


def sincos_2d(embed_dim, grid_size, extra_tokens=0, interpolation_scale=1.0, base_size=16, swap_halves=False):
    """diffusers get_2d_sincos_pos_embed (grid_size (H, W); cls_token with extra_tokens)."""
    grid_h = np.arange(grid_size[0], dtype=np.float32) / (grid_size[0] / base_size) / interpolation_scale
    grid_w = np.arange(grid_size[1], dtype=np.float32) / (grid_size[1] / base_size) / interpolation_scale
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0).reshape([2, 1, grid_size[1], grid_size[0]])
    pos_embed = sincos_2d_from_grid(embed_dim, grid, swap_halves)
    if extra_tokens > 0:
        pos_embed = np.concatenate([np.zeros([extra_tokens, embed_dim]), pos_embed], axis=0)
    return pos_embed


def sincos_3d(embed_dim, spatial_size, temporal_size, spatial_interpolation_scale=1.0,
              temporal_interpolation_scale=1.0):
    """diffusers get_3d_sincos_pos_embed (CogVideoX): spatial_size is (W, H)."""
    embed_dim_spatial = 3 * embed_dim // 4
    embed_dim_temporal = embed_dim // 4
    grid_h = np.arange(spatial_size[1], dtype=np.float32) / spatial_interpolation_scale
    grid_w = np.arange(spatial_size[0], dtype=np.float32) / spatial_interpolation_scale
    grid = np.meshgrid(grid_w, grid_h)
    grid = np.stack(grid, axis=0).reshape([2, 1, spatial_size[1], spatial_size[0]])
    pos_embed_spatial = sincos_2d_from_grid(embed_dim_spatial, grid)
    grid_t = np.arange(temporal_size, dtype=np.float32) / temporal_interpolation_scale
    pos_embed_temporal = sincos_1d_from_grid(embed_dim_temporal, grid_t)
    pos_embed_spatial = np.repeat(pos_embed_spatial[np.newaxis, :, :], temporal_size, axis=0)
    pos_embed_temporal = np.repeat(pos_embed_temporal[:, np.newaxis, :], spatial_size[0] * spatial_size[1], axis=1)
    return np.concatenate([pos_embed_temporal, pos_embed_spatial], axis=-1)


def fits(report):
    assert not report.passed, report.text
    return " | ".join(report.diagnosis)


# Stable Diffusion's UNet (flip_sin_to_cos True, freq_shift 0), the function's defaults (shift 1), a scaled
# one (Flux's guidance embedding uses scale 1000 on t in [0, 1)), an odd dim, another max_period.
SWITCHES = [
    dict(flip=True, shift=0.0),
    dict(flip=False, shift=1.0),
    dict(flip=True, shift=0.0, scale=1000.0, t=TIMESTEPS / 1000.0),
    dict(flip=False, shift=1.0, dim=321),
    dict(flip=True, shift=1.0, max_period=100000),
]


def case(s, dt):
    t = s.get("t", TIMESTEPS)
    dim = s.get("dim", 320)
    table = timestep_embedding(t, dim, s["flip"], s["shift"], s.get("scale", 1.0), s.get("max_period", 10000), dt)
    keywords = dict(layout="concatenated", flip_sin_to_cos=s["flip"], downscale_freq_shift=s["shift"],
                    scale=s.get("scale", 1.0), base=s.get("max_period", 10000))
    return table, t.astype(dt), keywords


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("s", SWITCHES)
def test_timestep_embedding_passes_under_its_switches(s, dt):
    table, t, keywords = case(s, dt)
    report = pe_suite.check_sinusoidal(table, t, **keywords)
    assert report.passed, report.text


@pytest.mark.parametrize("s", SWITCHES)
def test_each_switch_flipped_is_named(s):
    table, t, keywords = case(s, np.float32)
    flip = dict(keywords, flip_sin_to_cos=not s["flip"])
    assert f"flip_sin_to_cos {str(s['flip']).lower()} (given: {str(not s['flip']).lower()})" in fits(
        pe_suite.check_sinusoidal(table, t, **flip))
    other = 1.0 - s["shift"]
    shifted = dict(keywords, downscale_freq_shift=other)
    assert f"downscale_freq_shift {s['shift']:g} (given: {other:g})" in fits(
        pe_suite.check_sinusoidal(table, t, **shifted))
    interleaved = dict(keywords, layout="interleaved")
    assert "layout concatenated (given: interleaved)" in fits(pe_suite.check_sinusoidal(table, t, **interleaved))


def test_timesteps_scaled_by_1000_are_named():
    table, t, keywords = case(SWITCHES[2], np.float32)
    unscaled = dict(keywords, scale=1.0)
    assert "timesteps scaled by 1000 (scale 1000; given: 1)" in fits(pe_suite.check_sinusoidal(table, t, **unscaled))


def test_a_base_far_from_the_usual_ones_is_read_back():
    t = np.arange(0, 1000, 3, dtype=np.float32)
    table = timestep_embedding(t, 256, shift=0.0, max_period=1e8)
    report = pe_suite.check_sinusoidal(table, t, layout="concatenated", downscale_freq_shift=0)
    assert "base 1e+08 read back (given: 10000)" in fits(report)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_whisper_passes_under_its_own_shift(dt):
    table = whisper_sinusoids(1500, 384, dt=dt)
    positions = np.arange(1500)
    assert pe_suite.check_sinusoidal(table, positions, layout="concatenated", downscale_freq_shift=1).passed
    report = pe_suite.check_sinusoidal(table, positions, layout="concatenated")
    assert "downscale_freq_shift 1 (given: 0)" in fits(report)


@pytest.mark.parametrize("dim", [64, 65])
def test_fairseq_passes_with_its_padding_row(dim):
    table = fairseq_embedding(130, dim, padding_idx=1)
    positions = np.arange(130)
    keywords = dict(layout="concatenated", downscale_freq_shift=1, padding_idx=1)
    assert pe_suite.check_sinusoidal(table, positions, **keywords).passed
    # The padding row is all zeros: without padding_idx it is an error at position 1 only.
    report = pe_suite.check_sinusoidal(table, positions, layout="concatenated", downscale_freq_shift=1)
    assert not report.passed
    assert {w["position"] for w in report.worst} == {1}, report.text


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_a_12_by_20_grid_passes_and_its_axes_swapped_are_named(dt):
    table = sincos_2d(64, (12, 20), base_size=16, interpolation_scale=2.0).astype(dt)
    keywords = dict(base_size=16, interpolation_scale=2.0)
    assert pe_suite.check_sinusoidal(table, grid=(12, 20), **keywords).passed
    assert "grid 12x20 (given: 20x12): H and W swapped" in fits(
        pe_suite.check_sinusoidal(table, grid=(20, 12), **keywords))


def test_the_halves_swapped_are_named():
    table = sincos_2d(64, (12, 20), base_size=12, swap_halves=True).astype(np.float32)
    assert "axes w and h swapped" in fits(pe_suite.check_sinusoidal(table, grid=(12, 20), base_size=12))


def test_extra_tokens_are_zero_rows():
    table = sincos_2d(32, (8, 8), extra_tokens=1, base_size=8).astype(np.float32)
    assert pe_suite.check_sinusoidal(table, grid=(8, 8), base_size=8, extra_tokens=1).passed
    table[0, 3] = 1e-3
    assert not pe_suite.check_sinusoidal(table, grid=(8, 8), base_size=8, extra_tokens=1).passed


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cogvideox_video_grid_passes(dt):
    # CogVideoX-2b's transformer config: spatial_interpolation_scale 1.875, temporal 1.0; a smaller video.
    table = sincos_3d(64, (10, 6), 4, spatial_interpolation_scale=1.875).astype(dt)
    table = table.reshape(-1, 64)
    assert pe_suite.check_sinusoidal(table, grid=(4, 6, 10), interpolation_scale=1.875).passed


def test_a_diffusers_unet_config_sets_the_switches(tmp_path):
    table, t, _ = case(SWITCHES[0], np.float32)
    config = {"_class_name": "UNet2DConditionModel", "flip_sin_to_cos": True, "freq_shift": 0}
    report = pe_suite.check_sinusoidal(table, t, layout="concatenated", hf_config=config)
    assert report.passed, report.text
    assert "flip_sin_to_cos true (flip_sin_to_cos)" in report.text


def test_reference_matches_the_float64_definition_to_its_rounding():
    t = TIMESTEPS.astype(np.float64)
    ref = pe_suite.reference_sinusoidal(t, 320, layout="concatenated", flip_sin_to_cos=True,
                                        downscale_freq_shift=0, dtype="float64")
    model = timestep_embedding(t, 320, flip=True, shift=0.0, dt=np.float64)
    # float64 exp and sin of |φ| <= 1000: a few units of 2^-53·|φ| apart from the exact values.
    assert np.max(np.abs(ref - model)) < 64 * 2.0**-53 * 1000


def test_bad_switches_name_the_keyword():
    table, t, keywords = case(SWITCHES[0], np.float32)
    with pytest.raises(ValueError, match="downscale_freq_shift"):
        pe_suite.check_sinusoidal(table, t, **dict(keywords, downscale_freq_shift=500))
    with pytest.raises(ValueError, match="positions"):
        pe_suite.check_sinusoidal(table, np.array([0.5, np.nan] * 4 + [1.0]), layout="concatenated")
    with pytest.raises(ValueError, match="grid"):
        pe_suite.check_sinusoidal(table, t, grid=(3, 3))
    with pytest.raises(ValueError, match="base_size"):
        pe_suite.check_sinusoidal(table, t, base_size=16)
