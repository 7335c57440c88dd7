"""A large band's p99 over a sample (harness::Measurement::sample_percentiles, issue 53): by default check_rope
and check_sinusoidal take a band of 2^21 elements and more's 99th percentiles over 1 token (a table: 1 block of
rows, about 4096 elements) in 8, and say so; exact_p99=True takes every element. The verdict, the maxima and the worst elements are
every element's either way."""

import numpy as np

import pe_suite

FROM = 1 << 21


def float32_rope(x, positions, base=10000.0):
    """HF's rotate_half RoPE as engines run it in float32: angles, sin, cos and products all float32."""
    d = x.shape[-1]
    inv_freq = (1.0 / base ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d))).astype(np.float32)
    angles = np.outer(positions.astype(np.float32), inv_freq).astype(np.float32)
    cos = np.concatenate([np.cos(angles)] * 2, -1)[:, None, :]
    sin = np.concatenate([np.sin(angles)] * 2, -1)[:, None, :]
    rotated = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return (x * cos + rotated * sin).astype(np.float32)


def float32_table(positions, dim, base=10000.0):
    """The paper's interleaved table in float32 arithmetic."""
    inv_freq = (1.0 / base ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))).astype(np.float32)
    angles = np.outer(positions.astype(np.float32), inv_freq).astype(np.float32)
    table = np.empty((len(positions), dim), np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def same_but_p99(sampled, exact):
    assert sampled.passed == exact.passed and sampled.verdict == exact.verdict
    assert sampled.max_abs == exact.max_abs
    assert sampled.worst == exact.worst
    for s, e in zip(sampled.bands, exact.bands, strict=True):
        for key in ("lo", "hi", "samples", "violations", "max_abs", "max_ulp", "worst", "verdict"):
            assert s[key] == e[key], key
        assert e["p99_samples"] == e["samples"]
        assert 0 < s["p99_abs"] <= s["max_abs"] and 0 < s["p99_ulp"] <= s["max_ulp"]


def test_rope_band_of_2_21_elements_takes_its_p99_over_1_token_in_8(rng):
    x = rng.standard_normal((560, 32, 128)).astype(np.float32)  # 2'293'760 elements, positions 0..559: one band
    positions = np.arange(560)
    y = float32_rope(x, positions)
    y[100, 3, 7] += 1e-2  # one element over budget: the verdict and the worst element are every element's
    sampled = pe_suite.check_rope(x, y, positions, threads=1)
    exact = pe_suite.check_rope(x, y, positions, threads=1, exact_p99=True)
    same_but_p99(sampled, exact)
    assert not sampled.passed and sampled.worst[0]["row"] == 100
    (band,) = sampled.bands
    assert band["samples"] == x.size >= FROM
    assert band["p99_samples"] % (32 * 128) == 0  # whole tokens
    assert band["samples"] / 16 < band["p99_samples"] < band["samples"] / 5
    assert "p99 columns of the bands of 2097152 elements and more" in sampled.text and "1 token in 8" in sampled.text
    assert "p99 columns" not in exact.text
    # Below 2^21 elements a band's p99 is every element's.
    small = pe_suite.check_rope(x[:500], y[:500], positions[:500])
    assert small.bands[0]["p99_samples"] == small.bands[0]["samples"] == 500 * 32 * 128


def test_sinusoidal_table_samples_its_large_bands_only():
    positions = np.arange(30000)  # bands 0-999, 1000-9999 (under 2^21 elements) and 10000-29999 (2'560'000)
    table = float32_table(positions, 128)
    sampled = pe_suite.check_sinusoidal(table, positions)
    exact = pe_suite.check_sinusoidal(table, positions, exact_p99=True)
    same_but_p99(sampled, exact)
    assert sampled.passed
    small, middle, large = sampled.bands
    assert small["p99_samples"] == small["samples"] and middle["p99_samples"] == middle["samples"]
    assert large["samples"] == 20000 * 128 >= FROM
    # Whole blocks of 32 rows (about 4096 elements), the band's two edge blocks 16 rows (10000 = 312·32 + 16).
    assert large["p99_samples"] % (16 * 128) == 0
    assert large["samples"] / 16 < large["p99_samples"] < large["samples"] / 5
    assert "1 block of 32 rows in 8" in sampled.text
