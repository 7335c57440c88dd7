"""Attention scores with the encoding inside (issue 51, item 4; ALiBi and none here, RoPE not yet): an engine's
pre-softmax scores S[h, i, j] = scale·(q_i·k_j) + bias[h, i, j] (flash-attention's `alibi_slopes`, FlashInfer's
`pos_encoding_mode="ALIBI"`, HF's BLOOM and MPT `baddbmm(alibi, q, k^T)`; HF's Falcon scales the bias too,
scale·(q·k + bias): scale_bias=True) checked against the exact scores, with
the dot product's error model, and the alignment and query offset named when they are wrong.

The exact scores: q and k as given (the kernel's inputs, exact), their dot product in float64 (each product exact
for 16-bit inputs, within 2^-53 for float32 ones; d sums), the bias ALiBi's correctly rounded (reference_alibi).
The budget of an engine that accumulates in float32 (flash-attention, FlashInfer, CPU matmuls do):
scale·(d + 2)·2^-24·Σ_c |q_c·k_c| (the products and the sums in any order, the scale's product) +
3·2^-24·|bias| (the slope in float32, the distance's product, the add) + (2^-24 + u_out)·|S| (the sum's
rounding and the output's) + denorm_min(out). A masked element (-inf where the key lies after the query's
position) is accepted there and nowhere else."""
import numpy as np

from . import _native
from ._verdict import Verdict, closing

U32 = 2.0 ** -24
_UNIT = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float64": 2.0 ** -53}
_TINY = {"float32": 2.0 ** -149, "float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float64": 2.0 ** -1074}


class ScoresReport(Verdict):
    """check_scores's verdict: `.passed`, `.wrong` (elements over budget), `.worst` (the worst element: head,
    query, key, value, exact, error, budget), `.diagnosis` (what a failing array fits), the text."""

    def __init__(self, passed, wrong, worst, diagnosis, text):
        self.passed, self.wrong, self.worst, self.diagnosis, self.text = passed, wrong, worst, diagnosis, text


def _f64(a, name, dtype=None):
    """(a as float64 numpy, its type's name): torch tensors of any float type, numpy arrays (bfloat16 as uint16
    bits with dtype="bfloat16")."""
    if hasattr(a, "detach"):
        t = a.detach().cpu()
        return t.double().numpy(), str(t.dtype).replace("torch.", "")
    a = np.asarray(a)
    if a.dtype == np.uint16 and dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64), "bfloat16"
    if not np.issubdtype(a.dtype, np.floating):
        raise TypeError(f"{name}: expected floating values, got {a.dtype}")
    return a.astype(np.float64), a.dtype.name


def _model(q, k, queries, keys, heads, scale, encoding, alibi, scale_bias=False):
    """(exact scores [heads, Q, K], Σ|q_c k_c| scaled, |bias|) of one hypothesis."""
    group = heads // k.shape[1]
    kk = np.repeat(k, group, axis=1)
    dots = np.einsum("ihc,jhc->hij", q, kk)
    absdots = np.einsum("ihc,jhc->hij", np.abs(q), np.abs(kk))
    bias = np.zeros_like(dots)
    if encoding == "alibi":
        bias = np.asarray(_native.reference_alibi(heads, np.asarray(queries), np.asarray(keys), dtype="float64",
                                                  **alibi), dtype=np.float64)
    exact = scale * (dots + bias) if scale_bias else scale * dots + bias
    return exact, abs(scale) * absdots, np.abs(bias) * (abs(scale) if scale_bias else 1.0)


def _judge(s, exact, scaled_abs, abs_bias, d, u_out, tiny, masked):
    budget = (d + 2) * U32 * scaled_abs + 3 * U32 * abs_bias + (U32 + u_out) * np.abs(exact) + tiny
    finite = np.isfinite(s)
    ok = np.where(masked & np.isneginf(s), True, finite & (np.abs(s - exact) <= budget))
    return ok, budget


