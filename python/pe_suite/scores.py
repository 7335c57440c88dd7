"""Attention scores with the encoding inside (issue 51, item 4): an engine's pre-softmax scores
S[h, i, j] = scale·(R(m_i)q_i · R(n_j)k_j) + bias[h, i, j] with RoPE (FlashInfer's pos_encoding_mode="ROPE_LLAMA",
flash-attention's flash_attn_with_kvcache(rotary_cos, ...)), ALiBi's bias (flash-attention's `alibi_slopes`,
FlashInfer's "ALIBI", HF's BLOOM and MPT `baddbmm(alibi, q, k^T)`; HF's Falcon scales the bias too,
scale·(q·k + bias): scale_bias=True) or neither, checked against the exact scores with the dot product's error
model, the alignment and query offset named when they are wrong.

The check is the engine's (pe/check/scores.h, also `pe-suite check --family scores`): q and k as given (exact), RoPE's
exact rotation of each, their dot product in double, ALiBi's bias correctly rounded. The budget of an engine that
accumulates in float32 (flash-attention, FlashInfer, CPU matmuls do): scale·(d + 2)·2^-24·Σ_c |q'_c·k'_c| (the
products and the sums in any order, the scale's product) + 3·2^-24·|bias| (the slope in float32, the distance's
product, the add) + (2^-24 + u_out)·|S| (the sum's rounding and the output's) + denorm_min(out); with RoPE each
rotated element within the element budget of HF's rotate_half in q's and k's type (the rope.torch_f32, _bf16 or
_f16 contract), carried through the dot product. A masked element (-inf, or HF eager's finfo.min plus the score,
where the key lies after the query's position) is accepted there and nowhere else."""
from . import _native
from ._keywords import checked
from ._verdict import Verdict

_check_scores = checked(_native._check_scores)


class ScoresReport(Verdict):
    """check_scores's verdict: `.passed`, `.wrong` (elements over budget), `.worst` (the worst element: head,
    query, key, value, exact, budget), `.diagnosis` (what a failing array fits), `.report` (the engine's Report:
    to_dict() is its JSON), the text."""

    def __init__(self, report):
        doc = report.to_dict()
        self.report, self.passed, self.wrong = report, report.passed, doc["violations"]
        self.worst = (doc.get("worst") or [None])[0]
        self.diagnosis = [e["fits"] for e in doc.get("explanations") or []]
        self.text = report.text


def check_scores(scores, q, k, *, queries=None, keys=None, scale=None, encoding="alibi", max_bias=None,
                 alibi_slopes=None, alibi_form=None, scale_bias=False, dtype=None, **rope_keywords):
    """Check pre-softmax attention scores [heads, queries, keys] (module docstring). q: [queries, heads, d]; k:
    [keys, kv_heads, d] (grouped-query: kv_heads divides heads), both before the encoding; queries, keys: their
    positions (default: keys 0..K-1 and the queries the last Q of them, bottom-right, as a decode step or a chunk
    sees them); scale: the softmax scale (default 1/sqrt(d)); encoding "rope" (the rotation's keywords as
    check_rope's: base, layout, rotary_dim, rotary_offset, scaling, hf_config, layer, layer_type), "alibi"
    (max_bias 8, alibi_slopes "interpolated" or "direct", alibi_form "causal" -m(i-j), "symmetric" -m|i-j|
    (flash-attention's), "bloom" m·j) or "none"; scale_bias: the scale multiplies the bias too, scale·(q·k + bias)
    (HF's Falcon); dtype: "bfloat16" reads uint16 arrays as its bits. Arrays: torch tensors of any float type or
    numpy arrays, read in their own type (the budget's u_out is the scores', u_in q's and k's). Returns a
    ScoresReport."""
    given = [n for n, v in (("max_bias", max_bias), ("alibi_slopes", alibi_slopes), ("alibi_form", alibi_form),
                            ("scale_bias", scale_bias or None)) if v is not None]
    if encoding != "alibi" and given:
        raise ValueError(f"{given[0]}: applies to encoding='alibi' (given: {encoding!r})")
    return ScoresReport(_check_scores(
        scores, q, k, queries=queries, keys=keys, scale=scale, encoding=encoding, max_bias=max_bias,
        alibi_slopes=alibi_slopes, alibi_form=alibi_form, scale_bias=scale_bias, dtype=dtype, **rope_keywords))
