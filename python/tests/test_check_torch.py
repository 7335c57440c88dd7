"""HF-style PyTorch RoPE (hf_torch_rope.py, from the published formulas) checked in-process: the correct
kernels pass check's default budget, the wrong ones fail with the cause named in the report."""

import math

import pytest

import pe_suite

torch = pytest.importorskip("torch")
import hf_torch_rope as hf  # noqa: E402

HEADS, TOKENS, DIM = 4, 48, 64


def q_and_positions(positions):
    g = torch.Generator().manual_seed(7)
    return torch.randn(HEADS, len(positions), DIM, generator=g), torch.tensor(positions)


def rotated(q, pos, inv_freq, attention=1.0, dtype=torch.float32, rotary_dim=None):
    cos, sin = hf.cos_sin(inv_freq, attention, pos, dtype)
    return hf.apply_rotary(q.to(dtype), cos, sin, rotary_dim)


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}


@pytest.mark.parametrize("name,inv_freq,scaling", [
    ("plain", lambda: hf.default_inv_freq(500000.0, DIM), None),
    ("llama3", lambda: hf.llama3_inv_freq(500000.0, DIM, 8.0, 1.0, 4.0, 8192), LLAMA3),
    ("yarn", lambda: hf.yarn_inv_freq(500000.0, DIM, 4.0, 4096), YARN),
])
def test_correct_hf_kernels_pass(name, inv_freq, scaling):
    q, pos = q_and_positions(list(range(60000, 60000 + TOKENS)))
    freq, attention = inv_freq()
    y = rotated(q, pos, freq, attention)
    report = pe_suite.check_rope(q, y, pos, base=500000.0, scaling=scaling, heads_first=True)
    assert report.passed, str(report)
    pe_suite.assert_rope_close(q, y, pos, base=500000.0, scaling=scaling, heads_first=True)


