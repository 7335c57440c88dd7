"""torch 2's torch.compile (inductor, generating C++ for the CPU) of transformers' LlamaRotaryEmbedding.forward with
apply_rotary_pos_emb: the same HF code as transformers_rows, compiled, dynamic shapes."""
import json

from engines.row import Row
from engines.rows._torch_layout import from_bhsd, to_bhsd


def compiled_llama_rope():
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    torch._dynamo.config.cache_size_limit = 256  # a recompile per config drawn (its attributes are guarded)

    def rotate(module, q, position_ids):
        cos, sin = module(q, position_ids)
        return apply_rotary_pos_emb(q, q, cos, sin)[0]

    compiled, modules = torch.compile(rotate, dynamic=True), {}

    def fn(x, positions, config):
        key = json.dumps(config, sort_keys=True)
        if key not in modules:
            words = dict(config, num_attention_heads=1, hidden_size=config["head_dim"])
            modules[key] = LlamaRotaryEmbedding(LlamaConfig(**words))
        return from_bhsd(compiled(modules[key], to_bhsd(x), positions[None]))

    return fn


ROWS = [Row("torch", "torch.compile(LlamaRotaryEmbedding + apply_rotary_pos_emb)", "rope", t, dtype,
            compiled_llama_rope, {"rope_types": (t,), "layout": "halfsplit"}, examples=12, requires=("transformers",))
        for t in ("default", "llama3") for dtype in ("float32", "bfloat16")]
