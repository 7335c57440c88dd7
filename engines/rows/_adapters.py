"""What several rows share: the driver's x [tokens, heads, head_dim] as the [batch, heads, tokens, head_dim] most
engines take and back; a config as transformers' config classes take it; one HF rotary module per config, kept across
calls as a model keeps it; Whisper's table (transformers' copy and openai-whisper's are the same function)."""
import json


def to_bhsd(x):
    return x.transpose(0, 1)[None]


def from_bhsd(y):
    return y[0].transpose(0, 1).contiguous()


def torch_dtype(name):
    import torch
    return getattr(torch, name)


def hf_words(config):
    """The drawn config as a transformers config class's keywords: one head of head_dim channels."""
    return dict(config, num_attention_heads=1, hidden_size=config["head_dim"])


def kept_modules(make):
    """module_of(config): make(config) once per config, the same module for every later call of that config."""
    modules = {}

    def module_of(config):
        key = json.dumps(config, sort_keys=True)
        if key not in modules:
            modules[key] = make(config)
        return modules[key]

    return module_of


def llama_rotary_modules():
    """transformers' LlamaRotaryEmbedding, one per config (kept_modules)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    return kept_modules(lambda config: LlamaRotaryEmbedding(LlamaConfig(**hf_words(config))))


def whisper_table(sinusoids):
    """fn(positions, config) over a Whisper sinusoids(length, channels, max_timescale): its rows at the positions."""
    def fn(positions, config):
        table = sinusoids(int(positions.max()) + 1, config["dim"], max_timescale=config["base"])
        return table[positions].to(torch_dtype(config["dtype"]))

    return fn


# Whisper's table: [sin | cos], w_i = 10000^(-i/(d/2 - 1)) (diffusers' downscale_freq_shift 1), positions from 0.
WHISPER = {"layout": "concatenated", "downscale_freq_shift": 1, "flip_sin_to_cos": False, "scale": 1.0,
           "scenarios": ("prefill", "chunked"), "max_position": 1 << 14}
