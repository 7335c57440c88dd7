"""verify_rope(head_dims=...): a kernel that supports some head sizes only (a CUDA kernel's 64 and 128) is drawn and
shrunk among them, and a mistake it makes there is still caught; outside them it is not asked."""
import pytest

import pe_suite
from hf_torch_rope import apply_rotary, cos_sin, default_inv_freq


def fixed_sizes_rope(x, positions, config, sizes=(64, 128), offset=0):
    d = config["head_dim"]
    if d not in sizes:
        raise ValueError(f"head_dim {d} is not supported")
    inv_freq, scaling = default_inv_freq(config["rope_theta"], d)
    cos, sin = cos_sin(inv_freq, scaling, positions + offset, x.dtype)
    return apply_rotary(x.transpose(0, 1), cos, sin).transpose(0, 1)


def test_a_kernel_of_two_head_sizes_passes_among_them_and_fails_outside():
    pe_suite.verify_rope(fixed_sizes_rope, rope_types=("default",), head_dims=(64, 128), examples=40,
                         failure_file=None)
    with pytest.raises(pe_suite.verify.VerifyError, match="is not supported"):
        pe_suite.verify_rope(fixed_sizes_rope, rope_types=("default",), examples=40, failure_file=None)


def test_a_mistake_among_the_head_sizes_is_caught_and_shrunk_among_them():
    def off_by_one(x, positions, config):
        return fixed_sizes_rope(x, positions, config, offset=1)

    with pytest.raises(pe_suite.verify.VerifyError) as e:
        pe_suite.verify_rope(off_by_one, rope_types=("default",), head_dims=(64, 128), examples=40,
                             failure_file=None)
    assert e.value.case["config"]["head_dim"] in (64, 128)
    assert "head_dim 64" in str(e.value) or "head_dim 128" in str(e.value)


@pytest.mark.parametrize("head_dims", [(), (3,), (0,), ("64",), (True,), 65])
def test_bad_head_dims_are_named(head_dims):
    with pytest.raises(ValueError, match="head_dims"):
        pe_suite.verify_rope(fixed_sizes_rope, head_dims=head_dims)
