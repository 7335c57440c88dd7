"""torchtune: RotaryPositionalEmbeddings and Llama3ScaledRoPE (interleaved pairs, a cos/sin cache of max_seq_len
rows indexed by input_pos), each built with a cache reaching the call's largest position."""
from engines.row import Row


def rope(llama3):
    def kernel():
        from torchtune.models.llama3_1._position_embeddings import Llama3ScaledRoPE
        from torchtune.modules import RotaryPositionalEmbeddings

        def fn(x, positions, config):
            d, rows = config["head_dim"], int(positions.max()) + 1
            if llama3:
                s = config["rope_scaling"]
                module = Llama3ScaledRoPE(d, max_seq_len=rows, base=config["rope_theta"], scale_factor=s["factor"],
                                          low_freq_factor=s["low_freq_factor"],
                                          high_freq_factor=s["high_freq_factor"],
                                          old_context_len=s["original_max_position_embeddings"])
            else:
                module = RotaryPositionalEmbeddings(d, max_seq_len=rows, base=config["rope_theta"])
            return module(x[None], input_pos=positions[None])[0]  # [batch, seq, heads, head_dim]

        return fn

    return kernel


ROWS = [Row("torchtune", name, "rope", t, dtype, rope(t == "llama3"),
            {"rope_types": (t,), "layout": "interleaved", "max_position": 1 << 16})
        for name, t in (("RotaryPositionalEmbeddings", "default"), ("Llama3ScaledRoPE", "llama3"))
        for dtype in ("float32", "bfloat16")]
