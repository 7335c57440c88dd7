"""Positions read back per (token, head) row (issue 50): a kernel that turns row (t, h) by its head index (the
sequence and head axes exchanged: a cos/sin cache indexed by the head) is named as such, and a decode step whose
output is its input lists the dropped decode offset among its causes. Each kernel is written in numpy from the RoPE
definition (HF's rotate_half pairing), not from pe-suite's code; the correct ones must pass without these words."""

import numpy as np
import pytest

import pe_suite

HEADS, HEAD_DIM, BASE = 8, 64, 10000.0
EXCHANGED = "rows turned by their head index, not their token's position: the sequence and head axes exchanged"
DECODE = "the decode offset dropped (every step at position 0)"


def rotate(x, angle):
    """x [..., HEAD_DIM] turned by angle [..., HEAD_DIM // 2] (rotate_half: channel c pairs with c + 32)."""
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., :HEAD_DIM // 2].astype(np.float64), x[..., HEAD_DIM // 2:].astype(np.float64)
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1).astype(np.float32)


def inv_freq():
    return 1.0 / BASE ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)


def correct(x, positions):
    """[tokens, heads, head_dim]: row (t, h) turned by positions[t]."""
    return rotate(x, np.asarray(positions, dtype=np.float64)[:, None, None] * inv_freq())


def by_head_index(x, positions):
    """The cos/sin cache indexed by the head: row (t, h) turned by h."""
    return rotate(x, np.arange(x.shape[1], dtype=np.float64)[None, :, None] * inv_freq())


def data(tokens, seed=5):
    return np.random.default_rng(seed).standard_normal((tokens, HEADS, HEAD_DIM)).astype(np.float32)


def check(x, y, positions, **keywords):
    return pe_suite.check_rope(x, y, np.asarray(positions), base=BASE, layout="halfsplit", **keywords)


def said(report, words):
    return any(words in fit for fit in report.diagnosis)


@pytest.mark.parametrize("positions", [[5000], list(range(3000, 3024)), list(range(0, 24))],
                         ids=["decode", "prefill_at_3000", "prefill_at_0"])
def test_rows_turned_by_their_head_index_name_the_exchanged_axes(positions):
    x = data(len(positions))
    report = check(x, by_head_index(x, positions), positions)
    assert not report.passed
    assert said(report, EXCHANGED), report.text
    # Head 0's rows, turned by 0, hold their input: said as what the exchange does, not as a skipping fast path.
    assert "a fast path skipped them" not in report.text, report.text


def test_heads_first_data_read_as_tokens_first_is_named():
    """[heads, tokens, head_dim] data (HF's q after its transpose) turned by a kernel that reads its first axis as
    the tokens': row (t, h) turned by the position of token h."""
    positions = np.arange(700, 724)
    x = np.random.default_rng(9).standard_normal((HEADS, len(positions), HEAD_DIM)).astype(np.float32)
    y = rotate(x, positions[:HEADS].astype(np.float64)[:, None, None] * inv_freq())
    report = check(x, y, positions, heads_first=True)
    assert not report.passed
    assert said(report, "rows turned by the position of token h (h their head index)"), report.text


@pytest.mark.parametrize("positions", [[5000], [812, 77, 4096]], ids=["one_token", "batch_of_decode_steps"])
def test_a_decode_step_left_as_its_input_lists_the_dropped_offset(positions):
    x = data(len(positions))
    report = check(x, x.copy(), positions)
    assert not report.passed
    assert said(report, DECODE), report.text
    assert said(report, "the data was not rotated"), report.text


def test_a_prefill_left_as_its_input_is_not_called_a_decode_step():
    positions = list(range(1, 25))
    x = data(len(positions))
    report = check(x, x.copy(), positions)
    assert said(report, "the data was not rotated"), report.text
    assert "decode offset" not in report.text, report.text


@pytest.mark.parametrize("positions", [[5000], [812, 77, 4096], list(range(3000, 3024)), list(range(0, 24))])
def test_correct_kernels_get_none_of_these_words(positions):
    x = data(len(positions))
    report = check(x, correct(x, positions), positions)
    assert report.passed, report.text
    for words in ("exchanged", "decode offset", "head index", "turned by"):
        assert words not in report.text


@pytest.mark.parametrize("mistake,kernel,words", [
    ("offset dropped", lambda x, p: correct(x, np.asarray(p) - 3000), "an offset dropped: positions counted from 0"),
    ("another base", lambda x, p: rotate(x, np.asarray(p, dtype=np.float64)[:, None, None] /
                                         5e5 ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)), "base 500000"),
])
def test_other_mistakes_are_not_called_exchanged_axes(mistake, kernel, words):
    positions = list(range(3000, 3024))
    x = data(len(positions))
    report = check(x, kernel(x, positions), positions)
    assert said(report, words), report.text
    assert "exchanged" not in report.text, report.text
    assert "head index" not in report.text, report.text
