#!/usr/bin/env python3
"""The speed peers, side by side in one run, one thread: RoPE over 2048 tokens x 32 heads x 128 float32 at positions
0..2047 (base 10000, rotate_half's layout) by pe-suite's kernels (pe_bench, Google Benchmark, buffers touched before
the timed loop) and by what a user would pick instead: MLX's mlx.core.fast.rope on the CPU, transformers'
LlamaRotaryEmbedding + apply_rotary_pos_emb eager and under torch.compile (inductor's C++), vLLM's CPU rotary op
where it is installed, and numpy written from the paper's formula; then pe_suite.check_rope of that output against
the float64 numpy reference a user would write and compare with instead. Medians; ratios against pe-suite's
rope.hwy (the kernels) and against check_rope (the checks).

    python engines/speed_peers.py --pe-bench build/release/bench/pe_bench [--reps 7] [--out speed_peers.md]"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import time

import numpy as np

T, H, D, BASE = 2048, 32, 128, 10000.0
ELEMENTS = T * H * D
KERNELS = ("hwy", "exact", "torch_f32")
CHECK = "pe_suite.check_rope (every element against the exact value, one thread)"


THREADS = {}  # a peer's median CPU time over its median wall time: above 1, it ran on more than one thread


def median_time(f, reps, name):
    f()  # warm: compiled code, caches, first-touch pages of the output
    walls, cpus = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        f()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    THREADS[name] = statistics.median(cpus) / statistics.median(walls)
    return statistics.median(walls)


def pe_bench_times(exe, reps):
    names = "|".join(KERNELS)
    out = subprocess.run([exe, f"--benchmark_filter=^rope/rope.halfsplit.({names})/f32/T{T}/H{H}/D{D}/start$",
                          f"--benchmark_repetitions={reps}", "--benchmark_report_aggregates_only=true",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    found = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            variant = json.loads(b["label"])["variant"]
            unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]]
            found[f"pe-suite {variant} (pe_bench)"] = b["real_time"] * unit
    return found


def numpy_rope(x, positions, dtype):
    """The paper's formula in numpy, every step in `dtype` (float32: a kernel; float64: a user's reference)."""
    inv_freq = 1.0 / BASE ** (np.arange(0, D, 2, dtype=dtype) / D)
    angles = positions[:, None].astype(dtype) * inv_freq[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    x = x.astype(dtype)
    a, b = x[..., : D // 2], x[..., D // 2:]
    return np.concatenate((a * cos - b * sin, b * cos + a * sin), axis=-1)


def python_peers(x, positions, reps):
    import torch
    torch.set_num_threads(1)
    found, missing = {}, {}
    name = "numpy float32 (the formula)"
    found[name] = median_time(lambda: numpy_rope(x, positions, np.float32), reps, name)
    try:
        import mlx.core as mx
        a = mx.array(x.transpose(1, 0, 2)[None])
        mx.eval(a)
        name = "mlx.core.fast.rope (CPU)"
        found[name] = median_time(
            lambda: mx.eval(mx.fast.rope(a, D, traditional=False, base=BASE, scale=1.0, offset=0)), reps, name)
    except ImportError as e:
        missing["mlx.core.fast.rope"] = f"not installed ({e})"
    try:
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
        module = LlamaRotaryEmbedding(LlamaConfig(head_dim=D, num_attention_heads=1, hidden_size=D, rope_theta=BASE))
        q, pos = torch.from_numpy(x).transpose(0, 1)[None].contiguous(), torch.from_numpy(positions)[None]

        def hf(q, pos):  # k is one head, so that the time is q's rotation (apply_rotary_pos_emb rotates both)
            cos, sin = module(q, pos)
            return apply_rotary_pos_emb(q, q[:, :1], cos, sin)[0]

        with torch.no_grad():
            name = "transformers eager"
            found[name] = median_time(lambda: hf(q, pos), reps, name)
            compiled, name = torch.compile(hf), "transformers under torch.compile (inductor)"
            found[name] = median_time(lambda: compiled(q, pos), reps, name)
    except ImportError as e:
        missing["transformers"] = f"not installed ({e})"
    try:
        from vllm.model_executor.layers.rotary_embedding import get_rope
        rope = get_rope(D, rotary_dim=D, max_position=T, base=BASE, is_neox_style=True, dtype=torch.float32)
        flat, key, pos = torch.from_numpy(x).reshape(T, H * D), torch.from_numpy(x[:, :1]).reshape(T, D), \
            torch.from_numpy(positions)
        found["vllm rotary op"] = median_time(lambda: rope.forward_native(pos, flat, key), reps, "vllm rotary op")
    except ImportError as e:
        missing["vllm rotary op"] = f"not measured: vllm does not import here ({type(e).__name__}); PyPI's wheels " \
                                    "are CUDA builds and its CPU build is not on PyPI"
    return found, missing


def check_peers(x, positions, reps):
    import pe_suite
    y = numpy_rope(x, positions, np.float32).astype(np.float32)

    def user_reference():  # what a user writes instead of pe-suite: float64 numpy and a tolerance
        want = numpy_rope(x, positions, np.float64)
        return np.max(np.abs(y - want)) <= 1e-5 * np.max(np.abs(want))

    ours, theirs = CHECK, "numpy float64 reference and a max-error compare"
    return {ours: median_time(lambda: pe_suite.check_rope(x, y, positions, base=BASE, threads=1), reps, ours),
            theirs: median_time(user_reference, reps, theirs)}


def table(title, times, baseline):
    lines = [f"| {title} | median | ns per element | relative to {baseline} | CPU / wall |",
             "|---|---:|---:|---:|---:|"]
    for name, t in sorted(times.items(), key=lambda kv: kv[1]):
        threads = f"{THREADS[name]:.2f}" if name in THREADS else "1 (pe_bench: one thread)"
        lines.append(f"| {name} | {t * 1e3:.2f} ms | {t / ELEMENTS * 1e9:.2f} | {t / times[baseline]:.2f}x | "
                     f"{threads} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pe-bench", default="build/release/bench/pe_bench")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    x = np.random.default_rng(1).standard_normal((T, H, D)).astype(np.float32)
    positions = np.arange(T, dtype=np.int64)
    kernels, missing = {}, {}
    if pathlib.Path(args.pe_bench).exists():
        kernels.update(pe_bench_times(args.pe_bench, args.reps))
    else:
        missing["pe-suite kernels"] = f"{args.pe_bench} not built (scripts/run.sh or scripts/test.sh builds it)"
    found, gone = python_peers(x, positions, args.reps)
    kernels.update(found)
    missing.update(gone)
    checks = check_peers(x, positions, args.reps)
    baseline = "pe-suite rope.hwy (pe_bench)" if "pe-suite rope.hwy (pe_bench)" in kernels else \
        "numpy float32 (the formula)"
    machine = platform.processor() or platform.machine()
    lines = [f"RoPE {T} x {H} x {D} float32, positions 0..{T - 1}, one thread; {machine}, "
             f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}", ""]
    lines += table("kernel", kernels, baseline) + [""]
    lines += table("check", checks, CHECK)
    lines += [""] + [f"- {name}: {why}" for name, why in missing.items()]
    text = "\n".join(lines).rstrip() + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
