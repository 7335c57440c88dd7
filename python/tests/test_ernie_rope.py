"""ERNIE-4.5-VL's 3-D RoPE ([h w h w ... t t], issue 50), transcribed in torch from vLLM's and SGLang's
Ernie4_5_VLRotaryEmbedding: one ladder over the head (inv_freq = 1 / base ** (arange(0, d, 2) / d), a float32
cos/sin cache per position), mrope_section [h, w, t] with h = w = (d/2 - freq_allocation) / 2: pair j < h + w takes
its cos/sin from the h positions where j is even and from the w positions where j is odd, the last t pairs from the
t positions; positions [3, T] in (t, h, w) order; pairs (2j, 2j+1) (is_neox_style False). pe-suite states it as
mrope_layout "ernie" with sections in its own (t, h, w) order; HF-style configs give it by freq_allocation."""

import pytest

import pe_suite

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

HEADS, DIM, BASE, FREQ_ALLOCATION = 3, 64, 500000.0, 10
SIDE = (DIM // 2 - FREQ_ALLOCATION) // 2


def vision_positions():
    """A prompt's (t, h, w): 6 text tokens, a 5 x 7 image (t fixed, rows and columns counted), 4 text tokens."""
    t, h, w = [], [], []
    for k in range(6):
        t.append(k), h.append(k), w.append(k)
    for row in range(5):
        for col in range(7):
            t.append(6), h.append(6 + row), w.append(6 + col)
    for k in range(4):
        t.append(13 + k), h.append(13 + k), w.append(13 + k)
    return torch.tensor([t, h, w])


def ernie_rope(x, positions, section_hwt, swap_hw=False):
    """vLLM's forward_native: x [tokens, heads, DIM] float32, positions [3, T]."""
    inv_freq = 1.0 / (BASE ** (torch.arange(0, DIM, 2, dtype=torch.float) / DIM))
    freqs = positions.float()[..., None] * inv_freq  # [3, T, DIM/2], one cache row per position
    cos, sin = freqs.cos(), freqs.sin()
    h, w, t = section_hwt

    def select(c):
        c_t = c[0, :, -t:]
        c_h = c[2 if swap_hw else 1, :, : h + w : 2]
        c_w = c[1 if swap_hw else 2, :, 1 : h + w : 2]
        return torch.cat([torch.stack([c_h, c_w], dim=-1).flatten(-2), c_t], dim=-1)

    cos, sin = select(cos)[:, None, :], select(sin)[:, None, :]
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


def inputs(tokens):
    return torch.randn(tokens, HEADS, DIM, generator=torch.Generator().manual_seed(3))


def check(x, y, positions, **keywords):
    return pe_suite.check_rope(x, y, positions, base=BASE, layout="interleaved", **keywords)


def test_ernie_passes_under_its_layout_and_its_hf_config():
    positions = vision_positions()
    x = inputs(positions.shape[1])
    y = ernie_rope(x, positions, (SIDE, SIDE, FREQ_ALLOCATION))
    report = check(x, y, positions, mrope_section=[FREQ_ALLOCATION, SIDE, SIDE], mrope_layout="ernie")
    assert report.passed, str(report)
    config = {"model_type": "ernie4_5_moe_vl", "head_dim": DIM, "rope_theta": BASE,
              "freq_allocation": FREQ_ALLOCATION, "max_position_embeddings": 131072}
    from_config = pe_suite.check_rope(x, y, positions, hf_config=config)
    assert from_config.passed, str(from_config)


def test_ernie_checked_as_sectioned_m_rope_fails_and_the_layout_is_named():
    positions = vision_positions()
    x = inputs(positions.shape[1])
    y = ernie_rope(x, positions, (SIDE, SIDE, FREQ_ALLOCATION))
    report = check(x, y, positions, mrope_section=[FREQ_ALLOCATION, SIDE, SIDE])
    assert not report.passed
    assert report.diagnosis and "M-RoPE ernie (given: sectioned)" in report.diagnosis[0], str(report)


def test_h_and_w_exchanged_fails_named():
    positions = vision_positions()
    x = inputs(positions.shape[1])
    y = ernie_rope(x, positions, (SIDE, SIDE, FREQ_ALLOCATION), swap_hw=True)
    report = check(x, y, positions, mrope_section=[FREQ_ALLOCATION, SIDE, SIDE], mrope_layout="ernie")
    assert not report.passed
    assert report.diagnosis and "axes h and w swapped" in report.diagnosis[0], str(report)


def test_unequal_h_and_w_are_refused_by_name():
    positions = vision_positions()
    x = inputs(positions.shape[1])
    with pytest.raises(ValueError, match="mrope_section.*ernie layout takes three sections \\(t, h, w\\) with h == w"):
        check(x, x, positions, mrope_section=[FREQ_ALLOCATION, SIDE + 1, SIDE - 1], mrope_layout="ernie")
