"""The module's goldens are `pe-suite export --reference`'s, bit for bit, and correctly rounded: checked
against numpy's float64 sin/cos where one rounding of those decides."""

import numpy as np
import pytest

import pe_suite


def bits(a):
    return a.view(np.uint16 if a.itemsize == 2 else np.uint32 if a.itemsize == 4 else np.uint64)


@pytest.mark.parametrize("dtype,np_type", [("float32", np.float32), ("float64", np.float64),
                                           ("float16", np.float16), ("bfloat16", np.uint16)])
def test_sinusoidal_matches_export(cli, tmp_path, dtype, np_type):
    positions = np.array([0, 1, 7, 1000, 123456, 2**31 - 1], dtype=np.int64)
    table = pe_suite.reference_sinusoidal(positions, 64, base=10000.0, dtype=dtype)
    assert table.dtype == np_type and table.shape == (6, 64)
    np.save(tmp_path / "pos.npy", positions)
    cli(["export", "--family", "sinusoidal", "--dim", "64", "--positions-file", "pos.npy", "--dtype",
         {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16"}[dtype], "--reference",
         "--out", "t.npy"], tmp_path)
    assert np.array_equal(bits(np.load(tmp_path / "t.npy")), bits(table))


def test_sinusoidal_is_correctly_rounded(rng):
    # float64 sin/cos of a float64 angle are within ~1 ulp of float64: rounding them to float32 is the
    # correct rounding except within 2^-28 of a float32 midpoint, which these samples avoid by checking.
    positions = rng.integers(0, 4096, size=64)
    table = pe_suite.reference_sinusoidal(positions, 32)
    omega = 1.0 / 10000.0 ** (np.arange(0, 32, 2) / 32)
    phi = positions[:, None] * omega[None, :]
    want = np.empty((64, 32))
    want[:, 0::2], want[:, 1::2] = np.sin(phi), np.cos(phi)
    lo, hi = np.nextafter(want.astype(np.float32), -1), np.nextafter(want.astype(np.float32), 2)
    decided = np.abs(want - want.astype(np.float32)) < 0.49 * (hi - lo) / 2
    assert decided.mean() > 0.9
    assert np.array_equal(table[decided], want.astype(np.float32)[decided])


@pytest.mark.parametrize("scaling,flags", [
    (None, []),
    ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 8192},
     ["--scaling", "llama3", "--factor", "8", "--low-freq-factor", "1", "--high-freq-factor", "4",
      "--original-max-position", "8192"]),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
     ["--scaling", "yarn", "--factor", "4", "--original-max-position", "32768"]),
])
def test_rope_matches_export(cli, tmp_path, rng, scaling, flags):
    x = rng.standard_normal((16, 4, 64)).astype(np.float32)
    positions = np.arange(100_000, 100_016)
    y = pe_suite.reference_rope(x, positions, base=500000.0, scaling=scaling)
    np.save(tmp_path / "x.npy", x)
    cli(["export", "--family", "rope", "--dim", "0", "--input", "x.npy", "--positions", "100000:100016",
         "--base", "500000", "--layout", "halfsplit", "--reference", "--out", "y.npy", *flags], tmp_path)
    assert np.array_equal(bits(np.load(tmp_path / "y.npy")), bits(y))


def test_cos_sin_matches_export_and_hf_layout(cli, tmp_path):
    positions = np.array([0, 5, 70000], dtype=np.int32)
    cos, sin = pe_suite.rope_cos_sin(positions, 16, base=10000.0)
    assert cos.shape == (3, 16) and sin.dtype == np.float32
    np.save(tmp_path / "p.npy", positions)
    cli(["export", "--family", "rope", "--dim", "16", "--positions-file", "p.npy", "--reference", "--out",
         "cs.npy"], tmp_path)
    table = np.load(tmp_path / "cs.npy")  # [T, pairs, (cos, sin)]
    assert np.array_equal(cos, np.concatenate([table[..., 0]] * 2, axis=-1))  # HF: cat(freqs, freqs)
    assert np.array_equal(sin, np.concatenate([table[..., 1]] * 2, axis=-1))
    ci, si = pe_suite.rope_cos_sin(positions, 16, layout="interleaved")
    assert np.array_equal(ci, np.repeat(table[..., 0], 2, axis=-1))
    assert np.array_equal(si, np.repeat(table[..., 1], 2, axis=-1))


def test_bfloat16_input_as_bits(rng):
    x = rng.standard_normal((8, 2, 32)).astype(np.float32)
    x_bits = (x.view(np.uint32) >> 16).astype(np.uint16)  # truncated: an exact bfloat16 value
    as_float = (x_bits.astype(np.uint32) << 16).view(np.float32)
    a = pe_suite.reference_rope(x_bits, np.arange(8), dtype="bfloat16")
    b = pe_suite.reference_rope(as_float, np.arange(8), dtype="bfloat16")
    assert a.dtype == np.uint16 and np.array_equal(a, b)
