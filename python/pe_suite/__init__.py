"""Positional encodings checked against an exact reference.

The native part (pe_suite._native, the check engine under `pe-suite check`): correctly rounded goldens
(reference_sinusoidal, reference_rope, rope_cos_sin, reference_alibi) and checks with a named diagnosis
(check_rope, check_sinusoidal, check_alibi and their assert_*_close forms). On top of it, in Python:
check_rope_cache, a fused RoPE + paged KV-cache append checked from the cache before and after (kv_cache.py);
t5_buckets and check_t5, T5's relative position buckets exact and an engine's buckets or bias checked (t5.py);
check_rope_fp8, RoPE quantized to e4m3fn or e5m2 against the exact rotation's rounding (fp8.py);
check_scores, attention's pre-softmax scores with ALiBi inside, alignment and query offset named (scores.py);
verify_rope, verify_sinusoidal and verify_alibi, one driver that calls the kernel on drawn cases, shrinks a
failure to its smallest case and explains it (pe_suite.verify); pe_suite.strategies, the same draws for
Hypothesis (imported on its own: it needs python3-hypothesis)."""
from ._native import *  # noqa: F401,F403
from ._native import __version__  # noqa: F401
from . import _native
from ._keywords import checked as _checked
from .fp8 import Fp8Report, check_rope_fp8  # noqa: F401
from .kv_cache import CacheReport, check_rope_cache  # noqa: F401
from .scores import ScoresReport, check_scores  # noqa: F401
from .t5 import T5Report, check_t5  # noqa: F401
from .t5 import buckets as t5_buckets  # noqa: F401
from .verify import verify_alibi, verify_rope, verify_sinusoidal  # noqa: F401

# Every native function with its keywords checked by name (_keywords.py).
for _name in ("check_rope", "check_sinusoidal", "check_alibi", "assert_rope_close", "assert_sinusoidal_close",
              "assert_alibi_close", "reference_rope", "reference_sinusoidal", "reference_alibi", "rope_cos_sin"):
    globals()[_name] = _checked(getattr(_native, _name))
del _name
