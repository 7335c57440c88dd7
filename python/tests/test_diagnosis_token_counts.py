"""The diagnosis does not depend on how many tokens the data holds: a mistake named at some token count is named
at every larger one (1..4096), whatever positions the sampled rows happen to land on. Each kernel below is one
mistake, written in numpy from the RoPE definition (HF's rotate_half pairing), not from pe-suite's code."""

import numpy as np
import pytest

import pe_suite

HEADS, HEAD_DIM = 2, 64
COUNTS = [1, 2, 3, 7, 24, 100, 257, 511, 1000, 1024, 1500, 2048, 3000, 4096]


def bf16(a):
    """Round to bfloat16 (nearest, ties to even) and back, as torch's .to(torch.bfloat16) does."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def inv_freq(base, dim=HEAD_DIM):
    return 1.0 / base ** (np.arange(0, dim, 2) / dim)


def rope(x, positions, freq, layout="halfsplit", rotary=HEAD_DIM):
    angle = np.asarray(positions, dtype=np.float64)[:, None] * freq[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    y = x.astype(np.float64)
    first, second = ((slice(0, rotary // 2), slice(rotary // 2, rotary)) if layout == "halfsplit"
                     else (slice(0, rotary, 2), slice(1, rotary, 2)))
    a, b = y[..., first].copy(), y[..., second].copy()
    y[..., first], y[..., second] = a * cos - b * sin, b * cos + a * sin
    return y.astype(np.float32)


# (mistake, kernel(x, positions), check keywords, words the diagnosis must say, first position, the fewest tokens
# whose data determine the mistake)
MISTAKES = [
    ("positions rounded to bfloat16", lambda x, p: rope(x, bf16(p), inv_freq(1e4)), {},
     "positions rounded to bfloat16", 0, 258),  # 0..256 are exact in bfloat16 (257 ties to 256)
    ("positions rounded to bfloat16, later", lambda x, p: rope(x, bf16(p), inv_freq(1e4)), {},
     "positions rounded to bfloat16", 5001, 1),
    ("the decode offset dropped", lambda x, p: rope(x, p - 5001, inv_freq(1e4)), {}, "an offset dropped", 5001, 2),
    ("the other layout", lambda x, p: rope(x, p, inv_freq(1e4), "interleaved"), {}, "layout interleaved", 0, 2),
    ("another base", lambda x, p: rope(x, p, inv_freq(5e5)), {}, "base 500000", 5001, 1),
    ("half the channels rotated", lambda x, p: rope(x, p, inv_freq(1e4, 32), rotary=32), {}, "rotary dim 32", 0, 2),
    ("not rotated", lambda x, p: x.copy(), {}, "not rotated", 0, 2),
    ("linear scaling dropped", lambda x, p: rope(x, p, inv_freq(1e4)),
     {"scaling": {"rope_type": "linear", "factor": 4.0}}, "linear", 5001, 1),
    ("inv_freq rounded to bfloat16", lambda x, p: rope(x, p, bf16(inv_freq(1e4))), {}, "inv_freq rounded to bf16",
     5001, 3),
]


@pytest.mark.parametrize("mistake,kernel,keywords,words,start,fewest", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_named_mistake_keeps_its_name_at_every_token_count(mistake, kernel, keywords, words, start, fewest):
    rng = np.random.default_rng(7)
    missed = []
    for tokens in COUNTS:
        x = rng.standard_normal((tokens, HEADS, HEAD_DIM)).astype(np.float32)
        positions = np.arange(start, start + tokens)
        report = pe_suite.check_rope(x, kernel(x, positions), positions, base=10000.0, layout="halfsplit", **keywords)
        if tokens < fewest:
            continue
        if report.passed or not any(words in fit for fit in report.diagnosis):
            missed.append(f"{tokens} tokens: {report.verdict}, fits {report.diagnosis}")
    assert not missed, f"{mistake} ({words!r}) not named at " + "; ".join(missed)
