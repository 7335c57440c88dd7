"""diffusers: get_timestep_embedding (every switch drawn: flip_sin_to_cos, downscale_freq_shift, scale, max_period,
odd widths), get_2d_sincos_pos_embed and get_3d_sincos_pos_embed on grids, and Flux's FluxPosEmbed with
apply_rotary_emb (one frequency ladder per axis, interleaved pairs) on (frame, row, column) positions."""
from engines.row import Row
from engines.rows._adapters import from_bhsd, to_bhsd, torch_dtype


def timestep_embedding():
    from diffusers.models.embeddings import get_timestep_embedding

    def fn(positions, config):
        table = get_timestep_embedding(positions, config["dim"], flip_sin_to_cos=config["flip_sin_to_cos"],
                                       downscale_freq_shift=config["downscale_freq_shift"], scale=config["scale"],
                                       max_period=config["base"])
        return table.to(torch_dtype(config["dtype"]))  # a pipeline casts it to the model's dtype

    return fn


def sincos_grid():
    from diffusers.models.embeddings import get_2d_sincos_pos_embed, get_3d_sincos_pos_embed

    def fn(grid, config):
        if len(grid) == 2:
            table = get_2d_sincos_pos_embed(config["dim"], tuple(grid), cls_token=config["extra_tokens"] > 0,
                                            extra_tokens=config["extra_tokens"],
                                            interpolation_scale=config["interpolation_scale"],
                                            base_size=config["base_size"], output_type="pt")
        else:  # spatial_size is (width, height); [T, H*W, D] flattened to the cells
            t, h, w = grid
            table = get_3d_sincos_pos_embed(config["dim"], (w, h), t,
                                            spatial_interpolation_scale=config["interpolation_scale"],
                                            temporal_interpolation_scale=config["temporal_interpolation_scale"],
                                            output_type="pt").reshape(t * h * w, -1)
        return table.to(torch_dtype(config["dtype"]))

    return fn


def flux_rope():
    from diffusers.models.embeddings import apply_rotary_emb
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    def fn(x, positions, config):
        cos, sin = FluxPosEmbed(theta=config["rope_theta"], axes_dim=config["rope_axes_dim"])(positions.T)
        return from_bhsd(apply_rotary_emb(to_bhsd(x), (cos, sin), use_real=True, use_real_unbind_dim=-1))

    return fn


TIMESTEP = {"layout": "concatenated", "flip_sin_to_cos": "drawn", "downscale_freq_shift": "drawn", "scale": "drawn",
            "odd_dims": True, "scenarios": ("timesteps", "prefill", "decode", "chunked"), "max_position": 1 << 14}
# get_2d_sincos_pos_embed divides by base_size (no MAE coordinates: None is not accepted): DiT's 16
GRID = {"layout": "concatenated", "scenarios": ("grid",), "grids": (2, 3), "base_size": 16.0}
ROWS = [Row("diffusers", "get_timestep_embedding", "sinusoidal", "timestep", dtype, timestep_embedding, TIMESTEP)
        for dtype in ("float32", "bfloat16")]
ROWS += [Row("diffusers", "get_2d/3d_sincos_pos_embed", "sinusoidal", "grid", dtype, sincos_grid, GRID)
         for dtype in ("float32", "bfloat16")]
ROWS += [Row("diffusers", "FluxPosEmbed + apply_rotary_emb", "rope", "axial", dtype, flux_rope,
             {"forms": ("axial",), "rope_types": ("default",), "layout": "interleaved", "max_position": 1 << 16})
         for dtype in ("float32", "bfloat16")]
