#!/usr/bin/env python3
"""`pe-suite check` on the rotary forms, against implementations written here from the published
formulas (Hugging Face transformers' modeling code), not from pe-suite's:

  Qwen2.5-VL text M-RoPE      modeling_qwen2_vl.py  apply_multimodal_rotary_pos_emb (sectioned)
  Qwen3-VL text M-RoPE        modeling_qwen3_vl.py  apply_interleaved_mrope
  Qwen2-VL ViT vision RoPE    modeling_qwen2_vl.py  VisionRotaryEmbedding, apply_rotary_pos_emb_vision
  Pixtral vision RoPE         modeling_pixtral.py   PixtralRotaryEmbedding (half-split)
  DeepSeek MLA decoupled RoPE modeling_deepseek_v3.py apply_rotary_pos_emb_interleave, YaRN
  Flux axial RoPE             black-forest-labs/flux EmbedND / diffusers FluxPosEmbed (axes_dim 16,56,56)

Each correct implementation must pass `check` at positions up to 10^6 under the default budget
(rope.scalar_f32's contract), and each mistake an engine has shipped must fail with the mistake named
on the diagnosis line. The formulas run in float64 (numpy; PyTorch when installed, on CPU) and the
results are stored as float32, so the only rounding left is the store's: the check is about the
formula, and the default budget is tight.

    forms_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""


import numpy as np
from cli_cases import finish, judge, judge_bad, report, rope_check, setup
from hf_rope import default_inv_freq as inv_freq
from hf_rope import get_mscale, qwen_vl_positions, yarn_inv_freq

try:  # the system's PyTorch when present (the frameworks' own arithmetic), numpy otherwise
    import torch  # noqa: F401

    BACKEND = "torch"
except ImportError:
    BACKEND = "numpy"

PE, WORK, RNG = setup(20261201)
FAR = 999_000  # the prompt starts here: positions near 10^6


def cos_sin(angles):
    if BACKEND == "torch":
        t = torch.from_numpy(angles)
        return t.cos().numpy(), t.sin().numpy()
    return np.cos(angles), np.sin(angles)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def mrope_sectioned(q, pos, base, section):
    """apply_multimodal_rotary_pos_emb: cos/sin per axis [3, T, D], split into mrope_section * 2 chunks,
    chunk i taken from axis i % 3."""
    d = q.shape[-1]
    freqs = pos[:, :, None].astype(np.float64) * inv_freq(base, d)[None, None, :]  # [3, T, D/2]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = cos_sin(emb)
    bounds = np.cumsum(list(section) * 2)[:-1]  # HF: mrope_section * 2 on a list repeats it
    cos = np.concatenate([c[i % 3] for i, c in enumerate(np.split(cos, bounds, axis=-1))], axis=-1)
    sin = np.concatenate([s[i % 3] for i, s in enumerate(np.split(sin, bounds, axis=-1))], axis=-1)
    return q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]


def mrope_interleaved(q, pos, base, section):
    """apply_interleaved_mrope: freqs_t with freqs_h at [1:3*s_h:3] and freqs_w at [2:3*s_w:3]."""
    d = q.shape[-1]
    freqs = pos[:, :, None].astype(np.float64) * inv_freq(base, d)[None, None, :]
    ft = freqs[0].copy()
    for axis, offset in ((1, 1), (2, 2)):
        idx = slice(offset, section[axis] * 3, 3)
        ft[..., idx] = freqs[axis, ..., idx]
    emb = np.concatenate([ft, ft], axis=-1)
    cos, sin = cos_sin(emb)
    return q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]


def qwen2vl_vision(q, hw, base=10000.0):
    """VisionRotaryEmbedding(head_dim // 2): inv_freq over dim D/2; rotary_pos_emb = cat(h * inv_freq,
    w * inv_freq); emb = cat(rotary_pos_emb, rotary_pos_emb); rotate_half over the head."""
    d = q.shape[-1]
    f = inv_freq(base, d // 2)
    rot = np.concatenate([hw[0][:, None] * f[None, :], hw[1][:, None] * f[None, :]], axis=-1)
    cos, sin = cos_sin(np.concatenate([rot, rot], axis=-1))
    return q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]


def pixtral_vision(q, hw, base=10000.0):
    """PixtralRotaryEmbedding: freqs over dim D; h turns by freqs[::2], w by freqs[1::2]; the result
    doubled and applied half-split."""
    d = q.shape[-1]
    f = inv_freq(base, d)
    rot = np.concatenate([hw[0][:, None] * f[::2][None, :], hw[1][:, None] * f[1::2][None, :]], axis=-1)
    cos, sin = cos_sin(np.concatenate([rot, rot], axis=-1))
    return q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]


def deepseek_pe(q, pos, freqs, attention, deinterleave=True):
    """apply_rotary_pos_emb_interleave on q_pe = q[..., 128:]: de-interleave (2j, 2j+1) into halves,
    then the half-split rotation; cos and sin carry the attention factor. With deinterleave=False the
    GPT-J interleaved rotation in place (the mistake)."""
    nope, pe = q[..., :128], q[..., 128:]
    ang = pos[:, None].astype(np.float64) * freqs[None, :]
    cos, sin = cos_sin(np.concatenate([ang, ang], axis=-1))
    cos, sin = cos * attention, sin * attention
    if deinterleave:
        b, h, d = pe.shape
        pe = pe.reshape(b, h, d // 2, 2).transpose(0, 1, 3, 2).reshape(b, h, d)
        out = pe * cos[:, None, :] + rotate_half(pe) * sin[:, None, :]
    else:
        half = pe.shape[-1] // 2
        a, b_ = pe[..., 0::2], pe[..., 1::2]
        c, s = cos[:, None, :half], sin[:, None, :half]
        out = np.empty_like(pe)
        out[..., 0::2] = a * c - b_ * s
        out[..., 1::2] = b_ * c + a * s
    return np.concatenate([nope, out], axis=-1)


def run_check(name, x, y, args, expect_pass, expect_words=None):
    judge(name, rope_check(PE, WORK, name, x, y) + args, expect_pass, expect_words or ())


def save_positions(name, pos):
    path = WORK / f"{name}_pos.npy"
    np.save(path, pos)
    return str(path)


# --- M-RoPE (Qwen2.5-VL sectioned, Qwen3-VL interleaved) ----------------------------------------
pos = qwen_vl_positions(FAR)
T = pos.shape[1]
q = RNG.standard_normal((T, 2, 128))
pfile = save_positions("mrope", pos)
sec25, base25 = np.array([16, 24, 24]), 1e6
sec3, base3 = np.array([24, 20, 20]), 5e6
y25 = mrope_sectioned(q, pos, base25, sec25)
common25 = ["--positions-file", pfile, "--base", "1e6", "--mrope-section", "16,24,24"]
run_check("qwen25vl", q, y25, common25, True)
y3 = mrope_interleaved(q, pos, base3, sec3)
common3 = ["--positions-file", pfile, "--base", "5e6", "--mrope-section", "24,20,20"]
run_check("qwen3vl", q, y3, common3 + ["--mrope-layout", "interleaved"], True)
# Mistakes: the layouts swapped, two axes swapped, M-RoPE run as 1-D RoPE on t.
run_check("qwen3vl_as_sectioned", q, y3, common3, False, "M-RoPE interleaved (given: sectioned)")
run_check("qwen25vl_as_interleaved", q, y25, common25 + ["--mrope-layout", "interleaved"], False,
          "M-RoPE sectioned (given: interleaved)")
run_check("qwen25vl_h_w_swapped", q, mrope_sectioned(q, pos[[0, 2, 1]], base25, sec25), common25, False,
          "axes h and w swapped")
run_check("qwen25vl_t_h_swapped", q, mrope_sectioned(q, pos[[1, 0, 2]], base25, sec25), common25, False,
          "axes t and h swapped")
run_check("qwen25vl_1d_on_t", q, mrope_sectioned(q, pos[[0, 0, 0]], base25, sec25), common25, False,
          "M-RoPE run as 1-D RoPE on the t positions")
# The sections given in another order (issue 54): each pair's axis read back names them, and the flags to
# rerun with; the split of h and w an image's few rows and columns cannot show is said to be undetermined.
out = judge("qwen25vl_sections_reversed", rope_check(PE, WORK, "qwen25vl_sections_reversed", q, y25)
            + ["--positions-file", pfile, "--base", "1e6", "--mrope-section", "24,24,16"], False,
            ["mrope_section 16,24,24 (given 24,24,16)", "undetermined"])
report("qwen25vl_sections_reversed_flags", "to check the hypothesis: --mrope-section 16,24,24" in out, "", out)

# --- 2-D vision (Qwen2-VL ViT, Pixtral) -----------------------------------------------------------
rows, cols = np.meshgrid(np.arange(FAR, FAR + 6), np.arange(FAR + 10, FAR + 18), indexing="ij")
hw = np.stack([rows.ravel(), cols.ravel()]).astype(np.int64)
v = RNG.standard_normal((hw.shape[1], 2, 80))
vfile = save_positions("vision", hw)
run_check("qwen2vl_vit", v, qwen2vl_vision(v, hw), ["--positions-file", vfile, "--vision", "qwen2vl"], True)
run_check("qwen2vl_vit_h_w_swapped", v, qwen2vl_vision(v, hw[[1, 0]]),
          ["--positions-file", vfile, "--vision", "qwen2vl"], False, "axes h and w swapped")
p64 = RNG.standard_normal((hw.shape[1], 2, 64))
run_check("pixtral", p64, pixtral_vision(p64, hw), ["--positions-file", vfile, "--vision", "pixtral"], True)

# --- Axial N-D RoPE (Flux's EmbedND: each axis its own ladder over its own dim, interleaved pairs) --------
def flux_embednd(q, ids, axes_dim, theta):
    """rope(pos, dim, theta) per axis: omega = 1/theta**(arange(0, dim, 2)/dim), angles pos*omega, the axes'
    blocks concatenated; apply_rope on (2k, 2k+1) pairs."""
    angles = np.concatenate([ids[i][:, None].astype(np.float64) / theta ** (np.arange(0, d, 2) / d)[None, :]
                             for i, d in enumerate(axes_dim)], axis=1)  # [T, D/2]
    cos, sin = cos_sin(angles)
    y = q.copy()
    a, b = q[..., 0::2], q[..., 1::2]
    y[..., 0::2] = a * cos[:, None, :] - b * sin[:, None, :]
    y[..., 1::2] = a * sin[:, None, :] + b * cos[:, None, :]
    return y


rows, cols = np.meshgrid(np.arange(5), np.arange(9), indexing="ij")  # a 5 x 9 latent after 2 text tokens
ids = np.concatenate([np.zeros((3, 2), dtype=np.int64), np.stack([np.zeros(45), rows.ravel(), cols.ravel()])],
                     axis=1).astype(np.int64)
qa = RNG.standard_normal((ids.shape[1], 2, 128))
afile = save_positions("axial", ids)
axial = ["--positions-file", afile, "--axes-dim", "16,56,56", "--layout", "interleaved"]
run_check("flux_axial", qa, flux_embednd(qa, ids, (16, 56, 56), 1e4), axial, True)
flux_config = WORK / "flux_config.json"
flux_config.write_text('{"_class_name": "FluxTransformer2DModel", "attention_head_dim": 128, '
                       '"axes_dims_rope": [16, 56, 56]}')
run_check("flux_axial_hf_config", qa, flux_embednd(qa, ids, (16, 56, 56), 1e4),
          ["--positions-file", afile, "--hf-config", str(flux_config)], True)
run_check("flux_axial_theta_256", qa, flux_embednd(qa, ids, (16, 56, 56), 256.0), axial, False,
          "base 256 (given: 10000)")
run_check("flux_axial_h_w_swapped", qa, flux_embednd(qa, ids[[0, 2, 1]], (16, 56, 56), 1e4), axial, False,
          "axes 1 and 2 swapped")

# --- DeepSeek MLA (V3: YaRN factor 40 over 4096, mscale = mscale_all_dim = 1) ----------------------
mla_pos = np.arange(FAR, FAR + 24, dtype=np.int64)
qm = RNG.standard_normal((24, 4, 192))
# HF _compute_yarn_parameters (truncate): DeepSeek's attention factor is the mscale ratio.
freqs, att = yarn_inv_freq(1e4, 64, 40.0, 4096), get_mscale(40.0, 1.0) / get_mscale(40.0, 1.0)
yarn_flags = ["--scaling", "yarn", "--factor", "40", "--original-max-position", "4096",
              "--mscale", "1", "--mscale-all-dim", "1"]
mla = ["--positions", f"{FAR}:{FAR + 24}", "--rotary-offset", "128", "--rotary-dim", "64"] + yarn_flags
y_mla = deepseek_pe(qm, mla_pos, freqs, att)
run_check("deepseek_v3_q", qm, y_mla, mla + ["--layout", "deinterleave"], True)
# The shared key head: [T, 64] rotary channels only.
km = RNG.standard_normal((24, 1, 64))
kfreqs_y = deepseek_pe(np.concatenate([np.zeros((24, 1, 128)), km], axis=-1), mla_pos, freqs, att)[..., 128:]
run_check("deepseek_v3_k_pe", km[:, 0, :], kfreqs_y[:, 0, :],
          ["--positions", f"{FAR}:{FAR + 24}"] + yarn_flags + ["--layout", "deinterleave"], True)
run_check("deepseek_v3_as_interleaved", qm, y_mla, mla + ["--layout", "interleaved"], False,
          "layout deinterleave (given: interleaved)")
run_check("deepseek_v3_gptj_as_deinterleave", qm, deepseek_pe(qm, mla_pos, freqs, att, deinterleave=False),
          mla + ["--layout", "deinterleave"], False, "layout interleaved (given: deinterleave)")
# Rotary channels at the start of the head instead of the end.
at_start = np.concatenate([deepseek_pe(np.concatenate([qm[..., 64:], qm[..., :64]], axis=-1), mla_pos, freqs,
                                       att)[..., 128:], qm[..., 64:]], axis=-1)
run_check("deepseek_v3_rotary_at_start", qm, at_start, mla + ["--layout", "deinterleave"], False,
          "rotary channels at the start (offset 0; given: 128)")

# --- Bad input: exit 2 naming the parameter and the values; nothing written --------------------
def run_bad(name, args, words):
    out_file = WORK / f"{name}_out.npy"
    judge_bad(name, [PE] + args + ["--out", str(out_file)], words, out_file)


np.save(WORK / "q192.npy", RNG.standard_normal((4, 2, 192)).astype(np.float32))
np.save(WORK / "q74.npy", RNG.standard_normal((4, 1, 74)).astype(np.float32))
np.save(WORK / "two_axes.npy", np.zeros((2, 60), dtype=np.int64))
np.save(WORK / "short_axes.npy", np.zeros((3, 59), dtype=np.int64))
golden = ["export", "--family", "rope", "--dim", "0", "--reference"]
run_bad("axes_dim_sum", golden[:4] + ["128", "--reference", "--input", str(WORK / "flux_axial_x.npy"),
                                      "--positions-file", afile, "--axes-dim", "16,56,48"],
        ["--axes-dim", "sum to rotary_dim = 128", "got 120"])
run_bad("sections_sum", golden + ["--input", str(WORK / "qwen25vl_x.npy"), "--positions-file", pfile,
                                  "--mrope-section", "16,24,20"],
        ["--mrope-section", "rotary_dim/2 = 64", "got 60"])
run_bad("negative_offset", golden + ["--input", str(WORK / "q192.npy"), "--positions", "0:4",
                                     "--rotary-offset", "-2"], ["--rotary-offset", "got -2"])
run_bad("offset_past_head", golden[:4] + ["64", "--reference", "--input", str(WORK / "q192.npy"),
                                          "--positions", "0:4", "--rotary-offset", "150"],
        ["rotary_dim", "head_dim - rotary_offset = 42", "got 64"])
run_bad("positions_axes", golden + ["--input", str(WORK / "qwen25vl_x.npy"), "--positions-file",
                                    str(WORK / "two_axes.npy"), "--mrope-section", "16,24,24"],
        ["--positions-file", "has 2 axes", "--mrope-section gives 3"])
run_bad("positions_length", golden + ["--input", str(WORK / "qwen25vl_x.npy"), "--positions-file",
                                      str(WORK / "short_axes.npy"), "--mrope-section", "16,24,24"],
        ["60 tokens", "the positions are 59 per axis"])
run_bad("vision_quarter", golden + ["--input", str(WORK / "q74.npy"), "--positions-file",
                                    str(WORK / "two_axes.npy"), "--vision", "qwen2vl"],
        ["head_dim must be a multiple of 4", "got 74"])

finish(f"forms_test ({BACKEND})")
