"""What a row's run reached, measured on the calls the driver made: the worst error over budget of any call (each
call checked again, whole report, by the check verify_* judged it with: verify's own _check for RoPE, sinusoids and
ALiBi) and the largest position given. A call it cannot check is counted, never taken for a perfect one."""
import copy
import math

import numpy as np

from pe_suite import verify as _verify
from pe_suite import _sinusoidal_space as _sw


def _ratio(report):
    worst = report.worst
    if not worst:
        return 0.0
    w = worst[0]
    if w.get("abs_error") is None or w.get("budget") is None:
        return math.inf  # a NaN or infinite output
    return w["abs_error"] / w["budget"] if w["budget"] else (0.0 if w["abs_error"] == 0 else math.inf)


def _numbers(a):
    return np.asarray(a.detach().cpu() if hasattr(a, "detach") else a)


class Recorder:
    """Wraps a kernel: each call is passed through unchanged (its own copies of x and config, which an engine may
    write into), then checked once more for its worst ratio. `verify` holds the row's verify_* keywords."""

    def __init__(self, encoding, fn, verify):
        self.encoding, self.fn, self.verify = encoding, fn, verify
        self.worst, self.max_position, self.calls, self.unchecked = 0.0, 0.0, 0, 0
        # verify's failure file key is the kernel's name: keep the engine's, not the recorder's
        self.__module__ = getattr(fn, "__module__", "?")
        self.__qualname__ = getattr(fn, "__qualname__", type(fn).__name__)

    def __call__(self, *args):
        if self.encoding == "rope":
            x, positions, config = args
            x_before = x.detach().clone() if hasattr(x, "detach") else np.array(x, copy=True)
            y = self.fn(x, positions, copy.deepcopy(config))
            case = {"config": config, "positions": _numbers(positions),
                    "layout": self.verify.get("layout", "halfsplit"), "contract": self.verify.get("contract")}
            self._note(lambda: _verify._check(case, x_before, y), case["positions"])
        elif self.encoding == "sinusoidal":
            positions, config = args
            y = self.fn(positions, copy.deepcopy(config))
            grid = isinstance(positions, tuple)
            p = None if grid else _numbers(positions)
            scenario = _sw.GRID if grid else _sw.TIMESTEPS if p.dtype.kind == "f" else "prefill"
            case = {"config": config, "positions": [] if grid else p, "scenario": scenario}
            self._note(lambda: _verify._check_sinusoidal(case, y), [max(positions) - 1] if grid else p)
        else:
            (config,) = args
            y = self.fn(copy.deepcopy(config))
            case = {"config": config, "alibi_slopes": self.verify.get("alibi_slopes", "interpolated")}
            self._note(lambda: _verify._check_alibi(case, y), [])
        return y

    def _note(self, check, positions):
        self.calls += 1
        p = np.asarray(positions, dtype=np.float64)
        if p.size:
            self.max_position = max(self.max_position, float(np.max(p)))
        try:
            self.worst = max(self.worst, _ratio(check()))
        except Exception:  # the driver's own check of this call names what is wrong with it; here it is counted
            self.unchecked += 1
