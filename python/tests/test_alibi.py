"""check_alibi, assert_alibi_close and reference_alibi on ALiBi built here from the published definitions
(not from pe-suite's code):

  HF transformers  modeling_bloom.py build_alibi_tensor: closest_power_of_2 = 2**floor(log2 n),
                   base = 2**(-(2**-(log2(cp2) - 3))), slopes = base**arange(1, 1 + cp2), the extra heads
                   extra_base**arange(1, 1 + 2*rem, 2); the bias slope * j (BLOOM's form)
  the paper        Press et al. 2022: causal bias -m (i - j)

Correct data passes under the default budget; the paper's rule applied directly where HF interpolates is
named by the diagnosis;
the golden values are the command's (`pe-suite export --family alibi --reference`) bit for bit."""

import math

import numpy as np
import pytest

import pe_suite


def hf_bloom_slopes(n):
    cp2 = 2 ** math.floor(math.log2(n))
    slopes = [(2 ** (-(2 ** -(math.log2(cp2) - 3)))) ** k for k in range(1, 1 + cp2)]
    if cp2 != n:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * cp2) - 3)))
        slopes += [extra_base ** k for k in range(1, 1 + 2 * min(cp2, n - cp2), 2)]
    return np.array(slopes, dtype=np.float64)


@pytest.mark.parametrize("heads", [8, 12, 40])
def test_hf_slopes_and_bias_pass(heads):
    slopes = hf_bloom_slopes(heads)
    assert pe_suite.check_alibi(slopes.astype(np.float32)).passed
    keys = np.arange(0, 64)
    bias = (slopes[:, None, None] * keys[None, None, :] * np.ones((1, 4, 1))).astype(np.float32)
    report = pe_suite.check_alibi(bias, alibi_form="bloom", queries=np.arange(60, 64), keys=keys)
    assert report.passed, str(report)
    pe_suite.assert_alibi_close(bias, alibi_form="bloom", queries=np.arange(60, 64), keys=keys)


def test_causal_bias_of_the_paper_and_the_direct_rule_named():
    q, k = np.arange(96, 128), np.arange(0, 128)
    m = 2.0 ** (-8.0 * np.arange(1, 9) / 8)  # 8 heads, a power of two: every rule agrees
    bias = (-m[:, None, None] * (q[None, :, None] - k[None, None, :])).astype(np.float32)
    report = pe_suite.check_alibi(bias, queries=q, keys=k)
    assert report.passed and "float32 formulations" in str(report), str(report)
    # 12 heads: the paper's rule applied directly, 2^(-8(h+1)/12), where HF interpolates.
    direct = 2.0 ** (-8.0 * np.arange(1, 13) / 12)
    wrong = (-direct[:, None, None] * (q[None, :, None] - k[None, None, :])).astype(np.float32)
    report = pe_suite.check_alibi(wrong, queries=q, keys=k)
    assert not report.passed and "the data fits: the direct rule" in str(report), str(report)
    assert report.diagnosis[0].startswith("the direct rule"), report.diagnosis
    assert report.candidates[0]["convention"] == report.diagnosis[0], report.candidates
    assert pe_suite.check_alibi(wrong, queries=q, keys=k, alibi_slopes="direct").passed
    with pytest.raises(AssertionError, match="FAIL"):
        pe_suite.assert_alibi_close(wrong, queries=q, keys=k)


def test_reference_alibi_is_the_exports(cli, tmp_path):
    slopes = pe_suite.reference_alibi(12, max_bias=8.0)
    np.testing.assert_allclose(slopes, hf_bloom_slopes(12), rtol=2 ** -24)
    bias = pe_suite.reference_alibi(12, np.arange(5, 9), np.arange(0, 9), alibi_form="symmetric")
    assert bias.shape == (12, 4, 9) and bias.dtype == np.float32
    cli(["export", "--family", "alibi", "--heads", "12", "--queries", "5:9", "--keys", "0:9", "--alibi-form",
         "symmetric", "--reference", "--out", "b.npy"], tmp_path)
    assert np.array_equal(np.load(tmp_path / "b.npy").view(np.uint32), bias.view(np.uint32))


@pytest.mark.parametrize("call,error,words", [
    (lambda: pe_suite.check_alibi(np.ones((2, 3), np.float32)), ValueError, ["table", "rank 2"]),
    (lambda: pe_suite.check_alibi(np.ones(8, np.float32), heads=4), ValueError, ["heads", "4"]),
    (lambda: pe_suite.check_alibi(np.ones(8, np.float32), alibi_slopes="geometric"), ValueError,
     ["alibi_slopes", "geometric"]),
    (lambda: pe_suite.check_alibi(np.ones(8, np.float32), queries=np.arange(3)), ValueError, ["queries", "keys"]),
    (lambda: pe_suite.check_alibi(np.ones(8, np.float32), max_abs=-1.0), ValueError, ["max_abs", "-1"]),
    (lambda: pe_suite.reference_alibi(0), ValueError, ["heads"]),
    (lambda: pe_suite.reference_alibi(8, np.arange(3)), ValueError, ["queries", "keys"]),
])
def test_bad_alibi_input_is_named(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value), str(e.value)
    assert "--" not in str(e.value), str(e.value)


def test_a_zero_bias_is_held_to_its_heads_smallest_bias_budget_and_the_table_names_alibis_axes():
    """The diagonal's exact bias is 0: its budget is the head's at distance 1 (|m_h|), not the denormal floor
    (4e-45, which made any error a ratio of 1e40); the worst elements are (query, head, distance, key)."""
    heads, n = 4, 8
    m = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)  # the paper's slopes at max_bias 8
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    bias = -(m[:, None, None] * distance[None]).astype(np.float32)
    bias[:, np.arange(n), np.arange(n)] = 1e-6  # a diagonal that is not 0
    report = pe_suite.check_alibi(bias, alibi_form="symmetric")
    worst = report.worst[0]
    assert not report.passed and worst["exact"] == 0 and worst["position"] == 0
    assert 1e-10 < worst["budget"] < 1e-7 and 10 < worst["ratio"] < 1e3
    assert "   query   head      distance      key" in str(report) and "distance band" in str(report)
