"""Bad input raises ValueError / TypeError naming the parameter and its value, in the caller's names; the
caller's arrays are never modified; a Report is the command's text and JSON, in the caller's words."""

import json
import os
import pathlib

import numpy as np
import pytest

import pe_suite

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def data(rng):
    x = rng.standard_normal((12, 2, 32)).astype(np.float32)
    positions = np.arange(500, 512)
    return x, pe_suite.reference_rope(x, positions), positions


@pytest.mark.parametrize("change,error,words", [
    ({"rotary_dim": 7}, ValueError, ["rotary_dim", "7"]),
    ({"rotary_dim": 64}, ValueError, ["rotary_dim", "64"]),
    ({"layout": "diagonal"}, ValueError, ["layout", "diagonal", "halfsplit, interleaved or deinterleave"]),
    ({"layout": "neox"}, ValueError, ["rotate_half is halfsplit"]),
    ({"rotary_dim": 3}, ValueError, ["rotary_dim", "(0: all of them), got 3"]),
    ({"base": -1.0}, ValueError, ["base", "-1"]),
    ({"contract": "rope.nonexistent"}, ValueError, ["contract", "rope.nonexistent"]),
    ({"max_abs": -1.0}, ValueError, ["max_abs", "-1"]),
    ({"dtype": "float8"}, ValueError, ["dtype", "float8"]),
    ({"scaling": "llama3"}, TypeError, ["scaling"]),
    ({"scaling": {"rope_type": "llama3", "factor": 8.0}}, ValueError, ["scaling"]),
    ({"scaling": {"rope_type": "linear", "factor": 2.0}, "hf_config": {}}, ValueError, ["scaling", "hf_config"]),
])
def test_bad_keywords_are_named(data, change, error, words):
    x, y, positions = data
    before = (x.copy(), y.copy(), positions.copy())
    with pytest.raises(error) as e:
        pe_suite.check_rope(x, y, positions, **change)
    for w in words:
        assert w in str(e.value), str(e.value)
    assert "--" not in str(e.value), "a flag's name leaked: " + str(e.value)
    for a, b in zip(before, (x, y, positions)):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("make,error,words", [
    (lambda x, y, p: (x.astype(np.int32), y, p), TypeError, ["x", "int32"]),
    (lambda x, y, p: (x, y[:6], p), ValueError, ["y"]),
    (lambda x, y, p: (x, y, p[:5]), ValueError, ["positions", "5"]),
    # Float positions are real ones (test_real_positions.py); neither integers nor floats is refused.
    (lambda x, y, p: (x, y, p.astype(np.complex128)), TypeError, ["positions", "complex128", "real positions"]),
    (lambda x, y, p: (x, y, np.full(12, 2**60)), ValueError, ["positions", "2^53"]),
    (lambda x, y, p: (x, None, p), TypeError, ["y"]),
    (lambda x, y, p: (np.float32(1), np.float32(1), p[:1]), ValueError, ["x", "scalar"]),
    (lambda x, y, p: (x[:0], y[:0], p[:0]), ValueError, ["positions"]),
])
def test_bad_arrays_are_named(data, make, error, words):
    with pytest.raises(error) as e:
        pe_suite.check_rope(*make(*data))
    for w in words:
        assert w in str(e.value), str(e.value)


def test_reference_keywords_are_named():
    with pytest.raises(ValueError, match="dim"):
        pe_suite.reference_sinusoidal(np.arange(4), 1)  # an odd dim is padded (issue 49), 1 has no pair
    with pytest.raises(TypeError, match="positions"):
        pe_suite.reference_sinusoidal(["a"], 8)  # real positions are read, text is not
    with pytest.raises(ValueError, match="rotary_dim"):
        pe_suite.rope_cos_sin(np.arange(4), 5)
    with pytest.raises(ValueError, match="rotary_dim: required"):
        pe_suite.rope_cos_sin(np.arange(4))


def test_report_is_the_commands_text_and_json(cli, tmp_path, data):
    x, y, positions = data
    y = y.copy()
    y[3, 1, 5] += 0.5  # one element far off: a failing report with worst elements
    for name, a in (("x", x), ("y", y), ("positions", positions)):
        np.save(tmp_path / f"{name}.npy", a)
    os.rename(tmp_path / "x.npy", tmp_path / "x")
    os.rename(tmp_path / "y.npy", tmp_path / "y")
    out = cli(["check", "--family", "rope", "--input", "x", "--output", "y", "--positions-file", "positions.npy",
               "--layout", "halfsplit", "--json", "r.json"], tmp_path, expect=1)
    report = pe_suite.check_rope(x, y, positions)
    assert not report.passed and repr(report) == "<pe_suite.Report FAIL>"
    # The same report in the caller's words: the budget's hint names the keywords, not the flags.
    def in_python_words(text):
        return text.replace("--contract", "contract").replace("--max-abs", "max_abs")
    assert "--" not in str(report)
    assert str(report) == in_python_words(out.replace("wrote r.json\n", ""))
    assert report.to_dict() == json.loads(in_python_words((tmp_path / "r.json").read_text()))
    assert report.bands[0]["violations"] == 1 and report.worst[0]["channel"] == 5


