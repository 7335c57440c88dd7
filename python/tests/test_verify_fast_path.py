"""verify_rope's fast paths decide and report as the whole check does: a call's verdict alone (_native._rope_verdict,
no text or bands built) says what check_rope says of every drawn call, passing, failing or undecidable; a call that
does not pass is reported by check_rope itself (verify._verdict); the black-box loops read x's pair norms computed
once (_pair_norms) and find the same first element as the same sums written out in Python."""
import functools
import json
import math
import random
import warnings

import numpy as np
import pytest
import torch

import pe_suite
from pe_suite import _native
from pe_suite import black_box as bb
from pe_suite import config_space as space
from pe_suite import verify as v
from hf_rope_config import hf_rope

FIELDS = ("passed", "verdict", "undecidable", "parameters")


# hf_rope is HF's text-model code: every form but the video transformers' axial one (test_axial_rope drives that).
TEXT_MODEL_FORMS = tuple(f for f in space.FORMS if f != "axial")


def _cases(n, dtypes=("float32", "bfloat16", "float16")):
    return [v.draw_case(random.Random(f"fast:{i}"), rope_types=space.ROPE_TYPES, forms=TEXT_MODEL_FORMS, dtypes=dtypes,
                        layout="halfsplit", scenarios=space.SCENARIOS, max_position=1 << 21) for i in range(n)]


def _quiet(case, x, y):
    return _native._rope_verdict(x, y, np.asarray(case["positions"], dtype=np.int64), hf_config=case["config"],
                                 layout=case["layout"], contract=case.get("contract"))


@pytest.mark.parametrize("plant", [None, "rope_theta_ignored", "offset_ignored", "yarn_attention_factor_dropped"])
def test_a_calls_verdict_alone_is_the_whole_checks(plant):
    kernel = functools.partial(hf_rope, plant=plant) if plant else hf_rope
    verdicts = set()
    for case in _cases(40):
        x, y, error = v._call_rope(kernel, case, "torch")
        assert error is None, error
        whole, quiet = v._check(case, x, y), _quiet(case, x, y)
        assert [getattr(quiet, f) for f in FIELDS] == [getattr(whole, f) for f in FIELDS], v._describe(case)
        assert quiet.text == ""  # nothing said, not even the config's block
        assert set(quiet.to_dict().get("hf_config", {"not_read": []})) == {"not_read"}  # what the caller warns of
        assert quiet.bands == [] and quiet.worst == [] and quiet.explanations == []
        verdicts.add(whole.verdict)
    assert verdicts == ({"PASS"} if plant is None else {"PASS", "FAIL"})  # both paths met where a kernel is wrong


def test_a_call_that_does_not_pass_is_reported_by_the_whole_check():
    cases = _cases(30, dtypes=("float32", "bfloat16"))
    failed = 0
    for case in cases:
        x, y, _ = v._call_rope(functools.partial(hf_rope, plant="rope_theta_ignored"), case, "torch")
        got, whole = v._verdict(case, x, y), v._check(case, x, y)
        assert got.verdict == whole.verdict
        if whole.verdict != "PASS":
            failed += 1
            assert str(got) == str(whole) and got.to_dict() == whole.to_dict()
            assert got.worst == whole.worst and got.explanations == whole.explanations
    assert failed > 5


def test_an_undecidable_call_is_reported_by_the_whole_check():
    # HF's rotation at positions 0..7 checked as if at 2^40 on: every band undecidable (test_undecidable.py).
    x = torch.from_numpy(np.random.default_rng(3).standard_normal((8, 2, 64))).float()
    config = {"rope_theta": 10000.0, "head_dim": 64}
    y = hf_rope(x, torch.arange(8), config)
    case = {"config": config, "layout": "halfsplit", "positions": list(range(2 ** 40, 2 ** 40 + 8)), "contract": None}
    quiet, got = _quiet(case, x, y), v._verdict(case, x, y)
    assert quiet.verdict == got.verdict == "UNDECIDABLE" and quiet.undecidable == got.undecidable > 0
    assert str(got) == str(v._check(case, x, y)) and "undecidable: positions" in str(got)