def check_scores(scores, q, k, *, queries=None, keys=None, scale=None, encoding="alibi", max_bias=8.0,
                 alibi_slopes="interpolated", alibi_form="causal", scale_bias=False, dtype=None):
    """Check pre-softmax attention scores [heads, queries, keys] (module docstring). q: [queries, heads, d]; k:
    [keys, kv_heads, d] (grouped-query: kv_heads divides heads); queries, keys: their positions (default: keys
    0..K-1 and the queries the last Q of them, bottom-right, as a decode step or a chunk sees them); scale: the
    softmax scale (default 1/sqrt(d)); encoding "alibi" (max_bias, alibi_slopes "interpolated" or "direct",
    alibi_form "causal" -m(i-j), "symmetric" -m|i-j| (flash-attention's), "bloom" m·j) or "none"; scale_bias:
    the scale multiplies the bias too, scale·(q·k + bias) (HF's Falcon). Returns a ScoresReport."""
    if encoding not in ("alibi", "none"):
        raise ValueError(f"encoding: expected 'alibi' or 'none' (RoPE inside the scores is not built yet); got "
                         f"{encoding!r}")
    s, out_type = _f64(scores, "scores", dtype)
    q, _ = _f64(q, "q", dtype)
    k, _ = _f64(k, "k", dtype)
    if q.ndim != 3 or 0 in q.shape:
        raise ValueError(f"q: expected [queries, heads, d], none empty; got {q.shape}")
    if k.ndim != 3 or 0 in k.shape or k.shape[2] != q.shape[2] or q.shape[1] % k.shape[1]:
        raise ValueError(f"k: expected [keys, kv_heads, d] beside q's {q.shape} (kv_heads dividing heads); got "
                         f"{k.shape}")
    heads, nq, nk, d = q.shape[1], q.shape[0], k.shape[0], q.shape[2]
    if s.shape != (heads, nq, nk):
        raise ValueError(f"scores: expected [heads, queries, keys] = {(heads, nq, nk)}, got {s.shape}")
    keys = np.arange(nk) if keys is None else np.asarray(keys, dtype=np.int64).ravel()
    if queries is None and nq > nk:
        raise ValueError(f"queries: {nq} queries over {nk} keys have no bottom-right positions; give them")
    queries = keys[nk - nq:] if queries is None else np.asarray(queries, dtype=np.int64).ravel()
    if len(queries) != nq or len(keys) != nk:
        raise ValueError(f"{'queries' if len(queries) != nq else 'keys'}: expected {nq if len(queries) != nq else nk} "
                         f"positions, got {len(queries) if len(queries) != nq else len(keys)}")
    scale = 1.0 / np.sqrt(d) if scale is None else float(scale)
    alibi = {"max_bias": max_bias, "alibi_slopes": alibi_slopes, "alibi_form": alibi_form}
    u_out, tiny = _UNIT.get(out_type, U32), _TINY.get(out_type, 0.0)
    masked = (keys[None, :] > queries[:, None])[None, :, :]
    exact, scaled_abs, abs_bias = _model(q, k, queries, keys, heads, scale, encoding, alibi, scale_bias)
    ok, budget = _judge(s, exact, scaled_abs, abs_bias, d, u_out, tiny, masked)
    wrong = int((~ok).sum())
    lines = [f"attention scores: {heads} heads x {nq} queries (positions {queries[0]}..{queries[-1]}) x {nk} keys "
             f"({keys[0]}..{keys[-1]}), d {d}, scale {scale:g}, {encoding}"
             f"{' ' + alibi_form + ', ' + alibi_slopes + ' slopes, max_bias ' + format(max_bias, 'g') if encoding == 'alibi' else ''}, "
             f"{out_type}",
             f"budget: scale*(d + 2)*2^-24*sum|q_c k_c| + 3*2^-24*|bias| + (2^-24 + u_{out_type})*|S|: float32 "
             f"accumulation, a float32 bias"]
    worst, diagnosis = None, []
    if wrong:
        err = np.where(ok, 0.0, np.nan_to_num(np.abs(s - exact), nan=np.inf, posinf=np.inf) / budget)
        h, i, j = (int(v) for v in np.unravel_index(np.argmax(err), err.shape))
        worst = {"head": h, "query": i, "key": j, "value": float(s[h, i, j]), "exact": float(exact[h, i, j]),
                 "error": float(abs(s[h, i, j] - exact[h, i, j])), "budget": float(budget[h, i, j])}
        lines.append(f"{wrong} of {s.size} scores over budget; worst: head {h} query {i} key {j}: got "
                     f"{worst['value']!r}, exact {worst['exact']!r}, budget {worst['budget']:.3g}")
        diagnosis = _diagnose(s, q, k, queries, keys, heads, scale, encoding, alibi, scale_bias, d, u_out, tiny,
                              masked)
    text = closing(lines, wrong, diagnosis, "none of the known mistakes reproduces the scores within the budget")
    return ScoresReport(not wrong, wrong, worst, diagnosis, text)


def _candidates(queries, keys, scale, encoding, alibi, scale_bias):
    """The mistakes engines ship, each a whole hypothesis: (words, queries, scale, encoding, alibi, scale_bias)."""
    nq, sb = len(queries), scale_bias
    out = [(f"the query offset dropped: queries numbered from 0, not from {queries[0]} (keys − queries)",
            np.arange(nq), scale, encoding, alibi, sb),
           ("no softmax scale (1, not 1/sqrt(d))", queries, 1.0, encoding, alibi, sb),
           ("the scale applied to the bias too: scale*(q.k + bias)" if not sb else
            "the bias left unscaled: scale*q.k + bias (given: scale_bias, Falcon's)", queries, scale, encoding,
            alibi, not sb)]
    if encoding == "alibi":
        out.append(("no bias", queries, scale, "none", alibi, sb))
        for form in ("causal", "symmetric", "bloom"):
            if form != alibi["alibi_form"]:
                out.append((f"alibi_form {form} (given: {alibi['alibi_form']})", queries, scale, encoding,
                            dict(alibi, alibi_form=form), sb))
        other = "direct" if alibi["alibi_slopes"] == "interpolated" else "interpolated"
        out.append((f"alibi_slopes {other} (given: {alibi['alibi_slopes']})", queries, scale, encoding,
                    dict(alibi, alibi_slopes=other), sb))
    else:
        out.append(("an ALiBi bias (causal, interpolated slopes, max_bias 8)", queries, scale, "alibi",
                    {"max_bias": 8.0, "alibi_slopes": "interpolated", "alibi_form": "causal"}, False))
    return out


def _diagnose(s, q, k, queries, keys, heads, scale, encoding, alibi, scale_bias, d, u_out, tiny, masked):
    fits = []
    for words, qpos, sc, enc, al, scale_bias in _candidates(queries, keys, scale, encoding, alibi, scale_bias):
        m = (keys[None, :] > np.asarray(qpos)[:, None])[None, :, :] | masked
        exact, scaled_abs, abs_bias = _model(q, k, qpos, keys, heads, sc, enc, al, scale_bias)
        ok, _ = _judge(s, exact, scaled_abs, abs_bias, d, u_out, tiny, m)
        if ok.all():
            fits.append(words)
    return fits
