"""check_rope_fp8 (issue 51, item 1): RoPE quantized to FP8 as FlashInfer's rope_quantize_fp8 writes it. The
quantizer here is written from the OCP 8-bit float definition (e4m3fn: bias 7, 3 mantissa bits, largest 448, no
infinity; e5m2: bias 15, 2 mantissa bits), by enumerating every code's value and taking the nearest, ties to the
even code, saturating; the rotation is HF's rotate_half in float32 (inv_freq = 1 / base ** (arange(0, d, 2) / d))."""
import numpy as np
import pytest

import pe_suite
from bf16_util import bf16

BIAS = {"e4m3fn": (4, 3, 7), "e5m2": (5, 2, 15)}


def code_values(fmt):
    e_bits, m_bits, bias = BIAS[fmt]
    vals = []
    for code in range(128):  # the non-negative codes
        e, m = code >> m_bits, code & ((1 << m_bits) - 1)
        if (fmt == "e4m3fn" and code == 0x7F) or (fmt == "e5m2" and e == 31):
            continue  # NaN, infinities
        vals.append((code, (m / 2 ** m_bits) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2 ** m_bits) * 2.0 ** (e - bias)))
    return vals


def to_fp8(values, fmt):
    table = code_values(fmt)
    out = np.empty(np.shape(values), dtype=np.uint8)
    for idx, v in np.ndenumerate(np.asarray(values, dtype=np.float64)):
        a = min(abs(v), table[-1][1])  # saturate
        best = min(table, key=lambda cv: (abs(cv[1] - a), cv[0] % 2))  # nearest, ties to the even code
        out[idx] = best[0] | (0x80 if v < 0 and best[1] != 0 else 0)
    return out


def rope_f32(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d))).astype(np.float32)
    ang = (positions.astype(np.float32)[:, None] * inv_freq).astype(np.float32)
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1).astype(np.float32)


@pytest.fixture
def case():
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((24, 2, 32)) * 3).astype(np.float32)
    return x, np.arange(500, 524)


@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2"])
def test_a_quantized_rope_passes(case, fmt):
    x, positions = case
    y = to_fp8(rope_f32(x, positions) / 0.5, fmt)
    r = pe_suite.check_rope_fp8(x, y, positions, scale=0.5, fmt=fmt)
    assert r.passed, str(r)


def test_per_head_scales_and_saturation(case):
    x, positions = case
    scales = np.array([0.01, 2.0])  # head 0 saturates at 448 often
    y = to_fp8(rope_f32(x, positions) / scales[None, :, None], "e4m3fn")
    assert (y[:, 0] & 0x7F == 0x7E).any()  # 448 reached
    assert pe_suite.check_rope_fp8(x, y, positions, scale=scales, fmt="e4m3fn").passed


def test_a_bf16_rounded_rotation_fails_named():
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((64, 4, 64)) * 3).astype(np.float32)
    positions = np.arange(64)
    r = pe_suite.check_rope_fp8(x, to_fp8(bf16(rope_f32(x, positions)), "e4m3fn"), positions, fmt="e4m3fn")
    assert not r.passed
    assert any(d.startswith("a bfloat16 rotation before the quantization") for d in r.diagnosis), str(r)


