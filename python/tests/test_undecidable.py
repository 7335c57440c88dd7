"""A check that cannot fail must not pass: where every element's budget reaches the largest error any output of its
magnitude could have (RoPE: the exact pair's norm plus |exact|, at most twice the norm; a sinusoid: at most 2), the
band is undecidable and the verdict is not PASS. The same data at its true positions passes; an exact table far out
passes under a contract that can judge it."""

import numpy as np
import pytest

import pe_suite

T, H, D = 64, 4, 128


def hf_rope(x, positions, base=10000.0, angle=np.float64):
    """HF's rotate_half RoPE (angles in float64, or float32 as engines form them), rounded to float32."""
    D = x.shape[-1]
    inv = (1.0 / base ** (np.arange(0, D, 2) / D)).astype(angle)
    angle_of = np.asarray(positions).astype(angle)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angle_of)] * 2, -1)[:, None, :]
    sin = np.concatenate([np.sin(angle_of)] * 2, -1)[:, None, :]
    rotated = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], -1)
    return (x * cos + rotated * sin).astype(np.float32)


@pytest.fixture
def dump():
    x = np.random.default_rng(3).standard_normal((T, H, D)).astype(np.float32)
    return x, hf_rope(x, np.arange(T))  # computed at positions 0..63


@pytest.mark.parametrize("start", [2 ** 30, 2 ** 40])
def test_a_dump_checked_far_from_its_positions_is_undecidable_not_pass(dump, start):
    x, y = dump
    report = pe_suite.check_rope(x, y, np.arange(start, start + T), base=10000.0)
    assert not report.passed and report.verdict == "UNDECIDABLE"
    text = str(report)
    assert "undecidable: positions >= 1000000000: " in text
    # Past every contract's largest position (2^31) none decides: a contract promises nothing beyond it.
    if start < 2 ** 31:
        assert "largest position 16777216" in text and "a contract that decides there: rope.hwy" in text
    else:
        assert "largest position 2147483648" in text and "no registered contract decides there" in text
    assert 2 * report.undecidable > T * H * D  # more than half of the elements cannot be judged
    with pytest.raises(AssertionError, match="UNDECIDABLE"):
        pe_suite.assert_rope_close(x, y, np.arange(start, start + T), base=10000.0)


def test_the_same_dump_at_its_true_positions_passes(dump):
    x, y = dump
    report = pe_suite.check_rope(x, y, np.arange(T), base=10000.0)
    assert report.passed and report.verdict == "PASS" and report.undecidable == 0


def test_a_dump_at_a_million_still_fails(dump):
    x, y = dump
    report = pe_suite.check_rope(x, y, np.arange(10 ** 6, 10 ** 6 + T), base=10000.0)
    assert report.verdict == "FAIL"


def test_an_exact_table_far_out_passes_under_a_contract_that_judges_it():
    x = np.random.default_rng(4).standard_normal((8, 2, D)).astype(np.float32)
    positions = np.arange(2 ** 40, 2 ** 40 + 8)
    y = pe_suite.reference_rope(x, positions, base=10000.0)  # correctly rounded to float32
    report = pe_suite.check_rope(x, y, positions, base=10000.0, contract="rope.exact")
    assert report.passed and report.verdict == "PASS" and report.undecidable == 0


def test_a_partly_undecidable_check_says_how_many_elements_it_judged():
    x = np.random.default_rng(5).standard_normal((T, H, 64)).astype(np.float32)
    positions = np.arange(2 ** 24 + 1, 2 ** 24 + 1 + T)  # just beyond the float32 class's promise
    report = pe_suite.check_rope(x, hf_rope(x, positions), positions, base=10000.0)
    assert report.verdict == "PASS" and 0 < report.undecidable < x.size
    assert f"judged {x.size - report.undecidable} of {x.size} elements" in str(report)


@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_correct_float32_kernels_pass_up_to_the_class_promise(head_dim):
    """Within the positions the budget's contracts promise (float32 class: 2^24), elements are judged by the
    contract whatever their budget: a correct kernel with float32 angles at head_dim 256 just below 2^24 leaves
    57% of its elements under budgets that reach any output's error, and must still pass, not be undecidable."""
    x = np.random.default_rng(6).standard_normal((T, H, head_dim)).astype(np.float32)
    positions = np.arange(2 ** 24 - T, 2 ** 24)
    report = pe_suite.check_rope(x, hf_rope(x, positions, angle=np.float32), positions, base=10000.0)
    assert report.verdict == "PASS" and report.undecidable == 0, str(report)


def test_a_sinusoidal_table_far_out_is_undecidable():
    dim = 64
    positions = np.arange(64)
    inv = 1.0 / 10000.0 ** (np.arange(0, dim, 2) / dim)
    table = np.zeros((64, dim))
    table[:, 0::2], table[:, 1::2] = np.sin(positions[:, None] * inv), np.cos(positions[:, None] * inv)
    far = pe_suite.check_sinusoidal(table.astype(np.float32), np.arange(2 ** 44, 2 ** 44 + 64), base=10000.0)
    assert far.verdict == "UNDECIDABLE" and not far.passed
    near = pe_suite.check_sinusoidal(table.astype(np.float32), positions, base=10000.0)
    assert near.verdict == "PASS"


def _rope_fn(x, positions, config):
    """HF's default RoPE in float32 (the kernel under test for verify_rope)."""
    import torch
    d = config["head_dim"]
    inv = 1.0 / config["rope_theta"] ** (torch.arange(0, d, 2).float() / d)
    freqs = positions[:, None].float() * inv[None, :]
    emb = torch.cat((freqs, freqs), -1)
    turned = torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1)
    return x * emb.cos()[:, None].to(x.dtype) + turned * emb.sin()[:, None].to(x.dtype)


def test_verify_rope_does_not_count_cases_it_cannot_judge(monkeypatch):
    """Cases whose every position lies where the float32 class's budget reaches any output's error prove nothing:
    they are not counted as passes; when most drawn cases are such, the run fails saying so."""
    pytest.importorskip("torch")
    from pe_suite import verify as v
    kw = dict(rope_types=("default",), dtypes=("float32",), scenarios=("decode",), failure_file=None, examples=20)
    summary = pe_suite.verify_rope(_rope_fn, **kw)
    assert summary["undecidable"] == 0
    with pytest.warns(UserWarning, match="drawn cases could not be judged"):  # decode steps up to 2^40: some
        summary = pe_suite.verify_rope(_rope_fn, max_position=2 ** 40, **kw)
    assert 0 < summary["undecidable"] <= 10
    drawn = v.draw_case

    def far(*args, **kwargs):  # every position moved to 2^40 and beyond
        case = drawn(*args, **kwargs)
        case["positions"] = [p + 2 ** 40 for p in case["positions"]]
        return case

    monkeypatch.setattr(v, "draw_case", far)
    with pytest.raises(v.VerifyError, match="20 of 20 drawn cases could not be judged"):
        pe_suite.verify_rope(_rope_fn, max_position=2 ** 41, **kw)
