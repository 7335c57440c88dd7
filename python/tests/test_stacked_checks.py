"""verify_rope checks a case's calls in few stacked calls of the check engine (verify._stacked_pass): calls of
one plan together, a split call's rows that repeat the whole call's bits left out. These pin that it decides
as checking call by call does, and that _rope_plan_lengths groups exactly the calls the reference treats alike."""
import random

import numpy as np
import pytest
import torch

import pe_suite
from pe_suite import _native
from pe_suite import verify as v
from hf_rope_config import hf_rope

DYNAMIC = {"rope_theta": 10000.0, "head_dim": 16, "max_position_embeddings": 4096,
           "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
LONGROPE = {"rope_theta": 10000.0, "head_dim": 16, "max_position_embeddings": 16384,
            "original_max_position_embeddings": 4096,
            "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                             "long_factor": [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]}}
LENGTHS = [1, 100, 4096, 4097, 5000]


@pytest.mark.parametrize("config, keys", [(DYNAMIC, [4096, 4096, 4096, 4097, 5000]), (LONGROPE, [0, 0, 0, 1, 1]),
                                          ({"rope_theta": 10000.0, "head_dim": 16}, [0] * 5)])
def test_calls_of_one_plan_length_have_one_reference(config, keys):
    assert _native._rope_plan_lengths(LENGTHS, hf_config=config) == keys
    # The reference's table at positions 0..9, in a call whose longest position sets the length.
    tables = [_native.rope_cos_sin(list(range(10)) + [n - 1] * (n > 10), hf_config=config, dtype="float64")[1][:10]
              for n in LENGTHS]
    for i in range(len(LENGTHS)):
        for j in range(len(LENGTHS)):
            assert np.array_equal(tables[i], tables[j]) == (keys[i] == keys[j]), (LENGTHS[i], LENGTHS[j])


def rows_apart(x, positions, config):
    """HF's RoPE, one ulp off in the last token's first channel when called on more than one token (within the
    budget): the split calls' rows differ in bits from the whole call's and are checked, not left out."""
    y = hf_rope(x, positions, config)
    if x.shape[0] > 1:
        y.view({2: torch.int16, 4: torch.int32}[y.element_size()])[-1, :, 0] += 1
    return y


def decode_offset_off(x, positions, config):
    """A decode step (one token) rotated one position late: only the split calls fail."""
    return hf_rope(x, positions + 1 if x.shape[0] == 1 else positions, config)


@pytest.mark.parametrize("fn", [hf_rope, rows_apart, decode_offset_off])
def test_stacked_checks_decide_as_call_by_call(fn, monkeypatch):
    caller = v._Caller(fn, "torch")
    cases = [v.draw_case(random.Random(f"stacked:{i}"), rope_types=("default", "dynamic", "longrope", "yarn"),
                         forms=("text", "mrope"), dtypes=("float32", "bfloat16"), layout="halfsplit",
                         scenarios=pe_suite.config_space.SCENARIOS, max_position=1 << 16) for i in range(40)]
    stacked = [v._failure(caller, case) for case in cases]
    monkeypatch.setattr(v, "_stacked_pass", lambda case, parts: None)
    one_by_one = [v._failure(caller, case) for case in cases]
    assert stacked == one_by_one
    assert fn is hf_rope or any(stacked)  # the planted kernels fail somewhere, so both paths were decided
