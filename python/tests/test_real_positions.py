"""RoPE at real positions (issue 50): a video model's fractional grid, as CogVideoX builds it.

diffusers' CogVideoX pipeline takes its RoPE grid from a crop region (get_resize_crop_region_for_grid) and
get_3d_rotary_pos_embed(grid_type="linspace"): grid_t = arange(T), grid_h = linspace(crop[0][0], crop[1][0], H,
endpoint=False), grid_w likewise, each a float32 array; a token of frame t, row h, column w reads (t, h, w). Those
are transcribed below from that published definition. CogVideoX gives each axis its own frequency ladder (the
axial N-D form, not merged here yet); the 3-axis plan check offers today is M-RoPE's one ladder in sections, so
the kernel below is Qwen2-VL's apply_multimodal_rotary_pos_emb (HF, published: inv_freq = 1/base^(2j/d) over
the head, cos/sin = cat(freqs, freqs), channel chunks of mrope_section * 2 each reading one axis, rotate_half)
with CogVideoX's split of the head (d/4 for t, 3d/8 each for h and w) as its sections.

A kernel that forms the angle in float32 from the real position, fl(fl(t)·fl(θ)) or fl(t·θ), then float32
sin/cos and rotation, must pass in float32 and bfloat16 under the default budget, and under rope.scalar_f32's
own contract (docs/contracts.md §2a: its c1 = 3.001 charges fl(p) as a rounding, which is what a real t adds);
the same kernel fails when the positions are rounded to integers either side.
"""

import numpy as np
import pytest

import pe_suite
from bf16_util import bf16, bf16_bits

