"""vLLM's rotary op, get_rope(...).forward_native (its PyTorch path; the CPU build's compiled op is not driven here).
PyPI's vllm wheels are CUDA builds and the CPU build is not on PyPI, so these rows run only where one is installed by
hand; the adapter follows vLLM 0.6's get_rope signature and has not run against a current vLLM."""
from engines.row import Row


def vllm_rope():
    from vllm.model_executor.layers.rotary_embedding import get_rope

    def fn(x, positions, config):
        d, tokens = config["head_dim"], x.shape[0]
        rope = get_rope(d, rotary_dim=d, max_position=int(positions.max()) + 1, base=config["rope_theta"],
                        is_neox_style=True, dtype=x.dtype)
        q = x.reshape(tokens, -1).clone()
        q_out, _ = rope.forward_native(positions, q, q.clone())
        return q_out.reshape(x.shape)

    return fn


NOT_ON_PYPI = ("Measured 2026-12-06: PyPI's vllm 0.34.0 is a 239 MB CUDA wheel that pins torch==2.14.0 (the matrix's "
               "is 2.15.0), torchaudio, torchvision and flashinfer-python; vLLM's CPU build is not on PyPI. "
               "A CPU build "
               "installed by hand into the leg's environment runs these rows.")
ROWS = [Row("vllm", "get_rope(...).forward_native", "rope", "default", dtype, vllm_rope,
            {"rope_types": ("default",), "layout": "halfsplit", "max_position": 1 << 16}, note=NOT_ON_PYPI)
        for dtype in ("float32", "bfloat16")]
