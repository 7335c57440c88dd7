"""MLX (CPU build): mlx.core.fast.rope, a compiled kernel, in both layouts (traditional=True: interleaved), linear
scaling as its scale = 1/factor. It rotates a run of consecutive positions from an offset: each such run of the
drawn positions is one call."""
from engines.row import Row


def _runs(positions):
    """(first row, rows, first position) of each run of consecutive positions."""
    runs, start = [], 0
    for t in range(1, len(positions) + 1):
        if t == len(positions) or positions[t] != positions[t - 1] + 1:
            runs.append((start, t - start, positions[start]))
            start = t
    return runs


def rope(traditional):
    def kernel():
        import mlx.core as mx
        import numpy as np
        import torch

        def fn(x, positions, config):
            d, dtype = config["head_dim"], {torch.float32: mx.float32, torch.bfloat16: mx.bfloat16}[x.dtype]
            scaling = config.get("rope_scaling") or {}
            out = np.empty(tuple(x.shape), dtype=np.float32)
            for first, n, p in _runs(positions.tolist()):  # x's values are exact in float32, then in its own type
                a = mx.array(x[first:first + n].float().numpy().transpose(1, 0, 2)).astype(dtype)  # [heads, n, d]
                r = mx.fast.rope(a, d, traditional=traditional, base=config["rope_theta"],
                                 scale=1.0 / scaling.get("factor", 1.0), offset=p)
                out[first:first + n] = np.array(r.astype(mx.float32)).transpose(1, 0, 2)
            return torch.from_numpy(out).to(x.dtype)

        return fn

    return kernel


ROWS = [Row("mlx", f"mlx.core.fast.rope(traditional={traditional})", "rope", t, dtype, rope(traditional),
            {"rope_types": (t,), "layout": "interleaved" if traditional else "halfsplit"}, requires=("torch",))
        for traditional in (False, True) for t in ("default", "linear") for dtype in ("float32", "bfloat16")]
