"""The sinusoidal family as diffusion, audio and vision code ships it (issue 49).

Each table is a numpy transcription of a published definition (published_tables.py: diffusers', Whisper's,
fairseq's, MAE's and CogVideoX's code, not pe-suite's). Each table must pass under its own switches, in float32 (the published dtype) and float64 (the same formula
in double), and fail with one switch flipped, the diagnosis naming the switch and its value.
"""
import numpy as np
import pytest

import pe_suite
from published_tables import (fairseq_embedding, get_timestep_embedding, sincos_2d, sincos_3d,
                              whisper_sinusoids)

TIMESTEPS = np.array([0.0, 0.5, 1.0, 17.25, 250.0, 499.5, 731.125, 999.875, 999.0])


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
    table = get_timestep_embedding(t, dim, s["flip"], s["shift"], s.get("scale", 1.0), s.get("max_period", 10000), dt)
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
    table = get_timestep_embedding(t, 256, downscale_freq_shift=0.0, max_period=1e8)
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
    model = get_timestep_embedding(t, 320, flip_sin_to_cos=True, downscale_freq_shift=0.0, dt=np.float64)
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


def test_a_scaled_angle_is_banded_where_it_lies():
    # With scale 1000, t = 3e6 is an angle of 3e9: past every promised position, so a table of zeros cannot
    # pass there (its budget reaches any output's error): undecidable, as the same angle unscaled is.
    zeros = np.zeros((2, 64), np.float32)
    assert pe_suite.check_sinusoidal(zeros, np.array([3e6, 5e6]), scale=1000.0).verdict == "UNDECIDABLE"
    assert pe_suite.check_sinusoidal(zeros, np.array([3e9, 5e9])).verdict == "UNDECIDABLE"
    with pytest.raises(ValueError, match="scale: scale·position must be finite and within 2\\^53"):
        pe_suite.check_sinusoidal(zeros, np.array([0.5, 1e10]), scale=1e300)


def test_a_grid_larger_than_the_table_is_refused_before_it_is_built():
    with pytest.raises(ValueError, match="grid: grid must have at most 2\\^26 cells"):
        pe_suite.check_sinusoidal(np.zeros((4, 16), np.float32), grid=(16384, 16384))
    with pytest.raises(ValueError, match="table: the table has 4 rows, the grid's cells .* are 6"):
        pe_suite.check_sinusoidal(np.zeros((4, 16), np.float32), grid=(2, 3))


def test_get_2d_sincos_pos_embeds_default_base_size_is_named():
    table = sincos_2d(64, (32, 32)).astype(np.float32)  # base_size=16, the function's default
    assert "base_size 16, get_2d_sincos_pos_embed's default (given: none)" in fits(
        pe_suite.check_sinusoidal(table, grid=(32, 32)))
    assert pe_suite.check_sinusoidal(table, grid=(32, 32), base_size=16).passed


@pytest.mark.parametrize("config, table", [
    # PixArt-alpha 512: interpolation_scale null, so max(sample_size // 64, 1) (pixart_transformer_2d.py).
    ({"_class_name": "PixArtTransformer2DModel", "patch_size": 2, "sample_size": 128, "interpolation_scale": None},
     lambda: sincos_2d(64, (64, 64), base_size=64, interpolation_scale=2)),
    # SD3: PatchEmbed's grid is pos_embed_max_size cells a side, base_size sample_size // patch_size.
    ({"_class_name": "SD3Transformer2DModel", "patch_size": 2, "sample_size": 32, "pos_embed_max_size": 24},
     lambda: sincos_2d(64, (24, 24), base_size=16)),
    # CogVideoX without its interpolation scales: the class's defaults 1.875 and 1.0, temporal ratio 4.
    ({"_class_name": "CogVideoXTransformer3DModel", "patch_size": 2, "sample_frames": 9, "sample_height": 8,
      "sample_width": 12}, lambda: sincos_3d(64, (6, 4), 3, spatial_interpolation_scale=1.875).reshape(-1, 64)),
])
def test_a_diffusers_transformer_config_gives_its_grid(config, table):
    report = pe_suite.check_sinusoidal(table().astype(np.float32), hf_config=config)
    assert report.passed, report.text