def test_hf_config_path_and_dict(rng):
    config = ROOT / "examples" / "hf_configs" / "Llama-3.1-8B.json"
    x = rng.standard_normal((8, 2, 128)).astype(np.float32)
    positions = np.arange(40000, 40008)
    y = pe_suite.reference_rope(x, positions, hf_config=config)
    assert pe_suite.check_rope(x, y, positions, hf_config=str(config)).passed
    assert pe_suite.check_rope(x, y, positions, hf_config=json.loads(config.read_text())).passed
    plain = pe_suite.reference_rope(x, positions, base=500000.0)
    assert not pe_suite.check_rope(x, plain, positions, hf_config=config).passed


def test_sinusoidal_check_and_assert(rng):
    positions = np.arange(0, 64)
    table = pe_suite.reference_sinusoidal(positions, 32)
    assert pe_suite.check_sinusoidal(table, positions, contract="sinusoidal.exact").passed
    pe_suite.assert_sinusoidal_close(table, positions)
    with pytest.raises(AssertionError, match="FAIL"):
        pe_suite.assert_sinusoidal_close(table[:, ::-1].copy(), positions)


def test_strided_and_heads_first_views_are_read_in_place(data):
    x, y, positions = data
    xt, yt = np.swapaxes(x, 0, 1), np.swapaxes(y, 0, 1)  # [heads, tokens, dim] views, not copies
    assert not xt.flags["C_CONTIGUOUS"]
    assert pe_suite.check_rope(xt, yt, positions, heads_first=True, contract="rope.exact").passed


def without_p99(d):
    """The report's dict without the bands' 99th percentiles (a threaded pass's move within the screen's radius)."""
    if isinstance(d, dict):
        return {k: without_p99(v) for k, v in d.items() if k not in ("p99_abs", "p99_ulp")}
    return [without_p99(v) for v in d] if isinstance(d, list) else d


@pytest.mark.parametrize("wrong", [False, True])
def test_threads_give_one_threads_report(data, wrong):
    x, y, positions = data
    y = y.copy()
    if wrong:
        y[7, 1, 3] += 1e-3
    one = pe_suite.check_rope(x, y, positions, threads=1)
    assert one.passed == (not wrong)
    for threads in (2, 5):
        many = pe_suite.check_rope(x, y, positions, threads=threads)
        assert without_p99(many.to_dict()) == without_p99(one.to_dict())


@pytest.mark.parametrize("call,error,words", [
    (lambda x, y, p: pe_suite.reference_sinusoidal(np.array([2**53 + 1]), 8), ValueError, ["9007199254740993"]),
    (lambda x, y, p: pe_suite.check_rope(x, y, p, layer=1), ValueError, ["layer", "hf_config"]),
    (lambda x, y, p: pe_suite.check_rope(x, y, p, scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192}), ValueError, ["scaling['low_freq_factor']"]),
    (lambda x, y, p: pe_suite.check_rope(x, y, p, hf_config=123), TypeError, ["hf_config"]),
    (lambda x, y, p: pe_suite.check_rope(x, y, p, mrope_section=16), TypeError, ["mrope_section"]),
    (lambda x, y, p: pe_suite.check_rope(x, y, p, scaling={"rope_type": "linear", "factor": float("nan")}),
     ValueError, ["scaling"]),
    (lambda x, y, p: pe_suite.rope_cos_sin(p, -2), ValueError, ["rotary_dim", "-2"]),
    (lambda x, y, p: pe_suite.reference_rope(np.where(x > 2, np.inf, x), p), ValueError, ["x", "inf"]),
])
def test_review_findings_are_named(data, call, error, words):
    x, y, positions = data
    x = x.copy()
    x[0, 0, 0] = 3.0  # one element the inf case replaces
    with pytest.raises(error) as e:
        call(x, y, positions)
    for w in words:
        assert w in str(e.value), str(e.value)
    assert "--" not in str(e.value), str(e.value)