def hf_bf16_rope(x, positions, base=10000.0):
    """HF's rotate_half in a bfloat16 model: float32 angles, the cos/sin cache cast to bfloat16, every product and
    the sum rounded to bfloat16 (torch's bf16 ops), written here in numpy."""
    d = x.shape[-1]
    inv_freq = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d))).astype(np.float32)
    ang = (positions.astype(np.float32)[:, None] * inv_freq).astype(np.float32)
    cos, sin = bf16(np.cos(ang))[:, None, :], bf16(np.sin(ang))[:, None, :]
    xb = bf16(x)
    a, b = xb[..., : d // 2], xb[..., d // 2 :]
    cos, sin = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
    rot = np.concatenate([-b, a], axis=-1)
    return bf16(bf16(xb * cos) + bf16(rot * sin))


def test_an_unfused_bf16_rotation_passes_when_stated():
    # vLLM's unfused path: the model's RoPE in bfloat16, then the fp8 cache quantizes that. Correct for such an
    # engine, so it passes with rotation_dtype="bfloat16"; under the default (a fused float32 rotation) it fails,
    # and the diagnosis says which rotation it is.
    rng = np.random.default_rng(10)
    x = bf16((rng.standard_normal((32, 4, 64)) * 3).astype(np.float32))
    positions = np.arange(100000, 100032)
    codes = to_fp8(hf_bf16_rope(x, positions), "e4m3fn")
    assert pe_suite.check_rope_fp8(x, codes, positions, fmt="e4m3fn", rotation_dtype="bfloat16").passed
    r = pe_suite.check_rope_fp8(x, codes, positions, fmt="e4m3fn")
    assert not r.passed
    assert r.diagnosis == [d for d in r.diagnosis if d.startswith("a bfloat16 rotation before the quantization: every "
                                                                  "code within HF's rotate_half in bfloat16")], str(r)
    assert r.diagnosis, str(r)


def test_the_rotations_own_error_near_a_boundary_passes():
    # The float32 rotation's error is the rope.torch_f32 contract's (the angle's, the frequency's: 2j/d is not
    # exact in float32 at d = 96): a scale that puts a rounding boundary between the exact value and HF's float32
    # one must not fail. The scale is chosen from HF's own error at its worst element, the boundary at its middle.
    rng = np.random.default_rng(11)
    x = rng.standard_normal((256, 4, 96)).astype(np.float32)
    positions = np.arange(100000, 100256)
    y = rope_f32(x, positions).astype(np.float64)
    exact = pe_suite.reference_rope(x.astype(np.float64), positions, base=10000.0, layout="halfsplit",
                                    dtype="float64")
    t, h, c = np.unravel_index(np.argmax(np.abs(y - exact) / np.abs(exact).clip(1e-3)), y.shape)
    e, got = exact[t, h, c], y[t, h, c]
    scale = abs((e + got) / 2) / 1.0625  # 1.0625: e4m3fn's rounding boundary between 1 and 1.125
    r = pe_suite.check_rope_fp8(x[t:t + 1], to_fp8(y[t:t + 1] / scale, "e4m3fn"), positions[t:t + 1], scale=scale,
                                fmt="e4m3fn")
    assert r.passed, str(r)


def test_a_pass_through_channel_divided_in_float32_passes():
    # The quantizer divides in float32 (x / scale rounded once, then RN into e4m3): a value just off an e4m3 tie
    # rounds onto it in float32 and ties to even. Such a value is searched among float32 values whose quotient lies
    # within 2^-20 of a tie (the tool's vectorised quantizer finds them; this test's own one confirms the pick).
    rng = np.random.default_rng(0)
    xs = (rng.standard_normal(2_000_000) * 4).astype(np.float32)
    q32 = (xs / np.float32(0.3)).astype(np.float32).astype(np.float64)
    exact = xs.astype(np.float64) / 0.3
    differ = np.nonzero(pe_suite.fp8.quantize(q32, "e4m3fn") != pe_suite.fp8.quantize(exact, "e4m3fn"))[0]
    v = next(xs[i] for i in differ if to_fp8(q32[i:i + 1], "e4m3fn")[0] != to_fp8(exact[i:i + 1], "e4m3fn")[0])
    x = np.array([[[0.5, 0.25, 0.5, 0.25, v, 1, 1, 1]]], dtype=np.float32)
    positions = np.array([3])
    y = pe_suite.reference_rope(x.astype(np.float64), positions, rotary_dim=4, dtype="float64")
    codes = to_fp8((y.astype(np.float32) / np.float32(0.3)).astype(np.float32).astype(np.float64), "e4m3fn")
    assert pe_suite.check_rope_fp8(x, codes, positions, scale=0.3, fmt="e4m3fn", rotary_dim=4).passed


def test_the_scale_applied_twice_fails_named(case):
    x, positions = case
    r = pe_suite.check_rope_fp8(x, to_fp8(rope_f32(x, positions) / 0.25, "e4m3fn"), positions, scale=0.5,
                                fmt="e4m3fn")
    assert not r.passed
    assert "the scale applied twice (divided by scale²)" in r.diagnosis, str(r)


def test_bad_arguments_are_named(case):
    x, positions = case
    y = to_fp8(rope_f32(x, positions), "e4m3fn")
    with pytest.raises(ValueError, match="fmt"):
        pe_suite.check_rope_fp8(x, y, positions)
    with pytest.raises(ValueError, match="scale"):
        pe_suite.check_rope_fp8(x, y, positions, fmt="e4m3fn", scale=0.0)
    with pytest.raises(TypeError, match="y: expected FP8 codes"):
        pe_suite.check_rope_fp8(x, y.astype(np.int16), positions, fmt="e4m3fn")


def test_long_positions_pass_with_the_rotations_own_error():
    # At positions near 2^16 HF's float32 angle is off by up to ~2^-8 rad: codes across boundaries are the
    # rotation's error, accepted within its model, and counted.
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((64, 4, 64)) * 3).astype(np.float32)
    positions = np.arange(65536, 65600)
    r = pe_suite.check_rope_fp8(x, to_fp8(rope_f32(x, positions), "e4m3fn"), positions, fmt="e4m3fn")
    assert r.passed and r.neighbours > 0, str(r)


