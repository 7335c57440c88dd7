#!/usr/bin/env python3
"""No false alarm in 16 bits: `pe-suite check`'s default budget for bfloat16 and float16 data accepts every
way engines compute a 16-bit RoPE, names the class the data meets, and still fails the 16-bit bugs.
Each way is written here in numpy from its published source, every operation rounded as PyTorch rounds it
on CPU (a float32 op, then to nearest-even into the tensor's dtype; sin/cos of the float32 angle evaluated in
float64 and rounded to float32):

  torch   HF transformers in a bf16/f16 model (LlamaRotaryEmbedding.forward, apply_rotary_pos_emb): cos and
          sin in float32, times the attention factor, `.to(x.dtype)`, then q*cos + rotate_half(q)*sin on
          16-bit tensors (each product and the sum rounded); vLLM's _apply_rotary_emb alike
  cache   the table built in float32 and stored in the data's dtype (vLLM's cos_sin_cache, TGI, FlashInfer's
          cached path), the rotation in float32, one rounding into the output
  math    float32 tables, the products and the sum rounded to the data's dtype
  f32     float32 tables and arithmetic, one rounding into the output
at positions 0.. and near 10^6, plain, Llama-3 and YaRN scaling, partial rotary, M-RoPE (sectioned and
interleaved). The bugs (a dropped scaling, a base of 10^4 for 10^6, an ignored offset, frequencies or
positions held in the data's 16-bit type) are built the torch way, the most generous class, and must fail.

    engines_16bit_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import json
import subprocess

import numpy as np
from cli_cases import finish, report, setup
from hf_rope import (default_inv_freq_f32, get_mscale, llama3_inv_freq_f32, mrope_freqs_f32, qwen_vl_positions,
                     yarn_inv_freq_f32)

PE, WORK, RNG = setup(20261202)
F32 = np.float32
H, D = 4, 128


def round_bf16(a):
    """float32 to bfloat16 (nearest-even on the top 16 bits, as c10::BFloat16), back as float32."""
    u = np.ascontiguousarray(a, dtype=F32).view(np.uint32)
    r = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return (r << np.uint32(16)).astype(np.uint32).view(F32)


def round_f16(a):
    return np.asarray(a, dtype=F32).astype(np.float16).astype(F32)


ROUND = {"bf16": round_bf16, "f16": round_f16}
CLASS = {"torch": "rope.torch_{}", "cache": "rope.cache_{}", "math": "rope.math_{}", "f32": "rope.torch_f32"}


def save16(path, values, dtype):
    if dtype == "bf16":
        np.save(path, (np.ascontiguousarray(values, dtype=F32).view(np.uint32) >> np.uint32(16)).astype(np.uint16))
    else:
        np.save(path, values.astype(np.float16))


def tables(freqs, attention):
    """HF's cos/sin [T, r] in float32: emb = cat(freqs, freqs), cos(emb) * attention_scaling."""
    emb = np.concatenate([freqs, freqs], axis=-1).astype(F32)
    cos = (np.cos(emb.astype(np.float64)).astype(F32) * F32(attention)).astype(F32)
    sin = (np.sin(emb.astype(np.float64)).astype(F32) * F32(attention)).astype(F32)
    return cos, sin


