"""examples/python/device_rope.py: an engine's device op (vLLM's rotary_embedding signature) wrapped for
verify_rope passes as written, on the CPU here and on CUDA where there is one; its cache sized wrongly or its
linear factor dropped is caught."""
import pathlib
import sys

import pytest
import torch

import pe_suite

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))
import device_rope  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("is_neox,layout", [(True, "halfsplit"), (False, "interleaved")])
def test_the_wrapped_device_op_passes(device, is_neox, layout):
    pe_suite.verify_rope(device_rope.on_device(device, is_neox=is_neox), layout=layout, examples=60,
                         rope_types=("default", "linear"), forms=("text", "partial"), failure_file=None)


def test_the_wrapped_op_with_its_scaling_dropped_is_caught_and_named(monkeypatch):
    engines_own = device_rope.cos_sin_cache

    def unscaled(config, positions, device):  # a converter that dropped rope_scaling
        return engines_own(dict(config, rope_scaling=None), positions, device)

    monkeypatch.setattr(device_rope, "cos_sin_cache", unscaled)
    with pytest.raises(pe_suite.verify.VerifyError, match="scaling ignored"):
        pe_suite.verify_rope(device_rope.on_device("cpu"), rope_types=("linear",), failure_file=None)
