"""verify_rope's black-box properties (pe_suite/black_box.py): HF's RoPE holds them in every dtype; each can
fail, and the norm and mirror-image ones catch at a million positions what the data's class budget, loose
there by a float32 angle's error, lets through."""
import functools

import numpy as np
import pytest
import torch

import pe_suite
from pe_suite import black_box as bb
from hf_rope_config import hf_rope


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("layout", ["halfsplit", "interleaved"])
def test_hf_rope_holds_every_property(dtype, layout):
    rng = np.random.default_rng(3)
    config = {"rope_theta": 500000.0, "head_dim": 64,
              "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}}
    x = torch.from_numpy(rng.standard_normal((6, 3, 64))).to(dtype)
    for positions in ([0, 1, 2, 3, 4, 5], [1_500_000 + k for k in range(6)]):
        found = bb.check(functools.partial(hf_rope, layout=layout), x, torch.tensor(positions), config, layout=layout)
        assert found == [], found


def far_gain_off(x, positions, config):
    """HF's RoPE with its gain 2^-14 high beyond position 4096 (a temperature folded into the rotation there):
    within the float32 class's budget at those positions, whose angle error allows far more."""
    y = hf_rope(x, positions, config)
    far = (positions >= 4096)[:, None, None]
    return torch.where(far, y * (1 + 2 ** -14), y)


def test_a_gain_off_at_far_positions_is_caught_by_the_norm_property_only():
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_rope(far_gain_off, rope_types=("default",), dtypes=("float32",), scenarios=("decode",),
                             failure_file=None)
    assert info.value.property == bb.NORM, str(info.value)
    assert "pe_suite.black_box.check(fn, x, positions, config" in str(info.value)  # the snippet runs the property
    assert max(info.value.case["positions"]) >= 4096


def steered_angle(x, positions, config):
    """From position 2^20 on, a rotation whose angle is nudged by 2^-28 of itself according to the sign of x_a * x_b
    (an approximation steered by the input): every pair's norm kept, the angle within the float32 class's
    budget there (about 2^-26 of the angle), but the mirror-image call is not undone."""
    d = config["head_dim"]
    inv = 1.0 / config["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    x64 = x.double()
    a, b = x64[..., : d // 2], x64[..., d // 2:]
    far = (positions >= 1 << 20).double()[:, None, None]
    phi = positions.double()[:, None, None] * inv[None, None, :] * (1 + far * 2 ** -28 * torch.sign(a * b))
    out = torch.cat((a * phi.cos() - b * phi.sin(), b * phi.cos() + a * phi.sin()), -1)
    return out.to(x.dtype)


def test_an_input_steered_angle_is_caught_by_the_mirror_image_property():
    with pytest.raises(pe_suite.verify.VerifyError) as info:
        pe_suite.verify_rope(steered_angle, rope_types=("default",), dtypes=("float32",), scenarios=("decode",),
                             max_position=1 << 24, failure_file=None)
    assert info.value.property == bb.INVERSE, str(info.value)
    rng = np.random.default_rng(4)
    x = torch.from_numpy(rng.standard_normal((2, 2, 32))).float()
    found = dict(bb.check(steered_angle, x, torch.tensor([3_000_000, 3_000_001]), {"rope_theta": 10000.0,
                                                                                 "head_dim": 32}))
    assert bb.INVERSE in found and bb.NORM not in found, found


def shifted_wrong(x, positions, config):
    """Positions below 64 read one further (an off-by-one in a small-position fast path)."""
    return hf_rope(x, torch.where(positions < 64, positions + 1, positions), config)


def test_a_position_misread_in_one_range_breaks_the_relative_property():
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.standard_normal((4, 1, 16))).float()
    found = dict(bb.check(shifted_wrong, x, torch.tensor([60, 61, 62, 100]), {"rope_theta": 10000.0, "head_dim": 16}))
    assert bb.RELATIVE in found, found
    assert "every position moved by one offset" in found[bb.RELATIVE]


def test_dynamic_and_longrope_are_not_held_to_the_relative_property():
    # Their frequencies depend on the length (max position + 1): <q, k> is relative within one length only.
    case = {"config": {"rope_theta": 1e4, "head_dim": 8, "max_position_embeddings": 64,
                       "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, "x": np.zeros((2, 1, 8))}
    assert bb.relative_shift(case) is None
    case["config"]["rope_scaling"] = {"type": "longrope", "short_factor": [1] * 4, "long_factor": [2] * 4}
    assert bb.relative_shift(case) is None
    case["config"]["rope_scaling"] = None  # the default frequencies: relative, the positions moved up
    assert bb.relative_shift(dict(case, positions=[0, 1])) == [13, 14]


@pytest.mark.parametrize("positions", [[0, 1, 2, 3, 4, 5], [[0, 1, 2, 3, 4, 5], [0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]]])
def test_numpy_kernels_and_positions_are_checked_too(positions):
    config = {"rope_theta": 10000.0, "head_dim": 16}
    if len(positions) == 3:
        config["rope_scaling"] = {"rope_type": "default", "mrope_section": [2, 3, 3]}

    def numpy_rope(x, p, c):  # the caller's wrapper: arrays in, arrays out
        return hf_rope(torch.from_numpy(x), torch.from_numpy(p), c).numpy()

    x = np.random.default_rng(6).standard_normal((6, 2, 16)).astype(np.float32)
    assert bb.check(numpy_rope, x, np.asarray(positions), config) == []