def test_partial_rotary_and_packed_positions_pass():
    # Two packed sequences: positions restart at 0 mid-batch; a quarter of the channels rotated.
    positions = list(range(30)) + list(range(18))
    q, pos = q_and_positions(positions)
    freq, _ = hf.default_inv_freq(10000.0, DIM // 4)
    y = rotated(q, pos, freq, rotary_dim=DIM // 4)
    pe_suite.assert_rope_close(q, y, pos, rotary_dim=DIM // 4, heads_first=True)


def test_bf16_tensors_are_read_and_hf_bf16_is_named():
    q, pos = q_and_positions(list(range(1000, 1000 + TOKENS)))
    freq, _ = hf.default_inv_freq(10000.0, DIM)
    qb = q.to(torch.bfloat16)
    y = rotated(qb, pos, freq, dtype=torch.bfloat16)  # HF in a bf16 model: cos/sin cast to bf16
    assert y.dtype == torch.bfloat16
    pe_suite.assert_rope_close(qb, y, pos, heads_first=True)
    met = [c["contract"] for c in pe_suite.check_rope(qb, y, pos, heads_first=True).to_dict()["contracts"] if c["met"]]
    assert "rope.torch_bf16" in met


@pytest.mark.parametrize("mistake,words", [
    ("scaling dropped", "scaling"),
    ("decode offset ignored", "positions"),
    ("interleaved pairs", "layout"),
])
def test_wrong_kernels_raise_with_the_cause(mistake, words):
    q, pos = q_and_positions(list(range(20000, 20000 + TOKENS)))
    scaling = None
    if mistake == "scaling dropped":
        freq, _ = hf.default_inv_freq(500000.0, DIM)
        y, scaling = rotated(q, pos, freq), LLAMA3
        # llama3 leaves the high frequencies alone: the low ones differ, far over budget at 2*10^4.
    elif mistake == "decode offset ignored":
        freq, _ = hf.default_inv_freq(500000.0, DIM)
        y = rotated(q, pos - 20000, freq)
    else:
        freq, _ = hf.default_inv_freq(500000.0, DIM)
        cos, sin = hf.cos_sin(freq, 1.0, pos, torch.float32)
        c, s = cos[:, : DIM // 2].repeat_interleave(2, -1), sin[:, : DIM // 2].repeat_interleave(2, -1)
        pairs = q.reshape(HEADS, TOKENS, DIM // 2, 2)
        rot = torch.stack((-pairs[..., 1], pairs[..., 0]), -1).reshape(HEADS, TOKENS, DIM)
        y = q * c[None] + rot * s[None]  # GPT-J's interleaved rotation where HF's half-split was meant
    with pytest.raises(AssertionError) as e:
        pe_suite.assert_rope_close(q, y, pos, base=500000.0, scaling=scaling, heads_first=True)
    report = pe_suite.check_rope(q, y, pos, base=500000.0, scaling=scaling, heads_first=True)
    assert not report.passed and str(e.value) == str(report)
    fits = str(report).split("the data fits:")
    assert len(fits) == 2 and words in fits[1].splitlines()[0], str(report)
    # The same claim in .diagnosis, with its support; the candidates apart from it.
    assert len(report.diagnosis) == 1 and fits[1].startswith(" " + report.diagnosis[0]), report.diagnosis
    assert report.explanations[0]["fits"] == report.diagnosis[0] and report.explanations[0]["support"]
    assert report.candidates[0]["convention"] and "residual" in report.candidates[0]


def test_a_pass_has_an_empty_diagnosis():
    q, pos = q_and_positions(list(range(TOKENS)))
    freq, _ = hf.default_inv_freq(500000.0, DIM)
    report = pe_suite.check_rope(q, rotated(q, pos, freq), pos, base=500000.0, heads_first=True)
    assert report.passed
    assert report.diagnosis == [] and report.explanations == [] and report.candidates == []


def test_longrope_switched_per_token_is_named_and_stated_by_its_config_key():
    # TGI's SuRotaryEmbedding: short_factor for positions below L, long_factor from L on, in one sequence;
    # HF picks one list for the sequence. _compute_longrope_parameters' frequencies, re-derived here.
    L, factor = 64, 16.0
    g = torch.Generator().manual_seed(3)
    short = (1 + torch.rand(DIM // 2, generator=g) * 0.2).tolist()
    long = (1 + torch.rand(DIM // 2, generator=g) * 30).tolist()
    base = 10000.0 ** (torch.arange(0, DIM, 2, dtype=torch.int64).float() / DIM)
    attention = math.sqrt(1 + math.log(factor) / math.log(L))
    q, pos = q_and_positions(list(range(L - TOKENS // 2, L + TOKENS // 2)))
    ys = [rotated(q[:, i:i + 1], pos[i:i + 1], 1.0 / (torch.tensor(short if p < L else long) * base), attention)
          for i, p in enumerate(pos.tolist())]
    y = torch.cat(ys, dim=1)
    config = {"rope_type": "longrope", "factor": factor, "original_max_position_embeddings": L,
              "short_factor": short, "long_factor": long}
    report = pe_suite.check_rope(q, y, pos, scaling=config, heads_first=True)
    assert not report.passed
    assert report.diagnosis and "longrope switch per-token (given: per-sequence)" in report.diagnosis[0], str(report)
    stated = pe_suite.check_rope(q, y, pos, scaling={**config, "longrope_switch": "per-token"}, heads_first=True)
    assert stated.passed, str(stated)
    with pytest.raises(ValueError, match="longrope_switch"):
        pe_suite.check_rope(q, y, pos, scaling={**config, "longrope_switch": "per-batch"}, heads_first=True)


def test_channel_pairings_no_layout_uses_are_read_back():
    # rotate_half (channel c with c ± d/2) against a table built interleaved (cos/sin of θ_{c//2} at channel
    # c: repeat_interleave instead of cat(freqs, freqs)); then a fixed permutation of the channel pairs.
    q, pos = q_and_positions(list(range(3000, 3000 + TOKENS)))
    freq, _ = hf.default_inv_freq(10000.0, DIM)
    angles = pos[:, None].float() * freq[None, :]
    cos_il, sin_il = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    y = q * cos_il[None] + hf.rotate_half(q) * sin_il[None]
    report = pe_suite.check_rope(q, y, pos, heads_first=True)
    assert not report.passed
    assert report.diagnosis and "rotate_half against an interleaved cos/sin table" in report.diagnosis[0], str(report)
    assert report.explanations[0]["support"].startswith(f"{DIM} of {DIM} rotated channels determined")
    perm = torch.randperm(DIM, generator=torch.Generator().manual_seed(5)).reshape(-1, 2)
    y = q.clone()
    for k, (a, b) in enumerate(perm.tolist()):
        c, s = angles[:, k].cos(), angles[:, k].sin()
        y[..., a], y[..., b] = q[..., a] * c - q[..., b] * s, q[..., b] * c + q[..., a] * s
    report = pe_suite.check_rope(q, y, pos, heads_first=True)
    first = tuple(sorted(next(p for p in perm.tolist() if 0 in p)))
    assert report.diagnosis and "pairs no layout uses: " + str(first) in report.diagnosis[0], str(report)
    assert "a fixed permutation of the channels" in report.diagnosis[0]


def test_report_parts_read_twice_are_the_reports_json():
    """A Report keeps its JSON once built (verify_rope reads a case's parameters): every part read twice, and
    the first read after another part, equals the same part of a fresh to_dict()."""
    q, pos = q_and_positions(list(range(100, 100 + TOKENS)))
    freq, attention = hf.llama3_inv_freq(500000.0, DIM, 8.0, 1.0, 4.0, 8192)
    y = rotated(q, pos, freq, attention * 1.001)  # a failing report: bands, worst and diagnosis all present
    report = pe_suite.check_rope(q, y, pos, base=500000.0, scaling=LLAMA3, heads_first=True)
    fresh = pe_suite.check_rope(q, y, pos, base=500000.0, scaling=LLAMA3, heads_first=True).to_dict()
    assert not report.passed and fresh["verdict"] == "FAIL"
    for _ in range(2):
        assert report.parameters == fresh["parameters"]
        assert report.bands == fresh["bands"] and report.worst == fresh["worst"]
        assert report.verdict == fresh["verdict"] and report.candidates == fresh.get("diagnosis", [])
        assert report.to_dict() == fresh
