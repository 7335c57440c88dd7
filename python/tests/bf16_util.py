"""bfloat16 in numpy, for tests whose kernels round to it: torch's .to(torch.bfloat16) is round to nearest, ties to
even, on the float32 bits' top half."""
import numpy as np


def bf16(a):
    """a rounded to bfloat16 and back, as float32."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def bf16_bits(a):
    """a rounded to bfloat16, as its 16 bits (pe_suite's dtype="bfloat16" reads them)."""
    return (bf16(a).view(np.uint32) >> 16).astype(np.uint16)
