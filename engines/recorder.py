"""What a row's run reached, measured on the calls the driver made: the worst error over budget of any call (the
check engine's full report of that call, the same check verify_* judged it by) and the largest position given."""
import numpy as np

import pe_suite
from pe_suite import verify as _verify


def _ratio(report):
    worst = report.worst
    if not worst:
        return 0.0
    w = worst[0]
    if w.get("abs_error") is None:
        return float("inf")
    return w["abs_error"] / w["budget"] if w["budget"] else (0.0 if w["abs_error"] == 0 else float("inf"))


class Recorder:
    """Wraps a kernel: each call is passed through unchanged, then checked once more for its worst ratio."""

    def __init__(self, encoding, fn, layout=None):
        self.encoding, self.fn, self.layout = encoding, fn, layout
        self.worst, self.max_position, self.calls = 0.0, 0, 0
        # verify's failure file key is the kernel's name: keep the engine's, not the recorder's
        self.__module__ = getattr(fn, "__module__", "?")
        self.__qualname__ = getattr(fn, "__qualname__", type(fn).__name__)

    def __call__(self, *args):
        if self.encoding == "rope":
            x, positions, config = args
            x_before = x.detach().clone() if hasattr(x, "detach") else np.array(x, copy=True)
            y = self.fn(*args)
            self._note(lambda: pe_suite.check_rope(x_before, y, positions, hf_config=config, layout=self.layout),
                       positions)
        elif self.encoding == "sinusoidal":
            positions, config = args
            y = self.fn(*args)
            grid = isinstance(positions, tuple)
            keywords = _verify._sinusoidal_keywords(config)
            self._note(lambda: pe_suite.check_sinusoidal(y, None if grid else positions, **keywords),
                       [max(positions) - 1] if grid else positions)
        else:
            (config,) = args
            y = self.fn(*args)
            self._note(lambda: pe_suite.check_alibi(y, max_bias=config["max_bias"]), [0])
        return y

    def _note(self, check, positions):
        self.calls += 1
        p = np.asarray(positions.detach().cpu() if hasattr(positions, "detach") else positions, dtype=np.float64)
        if p.size:
            self.max_position = max(self.max_position, float(np.max(p)))
        try:
            self.worst = max(self.worst, _ratio(check()))
        except Exception:  # the driver's own check of this call names what is wrong with it
            pass
