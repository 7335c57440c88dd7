"""Hugging Face's RoPE, written here from transformers' modeling_rope_utils.py (the functions are named
after HF's) and modeling_llama.py's rotate_half, in float64: the outside formulas the CLI tests build
their data from, independent of pe-suite's own code."""

import math

import numpy as np


def default_inv_freq(base, dim):
    """_compute_default_rope_parameters: 1 / base^(2j/dim)."""
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def get_mscale(scale, mscale=1.0):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_correction_range(base, dim, original, beta_fast, beta_slow, truncate):
    """find_correction_dim / find_correction_range in Python floats (HF's math.log), with
    linear_ramp_factor's nudge when both ends meet."""
    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    return low, (high + 0.001 if low == high else high)


def yarn_inv_freq(base, dim, factor, original, truncate=True, beta_fast=32.0, beta_slow=1.0):
    """_compute_yarn_parameters: find_correction_range, linear_ramp_factor, the blend of both."""
    low, high = yarn_correction_range(base, dim, original, beta_fast, beta_slow, truncate)
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    return (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (1.0 / pos_freqs) * extrapolation


def llama3_inv_freq(base, dim, factor, original, low_freq_factor=1.0, high_freq_factor=4.0,
                    wavelength=lambda w: 2 * math.pi / w):
    """_compute_llama3_parameters (`wavelength` is 2π/θ there; a test may substitute a mistake)."""
    inv_freq = default_inv_freq(base, dim)
    low_wavelen, high_wavelen = original / low_freq_factor, original / high_freq_factor
    wavelen = wavelength(inv_freq)
    llama = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    with np.errstate(divide="ignore", invalid="ignore"):  # low == high: 0/0 where no pair uses it
        smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * llama / factor + smooth * llama
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, llama)


def longrope_inv_freq(base, dim, short_factor, long_factor, original, seq_len):
    """_compute_longrope_parameters: the long list once seq_len > original_max_position_embeddings."""
    ext = np.asarray(long_factor if seq_len and seq_len > original else short_factor, dtype=np.float64)
    return 1.0 / (ext * base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def longrope_attention(factor, original):
    return 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))


def dynamic_inv_freq(base, dim, factor, original, seq_len):
    """_compute_dynamic_ntk_parameters: base·(s·n/L - (s - 1))^(d/(d-2)), n = max(seq_len, L)."""
    n = max(seq_len, original)
    return default_inv_freq(base * ((factor * n / original) - (factor - 1)) ** (dim / (dim - 2)), dim)


