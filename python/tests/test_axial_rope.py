"""Axial N-D RoPE (issue 50): each axis its own frequency ladder over its own dim, the axes' blocks concatenated.
Every kernel below is transcribed in numpy from the published definitions, not from pe-suite's code:

- Flux (black-forest-labs/flux `EmbedND`, diffusers `FluxPosEmbed`): per axis i,
  omega = 1 / theta ** (arange(0, d_i, 2, float64) / d_i); angle = pos_i * omega (float64); the 2x2 rotation
  [[cos, -sin], [sin, cos]] cast to float32; apply_rope on x.float() viewed as pairs (2k, 2k+1):
  out = f[..., 0] * x[..., 0] + f[..., 1] * x[..., 1] in float32, cast back to x's type.
- HunyuanVideo (`HunyuanVideoRotaryPosEmbed`): the same ladders per axis at theta 256, rope_axes_dim (16, 56, 56).
- CogVideoX (`get_3d_rotary_pos_embed`): dims (d//4, d//8*3, d//8*3) for (t, h, w), h and w from
  np.linspace(start, stop, size, endpoint=False) (fractional when the crop region differs from the grid),
  float32 inv_freq times float64 positions, cos/sin in float64 cast to float32, interleaved.
- Llama-4 vision (vLLM `Llama4VisionRotaryEmbedding`): x = idx % sqrt(N), y = idx // sqrt(N), angles (x + 1)w and
  (y + 1)w with w = theta ** (-arange(0, D/2, 2)[:D/4] / (D/2)), float32, the CLS row (the last) at angle 0.
"""

import json

import numpy as np
import pytest

import pe_suite
from bf16_util import bf16, bf16_bits

HEADS = 2


def flux_freqs(ids, axes_dim, theta, dims_for_ladder=None, dtype=np.float64):
    """EmbedND: [T, D/2, 2, 2] float32 rotations; `dims_for_ladder` replaces each axis's exponent denominator."""
    blocks = []
    for i, d in enumerate(axes_dim):
        over = d if dims_for_ladder is None else dims_for_ladder[i]
        scale = np.arange(0, d, 2, dtype=np.float64) / over
        omega = (1.0 / theta ** scale).astype(dtype)
        out = ids[:, i].astype(dtype)[:, None] * omega[None, :]
        out = out.astype(np.float64)
        rot = np.stack([np.cos(out), -np.sin(out), np.sin(out), np.cos(out)], axis=-1)
        blocks.append(rot.reshape(*out.shape, 2, 2))
    return np.concatenate(blocks, axis=1).astype(np.float32)