def test_a_config_key_not_read_is_warned_once_where_the_call_is_checked_again():
    x = torch.from_numpy(np.random.default_rng(5).standard_normal((4, 1, 16))).float()
    config = {"rope_theta": 10000.0, "head_dim": 16, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "factr": 3}}
    case = {"config": config, "layout": "halfsplit", "positions": [0, 1, 2, 3], "contract": None}
    with pytest.warns(UserWarning, match="factr is not read") as warned:
        assert v._verdict(case, x, x).verdict == "FAIL"  # y = x: not rotated
    assert len([w for w in warned if "factr" in str(w.message)]) == 1


def _sum8(values):
    """black_box.cc's sums: below the last multiple of 8, term i into lane i % 8 of vector (i // 8) % 4; the vectors
    added as (v0 + v1) + (v2 + v3), the rest of the terms into its lane 0, then its lanes as ((l0 + l1) + (l2 + l3))
    + ((l4 + l5) + (l6 + l7))."""
    n = len(values)
    full = n - n % 8
    v = [[0.0] * 8 for _ in range(4)]
    for i in range(full):
        v[(i // 8) % 4][i % 8] += values[i]
    lanes = [(v[0][k] + v[1][k]) + (v[2][k] + v[3][k]) for k in range(8)]
    for i in range(full, n):
        lanes[0] += values[i]
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))


