"""HF's RoPE driven by a config dict, in PyTorch, written here from transformers' modeling_rope_utils.py
(ROPE_INIT_FUNCTIONS: _compute_default_rope_parameters, _compute_linear_scaling_rope_parameters,
_compute_dynamic_ntk_parameters, _compute_yarn_parameters, _compute_longrope_parameters,
_compute_llama3_parameters), LlamaRotaryEmbedding.forward (float32 angles by a matmul, cat(freqs, freqs),
the attention scaling, a cast to x's dtype, the dynamic update from max(position_ids) + 1),
apply_rotary_pos_emb (rotate_half, in x's dtype) and Qwen2-VL's multimodal sections: the engine code
verify_rope drives, independent of pe-suite's own (the frequency formulas are hf_torch_rope.py's). `plant` names a mistake to make (the planted bugs)."""
import math

import torch

from hf_torch_rope import default_inv_freq, llama3_inv_freq, rotate_half, yarn_inv_freq


def _dims(config):
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return head_dim, int(head_dim * config.get("partial_rotary_factor", 1.0))


def inv_freq_and_scaling(config, seq_len, plant=None):
    base = 10000.0 if plant == "rope_theta_ignored" else config["rope_theta"]  # a converter's dropped key
    _, dim = _dims(config)
    s = config.get("rope_scaling") or {}
    kind = s.get("rope_type", s.get("type", "default"))
    kind = "default" if kind == "mrope" else kind

    def default(b=base):
        return default_inv_freq(b, dim)[0]

    if kind == "default":
        return default(), 1.0
    if kind == "linear":
        factor = 1.0 if plant == "linear_factor_ignored" else s["factor"]
        return default() / factor, 1.0
    if kind == "dynamic":
        max_pos, factor = config["max_position_embeddings"], s["factor"]
        if plant == "dynamic_never_grows":
            seq_len = max_pos
        seq_len = max(seq_len, max_pos)
        b = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
        return default(b), 1.0
    if kind == "yarn":
        # The factor as given (the ratio max_position_embeddings / original only when absent: HF's
        # standardize_rope_params; 4.5x versions read the ratio even when a factor is given).
        original = s.get("original_max_position_embeddings") or config["max_position_embeddings"]
        factor = s["factor"] if "factor" in s else config["max_position_embeddings"] / original
        inv, mscale = yarn_inv_freq(base, dim, factor, original, s.get("beta_fast") or 32, s.get("beta_slow") or 1,
                                    s.get("truncate", True))
        attention_factor = s.get("attention_factor", mscale)
        return inv, 1.0 if plant == "yarn_attention_factor_dropped" else attention_factor
    if kind == "longrope":
        original = config.get("original_max_position_embeddings", config["max_position_embeddings"])
        factor = config["max_position_embeddings"] / original if "original_max_position_embeddings" in config \
            else s.get("factor", 1.0)
        attention_factor = s.get("attention_factor")
        if attention_factor is None:
            attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
        use_long = seq_len > original
        if plant == "longrope_lists_swapped":
            use_long = not use_long
        ext = torch.tensor(s["long_factor"] if use_long else s["short_factor"], dtype=torch.float32)
        return 1.0 / (ext * base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), attention_factor
    if kind == "llama3":
        low_ff, high_ff = s["low_freq_factor"], s["high_freq_factor"]
        if plant == "llama3_freq_factors_swapped":
            low_ff, high_ff = high_ff, low_ff
        # The example C plugin's planted mistake (examples/plugin_c/llama3_rope.c): Llama-3.1's value written in.
        original = 8192 if plant == "llama3_original_8192" else s["original_max_position_embeddings"]
        return llama3_inv_freq(base, dim, s["factor"], low_ff, high_ff, original)
    if kind == "proportional":  # transformers 5's _compute_proportional_rope_parameters (Gemma 4)
        angles = int(s.get("partial_rotary_factor", 1.0) * dim // 2)
        if plant == "proportional_as_partial":  # HF's partial rotary instead: the exponent over the rotated dim
            return default_inv_freq(base, 2 * angles)[0].tolist() + [0.0] * (dim // 2 - angles), 1.0
        rotated = 1.0 / (base ** (torch.arange(0, 2 * angles, 2, dtype=torch.int64).float() / dim))
        inv = torch.cat((rotated, torch.zeros(dim // 2 - angles, dtype=torch.float32)))
        return inv / s.get("factor", 1.0), 1.0
    raise ValueError(f"rope_type {kind}")


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def hf_rope(x, positions, config, plant=None, layout="halfsplit", rule=None):
    """y = RoPE(x) as HF computes it: x [tokens, heads, head_dim], positions [tokens] or [3, tokens]; rule: another
    engine's inv_freq_and_scaling (vllm_rope_config.py's)."""
    head_dim, rotary = _dims(config)
    s = config.get("rope_scaling") or {}
    if plant == "offset_ignored":  # every call's positions from 0, as if each call were a prefill
        positions = positions - positions.min(dim=-1, keepdim=True).values
    if plant == "packed_restart_ignored":  # positions counted on from the first token of the batch
        positions = positions[..., :1] + torch.arange(positions.shape[-1])
    seq_len = int(positions.max()) + 1
    inv, scaling = (rule or inv_freq_and_scaling)(config, seq_len, plant)
    inv = torch.as_tensor(inv, dtype=torch.float32)
    pos = positions.float()
    if pos.dim() == 1:
        freqs = pos[:, None] * inv[None, :] if plant == "angles_by_product" else \
            (inv[None, :, None].float() @ pos[None, None, :]).transpose(1, 2)[0]
    else:  # M-RoPE: each axis's angles, the pairs in sections taken from t, h, w in turn
        section = list(s["mrope_section"])
        if plant == "mrope_sections_reversed":
            section = section[::-1]
        per_axis = (inv[None, :, None].float() @ pos[:, None, :]).transpose(1, 2)  # [3, T, pairs]
        freqs = torch.cat([m[i % 3] for i, m in enumerate(per_axis.split(section, dim=-1))], dim=-1)
    if layout == "interleaved":
        emb = torch.repeat_interleave(freqs, 2, dim=-1)
    else:
        emb = torch.cat((freqs, freqs), dim=-1)
    cache_dtype = torch.bfloat16 if plant == "bf16_cache_for_f32" else x.dtype
    cos, sin = (emb.cos() * scaling).to(cache_dtype).to(x.dtype), (emb.sin() * scaling).to(cache_dtype).to(x.dtype)
    x_rot, x_pass = x[..., :rotary], x[..., rotary:]
    turn = rotate_every_two if layout == "interleaved" else rotate_half
    out = x_rot * cos[:, None, :] + turn(x_rot) * sin[:, None, :]
    if plant == "pass_through_touched" and x_pass.shape[-1] > 0:
        x_pass = x_pass * 1.0001
    return torch.cat((out, x_pass), dim=-1)