def rope(x, positions, inv_freq, rotary, attention=1.0, interleaved=False):
    """x [T, H, D]: rotate_half on the first `rotary` channels (HF's half-split pairs), or the pairs (2j, 2j+1)
    with `interleaved` (GPT-J); the rest pass through. cos and sin carry the attention factor, as HF's rotary
    embedding returns them."""
    freqs = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb)[:, None, :] * attention, np.sin(emb)[:, None, :] * attention
    r, rest = np.asarray(x[..., :rotary], dtype=np.float64), x[..., rotary:]
    if interleaved:
        r = np.concatenate([r[..., 0::2], r[..., 1::2]], axis=-1)
    rot = np.concatenate([-r[..., rotary // 2:], r[..., :rotary // 2]], axis=-1)
    y = r * cos + rot * sin
    if interleaved:
        y = np.stack([y[..., :rotary // 2], y[..., rotary // 2:]], axis=-1).reshape(r.shape)
    return np.concatenate([y, rest], axis=-1)


# The same in float32 step by step, as HF's PyTorch code runs on float32 tensors (every product and sum
# rounded, no FMA; sin/cos of the float32 angle evaluated in float64 and rounded, as a correctly rounding
# libm would). What engines' tests compare against; pe-suite's default budget must accept it.
F32 = np.float32


def default_inv_freq_f32(base, dim):
    """1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))."""
    return (F32(1.0) / np.power(F32(base), np.arange(0, dim, 2).astype(F32) / F32(dim), dtype=F32)).astype(F32)


def llama3_inv_freq_f32(base, dim, factor, original, low_freq_factor=1.0, high_freq_factor=4.0):
    inv = default_inv_freq_f32(base, dim)
    low_wavelen, high_wavelen = original / low_freq_factor, original / high_freq_factor
    wavelen = (F32(2 * math.pi) / inv).astype(F32)
    scaled = np.where(wavelen > low_wavelen, inv / F32(factor), inv).astype(F32)
    with np.errstate(divide="ignore", invalid="ignore"):  # low == high: 0/0 where no pair uses it
        smooth = ((F32(original) / wavelen - F32(low_freq_factor)) / F32(high_freq_factor - low_freq_factor)).astype(F32)
    smoothed = ((F32(1) - smooth) * scaled / F32(factor) + smooth * scaled).astype(F32)
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, scaled).astype(F32)


def yarn_inv_freq_f32(base, dim, factor, original, beta_fast=32.0, beta_slow=1.0, truncate=True):
    """The correction range in Python floats (HF's math.log), the frequencies in float32."""
    low, high = yarn_correction_range(base, dim, original, beta_fast, beta_slow, truncate)
    pos_freqs = np.power(F32(base), np.arange(0, dim, 2).astype(F32) / F32(dim), dtype=F32)
    extrapolation, interpolation = (F32(1) / pos_freqs).astype(F32), (F32(1) / (F32(factor) * pos_freqs)).astype(F32)
    ramp = np.clip((np.arange(dim // 2, dtype=F32) - F32(low)) / F32(high - low), 0, 1).astype(F32)
    extrapolation_factor = (F32(1) - ramp).astype(F32)
    return (interpolation * (F32(1) - extrapolation_factor) + extrapolation * extrapolation_factor).astype(F32)


def longrope_inv_freq_f32(base, dim, ext_factors):
    shape = np.arange(0, dim, 2).astype(F32) / F32(dim)
    return (F32(1) / (np.asarray(ext_factors, dtype=F32) * np.power(F32(base), shape, dtype=F32))).astype(F32)


def dynamic_inv_freq_f32(base, dim, factor, original, seq_len):
    n = max(seq_len, original)
    return default_inv_freq_f32(base * ((factor * n / original) - (factor - 1)) ** (dim / (dim - 2)), dim)


def rope_f32(x, positions, inv_freq, rotary_dim=None, attention=1.0, interleaved=False):
    """x [T, H, D]: freqs = position * inv_freq in float32, cos and sin times the attention factor in
    float32; rotate_half pairs (j, j + r/2), or (2j, 2j+1) with `interleaved` (view_as_complex)."""
    x = np.asarray(x, dtype=F32)
    r = rotary_dim or x.shape[-1]
    freqs = (np.asarray(positions, dtype=F32)[:, None] * inv_freq[None, :]).astype(F32)
    cos = (np.cos(freqs.astype(np.float64)).astype(F32) * F32(attention)).astype(F32)[:, None, :]
    sin = (np.sin(freqs.astype(np.float64)).astype(F32) * F32(attention)).astype(F32)[:, None, :]
    y = x.copy()
    if interleaved:
        a, b = x[..., 0:r:2], x[..., 1:r:2]
        y[..., 0:r:2], y[..., 1:r:2] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x[..., :r // 2], x[..., r // 2:r]
        y[..., :r // 2], y[..., r // 2:r] = a * cos - b * sin, b * cos + a * sin
    return y


def mrope_freqs_f32(pos3, base, d, section, interleaved):
    """Qwen2.5-VL's (sectioned: apply_multimodal_rotary_pos_emb, chunks of mrope_section * 2 from axes t, h, w)
    or Qwen3-VL's (interleaved: apply_interleaved_mrope, h at pairs 1, 4, ..., w at 2, 5, ...) text M-RoPE
    angles [T, d/2] in float32: freqs = inv_freq @ position_ids per axis, each pair's from its axis. pos3 [3, T]."""
    freqs = (pos3.astype(F32)[:, :, None] * default_inv_freq_f32(base, d)[None, None, :]).astype(F32)
    if interleaved:
        f = freqs[0].copy()
        for axis in (1, 2):
            f[:, axis:section[axis] * 3:3] = freqs[axis][:, axis:section[axis] * 3:3]
        return f
    return freqs[np.repeat([0, 1, 2], section), :, np.arange(d // 2)].T


def mrope_f32(x, pos3, base, section, interleaved):
    """The M-RoPE of mrope_freqs_f32 in float32, rotate_half over the head."""
    d = x.shape[-1]
    f = mrope_freqs_f32(pos3, base, d, section, interleaved)
    cos = np.cos(np.concatenate([f, f], axis=-1).astype(np.float64)).astype(F32)[:, None, :]
    sin = np.sin(np.concatenate([f, f], axis=-1).astype(np.float64)).astype(F32)[:, None, :]
    x = np.asarray(x, dtype=F32)
    return x * cos + np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1) * sin


def qwen_vl_positions(start):
    """HF get_rope_index for one sequence: text, a 4x6 image (after the 2x2 merge), text, a 6x4 image,
    text, the first text token at `start`. Text tokens have t = h = w; an image's tokens share t and count
    rows (h) and columns (w) from the position after the text before it; the text after an image continues
    at max + 1."""
    t, h, w = [], [], []
    nxt = start
    for kind, a, b in [("text", 5, 0), ("image", 4, 6), ("text", 3, 0), ("image", 6, 4), ("text", 4, 0)]:
        if kind == "text":
            for k in range(a):
                t.append(nxt + k), h.append(nxt + k), w.append(nxt + k)
            nxt += a
        else:
            for r in range(a):
                for c in range(b):
                    t.append(nxt), h.append(nxt + r), w.append(nxt + c)
            nxt += max(a, b)
    return np.array([t, h, w], dtype=np.int64)
