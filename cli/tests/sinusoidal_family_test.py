#!/usr/bin/env python3
"""`pe-suite check --family sinusoidal` with diffusers' switches, against tables built here from the published
definitions (diffusers 0.31 models/embeddings.py), not from pe-suite's code:

  get_timestep_embedding   float32: exponent = -ln(max_period)*arange(half) / (half - downscale_freq_shift),
                           emb = t[:, None]*exp(exponent), scale*emb, cat[sin, cos], flip -> cat[cos, sin]
  get_2d_sincos_pos_embed  float32 coordinates arange(n)/(n/base_size)/interpolation_scale, meshgrid(w, h):
                           the first half of the channels encodes w, float64 omega = 1/10000**(i/(D/4))

  get_3d_sincos_pos_embed  [temporal D/4 | w 3D/8 | h 3D/8], coordinates arange(n)/interpolation_scale (t: over
                           temporal_interpolation_scale), rows t*H*W + h*W + w

Correct tables pass with the flags that describe them (real timesteps from a float .npy, a 12x20 grid, a
UNet's config.json); the same tables with one flag wrong fail, the diagnosis naming the flag's true value;
bad flags exit 2 naming the flag. A table written [dim, rows] and read as [rows, dim] is named "rows and channels
exchanged"; a video table checked with the wrong temporal_interpolation_scale is named on its t axis alone.

    sinusoidal_family_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""
import json
import math

import numpy as np
from cli_cases import finish, judge, judge_bad, setup

PE, WORK, _ = setup()


def timestep_embedding(t, dim, flip, shift):
    half = dim // 2
    exponent = np.float32(-math.log(10000)) * np.arange(half, dtype=np.float32) / np.float32(half - shift)
    emb = t.astype(np.float32)[:, None] * np.exp(exponent)[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1)
    return np.concatenate([emb[:, half:], emb[:, :half]], axis=-1) if flip else emb


def one_axis(d, pos):
    omega = 1.0 / 10000 ** (np.arange(d // 2, dtype=np.float64) / (d / 2.0))
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def grid_3d(embed_dim, t, h, w, spatial_scale, temporal_scale):
    grid = np.meshgrid(np.arange(w, dtype=np.float32) / spatial_scale, np.arange(h, dtype=np.float32) / spatial_scale)
    spatial = np.concatenate([one_axis(3 * embed_dim // 8, grid[0]), one_axis(3 * embed_dim // 8, grid[1])], axis=1)
    temporal = one_axis(embed_dim // 4, np.arange(t, dtype=np.float32) / temporal_scale)
    return np.concatenate([np.repeat(temporal[:, None, :], h * w, axis=1),
                           np.repeat(spatial[None, :, :], t, axis=0)], axis=-1).reshape(t * h * w, embed_dim)


def grid_2d(embed_dim, h, w):
    one = one_axis
    grid = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    return np.concatenate([one(embed_dim // 2, grid[0]), one(embed_dim // 2, grid[1])], axis=1)


t = np.array([0.0, 0.5, 17.25, 250.0, 731.125, 999.875], dtype=np.float32)
np.save(WORK / "t.npy", t)
sd = WORK / "sd_timesteps.npy"
np.save(sd, timestep_embedding(t, 320, flip=True, shift=0).astype(np.float32))
base = [PE, "check", str(sd), "--family", "sinusoidal", "--positions-file", str(WORK / "t.npy"),
        "--layout", "concatenated"]
judge("timesteps_sd", base + ["--flip-sin-to-cos", "--downscale-freq-shift", "0"], True)
judge("timesteps_sd_unflipped", base + ["--downscale-freq-shift", "0"], False, "flip_sin_to_cos true (given: false)")
judge("timesteps_sd_shift_1", base + ["--flip-sin-to-cos", "--downscale-freq-shift", "1"], False,
      "downscale_freq_shift 0 (given: 1)")
config = WORK / "unet_config.json"
config.write_text(json.dumps({"_class_name": "UNet2DConditionModel", "flip_sin_to_cos": True, "freq_shift": 0}))
judge("timesteps_sd_config", base + ["--hf-config", str(config)], True)

grid = WORK / "grid_12x20.npy"
np.save(grid, grid_2d(64, 12, 20).astype(np.float32))
judge("grid_12x20", [PE, "check", str(grid), "--family", "sinusoidal", "--grid", "12,20"], True)
judge("grid_12x20_as_20x12", [PE, "check", str(grid), "--family", "sinusoidal", "--grid", "20,12"], False,
      "grid 12x20 (given: 20x12): H and W swapped")

transposed = WORK / "grid_12x20_transposed.npy"  # a channel-major kernel's [dim, rows], read as [rows, dim]
np.save(transposed, np.ascontiguousarray(grid_2d(64, 12, 20).astype(np.float32).T).reshape(240, 64))
judge("grid_12x20_transposed", [PE, "check", str(transposed), "--family", "sinusoidal", "--grid", "12,20"], False,
      "rows and channels exchanged: the data is [dim 64, rows 240]")
video = WORK / "cogvideox_8x6x10.npy"
np.save(video, grid_3d(64, 8, 6, 10, 1.875, 1.0).astype(np.float32))
video_args = [PE, "check", str(video), "--family", "sinusoidal", "--grid", "8,6,10", "--interpolation-scale", "1.875",
              "--layout", "concatenated"]
judge("cogvideox", video_args, True)
judge("cogvideox_temporal_scale_2", video_args + ["--temporal-interpolation-scale", "2"], False,
      "axis t: coordinates x2 read back: temporal_interpolation_scale 1 (given: 2)")

judge_bad("grid_with_positions", [PE, "check", str(grid), "--family", "sinusoidal", "--grid", "12,20",
                                  "--positions", "0:240"], ["--grid", "positions"])
judge_bad("grid_zero_size", [PE, "check", str(grid), "--family", "sinusoidal", "--grid", "0,5"],
          ["--grid: grid sizes must be in [1, 2^24], got 0"])
judge_bad("grid_malformed", [PE, "check", str(grid), "--family", "sinusoidal", "--grid", "12"], ["--grid"])
judge_bad("shift_past_half", base + ["--downscale-freq-shift", "500"], ["--downscale-freq-shift"])
judge_bad("base_size_without_grid", base + ["--base-size", "16"], ["--base-size", "--grid"])
judge_bad("switch_on_rope", [PE, "check", "--family", "rope", "--input", str(grid), "--output", str(grid),
                             "--positions", "0:240", "--flip-sin-to-cos"], ["--flip-sin-to-cos", "sinusoidal"])
finish("sinusoidal family")
