"""The claim docs/engines.md makes for Liger's bfloat16 rows: Triton's interpreter multiplies bfloat16 tensors
wrongly, while the same kernel on float32 data (and bfloat16 times float32) is right. If Triton fixes it, this test
fails and the rows' note must be revised. Runs in the engines' leg (it needs triton)."""
import os

import pytest

os.environ["TRITON_INTERPRET"] = "1"
torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _times(x_ptr, c_ptr, y_ptr, n: tl.constexpr):
    o = tl.arange(0, n)
    tl.store(y_ptr + o, tl.load(x_ptr + o) * tl.load(c_ptr + o))


def _run(x, c):
    y = torch.empty_like(x)
    _times[(1,)](x, c, y, x.numel())
    return y


def test_the_interpreter_multiplies_float32_and_mixed_bfloat16_right():
    x = torch.tensor([1.0, 0.5, 3.0, -2.0])
    assert torch.equal(_run(x, torch.ones(4)), x)
    assert torch.equal(_run(x.bfloat16(), torch.ones(4)), x.bfloat16())


def test_the_interpreter_multiplies_two_bfloat16_tensors_wrongly():
    x = torch.tensor([1.0, 0.5, 3.0, -2.0], dtype=torch.bfloat16)
    y = _run(x, torch.ones(4, dtype=torch.bfloat16))
    assert not torch.equal(y, x), y
