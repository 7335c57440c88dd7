"""No false alarm in 16 bits, in PyTorch: every way engines run RoPE on bfloat16 and float16 tensors passes
check_rope's default budget and is named by its class; the 16-bit bugs fail. The ways, in torch's own
arithmetic (each op on 16-bit tensors rounded to their dtype):

  torch  HF in a 16-bit model: cos/sin in float32 (times the attention factor) cast to the dtype, then
         q * cos + rotate_half(q) * sin in the dtype (vLLM's _apply_rotary_emb alike)
  cache  the float32 table stored in the dtype, the rotation in float32, one rounding (vLLM's
         cos_sin_cache with a float32 kernel, TGI, FlashInfer's cached path)
  math   float32 tables, the products and the sum in the dtype
  f32    float32 tables and arithmetic, one rounding (`x.float()` ... `.to(x.dtype)`)
"""

import pytest

import pe_suite

torch = pytest.importorskip("torch")
import hf_torch_rope as hf  # noqa: E402

HEADS, DIM = 4, 128
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def torch_way(q, cos, sin, r):
    return hf.apply_rotary(q, cos.to(q.dtype), sin.to(q.dtype), r)


def cache_way(q, cos, sin, r):
    c, s = cos.to(q.dtype).float(), sin.to(q.dtype).float()
    return hf.apply_rotary(q.float(), c, s, r).to(q.dtype)


def math_way(q, cos, sin, r):
    qr = q[..., :r]
    out = (qr.float() * cos[None]).to(q.dtype) + (hf.rotate_half(qr).float() * sin[None]).to(q.dtype)
    return torch.cat((out, q[..., r:]), dim=-1)


def f32_way(q, cos, sin, r):
    return hf.apply_rotary(q.float(), cos, sin, r).to(q.dtype)


WAYS = {"torch": (torch_way, "rope.torch_{}"), "cache": (cache_way, "rope.cache_{}"),
        "math": (math_way, "rope.math_{}"), "f32": (f32_way, "rope.torch_f32")}

LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}


def vl_positions(start):
    """HF get_rope_index for text, a 4 x 6 image and text: t = h = w on text; the image's tokens share t and
    count rows (h) and columns (w); the text after it continues at the largest position + 1."""
    t, h, w = list(range(start, start + 8)), list(range(start, start + 8)), list(range(start, start + 8))
    for row in range(4):
        for col in range(6):
            t.append(start + 8), h.append(start + 8 + row), w.append(start + 8 + col)
    nxt = start + 8 + 6
    for k in range(8):
        t.append(nxt + k), h.append(nxt + k), w.append(nxt + k)
    return torch.tensor([t, h, w])


def scenario(name):
    """(positions, float32 cos, float32 sin, rotary dim, check_rope keywords)."""
    near, far = torch.arange(0, 256), torch.arange(1_000_000 - 64, 1_000_000)
    if name.startswith("mrope"):
        pos = vl_positions(999_000)
        interleaved = name == "mrope_qwen3vl_1e6"
        base, section = (5e6, (24, 20, 20)) if interleaved else (1e6, (16, 24, 24))
        inv, _ = hf.default_inv_freq(base, DIM)
        cos, sin = hf.mrope_cos_sin(inv, pos, section, torch.float32, interleaved)
        keywords = {"base": base, "mrope_section": list(section)}
        if interleaved:
            keywords["mrope_layout"] = "interleaved"
        return pos, cos, sin, DIM, keywords
    pos = near if name.endswith("_0") else far
    r, keywords = DIM, {}
    if name.startswith("plain"):
        inv, attention = hf.default_inv_freq(10000.0, DIM)
    elif name.startswith("llama3"):
        inv, attention = hf.llama3_inv_freq(500000.0, DIM, 8.0, 1.0, 4.0, 8192)
        keywords = {"base": 500000.0, "scaling": LLAMA3}
    elif name.startswith("yarn"):
        inv, attention = hf.yarn_inv_freq(1e6, DIM, 4.0, 32768)
        keywords = {"base": 1e6, "scaling": YARN}
    else:  # partial rotary: a quarter of the channels (partial_rotary_factor 0.25)
        r = DIM // 4
        inv, attention = hf.default_inv_freq(10000.0, r)
        keywords = {"rotary_dim": r}
    cos, sin = hf.cos_sin(inv, attention, pos, torch.float32)
    return pos, cos, sin, r, keywords


