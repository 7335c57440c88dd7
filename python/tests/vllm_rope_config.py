"""vLLM's reading of HF's rope types, in PyTorch, written here from vLLM's rotary_embedding/ folder and SGLang's
rotary_embedding.py (which follows it): get_rope picks DynamicNTKAlphaRotaryEmbedding when rope_scaling gives
"alpha" (base' = base·alpha^(d/(d-2)), length unread) and DynamicNTKScalingRotaryEmbedding otherwise (one table
built at max_len = L·factor: base' = base·(factor·max_len/L − (factor − 1))^(d/(d-2)), the call's length unread);
YaRNScalingRotaryEmbedding's cos and sin carry yarn_get_mscale(factor)·attn_factor (HF replaces the mscale by
attention_factor). Every other type is HF's (hf_rope_config.py). The rotation itself is hf_rope's."""
from hf_rope_config import hf_rope, inv_freq_and_scaling
from hf_torch_rope import default_inv_freq, yarn_inv_freq


def vllm_inv_freq_and_scaling(config, seq_len, plant=None):
    s = config.get("rope_scaling") or {}
    kind = s.get("rope_type", s.get("type", "default"))
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    dim = int(head_dim * config.get("partial_rotary_factor", 1.0))
    base = config["rope_theta"]
    if kind == "dynamic" and "alpha" in s:
        return default_inv_freq(base * s["alpha"] ** (dim / (dim - 2)), dim)[0], 1.0
    if kind == "dynamic":
        if plant == "live_length":  # HF's live length read instead of the table's
            return inv_freq_and_scaling(config, seq_len)
        L, factor = config["max_position_embeddings"], s["factor"]
        max_len = L * factor
        return default_inv_freq(base * (factor * max_len / L - (factor - 1)) ** (dim / (dim - 2)), dim)[0], 1.0
    if kind == "yarn":
        original = s.get("original_max_position_embeddings") or config["max_position_embeddings"]
        inv, mscale = yarn_inv_freq(base, dim, s["factor"], original, s.get("beta_fast") or 32,
                                    s.get("beta_slow") or 1)
        return inv, mscale * s.get("attention_factor", 1.0)
    return inv_freq_and_scaling(config, seq_len, plant)


def vllm_rope(x, positions, config, plant=None, layout="halfsplit"):
    return hf_rope(x, positions, config, plant=plant, layout=layout, rule=vllm_inv_freq_and_scaling)
