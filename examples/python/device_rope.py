"""A GPU kernel under pe_suite.verify_rope: the caller's wrapper moves the tensors to the device, calls the engine's
op with the engine's own arguments, waits for it, and hands the result back on the CPU.

verify_rope calls fn(x, positions, config) with CPU tensors and the model's HF config; an engine's op has its own
signature. vLLM's (csrc/pos_encoding_kernels.cu, vllm._custom_ops.rotary_embedding) is

    rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox)

in place on query [tokens, heads * head_size], with a cos/sin cache [max_position, rotary_dim] that the engine's
RotaryEmbedding builds from the config (its own frequency and scaling code, which is what verify_rope means to
drive). Here `rotary_embedding` stands in for the CUDA op with the same signature and the same arithmetic in
PyTorch, so the example runs on any machine; on a CUDA machine, import the engine's op in its place. A Triton
kernel is wrapped the same way: launch it inside `fn` on device tensors.

    import pe_suite
    from device_rope import on_device
    pe_suite.verify_rope(on_device("cuda"), rope_types=("default", "linear"))
"""
import torch


def rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox):
    """vLLM's op in PyTorch (its reference forward_native): query rotated in place; key may be None."""
    rotary_dim = cos_sin_cache.shape[-1]
    cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)  # [tokens, rotary_dim / 2] each
    for t in (query, key) if key is not None else (query,):
        x = t.view(t.shape[0], -1, head_size)[..., :rotary_dim]
        if is_neox:
            x1, x2 = x[..., : rotary_dim // 2], x[..., rotary_dim // 2:]
        else:
            x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[:, None, :].to(x.dtype), sin[:, None, :].to(x.dtype)  # (already x's dtype from the wrapper)
        o1, o2 = x1 * c - x2 * s, x2 * c + x1 * s
        if is_neox:
            x.copy_(torch.cat((o1, o2), dim=-1))
        else:
            x.copy_(torch.stack((o1, o2), dim=-1).flatten(-2))


def cos_sin_cache(config, positions, device):
    """The engine's RotaryEmbedding._compute_cos_sin_cache for unscaled and linear RoPE, from the HF config:
    inv_freq = 1 / base^(2i/d), positions divided by a linear factor, angles and cache in float32. The engine
    builds rows 0 .. max_position_embeddings - 1; here only the rows of `positions` (each row is computed alone,
    so its bits are the full table's), which keeps a decode step at position 2^21 from building 2^21 rows."""
    head_dim = config["head_dim"]
    rotary_dim = int(head_dim * config.get("partial_rotary_factor", 1.0))
    scaling = config.get("rope_scaling") or {}
    factor = scaling.get("factor", 1.0) if scaling.get("rope_type", scaling.get("type")) == "linear" else 1.0
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, rotary_dim, 2, dtype=torch.float, device=device)
                                               / rotary_dim))
    t = positions.to(device=device, dtype=torch.float) / factor
    freqs = torch.outer(t, inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1)


def on_device(device="cuda", is_neox=True, op=rotary_embedding):
    """fn for verify_rope: the tensors moved to `device`, the engine's op called there, the result back on the CPU.
    is_neox: the half-split layout (verify_rope's layout="halfsplit"); False: interleaved (GPT-J)."""
    def fn(x, positions, config):
        tokens, heads, head_dim = x.shape
        rows, index = torch.unique(positions, return_inverse=True)  # the cache's rows this call reads
        # vLLM's forward casts its cache to the query's dtype before the op (the op reads it as scalar_t).
        cache = cos_sin_cache(config, rows, device).to(x.dtype)
        query = x.to(device).reshape(tokens, heads * head_dim).contiguous()
        op(index.to(device), query, None, head_dim, cache, is_neox)
        if str(device).startswith("cuda"):
            torch.cuda.synchronize()  # the op runs asynchronously: wait before reading its output
        return query.reshape(tokens, heads, head_dim).cpu()

    fn.__qualname__ = f"on_device({device!r}, is_neox={is_neox})"  # the failure file's key
    return fn
