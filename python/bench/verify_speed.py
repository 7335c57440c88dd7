"""verify_rope's throughput (medians of interleaved repetitions): drawn cases per second with HF's RoPE in
PyTorch as fn (python/tests/hf_rope_config.py), and with fn's own time taken out (what verify_rope itself
costs per case: drawing, the exact reference's checks, the split calls; target (issue 53): at least 1000
cases per second, as with a trivial kernel). The cases are the default draw (every rope_type, f32 and bf16,
1 to 48 tokens x 1 to 8 heads). Where the time goes and what was measured: docs/python.md ("Speed").

    PYTHONPATH=build/release/python python3 python/bench/verify_speed.py [examples] [reps]

A third rate is taken with a trivial kernel: HF's outputs of every call recorded in a first run, then a kernel that
gives them back in the order they were made (verify_rope's calls are a function of the seed), run in a fresh process
each time (no plan or frequency table kept from the recording run). Its own cost is an index, counted as
verify_rope's time. It measures what subtracting fn's time cannot: fn's own work also evicts verify_rope's data and
code from the caches. A replay out of step would fail the run: a call given another call's output fails verify_rope.
"""
import os
import pathlib
import pickle
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import pe_suite  # noqa: E402
from hf_rope_config import hf_rope  # noqa: E402


def _replay(path, examples):
    """verify_rope's cases per second with the recorded outputs as fn, in the order recorded (this process is a fresh
    one). A call out of step with the recording gets an output of another call: verify_rope then fails (a shape or
    values not x's rotation), and so does this run."""
    with open(path, "rb") as f:
        outputs = pickle.load(f)
    n = iter(range(len(outputs)))

    def trivial(x, positions, config):
        return outputs[next(n)]  # verify_rope copies what it is given (a kernel may reuse its buffer)

    t = time.perf_counter()
    pe_suite.verify_rope(trivial, examples=examples, failure_file=None)
    rate = examples / (time.perf_counter() - t)
    if next(n, None) is not None:
        sys.exit("the replay made fewer calls than were recorded: out of step")
    print(rate)


def trivial_rates(examples, reps):
    """The trivial kernel's rates, one fresh process each."""
    outputs = []

    def recording(x, positions, config):
        y = hf_rope(x, positions, config)
        outputs.append(y.clone())
        return y

    pe_suite.verify_rope(recording, examples=examples, failure_file=None)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "outputs.pkl")
        with open(path, "wb") as f:
            pickle.dump(outputs, f)
        return [float(subprocess.run([sys.executable, __file__, "--replay", path, str(examples)], check=True,
                                     capture_output=True, text=True).stdout) for _ in range(reps)]


def main():
    if sys.argv[1:2] == ["--replay"]:
        return _replay(sys.argv[2], int(sys.argv[3]))
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
    trivial = trivial_rates(examples, reps)
    print(f"  with a trivial kernel (HF's outputs given back in order, a fresh process per run): "
          f"{statistics.median(trivial):.0f} cases/s (runs: {', '.join(f'{r:.0f}' for r in trivial)})")


if __name__ == "__main__":
    main()
