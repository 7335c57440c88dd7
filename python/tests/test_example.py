# The README's pytest example, run as written (test_readme_shows_the_example keeps the two identical).
import torch, pe_suite  # noqa: E401

def test_my_rope_kernel_at_a_million_positions():
    positions = torch.arange(0, 1_000_001, 4001)                      # 250 tokens up to 10^6
    q = torch.randn(len(positions), 8, 128)                           # [tokens, heads, head_dim]
    inv_freq = 1.0 / 500000.0 ** (torch.arange(0, 128, 2).float() / 128)
    freqs = positions[:, None].float() * inv_freq[None, :]            # the kernel under test:
    cos, sin = torch.cat((freqs, freqs), -1).cos(), torch.cat((freqs, freqs), -1).sin()
    q_rot = torch.cat((-q[..., 64:], q[..., :64]), -1)                # HF's rotate_half
    y = q * cos[:, None] + q_rot * sin[:, None]
    pe_suite.assert_rope_close(q, y, positions, base=500000.0)