def _layouts(d):
    return [(d // 2, 0, d // 2, 1), (d // 2, 0, 1, 2), (d // 4, 0, d // 4, 1)]  # halfsplit, interleaved, partial


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("D", [12, 40, 148])  # sums shorter than 8; 8 at a time with a tail; 32 at a time too
def test_the_black_box_loops_find_the_elements_the_same_sums_in_python_find(seed, D):
    rng = np.random.default_rng(seed)
    T, H = 5, 2
    for layout in _layouts(D):
        pairs, first, second, step = layout
        a, b = slice(first, first + pairs * step, step), slice(second, second + pairs * step, step)
        x = rng.standard_normal((T, H, D))
        nx = _native._pair_norms(x, layout)
        assert np.array_equal(nx, np.sqrt(x[..., a] * x[..., a] + x[..., b] * x[..., b]))
        # y: x's norms off by a relative 10^-7 at random; slope 10^-7.5 catches some
        y = x * (1 + rng.standard_normal((T, H, D)) * 1e-7)
        ny = np.sqrt(y[..., a] * y[..., a] + y[..., b] * y[..., b])
        off = np.argwhere(~(np.abs(ny - 1.0 * nx) <= 10 ** -7.5 * nx + 1e-300))
        got = _native._first_norm_off(nx, y, layout, 1.0, 10 ** -7.5, 1e-300)
        assert got == (tuple(int(i) for i in off[0]) if len(off) else None)
        z = x.copy()
        z[..., b] = -z[..., b]  # M x: back at x exactly, then moved
        z = z * (1 + rng.standard_normal((T, H, D)) * 1e-7)
        za, zb = z[..., a] - x[..., a], -z[..., b] - x[..., b]
        back = np.sqrt(za * za + zb * zb)
        off = np.argwhere(~(back <= 10 ** -7.5 * nx + 1e-300))
        got = _native._first_inverse_off(x, nx, z, layout, 1.0, 10 ** -7.5, 1e-300)
        assert got == (tuple(int(i) for i in off[0]) if len(off) else None)
        w = np.abs(rng.standard_normal((T, pairs))) * 1e-8
        y1 = y * (1 + rng.standard_normal((T, H, D)) * 1e-9)
        assert _native._first_relative_off(nx, y, y1, layout, w, 1.0, 2.0 ** -24, 1e-300) == \
            _relative_in_python(nx, y, y1, pairs * 2, w, 1.0, 2.0 ** -24, 1e-300)


def _relative_in_python(n, y0, y1, rotary, w, g2, unit_u, floor, sided=None):
    """The native loop's first failing (s, t, h) with both dots and the budget, or None; `sided` (a list) gets one
    entry per pair of tokens the first term of the budget alone does not hold (the native loop's side sums)."""
    T, H, P = n.shape
    for s in range(T):
        for t in range(s + 1, T):
            for h in range(H):
                ns, nt = n[s, h], n[t, h]
                both = _sum8([ns[j] * nt[j] for j in range(P)])
                s_side = _sum8([ns[j] * w[s, j] * nt[j] for j in range(P)])
                t_side = _sum8([nt[j] * w[t, j] * ns[j] for j in range(P)])
                budget = g2 * (unit_u * both + 2 * (s_side + t_side)) + floor
                d0 = _sum8([y0[s, h, c] * y0[t, h, c] for c in range(rotary)])
                d1 = _sum8([y1[s, h, c] * y1[t, h, c] for c in range(rotary)])
                if sided is not None and not math.fabs(d0 - d1) <= g2 * (unit_u * both) + floor:
                    sided.append((s, t, h))
                if not math.fabs(d0 - d1) <= budget:
                    return s, t, h, d0, d1, budget
    return None


@pytest.mark.parametrize("rotary", [8, 56, 120, 148])  # one block; 24 past 32 (three more blocks); 32s and a tail
@pytest.mark.parametrize("seed", range(2))
def test_the_relative_loop_fails_where_its_replica_does_bit_for_bit(rotary, seed):
    # Outputs off by a relative 1e-6: past the budget's first term for some pairs of tokens, within the side sums'
    # (angle errors of 1e-6); one element off by 1e-2, past both. The first failure's dots and budget must be the
    # replica's bits, found after pairs that needed the side sums.
    rng = np.random.default_rng(seed)
    T, H, layout = 6, 2, (rotary // 2, 0, rotary // 2, 1)
    y = rng.standard_normal((T, H, rotary + 4))
    nx = _native._pair_norms(y, layout)
    w = np.abs(rng.standard_normal((T, rotary // 2))) * 1e-6
    y1 = y * (1 + rng.standard_normal(y.shape) * 1e-6)
    y1[T - 1, 1, 3] += 1e-2
    sided = []
    want = _relative_in_python(nx, y, y1, rotary, w, 1.0, 2.0 ** -24, 1e-300, sided)
    assert want is not None and want[:3] != (0, 1, 0) and sided and sided[0] < want[:3]
    assert _native._first_relative_off(nx, y, y1, layout, w, 1.0, 2.0 ** -24, 1e-300) == want


def test_the_relative_loop_finds_a_failure_where_there_is_one():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((6, 2, 8))
    nx = _native._pair_norms(x, (4, 0, 4, 1))
    y1 = x.copy()
    y1[4, 1, 2] += 1e-3
    w = np.full((6, 4), 1e-9)
    found = _native._first_relative_off(nx, x, y1, (4, 0, 4, 1), w, 1.0, 2.0 ** -24, 1e-300)
    assert found is not None and found[:3] == (0, 4, 1)
    assert found == _relative_in_python(nx, x, y1, 8, w, 1.0, 2.0 ** -24, 1e-300)


def test_black_box_check_names_the_same_properties_with_the_norms_computed_once():
    x = torch.from_numpy(np.random.default_rng(4).standard_normal((2, 2, 32))).float()
    positions, config = torch.tensor([3_000_000, 3_000_001]), {"rope_theta": 10000.0, "head_dim": 32}

    def gained(x, positions, config):
        return hf_rope(x, positions, config) * (1 + 2 ** -14)

    case = {"config": config, "layout": "halfsplit", "dtype": "float32", "positions": positions.tolist()}
    xd, yd = bb.as_f64(x), bb.as_f64(gained(x, positions, config))
    consts = bb.constants(case)
    assert bb.norm_failure(case, xd, yd, consts) == bb.norm_failure(case, xd, yd, consts, bb.pair_norms(case, xd))
    assert bb.norm_failure(case, xd, yd, consts) is not None
    assert [p for p, _ in bb.check(gained, x, positions, config)][:1] == [bb.NORM]


CONFIGS = [  # what a config dict holds, read without json.dumps's text where it can be (keywords.cc's plain_json)
    {"rope_theta": 500000.0, "head_dim": 64, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
     "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1, "high_freq_factor": 4,
                      "original_max_position_embeddings": 8192, "factr": -3},
     "tie_word_embeddings": False, "name": "mod\u00e8le \U0001F600", "architectures": ("LlamaForCausalLM",),
     "big": 2 ** 70, "none": None, "tiny": 5e-324, "huge": 1e300},
    {"rope_theta": 10000.0, "head_dim": 16, "max_position_embeddings": 16384, "original_max_position_embeddings": 4096,
     "rope_scaling": {"rope_type": "longrope", "short_factor": [1, 1.5, 2.0, 3, 4, 5, 6, 7.25],
                      "long_factor": [2.0, 3, 4, 5, 6, 7, 8, 9]}},
    {"rope_theta": np.float64(10000.0), "head_dim": np.int64(64), "partial_rotary_factor": torch.tensor(0.5).item()},
    {"rope_theta": 10000.0, "head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                             "original_max_position_embeddings": 2048}, 3: "x"},
]


@pytest.mark.parametrize("config", CONFIGS)
def test_a_config_dict_reads_as_its_json_file_does(config, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, default=lambda o: o.item()))
    d = int(config["head_dim"])
    x = np.random.default_rng(0).standard_normal((6, 2, d)).astype(np.float32)
    y = pe_suite.reference_rope(x, np.arange(6), hf_config=str(path))
    with warnings.catch_warnings(record=True) as from_dict:
        warnings.simplefilter("always")
        a = pe_suite.check_rope(x, y, np.arange(6), hf_config=config)
    with warnings.catch_warnings(record=True) as from_file:
        warnings.simplefilter("always")
        b = pe_suite.check_rope(x, y, np.arange(6), hf_config=str(path))
    assert str(a) == str(b).replace(f"hf_config {path}", "hf_config").replace(str(path), "hf_config")
    da, db = a.to_dict(), b.to_dict()
    da["hf_config"].pop("file"), db["hf_config"].pop("file")
    assert da == db
    assert [str(w.message) for w in from_dict] == [str(w.message) for w in from_file]


def test_a_config_json_cannot_hold_is_refused_as_before():
    x = np.zeros((2, 1, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="hf_config: Out of range float values are not JSON compliant"):
        pe_suite.check_rope(x, x, np.arange(2), hf_config={"rope_theta": float("nan"), "head_dim": 8})
    with pytest.raises(ValueError, match="hf_config: cannot be written as JSON: <class 'object'>"):
        pe_suite.check_rope(x, x, np.arange(2), hf_config={"rope_theta": 1e4, "head_dim": 8, "o": object()})


def test_a_layout_reaching_past_head_dim_is_refused_not_read():
    y = np.zeros((2, 1, 2))
    nx = _native._pair_norms(y, (2, 0, 0, 1))  # pairs (0, 0) and (1, 1): within the head, but 4 rotated channels
    with pytest.raises(ValueError, match="more rotated channels than head_dim"):
        _native._first_relative_off(nx, y, y, (2, 0, 0, 1), np.zeros((2, 2)), 1.0, 1e-7, 0.0)


def test_same_bits_compares_bit_patterns_not_values():
    a = torch.tensor([0.0, 1.5, float("nan")], dtype=torch.bfloat16).reshape(1, 1, 3)
    assert v._same_bits(a, a.clone())
    assert not v._same_bits(a, torch.tensor([-0.0, 1.5, float("nan")], dtype=torch.bfloat16).reshape(1, 1, 3))
    nan = a.view(torch.int16).clone()
    nan[0, 0, 2] += 1  # another NaN payload: the same value to numpy's comparisons, other bits
    assert not v._same_bits(a, nan.view(torch.bfloat16))
    assert not v._same_bits(a, a.reshape(1, 3, 1)) and not v._same_bits(a, a[..., :2].contiguous())
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert v._same_bits(x[:, 1:], x[:, 1:].copy())  # a strided view read as its values' bits
    with pytest.raises(ValueError, match="C-contiguous"):
        _native._same_bytes(x[:, 1:], x[:, 1:])
    assert _native._same_bytes(np.zeros((2, 0)), np.zeros((2, 0)))  # empty: nothing to compare, no strides to read


def test_the_mirrored_call_gets_a_contiguous_x_from_a_permuted_output():
    y = torch.arange(24, dtype=torch.float32).reshape(2, 4, 3).transpose(1, 2)  # a dense, permuted output
    case = {"config": {"rope_theta": 10000.0, "head_dim": 4}, "layout": "halfsplit"}
    m = bb.mirrored(case, y)
    assert m.is_contiguous() and torch.equal(m[..., :2], y[..., :2]) and torch.equal(m[..., 2:], -y[..., 2:])


@pytest.mark.parametrize("bad", [-1e-9, float("nan")])
def test_the_relative_loop_refuses_angle_errors_it_cannot_read_as_non_negative(bad):
    y = np.random.default_rng(2).standard_normal((3, 1, 4))
    nx = _native._pair_norms(y, (2, 0, 2, 1))
    w = np.full((3, 2), 1e-9)
    w[1, 1] = bad
    with pytest.raises(ValueError, match="non-negative angle errors"):
        _native._first_relative_off(nx, y, y, (2, 0, 2, 1), w, 1.0, 2.0 ** -24, 1e-300)
