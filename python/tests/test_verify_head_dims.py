"""verify_rope(head_dims=...): a kernel that supports some head sizes only (a CUDA kernel's 64 and 128) is drawn and
shrunk among them, and a mistake it makes there is still caught; outside them it is not asked."""
import pytest
import torch

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


@pytest.mark.parametrize("head_dims", [(64, 128), (16,)])
def test_the_diagnosis_calls_the_kernel_only_at_the_declared_head_sizes(head_dims):
    seen = []

    def off_by_one(x, positions, config):
        seen.append(config["head_dim"])
        return fixed_sizes_rope(x, positions, config, sizes=head_dims, offset=1)

    with pytest.raises(pe_suite.verify.VerifyError) as e:
        pe_suite.verify_rope(off_by_one, rope_types=("default",), head_dims=head_dims, examples=20,
                             failure_file=None)
    assert set(seen) <= set(head_dims), sorted(set(seen))
    assert "raised" not in str(e.value).split("diagnosis")[1]


def test_the_diagnosis_keeps_to_the_declared_scenarios():
    # a kernel that takes a run of consecutive positions only (an offset), as rotary-embedding-torch's, and whose
    # output no convention fits, so that the diagnosis tries every probe it has
    refused = []

    def consecutive_only(x, positions, config):
        first = int(positions[0])
        if positions.tolist() != list(range(first, first + len(positions))):
            refused.append(positions.tolist())
            raise ValueError("consecutive positions only")
        g = torch.Generator().manual_seed(int(positions.sum()) + x.shape[-1])  # the same noise for the same call
        return torch.randn(x.shape, generator=g).to(x.dtype)

    with pytest.raises(pe_suite.verify.VerifyError):
        pe_suite.verify_rope(consecutive_only, rope_types=("default",), scenarios=("prefill", "decode", "chunked"),
                             examples=20, failure_file=None)
    assert refused == []


def test_the_far_spread_probe_is_made_only_where_far_and_scattered_positions_are_declared():
    # Llama-3's diagnosis spreads positions to max_position first; a kernel declared for a prefill and a packed
    # batch (positions below 64) and whose output no convention fits is never called past them
    refused = []

    def short_cache(x, positions, config):
        if int(positions.max()) > 200:
            refused.append(int(positions.max()))
            raise IndexError("past the cache")
        g = torch.Generator().manual_seed(int(positions.sum()) + x.shape[-1])
        return torch.randn(x.shape, generator=g).to(x.dtype)

    with pytest.raises(pe_suite.verify.VerifyError):
        pe_suite.verify_rope(short_cache, rope_types=("llama3",), scenarios=("prefill", "packed"), examples=10,
                             failure_file=None)
    assert refused == []


def test_head_sizes_the_space_never_draws_are_named():
    with pytest.raises(ValueError, match="none of \\(12,\\) is a head size verify_rope draws"):
        pe_suite.verify_rope(fixed_sizes_rope, head_dims=(12,))
