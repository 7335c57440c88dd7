"""verify_rope's throughput (medians of interleaved repetitions): drawn cases per second with HF's RoPE in
PyTorch as fn (python/tests/hf_rope_config.py), and with fn's own time taken out (what verify_rope itself
costs per case: drawing, the exact reference's checks, the split calls; target (issue 53): at least 1000
cases per second, as with a trivial kernel). The cases are the default draw (every rope_type, f32 and bf16,
1 to 48 tokens x 1 to 8 heads). Where the time goes and what was measured: docs/python.md ("Speed").

    PYTHONPATH=build/release/python python3 python/bench/verify_speed.py [examples] [reps]
"""
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import pe_suite  # noqa: E402
from hf_rope_config import hf_rope  # noqa: E402


def main():
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    whole, own = [], []
    for _ in range(reps):
        spent = [0.0]

        def timed(x, positions, config):
            t = time.perf_counter()
            y = hf_rope(x, positions, config)
            spent[0] += time.perf_counter() - t
            return y

        t = time.perf_counter()
        pe_suite.verify_rope(timed, examples=examples, failure_file=None)
        elapsed = time.perf_counter() - t
        whole.append(examples / elapsed)
        own.append(examples / (elapsed - spent[0]))
    print(f"verify_rope, {examples} cases x {reps} runs (median): {statistics.median(whole):.0f} cases/s with HF's "
          f"RoPE as fn; {statistics.median(own):.0f} cases/s of verify_rope's own time (fn's taken out)")


if __name__ == "__main__":
    main()