def test_numpy_scalars_and_types_are_accepted(data):
    x, y, positions = data
    assert pe_suite.check_rope(x, y, positions, dtype=np.float32, base=np.float64(1e4)).passed
    scaled = pe_suite.reference_rope(x, positions, scaling={"rope_type": "linear", "factor": np.float32(2)})
    assert pe_suite.check_rope(x, scaled, positions, scaling={"rope_type": "linear", "factor": 2.0}).passed


def test_cos_sin_layout_comes_from_the_config():
    config = {"model_type": "deepseek_v2", "head_dim": 8, "rope_theta": 10000.0}  # interleaved pairs
    cos, _ = pe_suite.rope_cos_sin(np.arange(6), hf_config=config)
    want, _ = pe_suite.rope_cos_sin(np.arange(6), 8, layout="interleaved")
    assert np.array_equal(cos, want)


def test_torch_negative_views_are_read_with_their_sign(data):
    torch = pytest.importorskip("torch")
    x, y, positions = data
    negated = torch._neg_view(torch.from_numpy(x))
    assert not pe_suite.check_rope(negated, y, positions).passed
    assert pe_suite.check_rope(negated, -y, positions).passed


def test_concurrent_good_and_refused_calls_do_not_disturb_each_other(data):
    import threading
    x, _, positions = data
    bad = x.copy()
    bad[1, 0, 0] = np.inf
    errors = []

    def good():
        try:
            for _ in range(5):
                pe_suite.reference_rope(x, positions)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=good) for _ in range(2)]
    for t in threads:
        t.start()
    for _ in range(20):
        with pytest.raises(ValueError):
            pe_suite.reference_rope(bad, positions)
    for t in threads:
        t.join()
    assert errors == []


def test_a_shape_that_contradicts_the_positions_names_heads_first(data):
    x, y, positions = data  # [12 tokens, 2 heads, 32]
    with pytest.raises(ValueError, match=r"read as \[heads, tokens, head_dim\] \(heads_first\) holds 2 tokens, "
                                         r"the positions are 12; .* it holds 12: drop heads_first"):
        pe_suite.check_rope(x, y, positions, heads_first=True)
    xt, yt = np.ascontiguousarray(x.transpose(1, 0, 2)), np.ascontiguousarray(y.transpose(1, 0, 2))
    with pytest.raises(ValueError, match=r"it holds 12: give heads_first"):
        pe_suite.check_rope(xt, yt, positions)


def test_a_non_finite_input_is_the_inputs_not_the_kernels(data):
    x, y, positions = data
    x, y = x.copy(), y.copy()
    x[3, 1, 5], x[7, 0, 0] = np.nan, np.inf  # a kernel passes NaN through; the reference is undefined there
    y[3, 1, 5], y[7, 0, 0] = np.nan, np.nan
    report = pe_suite.check_rope(x, y, positions)
    assert report.passed, str(report)
    assert "input: 2 non-finite values in x (first: token 3, head 1, channel 5 = nan)" in str(report)
    assert "2 of 12 tokens are the input's, not judged" in str(report)
    assert report.to_dict()["nonfinite_input"] == {"values": 2, "tokens": 2}
    y[4, 0, 2] += 1  # a finite token still fails
    assert not pe_suite.check_rope(x, y, positions).passed
    with pytest.raises(ValueError, match="x: every token holds a non-finite value"):
        pe_suite.check_rope(np.full_like(x, np.nan), y, positions)


def test_lists_mixed_dtypes_and_unread_keys_are_said(data):
    x, y, positions = data  # float32 arrays, y the reference rounded to float32
    # Lists have no type: read as float64 and said so (a float32 kernel then misses float64's budget) ...
    report = pe_suite.check_rope(x.tolist(), y.tolist(), positions.tolist())
    assert "note: x and y given as Python lists, read as float64" in str(report)
    # ... or read in the declared type.
    assert pe_suite.check_rope(x.tolist(), y.tolist(), positions.tolist(), dtype="float32").passed
    # x and y of different types: the output's type sets the budget, and the report says so.
    mixed = pe_suite.check_rope(x, y.astype(np.float16), positions)
    assert "note: x is f32, y is f16: the output's type sets the budget" in str(mixed)
    # A key no rope_type reads: a warning with the key, not only a line in the report.
    with pytest.warns(UserWarning, match=r"rope_scaling\.factr is not read"):
        pe_suite.check_rope(x, y, positions, scaling={"rope_type": "linear", "factor": 2.0, "factr": 3})


def test_a_shape_mismatch_names_both_shapes(data):
    x, y, positions = data
    with pytest.raises(ValueError, match=r"y: shape \[12, 2, 30\] differs from x's \[12, 2, 32\]"):
        pe_suite.check_rope(x, y[..., :30].copy(), positions)
