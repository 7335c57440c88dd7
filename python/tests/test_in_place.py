"""The checks read a compact array where it lies (no copy as doubles) and any other array through a copy:
both give the same report, text and dict, for numpy arrays of every float type and for PyTorch tensors
(bfloat16 included), passing or failing; the caller's arrays are left as they were."""

import numpy as np
import pytest

import pe_suite

TOKENS, HEADS, DIM = 24, 3, 32


def data(dtype, wrong=False):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((TOKENS, HEADS, DIM)).astype(dtype)
    positions = np.arange(100, 100 + TOKENS)
    y = pe_suite.reference_rope(x, positions=positions, layout="halfsplit", dtype=dtype)
    if wrong:  # a decode offset of 1 ignored
        y = pe_suite.reference_rope(x, positions=positions - 1, layout="halfsplit", dtype=dtype)
    return x, y, positions


def strided(a):
    """The same values as a non-compact view: every other element of an array twice as wide."""
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    wide[..., ::2] = a
    view = wide[..., ::2]
    assert not view.flags["C_CONTIGUOUS"]
    return view


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("wrong", [False, True])
def test_compact_and_strided_arrays_give_one_report(dtype, wrong):
    x, y, positions = data(dtype, wrong)
    before = (x.copy(), y.copy())
    in_place = pe_suite.check_rope(x, y, positions, layout="halfsplit")
    copied = pe_suite.check_rope(strided(x), strided(y), positions, layout="halfsplit")
    assert in_place.passed == (not wrong)
    assert str(in_place) == str(copied)
    assert in_place.to_dict() == copied.to_dict()
    assert np.array_equal(x, before[0]) and np.array_equal(y, before[1])
    # A temporary array stays alive while the engine reads it.
    again = pe_suite.check_rope(np.ascontiguousarray(x), np.ascontiguousarray(y), positions, layout="halfsplit")
    assert str(again) == str(in_place)


def test_tensors_in_place_and_strided_give_one_report():
    torch = pytest.importorskip("torch")
    x, y, positions = data(np.float32, wrong=True)
    for dtype in (torch.float32, torch.bfloat16):
        tx, ty = torch.from_numpy(x).to(dtype), torch.from_numpy(y).to(dtype)
        in_place = pe_suite.check_rope(tx, ty, positions, layout="halfsplit")
        wide_x = torch.zeros(TOKENS, HEADS, 2 * DIM, dtype=dtype)
        wide_y = torch.zeros(TOKENS, HEADS, 2 * DIM, dtype=dtype)
        wide_x[..., ::2], wide_y[..., ::2] = tx, ty
        copied = pe_suite.check_rope(wide_x[..., ::2], wide_y[..., ::2], positions, layout="halfsplit")
        assert str(in_place) == str(copied)
        assert not in_place.passed
