"""verify_rope drawing xPos (issue 50, item 2), by name: rope_types=("xpos",). The kernel is flash-attention's
RotaryEmbedding with scale_base, transcribed in torch from its published layers/rotary.py (inv_freq, the scale and
the power in float32; cos and sin times the gain for q, divided by it for k, cast to x's dtype; rotate_half in
float32), reading the drawn config's pe-suite keys xpos_scale_base, xpos_centre and xpos_keys. It passes in float32,
bfloat16 and float16; with q's gain applied to k, or the centre taken from its own call instead of the config, it
fails and the diagnosis names which."""
import functools

import pytest
import torch

import pe_suite


def flash_xpos(x, positions, config, plant=None):
    d = int(config["head_dim"] * config.get("partial_rotary_factor", 1.0))
    inv_freq = 1.0 / (config.get("rope_theta", 10000.0) ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    t = positions.to(torch.float32)
    freqs = torch.outer(t, inv_freq)
    scale = (torch.arange(0, d, 2, dtype=torch.float32) + 0.4 * d) / (1.4 * d)
    centre = (int(positions.max()) + 1) // 2 if plant == "own_centre" else config["xpos_centre"]
    g = scale ** ((t - centre) / config["xpos_scale_base"])[:, None]
    keys = config["xpos_keys"] and plant != "always_q"
    cos, sin = (torch.cos(freqs) / g, torch.sin(freqs) / g) if keys else (torch.cos(freqs) * g, torch.sin(freqs) * g)
    c, s = cos.to(x.dtype).float()[:, None, :], sin.to(x.dtype).float()[:, None, :]
    x1, x2 = x[..., : d // 2].float(), x[..., d // 2 : d].float()
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s, x[..., d:].float()], dim=-1).to(x.dtype)


def failure_text(fn, **kwargs):
    with pytest.raises(AssertionError) as e:
        pe_suite.verify_rope(fn, rope_types=("xpos",), failure_file=None, **kwargs)
    return str(e.value)


def test_flash_attention_xpos_passes_in_every_dtype():
    summary = pe_suite.verify_rope(flash_xpos, rope_types=("xpos",), examples=60, failure_file=None,
                                   dtypes=("float32", "bfloat16", "float16"), forms=("text", "partial"))
    assert {tag.split("/")[0] for tag in summary["cases"]} == {"xpos"}
    assert {tag.split("/")[1] for tag in summary["cases"]} == {"float32", "bfloat16", "float16"}


def test_q_gain_on_k_is_caught_and_named():
    text = failure_text(functools.partial(flash_xpos, plant="always_q"))
    assert "q's gain (multiplying) where k's (dividing) is given" in text, text


def test_a_centre_from_the_call_instead_of_the_cache_is_caught_and_named():
    text = failure_text(functools.partial(flash_xpos, plant="own_centre"))
    assert "xPos with centre" in text, text
