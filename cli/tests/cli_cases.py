"""What the CLI's Python tests share: their arguments; run one `pe-suite` case, judge its exit code, its verdict
and its diagnosis line, and keep the failures for the summary; save a RoPE test's data as `check` reads it."""

import subprocess
import sys
from pathlib import Path

import numpy as np

failures = []


def setup(seed=None):
    """(executable, work folder, generator) of a test run as `test.py PE_SUITE_EXECUTABLE WORK_DIR`; the folder
    is made, the generator seeded with `seed`."""
    work = Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    return sys.argv[1], work, np.random.default_rng(seed)


def report(name, ok, note="", detail=""):
    """One case's line, with `note`; a failed case is kept for finish() and shows `detail` (its output)."""
    print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {note}" if note else ""))
    if not ok:
        failures.append(name)
        if detail:
            print(detail)
    return ok


def said(name, cmd, code, lines):
    """Runs cmd: exit `code` and each of `lines` (a substring, not a regex) on some line of the output. Returns
    the output."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    missing = [w for w in lines if not any(w in line for line in out.splitlines())]
    ok = r.returncode == code and not missing
    report(name, ok, f"exit {r.returncode}" + (f"; missing {missing}" if missing else ""), out[-3000:])
    return out


def rope_check(pe, work, name, x, y, positions=None):
    """The `pe-suite check --family rope` command of x -> y, both saved as float32 in work (name_x.npy,
    name_y.npy), at the consecutive positions from positions[0] when given."""
    xf, yf = work / f"{name}_x.npy", work / f"{name}_y.npy"
    np.save(xf, np.asarray(x, dtype=np.float32))
    np.save(yf, np.asarray(y, dtype=np.float32))
    span = [] if positions is None else ["--positions", f"{positions[0]}:{positions[-1] + 1}"]
    return [pe, "check", "--family", "rope", "--input", str(xf), "--output", str(yf)] + span


def judge(name, cmd, expect_pass, expect_words=()):
    """A `pe-suite check` command: exit 0 when expect_pass, else exit 1 with every word of expect_words on
    the diagnosis line ("the data fits: ..."). Returns the command's stdout."""
    if isinstance(expect_words, str):
        expect_words = [expect_words] if expect_words else []
    r = subprocess.run(cmd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    ok = r.returncode == (0 if expect_pass else 1)
    fit = next((line for line in out.splitlines() if line.startswith("the data fits:")), "")
    if any(w not in fit for w in expect_words):
        ok = False
    verdict = next((line for line in out.splitlines() if line.startswith("verdict:")), "(no verdict)")
    report(name, ok, f"exit {r.returncode}; {verdict}" + (f"\n       {fit}" if fit else ""), out[-3000:])
    return r.stdout


def judge_bad(name, cmd, words, out_file=None):
    """Bad input: exit 2, every word in the message, and out_file (when given) not written."""
    if out_file is not None and out_file.exists():
        out_file.unlink()
    r = subprocess.run(cmd, capture_output=True, text=True)
    text = r.stdout + r.stderr
    ok = r.returncode == 2 and all(w in text for w in words) and (out_file is None or not out_file.exists())
    report(name, ok, f"exit {r.returncode}: {text.strip()}")


def finish(what):
    print(f"{what}: {len(failures)} failure(s)" + (": " + ", ".join(failures) if failures else ""))
    sys.exit(1 if failures else 0)
