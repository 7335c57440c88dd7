"""One row of the conformance matrix: an engine's own function or module, as the engine ships it, driven by one of
pe-suite's verify_* drivers in one dtype. A row's `kernel` adapts the engine's calling convention to the driver's
(fn(x, positions, config) -> y for RoPE, fn(positions, config) -> table for sinusoids, fn(config) -> slopes for
ALiBi) without computing anything itself: every value comes out of the engine's code."""
import dataclasses
from typing import Callable

from pe_suite import config_space

from engines import matrix

# Every head size verify_rope draws but 2, for engines that cannot take 2 (their rows say so).
HEAD_DIMS_ABOVE_2 = tuple(d for d in config_space.HEAD_DIMS if d > 2)


@dataclasses.dataclass(frozen=True)
class Row:
    engine: str  # the PyPI distribution whose code is checked (its version is read from the environment)
    what: str  # the function or module called, as the engine names it
    encoding: str  # "rope", "sinusoidal" or "alibi": which verify_* drives it
    variant: str  # the rope type, the sinusoid's kind ("timestep", "grid"), or "-"
    dtype: str  # "float32", "bfloat16", "float16"
    kernel: Callable  # () -> the function verify_* calls (imports the engine: a row of a missing engine is skipped)
    verify: dict = dataclasses.field(default_factory=dict)  # the verify_* keywords besides the dtype
    examples: int = 60
    requires: tuple = ()  # further distributions the row imports
    note: str = ""  # what a failure of this row was measured to come from, shown beside it in docs/engines.md

    @property
    def key(self):
        """The row's key as its record's (matrix.key): engine | what | encoding | variant | dtype."""
        return matrix.key({k: getattr(self, k) for k in matrix.KEY})