def apply_rope(x, freqs):
    """Flux's apply_rope: x [T, H, D] float32 (x.float()), freqs [T, D/2, 2, 2]; float32 products and sum."""
    t, h, d = x.shape
    xq = x.astype(np.float32).reshape(t, h, d // 2, 1, 2)
    f = freqs[:, None]  # [T, 1, D/2, 2, 2]
    out = f[..., 0] * xq[..., 0] + f[..., 1] * xq[..., 1]
    return out.reshape(t, h, d).astype(np.float32)


def flux_ids(height, width, text_tokens=3):
    """Flux's ids: text tokens at (0, 0, 0), then the image's (0, row, column) cells, row-major."""
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    img = np.stack([np.zeros(height * width), rows.ravel(), cols.ravel()], axis=1)
    return np.concatenate([np.zeros((text_tokens, 3)), img]).astype(np.float64)


def fails_named(report, words):
    return (not report.passed) and any(words in fit for fit in report.diagnosis)


@pytest.fixture(scope="module")
def flux_case():
    ids = flux_ids(6, 10)  # non-square: swapping h and w shows
    x = np.random.default_rng(50).standard_normal((len(ids), HEADS, 128)).astype(np.float32)
    return ids, x


def test_flux_embednd_passes_with_its_flags(flux_case):
    ids, x = flux_case
    y = apply_rope(x, flux_freqs(ids, (16, 56, 56), 10000.0))
    report = pe_suite.check_rope(x, y, ids.T.astype(np.int64), layout="interleaved", axes_dim=(16, 56, 56),
                                 base=10000)
    assert report.passed, str(report)


def test_flux_in_bfloat16_passes(flux_case):
    ids, x = flux_case
    xb = bf16(x)
    y = apply_rope(xb, flux_freqs(ids, (16, 56, 56), 10000.0))
    report = pe_suite.check_rope(bf16_bits(xb), bf16_bits(y), ids.T.astype(np.int64), layout="interleaved",
                                 axes_dim=(16, 56, 56), base=10000, dtype="bfloat16")
    assert report.passed, str(report)


# (mistake, the kernel's ids columns, its axes_dim, its ladders' dims, theta, the words the diagnosis must say)
FLUX_MISTAKES = [
    ("theta wrong", [0, 1, 2], (16, 56, 56), None, 256.0, "base 256"),
    # Axis 2's exponent over 112 (twice its 56 channels): HF's "theta over head_dim where head_dim/2" on one axis.
    ("one axis's dim wrong", [0, 1, 2], (16, 56, 56), (16, 56, 112), 10000.0, "axis 2's ladder over 112"),
    ("axes swapped", [0, 2, 1], (16, 56, 56), None, 10000.0, "axes 1 and 2 swapped"),
    ("axis blocks reordered", [1, 2, 0], (56, 56, 16), None, 10000.0,
     "axis blocks concatenated in the order (1, 2, 0)"),
]


@pytest.mark.parametrize("mistake,columns,axes_dim,ladders,theta,words", FLUX_MISTAKES,
                         ids=[m[0] for m in FLUX_MISTAKES])
def test_a_flux_mistake_fails_named(flux_case, mistake, columns, axes_dim, ladders, theta, words):
    ids, x = flux_case
    y = apply_rope(x, flux_freqs(ids[:, columns], axes_dim, theta, dims_for_ladder=ladders))
    report = pe_suite.check_rope(x, y, ids.T.astype(np.int64), layout="interleaved", axes_dim=(16, 56, 56),
                                 base=10000)
    assert fails_named(report, words), f"{mistake}: {report}"


def test_hunyuan_video_theta_256_passes_from_its_config(tmp_path):
    grid = np.stack(np.meshgrid(np.arange(3), np.arange(4), np.arange(6), indexing="ij")).reshape(3, -1).T
    x = np.random.default_rng(256).standard_normal((len(grid), HEADS, 128)).astype(np.float32)
    # get_1d_rotary_pos_embed at its default freqs_dtype: float32 inv_freq and angles.
    y = apply_rope(x, flux_freqs(grid.astype(np.float64), (16, 56, 56), 256.0, dtype=np.float32))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"_class_name": "HunyuanVideoTransformer3DModel", "attention_head_dim": 128,
                                  "rope_axes_dim": [16, 56, 56], "rope_theta": 256.0}))
    report = pe_suite.check_rope(x, y, grid.T.astype(np.int64), hf_config=str(config))
    assert report.passed, str(report)
    assert not pe_suite.check_rope(x, y, grid.T.astype(np.int64), layout="interleaved", axes_dim=(16, 56, 56),
                                   base=10000).passed


def test_flux_config_gives_the_flags(tmp_path, flux_case):
    ids, x = flux_case
    y = apply_rope(x, flux_freqs(ids, (16, 56, 56), 10000.0))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"_class_name": "FluxTransformer2DModel", "attention_head_dim": 128,
                                  "axes_dims_rope": [16, 56, 56]}))
    assert pe_suite.check_rope(x, y, ids.T.astype(np.int64), hf_config=str(config)).passed


