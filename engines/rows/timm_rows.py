"""timm: build_rotary_pos_embed (language-model bands, in_pixels=False, over a 1-D grid of positions) with
apply_rot_embed, in both of its layouts."""
from engines.row import Row


def rope(half):
    def kernel():
        from timm.layers.pos_embed_sincos import apply_rot_embed, build_rotary_pos_embed

        def fn(x, positions, config):
            d = config["head_dim"]
            # num_bands = dim // 4 per axis: one axis of d/2 bands is dim 2d
            sin, cos = build_rotary_pos_embed([int(positions.max()) + 1], dim=2 * d, temperature=config["rope_theta"],
                                              in_pixels=False, rotate_half=half)
            return apply_rot_embed(x, sin[positions][:, None], cos[positions][:, None], half=half)

        return fn

    return kernel


ROWS = [Row("timm", f"build_rotary_pos_embed + apply_rot_embed(half={half})", "rope", "default", dtype, rope(half),
            {"rope_types": ("default",), "layout": "halfsplit" if half else "interleaved", "max_position": 1 << 16})
        for half in (False, True) for dtype in ("float32", "bfloat16")]