HEADS, HEAD_DIM, BASE = 2, 64, 10000.0
SECTION = (HEAD_DIM // 8, HEAD_DIM // 16 * 3, HEAD_DIM // 16 * 3)  # pairs: d/4, 3d/8, 3d/8 of the channels


def resize_crop_region_for_grid(src, tgt_width, tgt_height):
    """diffusers' pipelines/cogvideo/pipeline_cogvideox.py, as published."""
    tw, th = tgt_width, tgt_height
    h, w = src
    r = h / w
    if r > (th / tw):
        resize_height = th
        resize_width = int(round(th / h * w))
    else:
        resize_width = tw
        resize_height = int(round(tw / w * h))
    crop_top = int(round((th - resize_height) / 2.0))
    crop_left = int(round((tw - resize_width) / 2.0))
    return (crop_top, crop_left), (crop_top + resize_height, crop_left + resize_width)


def cogvideox_grid(frames, height, width, base_height, base_width):
    """[3, frames·height·width] positions (t, h, w) of get_3d_rotary_pos_embed's linspace grid, token order t, h, w."""
    crop = resize_crop_region_for_grid((height, width), base_width, base_height)
    grid_t = np.arange(frames, dtype=np.float32)
    grid_h = np.linspace(crop[0][0], crop[1][0], height, endpoint=False, dtype=np.float32)
    grid_w = np.linspace(crop[0][1], crop[1][1], width, endpoint=False, dtype=np.float32)
    t, h, w = np.meshgrid(grid_t, grid_h, grid_w, indexing="ij")
    return np.stack([t.ravel(), h.ravel(), w.ravel()]).astype(np.float64)


def mrope_f32(x, positions, angle="fl(t)*fl(w)"):
    """Qwen2-VL's M-RoPE in float32 at real positions [3, T]: the angle in float32 either way, sin/cos of it
    rounded to float32 (a correctly rounded sinf/cosf), the rotation's products and sums in float32."""
    inv_freq = 1.0 / BASE ** (np.arange(0, HEAD_DIM, 2, dtype=np.float64) / HEAD_DIM)
    axis = np.repeat(np.arange(3), SECTION)  # pair j reads axis[j]
    p = np.asarray(positions, dtype=np.float64)[axis, :].T  # [T, pairs]
    if angle == "fl(t)*fl(w)":
        freqs = p.astype(np.float32) * inv_freq.astype(np.float32)
    else:
        freqs = (p * inv_freq).astype(np.float32)
    emb = np.concatenate([freqs, freqs], axis=-1).astype(np.float64)
    cos = np.cos(emb).astype(np.float32)[:, None, :]
    sin = np.sin(emb).astype(np.float32)[:, None, :]
    x = np.asarray(x, dtype=np.float32)
    rot = np.concatenate([-x[..., HEAD_DIM // 2:], x[..., :HEAD_DIM // 2]], axis=-1)
    return x * cos + rot * sin


GRID = cogvideox_grid(frames=3, height=6, width=10, base_height=10, base_width=15)
TOKENS = GRID.shape[1]


def test_the_grid_is_fractional():
    # crop ((0, 0), (9, 15)) over 6 x 10 cells: steps of 1.5 on h and w (the test's premise).
    assert not np.all(GRID == np.round(GRID))
    assert GRID[1].max() == 7.5 and GRID[2].max() == 13.5


def data(dtype, angle):
    rng = np.random.default_rng(50)
    x = rng.standard_normal((TOKENS, HEADS, HEAD_DIM)).astype(np.float32)
    if dtype == "bfloat16":
        x = bf16(x)
    return x, mrope_f32(x, GRID, angle)


def check(x, y, positions, dtype, **keywords):
    if dtype == "bfloat16":
        return pe_suite.check_rope(bf16_bits(x), bf16_bits(y), positions, base=BASE, mrope_section=SECTION,
                                   dtype="bfloat16", **keywords)
    return pe_suite.check_rope(x, y, positions, base=BASE, mrope_section=SECTION, **keywords)


@pytest.mark.parametrize("angle", ["fl(t)*fl(w)", "fl(t*w)"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_float32_angle_at_real_positions_passes(dtype, angle):
    x, y = data(dtype, angle)
    report = check(x, y, GRID, dtype)
    assert report.passed, report.text
    assert "undetermined" not in report.text


@pytest.mark.parametrize("angle", ["fl(t)*fl(w)", "fl(t*w)"])
def test_the_float32_contract_covers_a_real_positions_rounding(angle):
    # rope.scalar_f32 forms fl(fl(p)·fl(θ)) and charges fl(p) one rounding (c1 = 3.001): the real t's.
    x, y = data("float32", angle)
    report = check(x, y, GRID, "float32", contract="rope.scalar_f32")
    assert report.passed, report.text


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_positions_rounded_to_integers_fail(dtype):
    x, y = data(dtype, "fl(t)*fl(w)")
    rounded = np.round(GRID)
    told_integers = check(x, y, rounded.astype(np.int64), dtype)
    assert not told_integers.passed
    # The kernel at the rounded grid, checked at the real one: the other way round.
    y_rounded = mrope_f32(x, rounded)
    if dtype == "bfloat16":
        y_rounded = bf16(y_rounded)
    told_reals = check(x, y_rounded, GRID, dtype)
    assert not told_reals.passed
    assert "diagnosis: undetermined (the positions are real" in told_reals.text


def test_negative_real_positions_are_checked():
    # A grid centred on 0 (some video models centre their coordinates): the angle is t·θ for negative t too.
    centred = GRID - GRID.mean(axis=1, keepdims=True)
    assert centred.min() < 0
    x, _ = data("float32", "fl(t)*fl(w)")
    assert check(x, mrope_f32(x, centred), centred, "float32").passed
    assert not check(x, mrope_f32(x, -centred), centred, "float32").passed


def test_integer_valued_floats_keep_the_integer_path():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((TOKENS, HEADS, HEAD_DIM)).astype(np.float32)
    integers = np.round(GRID).astype(np.int64)
    y = mrope_f32(x, integers)
    a = check(x, y, integers, "float32")
    b = check(x, y, integers.astype(np.float64), "float32")
    assert a.passed and b.passed
    assert a.text == b.text and a.to_dict() == b.to_dict()


def test_text_rope_at_real_positions():
    # One axis: a [T] float array (Flux-style float ids), half-split, every pair at the same real position.
    rng = np.random.default_rng(9)
    t = np.sort(rng.uniform(0, 4096, 257))
    x = rng.standard_normal((t.size, HEADS, HEAD_DIM)).astype(np.float32)
    inv_freq = (1.0 / BASE ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)).astype(np.float32)
    freqs = t.astype(np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1).astype(np.float64)
    rot = np.concatenate([-x[..., HEAD_DIM // 2:], x[..., :HEAD_DIM // 2]], axis=-1)
    y = x * np.cos(emb).astype(np.float32)[:, None, :] + rot * np.sin(emb).astype(np.float32)[:, None, :]
    assert pe_suite.check_rope(x, y, t, base=BASE).passed
    assert pe_suite.check_rope(x, y, t.astype(np.float32).astype(np.float64), base=BASE).passed
    assert not pe_suite.check_rope(x, y, np.floor(t).astype(np.int64), base=BASE).passed


@pytest.mark.parametrize("value,words", [
    (np.nan, "holds nan at flat index 5, not a finite position"),
    (np.inf, "holds inf at flat index 5, not a finite position"),
    (2.0**54 + 0.0, "beyond the real positions' bound |t| <= 2^53"),
    (-2.0**54, "beyond the real positions' bound |t| <= 2^53"),
    (1e-40, "a real position is 0 or at least 2^-126 in magnitude"),
])
def test_refused_real_positions_name_the_parameter_and_value(value, words):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 1, 8)).astype(np.float32)
    y = x.copy()
    p = np.arange(8, dtype=np.float64) + 0.5
    p[5] = value
    with pytest.raises(ValueError, match="positions") as e:
        pe_suite.check_rope(x, y, p)
    assert words in str(e.value)
    assert np.array_equal(y, x)  # the caller's buffers untouched


def test_a_per_token_scaling_is_refused_at_real_positions():
    # LongRoPE switches its list at original_max_position by each token's integer position.
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 1, 8)).astype(np.float32)
    p = np.arange(8) + 0.25
    longrope = {"rope_type": "longrope", "factor": 4.0, "original_max_position_embeddings": 4,
                "short_factor": [1.0] * 4, "long_factor": [2.0] * 4}
    with pytest.raises(ValueError, match="scaling.*the positions are real"):
        pe_suite.check_rope(x, x, p, scaling=longrope)


def test_a_config_that_reads_the_sequence_length_from_positions_is_refused():
    # HF's dynamic NTK takes seq_len = max(position_ids) + 1, a token count real positions do not give.
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 1, 8)).astype(np.float32)
    config = {"rope_theta": 10000.0, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
              "max_position_embeddings": 4, "hidden_size": 8, "num_attention_heads": 1}
    with pytest.raises(ValueError, match="sequence length from integer positions; the positions are real"):
        pe_suite.check_rope(x, x, np.arange(8) + 0.5, hf_config=config)


def test_readings_that_take_no_sequence_length_are_checked_at_real_positions():
    # Hunyuan's alpha (base' = b * alpha^(d/(d-2)), vLLM DynamicNTKAlphaRotaryEmbedding) and vLLM's static table
    # (base' at n = factor * L: b * (1 + s(s-1))^(d/(d-2))) read no length: nothing to refuse at real positions.
    d, b = 16, 10000.0
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 1, d))
    p = np.arange(12) * 1.5 + 0.25
    for scaling, grown in [({"rope_type": "dynamic", "alpha": 1000.0, "factor": 1.0}, 1000.0),
                           ({"rope_type": "dynamic", "factor": 2.0, "dynamic_semantics": "static"},
                            1 + 2.0 * (2.0 - 1))]:
        inv = 1.0 / (b * grown ** (d / (d - 2))) ** (np.arange(0, d, 2) / d)
        angle = p[:, None] * inv[None, :]
        cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
        a, c = x[..., : d // 2], x[..., d // 2:]
        y = np.concatenate([a * cos - c * sin, c * cos + a * sin], axis=-1)
        config = {"rope_theta": b, "head_dim": d, "max_position_embeddings": 4, "rope_scaling": scaling}
        report = pe_suite.check_rope(x.astype(np.float32), y.astype(np.float32), p, hf_config=config)
        assert report.passed, f"{scaling}: {report}"
