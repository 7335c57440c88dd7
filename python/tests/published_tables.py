"""Published sinusoidal tables transcribed in numpy from their own code, not from pe-suite's (issue 49):
diffusers' models/embeddings.py (get_timestep_embedding, get_2d_sincos_pos_embed, get_3d_sincos_pos_embed,
v0.31), openai/whisper's model.py `sinusoids`, fairseq's SinusoidalPositionalEmbedding.get_embedding. torch's
float32 arithmetic is numpy's float32 here: a float32 tensor times a Python float computes in float32 with the
scalar rounded to float32 first, as numpy does."""
import math

import numpy as np


def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1, scale=1,
                           max_period=10000, dt=np.float32):
    """diffusers.models.embeddings.get_timestep_embedding, line by line, in dtype dt (float32 as published)."""
    half_dim = embedding_dim // 2
    exponent = dt(-math.log(max_period)) * np.arange(0, half_dim, dtype=dt)
    exponent = exponent / dt(half_dim - downscale_freq_shift)
    emb = np.exp(exponent)
    emb = np.asarray(timesteps).astype(dt)[:, None] * emb[None, :]
    emb = dt(scale) * emb
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    if flip_sin_to_cos:
        emb = np.concatenate([emb[:, half_dim:], emb[:, :half_dim]], axis=-1)
    if embedding_dim % 2 == 1:
        emb = np.pad(emb, ((0, 0), (0, 1)))
    return emb.astype(dt)


def whisper_sinusoids(length, channels, max_timescale=10000, dt=np.float32):
    """openai/whisper model.py `sinusoids`: log_timescale_increment in float64, the rest in the tensor type."""
    increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = np.exp(dt(-increment) * np.arange(channels // 2, dtype=dt))
    scaled_time = np.arange(length, dtype=dt)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)


def fairseq_embedding(num_embeddings, embedding_dim, padding_idx=None, dt=np.float32):
    """fairseq SinusoidalPositionalEmbedding.get_embedding."""
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=dt) * dt(-emb))
    emb = np.arange(num_embeddings, dtype=dt)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1)
    if embedding_dim % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1), dtype=dt)], axis=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


def sincos_1d_from_grid(embed_dim, pos):
    """diffusers get_1d_sincos_pos_embed_from_grid (MAE's util/pos_embed.py): float64 omega."""
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000**omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def sincos_2d_from_grid(embed_dim, grid, swap_halves=False):
    emb_h = sincos_1d_from_grid(embed_dim // 2, grid[0])  # diffusers' name; grid[0] holds w
    emb_w = sincos_1d_from_grid(embed_dim // 2, grid[1])
    return np.concatenate([emb_w, emb_h] if swap_halves else [emb_h, emb_w], axis=1)


def sincos_2d(embed_dim, grid_size, extra_tokens=0, interpolation_scale=1.0, base_size=16, swap_halves=False):
    """diffusers get_2d_sincos_pos_embed (grid_size (H, W); cls_token with extra_tokens). base_size None: MAE's
    util/pos_embed.py coordinates, np.arange(n) with no division by n / base_size (MAE's grids are square, its
    extra token one cls token; the rest as diffusers')."""
    if base_size is None:
        grid_h = np.arange(grid_size[0], dtype=np.float32) / interpolation_scale
        grid_w = np.arange(grid_size[1], dtype=np.float32) / interpolation_scale
    else:
        grid_h = np.arange(grid_size[0], dtype=np.float32) / (grid_size[0] / base_size) / interpolation_scale
        grid_w = np.arange(grid_size[1], dtype=np.float32) / (grid_size[1] / base_size) / interpolation_scale
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0).reshape([2, 1, grid_size[1], grid_size[0]])
    pos_embed = sincos_2d_from_grid(embed_dim, grid, swap_halves)
    if extra_tokens > 0:
        pos_embed = np.concatenate([np.zeros([extra_tokens, embed_dim]), pos_embed], axis=0)
    return pos_embed


def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False, extra_tokens=0, interpolation_scale=1.0,
                            base_size=16):
    """diffusers get_2d_sincos_pos_embed's own signature: an int grid_size is square; the extra tokens' zero rows
    only with cls_token."""
    if isinstance(grid_size, int):
        grid_size = (grid_size, grid_size)
    return sincos_2d(embed_dim, grid_size, extra_tokens if cls_token else 0, interpolation_scale, base_size)


def sincos_3d(embed_dim, spatial_size, temporal_size, spatial_interpolation_scale=1.0,
              temporal_interpolation_scale=1.0, swap_halves=False):
    """diffusers get_3d_sincos_pos_embed (CogVideoX): spatial_size is (W, H); [T, H*W, embed_dim]."""
    embed_dim_spatial = 3 * embed_dim // 4
    embed_dim_temporal = embed_dim // 4
    grid_h = np.arange(spatial_size[1], dtype=np.float32) / spatial_interpolation_scale
    grid_w = np.arange(spatial_size[0], dtype=np.float32) / spatial_interpolation_scale
    grid = np.meshgrid(grid_w, grid_h)
    grid = np.stack(grid, axis=0).reshape([2, 1, spatial_size[1], spatial_size[0]])
    pos_embed_spatial = sincos_2d_from_grid(embed_dim_spatial, grid, swap_halves)
    grid_t = np.arange(temporal_size, dtype=np.float32) / temporal_interpolation_scale
    pos_embed_temporal = sincos_1d_from_grid(embed_dim_temporal, grid_t)
    pos_embed_spatial = np.repeat(pos_embed_spatial[np.newaxis, :, :], temporal_size, axis=0)
    pos_embed_temporal = np.repeat(pos_embed_temporal[:, np.newaxis, :], spatial_size[0] * spatial_size[1], axis=1)
    return np.concatenate([pos_embed_temporal, pos_embed_spatial], axis=-1)
