"""MLX (CPU build): mlx.core.fast.rope, a compiled kernel, in both layouts (traditional=True: interleaved), linear
scaling as its scale = 1/factor. It rotates a run from an offset: each token is its own call at its position."""
from engines.row import Row


def rope(traditional):
    def kernel():
        import mlx.core as mx
        import numpy as np
        import torch

        def fn(x, positions, config):
            d, dtype = config["head_dim"], {torch.float32: mx.float32, torch.bfloat16: mx.bfloat16}[x.dtype]
            scaling = config.get("rope_scaling") or {}
            rows = []
            for t, p in enumerate(positions.tolist()):  # x's values are exact in float32, then in its own type
                a = mx.array(x[t].float().numpy()[:, None, :]).astype(dtype)
                r = mx.fast.rope(a, d, traditional=traditional, base=config["rope_theta"],
                                 scale=1.0 / scaling.get("factor", 1.0), offset=p)
                rows.append(np.array(r.astype(mx.float32))[:, 0, :])
            return torch.from_numpy(np.stack(rows)).to(x.dtype)

        return fn

    return kernel


ROWS = [Row("mlx", f"mlx.core.fast.rope(traditional={traditional})", "rope", t, dtype, rope(traditional),
            {"rope_types": (t,), "layout": "interleaved" if traditional else "halfsplit"}, requires=("torch",))
        for traditional in (False, True) for t in ("default", "linear") for dtype in ("float32", "bfloat16")]
