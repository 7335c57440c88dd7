"""x-transformers: RotaryEmbedding (interpolation_factor: linear scaling) with apply_rotary_pos_emb, interleaved
pairs; AlibiPositionalBias's slopes."""
from engines.row import HEAD_DIMS_ABOVE_2, Row
from engines.rows._adapters import from_bhsd, to_bhsd, torch_dtype


def rope():
    from x_transformers.x_transformers import RotaryEmbedding, apply_rotary_pos_emb

    def fn(x, positions, config):
        scaling = config.get("rope_scaling") or {}
        module = RotaryEmbedding(config["head_dim"], base=config["rope_theta"],
                                 interpolation_factor=scaling.get("factor", 1.0))
        freqs, scale = module(positions)
        return from_bhsd(apply_rotary_pos_emb(to_bhsd(x), freqs, scale))

    return fn


def alibi():
    from x_transformers.x_transformers import AlibiPositionalBias

    def fn(config):
        slopes = AlibiPositionalBias(heads=config["num_attention_heads"]).slopes.flatten()
        return slopes.to(torch_dtype(config["dtype"]))

    return fn


# head_dim 2 raises (HEAD_DIM_2): the rows draw every other head size, and one row asks head_dim 2 alone.
HEAD_DIM_2 = ("Measured: `RotaryEmbedding(2)` raises ZeroDivisionError: its constructor computes "
              "`base *= base_rescale_factor ** (dim / (dim - 2))` even when the factor is 1. No model uses head_dim 2.")
ROWS = [Row("x-transformers", "RotaryEmbedding + apply_rotary_pos_emb", "rope", t, dtype, rope,
            {"rope_types": (t,), "layout": "interleaved", "head_dims": HEAD_DIMS_ABOVE_2})
        for t in ("default", "linear") for dtype in ("float32", "bfloat16")]
ROWS += [Row("x-transformers", "RotaryEmbedding + apply_rotary_pos_emb", "rope", "default, head_dim 2", "float32",
             rope, {"rope_types": ("default",), "layout": "interleaved", "head_dims": (2,)}, examples=10,
             note=HEAD_DIM_2)]
ROWS += [Row("x-transformers", "AlibiPositionalBias", "alibi", "slopes", dtype, alibi, {"max_bias": 8.0})
         for dtype in ("float32", "bfloat16")]
