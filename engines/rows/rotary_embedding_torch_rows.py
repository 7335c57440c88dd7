"""rotary-embedding-torch: RotaryEmbedding.rotate_queries_or_keys (interpolate_factor: linear scaling), one module
per config kept across calls with its frequency cache, as a model keeps it. It takes a sequence's offset, not
positions: the rows draw the scenarios whose positions are consecutive."""
from engines.row import HEAD_DIMS_ABOVE_2, Row
from engines.rows._adapters import from_bhsd, kept_modules, to_bhsd


def rope():
    from rotary_embedding_torch import RotaryEmbedding

    def make(config):
        scaling = config.get("rope_scaling") or {}
        return RotaryEmbedding(config["head_dim"], theta=config["rope_theta"],
                               interpolate_factor=scaling.get("factor", 1.0))

    module_of = kept_modules(make)

    def fn(x, positions, config):
        first = int(positions[0])
        if positions.tolist() != list(range(first, first + len(positions))):
            raise ValueError("rotate_queries_or_keys takes consecutive positions")
        return from_bhsd(module_of(config).rotate_queries_or_keys(to_bhsd(x), offset=first))

    return fn


SCENARIOS = ("prefill", "decode", "chunked")
BF16 = ("Measured: `rotate_queries_or_keys` makes the positions as "
        "`(torch.arange(seq_len, dtype=t.dtype) + offset) / interpolate_factor` (`get_seq_pos`), so a bfloat16 q has "
        "its positions rounded to bfloat16 (exact to 256 only)")
BF16_POSITIONS = {"default": f"{BF16}, as the diagnosis reads back. The same code passes in float32.",
                  "linear": f"{BF16}, and under linear scaling the quotient too: position 49 / 3.99 already fails. The "
                            "diagnosis reads the effect (positions off by offsets that change from row to row) and "
                            "names a packed batch's offsets as the likely cause; the cause is the quotient's rounding "
                            "(no convention the check knows rounds p / factor). The same code passes in float32."}
HEAD_DIM_2 = ("Measured: `RotaryEmbedding(2)` raises ZeroDivisionError: its constructor computes "
              "`theta *= theta_rescale_factor ** (dim / (dim - 2))` even when the factor is 1. "
              "No model uses head_dim 2.")
ROWS = [Row("rotary-embedding-torch", "RotaryEmbedding.rotate_queries_or_keys", "rope", t, dtype, rope,
            {"rope_types": (t,), "layout": "interleaved", "scenarios": SCENARIOS, "head_dims": HEAD_DIMS_ABOVE_2},
            note=BF16_POSITIONS[t] if dtype == "bfloat16" else "")
        for t in ("default", "linear") for dtype in ("float32", "bfloat16")]
ROWS += [Row("rotary-embedding-torch", "RotaryEmbedding.rotate_queries_or_keys", "rope", "default, head_dim 2",
             "float32", rope, {"rope_types": ("default",), "layout": "interleaved", "scenarios": SCENARIOS,
                               "head_dims": (2,)}, examples=10, note=HEAD_DIM_2)]
