"""Liger-Kernel's Triton RoPE (LigerRopeFunction, what liger's patch puts in place of HF's apply_rotary_pos_emb)
run by Triton's interpreter on the CPU (TRITON_INTERPRET=1, set by scripts/engines.sh), on cos/sin from transformers'
LlamaRotaryEmbedding as a patched model feeds it."""
import os

from engines.row import Row
from engines.rows._adapters import from_bhsd, llama_rotary_modules, to_bhsd


def liger_rope():
    if os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("Liger's Triton kernel runs on the CPU only under TRITON_INTERPRET=1")
    from liger_kernel.ops.rope import LigerRopeFunction
    module_of = llama_rotary_modules()

    def fn(x, positions, config):
        q = to_bhsd(x).contiguous()
        cos, sin = module_of(config)(q, positions[None])
        q_out, _ = LigerRopeFunction.apply(q, q.clone(), cos, sin)
        return from_bhsd(q_out)

    return fn


INTERPRETER_BF16 = ("Measured: Triton's interpreter (TRITON_INTERPRET=1) multiplies two bfloat16 tensors wrongly: "
                    "a one-line kernel storing x * c with c = 1 gives 2, -0, -3.7e19, 0 for x = 1, 0.5, 3, -2 "
                    "(engines/tests/test_triton_interpreter.py pins it). The failure is the interpreter's, not "
                    "Liger's bfloat16 kernel on a GPU, which this machine cannot run.")
ROWS = [Row("liger-kernel", "LigerRopeFunction (Triton, interpreted)", "rope", t, dtype, liger_rope,
            {"rope_types": (t,), "layout": "halfsplit"}, examples=30, requires=("transformers", "triton"),
            note=INTERPRETER_BF16 if dtype == "bfloat16" else "")
        for t in ("default", "llama3") for dtype in ("float32", "bfloat16")]