def rotate(x, cos, sin, way, rnd):
    """q*cos + rotate_half(q)*sin over the first r = cos.shape[-1] channels of x [T, H, D] (16-bit values held
    in float32), in the arithmetic of `way`; the other channels pass through."""
    r = cos.shape[-1]
    q = x[..., :r]
    rot = np.concatenate([-q[..., r // 2:], q[..., :r // 2]], axis=-1)
    c, s = cos[:, None, :], sin[:, None, :]
    if way in ("torch", "cache"):
        c, s = rnd(c), rnd(s)
    if way in ("torch", "math"):
        out = rnd(rnd(q * c) + rnd(rot * s))
    else:
        out = rnd(q * c + rot * s)
    return np.concatenate([out, x[..., r:]], axis=-1)


def angles(positions, inv_freq):
    """freqs = inv_freq @ position_ids in float32 (one product per element)."""
    return (np.asarray(positions).astype(F32)[:, None] * inv_freq[None, :]).astype(F32)


def run_check(name, x, y, dtype, positions, args):
    """`check` of x -> y; (exit code, the report's JSON, the contracts line)."""
    xf, yf, jf = WORK / f"{name}_x.npy", WORK / f"{name}_y.npy", WORK / f"{name}.json"
    save16(xf, x, dtype)
    save16(yf, y, dtype)
    if positions.ndim == 1 and np.all(np.diff(positions) == 1):
        where = ["--positions", f"{positions[0]}:{positions[-1] + 1}"]
    else:
        pf = WORK / f"{name}_pos.npy"
        np.save(pf, positions)
        where = ["--positions-file", str(pf)]
    cmd = [PE, "check", "--family", "rope", "--input", str(xf), "--output", str(yf), "--dtype", dtype,
           "--json", str(jf)] + where + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    verdict = json.loads(jf.read_text()) if jf.exists() and r.returncode in (0, 1) else {}
    line = next((ln for ln in out.splitlines() if ln.startswith("contracts:")), "")
    if r.returncode not in (0, 1):
        print(out[-3000:])
    return r.returncode, verdict, line


def worst_ratio(verdict):
    return max((b["worst"]["ratio"] for b in verdict.get("bands", [])), default=float("nan"))


def contract_ratio(verdict, name):
    return next((c["worst_ratio"] for c in verdict.get("contracts", []) if c["contract"] == name), float("nan"))


near, far = np.arange(0, 256), np.arange(1_000_000 - 64, 1_000_000)
llama3 = ["--base", "5e5", "--scaling", "llama3", "--factor", "8", "--original-max-position", "8192"]
yarn = ["--base", "1e6", "--scaling", "yarn", "--factor", "4", "--original-max-position", "32768"]
mpos = qwen_vl_positions(999_000)
# (name, positions, freqs [T, r/2], attention, check's flags)
SCENARIOS = [
    ("plain_0", near, angles(near, default_inv_freq_f32(1e4, D)), 1.0, []),
    ("plain_1e6", far, angles(far, default_inv_freq_f32(5e5, D)), 1.0, ["--base", "5e5"]),
    ("llama3_0", near, angles(near, llama3_inv_freq_f32(5e5, D, 8.0, 8192)), 1.0, llama3),
    ("llama3_1e6", far, angles(far, llama3_inv_freq_f32(5e5, D, 8.0, 8192)), 1.0, llama3),
    ("yarn_0", near, angles(near, yarn_inv_freq_f32(1e6, D, 4.0, 32768)), get_mscale(4.0), yarn),
    ("yarn_1e6", far, angles(far, yarn_inv_freq_f32(1e6, D, 4.0, 32768)), get_mscale(4.0), yarn),
    ("partial_1e6", far, angles(far, default_inv_freq_f32(1e4, 64)), 1.0, ["--rotary-dim", "64"]),
    ("mrope_qwen25vl_1e6", mpos, mrope_freqs_f32(mpos, 1e6, D, (16, 24, 24), False), 1.0,
     ["--base", "1e6", "--mrope-section", "16,24,24"]),
    ("mrope_qwen3vl_1e6", mpos, mrope_freqs_f32(mpos, 5e6, D, (24, 20, 20), True), 1.0,
     ["--base", "5e6", "--mrope-section", "24,20,20", "--mrope-layout", "interleaved"]),
]

worst = {}  # (dtype, way) -> (worst ratio under the default budget, under the way's own contract)
for dtype, rnd in ROUND.items():
    for name, positions, freqs, attention, args in SCENARIOS:
        tokens = positions.shape[-1]
        x = rnd(RNG.standard_normal((tokens, H, D)).astype(F32))
        cos, sin = tables(freqs, attention)
        for way in CLASS:
            own = CLASS[way].format(dtype)
            tag = f"{way}_{dtype}_{name}"
            code, verdict, line = run_check(tag, x, rotate(x, cos, sin, way, rnd), dtype, positions, args)
            met = [c["contract"] for c in verdict.get("contracts", []) if c["met"]]
            ok = code == 0 and own in met
            r, mine = worst_ratio(verdict), contract_ratio(verdict, own)
            w = worst.get((dtype, way), (0.0, 0.0))
            worst[(dtype, way)] = (max(w[0], r), max(w[1], mine))
            report(tag, ok, f"exit {code}, worst err/budget {r:.3f}, {own} {mine:.3f}\n       {line}")

# The registered formulations compute each way's arithmetic: `export --variant` rotates the same input as the
# numpy formula above, bit for bit but where glibc's powf/sinf/cosf and numpy's float32 pow and correctly
# rounded sin/cos differ by an ulp (then by a rounding step or two of the 16-bit type). Another arithmetic (one rounding where
# three are, a cache where there is none) moves a large share of the elements.
for dtype, rnd in ROUND.items():
    x = rnd(RNG.standard_normal((len(near), H, D)).astype(F32))
    xf = WORK / f"export_{dtype}_x.npy"
    save16(xf, x, dtype)
    for scaled, inv, attention, args in ((False, default_inv_freq_f32(1e4, D), 1.0, []),
                                         (True, yarn_inv_freq_f32(1e6, D, 4.0, 32768), get_mscale(4.0), yarn)):
        cos, sin = tables(angles(near, inv), attention)
        for way in ("torch", "math", "cache"):
            name, yf = CLASS[way].format(dtype), WORK / f"export_{dtype}_{way}_{scaled}.npy"
            r = subprocess.run([PE, "export", "--family", "rope", "--dim", str(D), "--positions", f"0:{len(near)}",
                                "--dtype", dtype, "--variant", name, "--input", str(xf), "--out", str(yf)] + args,
                               capture_output=True, text=True)
            want = rotate(x, cos, sin, way, rnd)
            got = np.load(yf) if r.returncode == 0 else None
            if got is not None and dtype == "bf16":
                got = (got.astype(np.uint32) << np.uint32(16)).view(F32)
            got = got.astype(F32) if got is not None else np.full_like(want, np.nan)
            # An ulp of a table value moves a product by one rounding step of the 16-bit type at most, and the
            # sum then by one more: |diff| <= 4u·(|a| + |b|) for the pair's inputs (a, b).
            n = np.abs(x[..., :D // 2]) + np.abs(x[..., D // 2:])
            limit = 4 * (2.0 ** -8 if dtype == "bf16" else 2.0 ** -11) * np.concatenate([n, n], axis=-1)
            same = float(np.mean(got == want))
            within = bool(np.all(np.abs(got - want) <= limit))
            tag = f"export_{way}_{dtype}{'_yarn' if scaled else ''}"
            report(tag, r.returncode == 0 and same >= 0.999 and within,
                   f"{name} equals the {way} formula in {same:.2%} of the elements"
                   f"{'' if within else ', some by more than 4u·(|a| + |b|)'}" + ("" if r.returncode == 0 else r.stderr[-500:]))
        # The three ways are distinguishable: what the test above tells apart.
        ways = {w: rotate(x, cos, sin, w, rnd) for w in ("torch", "math", "cache")}
        apart = min(float(np.mean(ways[a] != ways[b])) for a, b in (("torch", "math"), ("torch", "cache"), ("math", "cache")))
        report(f"ways_apart_{dtype}{'_yarn' if scaled else ''}", apart > 0.05,
               f"the ways differ in >= {apart:.1%} of the elements")

# The bugs of 16-bit RoPE, each built the torch way (the default budget's largest class) near position 4096
# (bfloat16 holds integers only up to 256 exactly, float16 up to 2048).
P = np.arange(4096, 4096 + 64)
smallest = {}
for dtype, rnd in ROUND.items():
    x = rnd(RNG.standard_normal((len(P), H, D)).astype(F32))
    plain = default_inv_freq_f32(1e4, D)
    bugs = [
        ("scaling_dropped", angles(P, default_inv_freq_f32(5e5, D)), llama3),
        ("base_1e4_for_1e6", angles(P, plain), ["--base", "1e6"]),
        ("offset_ignored", angles(P - 4096, plain), []),
        # model.to(dtype) casts the inv_freq buffer with the weights.
        ("inv_freq_in_16bit", angles(P, rnd(plain)), []),
        # t = torch.arange(seq_len, dtype=inv_freq.dtype) in a 16-bit module.
        ("positions_in_16bit", (rnd(P.astype(F32))[:, None] * plain[None, :]).astype(F32), []),
    ]
    for name, freqs, args in bugs:
        cos, sin = tables(freqs, 1.0)
        tag = f"bug_{dtype}_{name}"
        code, verdict, _ = run_check(tag, x, rotate(x, cos, sin, "torch", rnd), dtype, P, args)
        r = worst_ratio(verdict)
        smallest[dtype] = min(smallest.get(dtype, float("inf")), r)
        report(tag, code == 1, f"exit {code} (must fail), worst err/budget {r:.3g}")

# --contract still tightens to one class: HF's bf16 arithmetic is more than float32's one rounding.
x = round_bf16(RNG.standard_normal((len(near), H, D)).astype(F32))
cos, sin = tables(angles(near, default_inv_freq_f32(1e4, D)), 1.0)
code, verdict, line = run_check("torch_as_torch_f32", x, rotate(x, cos, sin, "torch", round_bf16), "bf16", near,
                               ["--contract", "rope.torch_f32"])
report("torch_as_torch_f32", code == 1 and "misses" in line and "rope.torch_f32 (" in line.split("misses")[1],
       f"exit {code} (must fail), {line}")

print("\nworst err/budget of the correct runs (default budget; the way's own contract):")
for (dtype, way), (r, mine) in worst.items():
    print(f"  {dtype} {way:6s} {r:.3f}  {CLASS[way].format(dtype)} {mine:.3f}")
print("smallest worst err/budget among the bugs: " + ", ".join(f"{d} {r:.3g}" for d, r in smallest.items()))
finish("engines_16bit_test")