def llama4_vision(x, num_patches, theta=10000.0):
    """vLLM's Llama4VisionRotaryEmbedding at head dim D: rows are the patches then the CLS token."""
    side = int(np.sqrt(num_patches))
    idx = np.concatenate([np.arange(num_patches), [-2]])
    fx, fy = idx % side, idx // side
    d = x.shape[-1]
    freq_dim = d // 2
    rope_freq = (1.0 / theta ** (np.arange(0, freq_dim, 2)[: freq_dim // 2].astype(np.float32) / freq_dim)).astype(
        np.float32)
    freqs_x = np.repeat((fx + 1)[:, None].astype(np.float32) * rope_freq[None, :], 2, axis=-1)
    freqs_y = np.repeat((fy + 1)[:, None].astype(np.float32) * rope_freq[None, :], 2, axis=-1)
    freqs = np.concatenate([freqs_x, freqs_y], axis=-1)[..., ::2]
    freqs = np.where(idx[:, None] < 0, np.float32(0), freqs).astype(np.float32)
    cos, sin = np.cos(freqs).astype(np.float32), np.sin(freqs).astype(np.float32)
    xa, xb = x[..., 0::2], x[..., 1::2]
    y = np.empty_like(x)
    y[..., 0::2] = xa * cos[:, None] - xb * sin[:, None]
    y[..., 1::2] = xa * sin[:, None] + xb * cos[:, None]
    positions = np.stack([np.where(idx < 0, 0, fx + 1), np.where(idx < 0, 0, fy + 1)])
    return y.astype(np.float32), positions.astype(np.int64)


def test_llama4_vision_cls_row_passes():
    x = np.random.default_rng(4).standard_normal((24 * 24 + 1, HEADS, 88)).astype(np.float32)
    y, positions = llama4_vision(x, 24 * 24)
    report = pe_suite.check_rope(x, y, positions, layout="interleaved", axes_dim=(44, 44), base=10000)
    assert report.passed, str(report)
    np.testing.assert_array_equal(y[-1], x[-1])  # the CLS row: angle 0 on both axes


def test_axes_dim_refusals_name_the_parameter(flux_case):
    ids, x = flux_case
    for dims, words in [((16, 56, 48), "sum to rotary_dim"), ((16, 55, 57), "even")]:
        with pytest.raises(ValueError, match="axes_dim") as e:
            pe_suite.check_rope(x, x, ids.T.astype(np.int64), layout="interleaved", axes_dim=dims)
        assert words in str(e.value)
    five = np.zeros((5, 4), dtype=np.int64)
    x10 = np.ones((4, 1, 10), dtype=np.float32)
    with pytest.raises(ValueError, match="axes_dim may have at most 4 axes"):
        pe_suite.check_rope(x10, x10, five, layout="interleaved", axes_dim=(2,) * 5)
    with pytest.raises(ValueError, match="axes_dim"):
        pe_suite.check_rope(x, x, ids.T.astype(np.int64), layout="interleaved", axes_dim=())
    with pytest.raises(ValueError, match="axes_dim"):
        pe_suite.check_rope(x, x, ids.T.astype(np.int64), axes_dim=(16, 56, 56), mrope_section=(8, 28, 28))


def hunyuan_kernel(swap_axes=False):
    """A numpy kernel of HunyuanVideo's rotation (float32 ladders and angles), reading verify_rope's axial config."""
    def fn(x, positions, config):
        ids = np.asarray(positions, dtype=np.float64).T
        if swap_axes:
            ids = ids[:, [0, 2, 1]]
        freqs = flux_freqs(ids, config["rope_axes_dim"], config["rope_theta"], dtype=np.float32)
        return apply_rope(np.asarray(x, dtype=np.float32), freqs)
    return fn


def test_verify_rope_draws_axial_forms():
    summary = pe_suite.verify_rope(hunyuan_kernel(), forms=("axial",), rope_types=("default",), dtypes=("float32",),
                                   layout="interleaved", array="numpy", examples=25, failure_file=None)
    assert summary["examples"] == 25, summary


def test_verify_rope_catches_axes_swapped():
    with pytest.raises(pe_suite.verify.VerifyError) as e:
        pe_suite.verify_rope(hunyuan_kernel(swap_axes=True), forms=("axial",), rope_types=("default",),
                             dtypes=("float32",), layout="interleaved", array="numpy", examples=25,
                             failure_file=None)
    assert "axes 1 and 2 swapped" in str(e.value), str(e.value)


def cogvideox_positions(frames, height, width, base_height=30, base_width=45):
    """diffusers' CogVideoX grid: get_resize_crop_region_for_grid, then float32 linspace grids (grid_type
    "linspace") of frames x height x width cells, (t, h, w) per cell, row-major."""
    r = height / width
    if r > base_height / base_width:
        rh, rw = base_height, int(round(base_height / height * width))
    else:
        rw, rh = base_width, int(round(base_width / width * height))
    top, left = int(round((base_height - rh) / 2.0)), int(round((base_width - rw) / 2.0))
    stop = (top + rh, left + rw)
    grid_h = np.linspace(top, stop[0] * (height - 1) / height, height, dtype=np.float32)
    grid_w = np.linspace(left, stop[1] * (width - 1) / width, width, dtype=np.float32)
    grid_t = np.linspace(0, frames * (frames - 1) / frames, frames, dtype=np.float32)
    t, h, w = np.meshgrid(grid_t, grid_h, grid_w, indexing="ij")
    return np.stack([t.ravel(), h.ravel(), w.ravel()])


def cogvideox_rope(x, positions, head_dim):
    """get_3d_rotary_pos_embed (dims d//4, d//8*3, d//8*3; theta 10000): per axis float32 inv_freq times the
    float32 positions, cos/sin repeat-interleaved, then apply_rotary_emb's x*cos + rotated*sin in float32."""
    dims = (head_dim // 4, head_dim // 8 * 3, head_dim // 8 * 3)
    angles = []
    for axis, d in enumerate(dims):
        inv = (1.0 / 10000.0 ** (np.arange(0, d, 2, dtype=np.float32)[: d // 2] / np.float32(d))).astype(np.float32)
        angles.append(positions[axis][:, None].astype(np.float32) * inv[None, :])
    angle = np.concatenate(angles, axis=1)
    cos = np.repeat(np.cos(angle.astype(np.float64)).astype(np.float32), 2, axis=-1)[:, None, :]
    sin = np.repeat(np.sin(angle.astype(np.float64)).astype(np.float32), 2, axis=-1)[:, None, :]
    rotated = np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    return (x * cos + rotated * sin).astype(np.float32), dims


def test_cogvideox_fractional_linspace_grid_passes():
    positions = cogvideox_positions(3, 20, 30)  # a 20 x 30 latent against the 30 x 45 base: steps of 1.5
    assert np.any(positions != np.round(positions)), "the grid must be fractional"
    x = np.random.default_rng(1875).standard_normal((positions.shape[1], HEADS, 64)).astype(np.float32)
    y, dims = cogvideox_rope(x, positions, 64)
    report = pe_suite.check_rope(x, y, positions.astype(np.float64), layout="interleaved", axes_dim=dims)
    assert report.passed, str(report)
    rounded = np.round(positions).astype(np.int64)
    assert not pe_suite.check_rope(x, y, rounded, layout="interleaved", axes_dim=dims).passed


def ladders(ids, axes_dim, thetas, dims_for_ladder):
    """EmbedND's rotations with each axis's own theta and exponent denominator (the mistakes below)."""
    blocks = []
    for i, d in enumerate(axes_dim):
        omega = 1.0 / thetas[i] ** (np.arange(0, d, 2, dtype=np.float64) / dims_for_ladder[i])
        out = ids[:, i][:, None] * omega[None, :]
        rot = np.stack([np.cos(out), -np.sin(out), np.sin(out), np.cos(out)], axis=-1)
        blocks.append(rot.reshape(*out.shape, 2, 2))
    return np.concatenate(blocks, axis=1).astype(np.float32)


# Per-axis mistakes no candidate lists, read back from each axis's own frequencies: one axis at another base
# (HunyuanVideo's 256 on the frames, the rest at Flux's 10000), one axis's exponent over a dim that is neither
# its own nor twice or half of it.
AXIS_MISTAKES = [
    ("frames at base 256", (256.0, 1e4, 1e4), (16, 56, 56), "axis 0's base 256 (given 10000)"),
    ("columns at base 500", (1e4, 1e4, 500.0), (16, 56, 56), "axis 2's base 500 (given 10000)"),
    ("rows' exponent over 40", (1e4, 1e4, 1e4), (16, 40, 56), "axis 1's ladder over 40 where its dim is 56"),
]


@pytest.mark.parametrize("mistake,thetas,dims,words", AXIS_MISTAKES, ids=[m[0] for m in AXIS_MISTAKES])
def test_each_axis_ladder_is_read_back_and_named(mistake, thetas, dims, words):
    f, h, w = np.meshgrid(np.arange(4), np.arange(6), np.arange(10), indexing="ij")
    ids = np.stack([f.ravel() + 30, h.ravel(), w.ravel()], 1).astype(np.float64)  # a later chunk's frames
    x = np.random.default_rng(0).standard_normal((ids.shape[0], 2, 128)).astype(np.float32)
    y = apply_rope(x, ladders(ids, (16, 56, 56), thetas, dims))
    report = pe_suite.check_rope(x, y, ids.T.astype(np.int64), layout="interleaved", axes_dim=(16, 56, 56), base=1e4)
    assert fails_named(report, words), f"{mistake}: {report}"
    correct = apply_rope(x, ladders(ids, (16, 56, 56), (1e4,) * 3, (16, 56, 56)))
    assert pe_suite.check_rope(x, correct, ids.T.astype(np.int64), layout="interleaved", axes_dim=(16, 56, 56),
                               base=1e4).passed
