# The README's verify_rope example, run as written (test_readme.py keeps the copies identical).
import torch, pe_suite  # noqa: E401

def my_rope(x, positions, config):                                      # the engine's own code
    d = config["head_dim"]
    inv_freq = 1.0 / config["rope_theta"] ** (torch.arange(0, d, 2).float() / d)
    if (config.get("rope_scaling") or {}).get("rope_type") == "linear":
        inv_freq = inv_freq / config["rope_scaling"]["factor"]
    freqs = positions[:, None].float() * inv_freq[None, :]
    cos, sin = torch.cat((freqs, freqs), -1).cos(), torch.cat((freqs, freqs), -1).sin()
    x_rot = torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1)
    return x * cos[:, None].to(x.dtype) + x_rot * sin[:, None].to(x.dtype)

def test_my_rope_under_drawn_configs():
    pe_suite.verify_rope(my_rope, rope_types=("default", "linear"))     # f32 and bf16, 100 cases