def test_negative_zero_and_a_truncating_quantizer(case):
    x, positions = case
    y = to_fp8(rope_f32(x, positions) / 64.0, "e4m3fn")
    zeros = (y == 0)
    assert zeros.any()
    signed = np.where(zeros & (rope_f32(x, positions) < 0), np.uint8(0x80), y)  # CUDA's cast keeps the sign
    assert pe_suite.check_rope_fp8(x, signed, positions, scale=64.0, fmt="e4m3fn").passed
    # Round toward zero instead of to nearest: wrong by a code wherever the value's fraction was past the half.
    table = [v for _, v in code_values("e4m3fn")]
    v = rope_f32(x, positions) / 64.0
    toward = np.sign(v) * np.array([max(t for t in table if t <= abs(a)) for a in v.ravel()]).reshape(v.shape)
    r = pe_suite.check_rope_fp8(x, to_fp8(toward, "e4m3fn"), positions, scale=64.0, fmt="e4m3fn")
    assert not r.passed and r.wrong > 100, str(r)


def test_ties_away_from_zero_on_pass_through_channels_fail():
    # e4m3fn's midpoints (1.0625 between 1 and 1.125, ...) are exact in float32: every quantizer path meets the tie
    # itself, and OCP rounds it to the even code. A quantizer that rounds ties away from zero differs there.
    mids = np.array([1.0625, 1.1875, 1.3125, 2.125, 3.25, -1.0625, -2.375, -3.25], dtype=np.float32)
    x = np.zeros((1, 1, 4 + len(mids)), dtype=np.float32)
    x[0, 0, :4], x[0, 0, 4:] = [0.5, 0.25, 0.5, 0.25], mids
    positions = np.array([3])
    y = pe_suite.reference_rope(x.astype(np.float64), positions, rotary_dim=4, dtype="float64")
    even = to_fp8(y, "e4m3fn")
    assert pe_suite.check_rope_fp8(x, even, positions, fmt="e4m3fn", rotary_dim=4).passed
    table = dict((c, v) for c, v in code_values("e4m3fn"))
    away = even.copy()
    for k, m in enumerate(mids):  # the code above the tie in magnitude
        lower = max(c for c, v in table.items() if v < abs(m))
        away[0, 0, 4 + k] = (lower + 1) | (0x80 if m < 0 else 0)
    assert not np.array_equal(away, even)
    r = pe_suite.check_rope_fp8(x, away, positions, fmt="e4m3fn", rotary_dim=4)
    assert not r.passed and r.wrong > 0, str(r)


def test_x_of_any_numeric_type_is_read():
    """x is handed over in place when the check reads its type (float16/32/64, bfloat16), else as float64: integer
    data and lists give the report of the same values as float64."""
    x = (np.arange(4 * 2 * 8).reshape(4, 2, 8) % 5 - 2).astype(np.int64)
    positions = np.arange(4)
    y = to_fp8(rope_f32(x.astype(np.float32), positions), "e4m3fn")
    want = pe_suite.check_rope_fp8(x.astype(np.float64), y, positions, fmt="e4m3fn")
    for given in (x, x.tolist(), x.astype(np.float32)):
        got = pe_suite.check_rope_fp8(given, y, positions, fmt="e4m3fn")
        assert (got.passed, got.wrong, got.neighbours, str(got)) == \
            (want.passed, want.wrong, want.neighbours, str(want))