def contract_entry(report, name):
    return next(c for c in report.to_dict()["contracts"] if c["contract"] == name)


SCENARIOS = ["plain_0", "plain_1e6", "llama3_0", "llama3_1e6", "yarn_0", "yarn_1e6", "partial_1e6",
             "mrope_qwen25vl_1e6", "mrope_qwen3vl_1e6"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", SCENARIOS)
def test_every_way_passes_the_default_budget_and_is_named(name, way, dtype):
    pos, cos, sin, r, keywords = scenario(name)
    g = torch.Generator().manual_seed(len(name) * 7 + len(way))
    q = torch.randn(HEADS, pos.shape[-1], DIM, generator=g).to(DTYPES[dtype])
    rotate, contract = WAYS[way]
    y = rotate(q, cos, sin, r)
    assert y.dtype == q.dtype
    report = pe_suite.check_rope(q, y, pos, heads_first=True, **keywords)
    assert report.passed, str(report)
    own = contract_entry(report, contract.format(dtype))
    assert own["met"], str(report)


@pytest.mark.parametrize("dtype,tokens", [("bf16", 2048), ("f16", 1024)])
def test_hf_at_the_issue_shape_passes(dtype, tokens):
    # 2048 x 32 x 128 at 0..2047: 75,831 elements were over the float32 classes' budget in bfloat16.
    g = torch.Generator().manual_seed(11)
    q = torch.randn(32, tokens, DIM, generator=g).to(DTYPES[dtype])
    pos = torch.arange(tokens)
    inv, _ = hf.default_inv_freq(10000.0, DIM)
    cos, sin = hf.cos_sin(inv, 1.0, pos, DTYPES[dtype])
    y = hf.apply_rotary(q, cos, sin)
    report = pe_suite.check_rope(q, y, pos, heads_first=True)
    assert report.passed, str(report)
    assert contract_entry(report, f"rope.torch_{dtype}")["met"]
    # One class still tightens the budget: HF's 16-bit arithmetic rounds three times, a cache's twice.
    if dtype == "bf16":
        assert not pe_suite.check_rope(q, y, pos, heads_first=True, contract="rope.cache_bf16").passed


BUGS = ["scaling dropped", "base 1e4 for 1e6", "offset ignored", "inv_freq in the dtype", "positions in the dtype"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bug", BUGS)
def test_16bit_bugs_still_fail(bug, dtype):
    # Near 4096: bfloat16 holds integers exactly only up to 256, float16 up to 2048.
    pos = torch.arange(4096, 4096 + 64)
    g = torch.Generator().manual_seed(3)
    q = torch.randn(HEADS, len(pos), DIM, generator=g).to(DTYPES[dtype])
    inv, _ = hf.default_inv_freq(10000.0, DIM)
    rotated_at, keywords = pos, {}
    if bug == "scaling dropped":
        inv, _ = hf.default_inv_freq(500000.0, DIM)
        keywords = {"base": 500000.0, "scaling": LLAMA3}
    elif bug == "base 1e4 for 1e6":
        keywords = {"base": 1e6}
    elif bug == "offset ignored":
        rotated_at = pos - 4096
    elif bug == "inv_freq in the dtype":
        inv = inv.to(DTYPES[dtype])  # model.to(dtype) casts the inv_freq buffer with the weights
    else:
        rotated_at = pos.to(DTYPES[dtype])  # t = torch.arange(n, dtype=inv_freq.dtype) in a 16-bit module
    cos, sin = hf.cos_sin(inv, 1.0, rotated_at, DTYPES[dtype])
    y = hf.apply_rotary(q, cos, sin)
    report = pe_suite.check_rope(q, y, pos, heads_first=True, **keywords)
    assert not report.passed, str(report)
    # Named, not only failed: the claim says what the kernel computed.
    named = {"scaling dropped": "scaling", "base 1e4 for 1e6": "base 10000", "offset ignored": "p-4096",
             "inv_freq in the dtype": f"inv_freq rounded to {dtype}",
             "positions in the dtype": "positions rounded to " + ("bfloat16" if dtype == "bf16" else "float16")}[bug]
    assert report.diagnosis and named in report.diagnosis[0], str(report)
