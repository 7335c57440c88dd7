"""transformers: LlamaRotaryEmbedding (ROPE_INIT_FUNCTIONS behind it) with apply_rotary_pos_emb for every rope type,
one module per config kept across calls as a model keeps it; Whisper's sinusoids; BLOOM's build_alibi_tensor."""
from engines.row import HEAD_DIMS_ABOVE_2, Row
from engines.rows._adapters import WHISPER, from_bhsd, hf_words, llama_rotary_modules, to_bhsd, whisper_table

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
# M-RoPE's three sections need three pairs: the head sizes of 6 and more (a smaller one is drawn as text RoPE, which
# Qwen2-VL's module would split by its default section)
MROPE_HEAD_DIMS = tuple(d for d in HEAD_DIMS_ABOVE_2 if d >= 6)


def llama_rope():
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    module_of = llama_rotary_modules()

    def fn(x, positions, config):
        q = to_bhsd(x)
        cos, sin = module_of(config)(q, positions[None])
        return from_bhsd(apply_rotary_pos_emb(q, q, cos, sin)[0])

    return fn


def qwen2_vl_rope():
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding, apply_rotary_pos_emb

    def fn(x, positions, config):  # positions [3, tokens]: (temporal, height, width), mrope_section's chunks
        q = to_bhsd(x)
        cos, sin = Qwen2VLRotaryEmbedding(Qwen2VLTextConfig(**hf_words(config)))(q, positions[:, None, :])
        return from_bhsd(apply_rotary_pos_emb(q, q, cos, sin)[0])

    return fn


def gpt_neox_rope(own_names):
    def kernel():
        from transformers import GPTNeoXConfig
        from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

        def fn(x, positions, config):  # the first rotary_dim channels rotated
            words = hf_words(config)
            if own_names:  # GPT-NeoX's config.json names: rotary_pct, rotary_emb_base
                words["rotary_pct"] = words.pop("partial_rotary_factor", 1.0)
                words["rotary_emb_base"] = words.pop("rope_theta")
            q = to_bhsd(x)
            cos, sin = GPTNeoXRotaryEmbedding(GPTNeoXConfig(**words))(q, positions[None])
            return from_bhsd(apply_rotary_pos_emb(q, q, cos, sin)[0])

        return fn

    return kernel


def whisper_sinusoids():
    from transformers.models.whisper.modeling_whisper import sinusoids
    return whisper_table(sinusoids)


def bloom_alibi():
    import torch
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    def fn(config):
        heads = config["num_attention_heads"]
        # build_alibi_tensor's bias at key position 1 is the head's slope times 1
        alibi = build_alibi_tensor(torch.ones(1, 2, dtype=torch.long), heads, getattr(torch, config["dtype"]))
        return alibi[:, 0, 1].contiguous()

    return fn


DYNAMIC = ("Measured: transformers' `dynamic_rope_update` keeps the NTK base of the longest call made so far while "
           "later calls stay past `max_position_embeddings` (it resets only below it), so a call after a longer one is "
           "rotated under the longer call's base: the output depends on the module's history, by transformers' "
           "design. The diagnosis's evidence: the same call made first, on a module that had not met the longer one, "
           "passes.")
ROWS = [Row("transformers", "LlamaRotaryEmbedding + apply_rotary_pos_emb", "rope", t, dtype, llama_rope,
            {"rope_types": (t,), "layout": "halfsplit"}, note=DYNAMIC if t == "dynamic" else "")
        for t in ROPE_TYPES for dtype in ("float32", "bfloat16")]
ROWS += [Row("transformers", "Qwen2VLRotaryEmbedding + apply_rotary_pos_emb", "rope", "mrope", dtype, qwen2_vl_rope,
             {"forms": ("mrope",), "rope_types": ("default",), "layout": "halfsplit", "head_dims": MROPE_HEAD_DIMS})
         for dtype in ("float32", "bfloat16")]
NEOX_NAMES = ("Measured: transformers' GPTNeoXConfig reads GPT-NeoX's own names (`rotary_pct`, `rotary_emb_base`) and "
              "silently ignores the standard `partial_rotary_factor` and `rope_theta` that other models' configs use: "
              "given partial_rotary_factor 0.5 and rope_theta 500000 it keeps 0.25 and 10000, with no warning. "
              "A config "
              "converted to the standard names runs GPT-NeoX's RoPE on the wrong rotary width and base.")
ROWS += [Row("transformers", "GPTNeoXRotaryEmbedding + apply_rotary_pos_emb", "rope", "partial", dtype,
             gpt_neox_rope(True), {"forms": ("partial",), "rope_types": ("default",), "layout": "halfsplit"})
         for dtype in ("float32", "bfloat16")]
ROWS += [Row("transformers", "GPTNeoXConfig(partial_rotary_factor, rope_theta) + its RoPE", "rope", "partial",
             "float32", gpt_neox_rope(False), {"forms": ("partial",), "rope_types": ("default",),
                                               "layout": "halfsplit"}, note=NEOX_NAMES)]
ROWS += [Row("transformers", "whisper.sinusoids", "sinusoidal", "audio", "float32", whisper_sinusoids, WHISPER)]
ROWS += [Row("transformers", "bloom.build_alibi_tensor", "alibi", "slopes", dtype, bloom_alibi, {"max_bias": 8.0})
         for dtype in ("float32", "bfloat16")]
