"""torch 2's torch.compile (inductor, generating C++ for the CPU) of transformers' LlamaRotaryEmbedding.forward with
apply_rotary_pos_emb: the same HF code as transformers_rows, compiled, dynamic shapes."""
from engines.row import Row
from engines.rows._adapters import from_bhsd, llama_rotary_modules, to_bhsd


def compiled_llama_rope():
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    torch._dynamo.config.cache_size_limit = 256  # a recompile per config drawn (its attributes are guarded)

    def rotate(module, q, position_ids):
        cos, sin = module(q, position_ids)
        return apply_rotary_pos_emb(q, q, cos, sin)[0]

    compiled, module_of = torch.compile(rotate, dynamic=True), llama_rotary_modules()

    def fn(x, positions, config):
        return from_bhsd(compiled(module_of(config), to_bhsd(x), positions[None]))

    return fn


ROWS = [Row("torch", "torch.compile(LlamaRotaryEmbedding + apply_rotary_pos_emb)", "rope", t, dtype,
            compiled_llama_rope, {"rope_types": (t,), "layout": "halfsplit"}, examples=12, requires=("transformers",))
        for t in ("default", "llama3") for dtype in ("float32", "bfloat16")]
