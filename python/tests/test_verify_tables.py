"""verify_sinusoidal and verify_alibi on tables written here from their published definitions (the paper's
sinusoidal table as the PyTorch tutorial computes it; ALiBi's slopes as ggml and HF's build_alibi_tensor
form them, interpolated between powers of two): correct ones pass, planted mistakes are caught, shrunk and
named."""
import functools
import math

import pytest
import torch

import pe_suite


def paper_table(positions, config, plant=None):
    d, base = config["dim"], config["base"]
    if plant == "base_ignored":
        base = 10000.0
    if plant == "offset_ignored":
        positions = positions - positions.min()
    half = d // 2 - 1 if plant == "fairseq_exponent" else d // 2
    div = torch.exp(torch.arange(0, d // 2, dtype=torch.float32) * (-math.log(base) / max(half, 1)))
    angles = positions[:, None].float() * div[None, :]
    sin, cos = (angles.cos(), angles.sin()) if plant == "sin_cos_swapped" else (angles.sin(), angles.cos())
    table = torch.empty(len(positions), d)
    table[:, 0::2], table[:, 1::2] = sin, cos
    return table.to(getattr(torch, config["dtype"]))


def alibi_slopes(config, plant=None):
    """ggml's form of the paper's slopes: m0^(h+1) for the first 2^floor(log2 n) heads, the rest interleaved
    from m1 = m0^(1/2)."""
    n, max_bias = config["num_attention_heads"], config["max_bias"]
    if plant == "max_bias_ignored":
        max_bias = 8.0
    n_log2 = 2 ** math.floor(math.log2(n)) if plant != "direct_rule" else n
    m0, m1 = 2.0 ** (-max_bias / n_log2), 2.0 ** (-max_bias / 2.0 / n_log2)
    slopes = [m0 ** (h + 1) if h < n_log2 else m1 ** (2 * (h - n_log2) + 1) for h in range(n)]
    return torch.tensor(slopes, dtype=getattr(torch, config["dtype"]))


def test_the_paper_table_passes_in_every_dtype():
    pe_suite.verify_sinusoidal(paper_table, examples=200, dtypes=("float32", "bfloat16", "float16"),
                               failure_file=None)


def test_alibi_slopes_pass_at_every_head_count():
    pe_suite.verify_alibi(alibi_slopes, examples=200, dtypes=("float32", "bfloat16"), failure_file=None)


# The diagnosis names the paper's mistakes by diffusers' switches (issue 49): the fairseq exponent i/(d/2-1) is
# downscale_freq_shift 1, each pair's cos first is flip_sin_to_cos.
@pytest.mark.parametrize("plant,words", [("fairseq_exponent", "downscale_freq_shift 1 (given: 0)"),
                                         ("sin_cos_swapped", "flip_sin_to_cos true (given: false)"),
                                         ("offset_ignored", "positions shifted"), ("base_ignored", "base")])
def test_sinusoidal_mistakes_are_caught_shrunk_and_named(plant, words):
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_sinusoidal(functools.partial(paper_table, plant=plant), failure_file=None)
    e = info.value
    assert len(e.case["positions"]) <= 4 and e.case["config"]["dim"] <= 8, str(e)
    assert words in str(e).split("diagnosis")[1], str(e)


@pytest.mark.parametrize("plant,words", [("direct_rule", "direct"), ("max_bias_ignored", "max_bias 8 (given ")])
def test_alibi_mistakes_are_caught_shrunk_and_named(plant, words):
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_alibi(functools.partial(alibi_slopes, plant=plant), failure_file=None)
    e = info.value
    assert e.case["config"]["num_attention_heads"] <= 8, str(e)
    assert words in str(e).split("diagnosis")[1], str(e)


def test_a_fixed_max_bias_draws_only_it_and_a_kernel_hard_coding_it_passes():
    # BLOOM's build_alibi_tensor hard-codes 8: it passes at max_bias=8 and is caught where max_bias is drawn
    biases = []

    def recording(config):
        biases.append(config["max_bias"])
        return alibi_slopes(config, plant="max_bias_ignored")

    pe_suite.verify_alibi(recording, examples=60, max_bias=8, failure_file=None)
    assert set(biases) == {8.0}
    with pytest.raises(pe_suite.verify.VerifyError):
        pe_suite.verify_alibi(functools.partial(alibi_slopes, plant="max_bias_ignored"), failure_file=None)


def test_a_mistake_under_a_fixed_max_bias_is_shrunk_keeping_it():
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_alibi(functools.partial(alibi_slopes, plant="direct_rule"), max_bias=4.0, failure_file=None)
    assert info.value.case["config"]["max_bias"] == 4.0


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), "8", True])
def test_a_bad_max_bias_is_named(bad):
    with pytest.raises(ValueError, match="max_bias: expected None"):
        pe_suite.verify_alibi(alibi_slopes, max_bias=bad)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="layout: expected one of interleaved, concatenated; got 'halfsplit'"):
        pe_suite.verify_sinusoidal(paper_table, layout="halfsplit")
    with pytest.raises(ValueError, match="alibi_slopes: expected 'interpolated' or 'direct'; got 'bloom'"):
        pe_suite.verify_alibi(alibi_slopes, alibi_slopes="bloom")
    with pytest.raises(ValueError, match="dtypes: numpy has no bfloat16"):
        pe_suite.verify_alibi(alibi_slopes, array="numpy", dtypes=("bfloat16",))
