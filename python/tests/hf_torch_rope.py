"""Hugging Face's RoPE in PyTorch, written here from transformers' modeling_rope_utils.py
(_compute_default_rope_parameters, _compute_llama3_parameters, _compute_yarn_parameters) and
modeling_llama.py (LlamaRotaryEmbedding.forward, rotate_half, apply_rotary_pos_emb): the kernels an
engine's pytest would check, in float32 as HF computes them, independent of pe-suite's code."""

import math

import torch


def default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), 1.0


def llama3_inv_freq(base, dim, factor, low_freq_factor, high_freq_factor, original):
    inv_freq, _ = default_inv_freq(base, dim)
    low_freq_wavelen = original / low_freq_factor
    high_freq_wavelen = original / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama), 1.0


def yarn_inv_freq(base, dim, factor, original, beta_fast=32, beta_slow=1, truncate=True):
    def get_mscale(scale, mscale=1):
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    extrapolation_factor = 1 - ramp
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (1.0 / pos_freqs) * extrapolation_factor
    return inv_freq, get_mscale(factor)


def cos_sin(inv_freq, attention_scaling, position_ids, dtype):
    """LlamaRotaryEmbedding.forward: float32 angles by a matmul, cat(freqs, freqs), cast to x's dtype."""
    inv = inv_freq[None, :, None].float()
    pos = position_ids[None, None, :].float()
    freqs = (inv @ pos).transpose(1, 2)[0]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * attention_scaling).to(dtype), (emb.sin() * attention_scaling).to(dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, cos, sin, rotary_dim=None):
    """apply_rotary_pos_emb on q [heads, tokens, head_dim]; rotary_dim < head_dim: the partial form of
    GPT-NeoX / Phi (the first rotary_dim channels rotated, the rest passed through)."""
    rotary_dim = rotary_dim or q.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    out = (q_rot * cos[None]) + (rotate_half(q_rot) * sin[None])
    return torch.cat((out, q_pass), dim=-1)


def mrope_cos_sin(inv_freq, position_ids, section, dtype, interleaved=False):
    """Qwen2-VL's text M-RoPE (Qwen2VLRotaryEmbedding.forward: inv_freq @ position_ids per axis t, h, w in
    float32) with apply_multimodal_rotary_pos_emb's channel chunks of mrope_section * 2 (one axis each, in
    turn), or Qwen3-VL's apply_interleaved_mrope (h at pairs 1, 4, ..., w at 2, 5, ...). position_ids [3, T]."""
    freqs = (inv_freq[None, :, None].float() @ position_ids[:, None, :].float()).transpose(1, 2)  # [3, T, d/2]
    if interleaved:
        f = freqs[0].clone()
        for axis in (1, 2):
            f[..., axis:section[axis] * 3:3] = freqs[axis][..., axis:section[axis] * 3:3]
        emb = torch.cat((f, f), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)
    emb = torch.cat((freqs, freqs), dim=-1)
    chunks = list(section) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(emb.cos().split(chunks, dim=-1))], dim=-1)
    sin = torch.cat([m[i % 3] for i, m in enumerate(emb.sin().split(chunks, dim=-1))], dim=-1)
    return cos.to(dtype), sin.to(dtype)
