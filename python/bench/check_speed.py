"""The Python module's speed against the command's, in one run (medians, interleaved repetitions):
check_rope on 2048 tokens x 32 heads x 128 float32 at positions 10^6.. (base 5*10^5) against
`pe-suite check` of the same data from .npy files in /dev/shm (the command's time includes starting
the process and reading 67 MB; check_rope's includes reading the arrays through their strides), and
reference_rope on the same input (target: under 5 s).

    PYTHONPATH=build/release/python python3 python/bench/check_speed.py build/release/cli/pe-suite [reps]
"""

import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import pe_suite


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    cli = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    x = np.random.default_rng(1).standard_normal((2048, 32, 128)).astype(np.float32)
    positions = np.arange(1_000_000, 1_002_048)
    golden = []
    ref_times = [timed(lambda: golden.append(pe_suite.reference_rope(x, positions, base=500000.0)))
                 for _ in range(3)]
    y = golden[0]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        np.save(f"{d}/x.npy", x)
        np.save(f"{d}/y.npy", y)
        command = [cli, "check", "--family", "rope", "--input", f"{d}/x.npy", "--output", f"{d}/y.npy",
                   "--positions", "1000000:1002048", "--base", "500000"]
        py_times, cli_times = [], []
        for _ in range(reps):
            py_times.append(timed(lambda: pe_suite.check_rope(x, y, positions, base=500000.0)))
            cli_times.append(timed(lambda: subprocess.run(command, check=True, capture_output=True)))
    py, cl, ref = (statistics.median(t) for t in (py_times, cli_times, ref_times))
    print(f"check_rope        median {py:.3f} s over {reps} ({', '.join(f'{t:.2f}' for t in py_times)})")
    print(f"pe-suite check    median {cl:.3f} s over {reps} ({', '.join(f'{t:.2f}' for t in cli_times)})")
    print(f"ratio             {py / cl:.3f} (target <= 1.5)")
    print(f"reference_rope    median {ref:.3f} s over 3 (target < 5 s)")


if __name__ == "__main__":
    main()
