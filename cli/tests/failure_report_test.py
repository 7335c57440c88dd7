#!/usr/bin/env python3
"""What `verify` prints for a failing plugin (issue 54, items 2 and 6): the example plugin's planted mistake
(examples/plugin_c/llama3_rope.c with Llama-3.1's original_max_position_embeddings, 8192, written in) named in
every failing agreement property's diagnosis, however small its minimal case; the readable minimal cases before
anything GoogleTest words itself, whose raw text stays in the property log; and a census err/budget of millions
kept in its column.

    failure_report_test.py PE_SUITE PLUGIN_DIR WORK_DIR
"""

import re
import subprocess
import sys
from pathlib import Path

PE, PLUGINS, WORK = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
WORK.mkdir(parents=True, exist_ok=True)
failures = []


def verify(plugin, *args):
    r = subprocess.run([PE, "verify", "--plugin", str(PLUGINS / plugin), *args], capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 1:
        failures.append(f"verify --plugin {plugin}: exit {r.returncode}, want 1\n{r.stdout}{r.stderr}")
    return r.stdout


log = WORK / "llama3_8192.properties.log"
out = verify("plugtest_llama3_8192.so", "--variant", "rope.*llama3_c*", "--properties-log", str(log))
properties = out.split("== census")[0]

# Item 2: each failing RopeProps test (minimal cases of a dozen channels, one position) is diagnosed on a call
# big enough to read the frequencies back: the planted value named, the given one beside it.
agreements = re.findall(r"^  FAILED Registry/RopeProps\.\S+", properties, re.M)
named = re.findall(r"^      the data fits: llama3, original_max_position 8192 \(given \d+\)", properties, re.M)
if not agreements:
    failures.append(f"no RopeProps test failed for the planted plugin:\n{out}")
elif len(named) != len(agreements):
    failures.append(f"{len(named)} of {len(agreements)} failing RopeProps tests name original_max_position 8192:\n"
                    f"{properties}")

# Item 6: ScalingBoundaries fails through EXPECT_EQ (GoogleTest's own wording, in the log); the terminal opens
# with a readable minimal case and gives each assertion one line, saying where the raw text is.
raw = "Expected equality of these values:"
lines = properties.splitlines()
first = next((i for i, line in enumerate(lines) if "property tests passed" in line), None)
if raw not in log.read_text(errors="replace"):
    failures.append(f"the property log {log} lacks GoogleTest's raw text (no assertion failed there?)")
if raw in properties:
    failures.append(f"GoogleTest's raw text on the terminal:\n{properties}")
if first is None or len(lines) < first + 3 or not lines[first + 1].startswith("  FAILED Registry/RopeProps") \
        or not lines[first + 2].startswith("    property: "):
    failures.append(f"the terminal does not open with a readable minimal case:\n{properties}")
if not re.search(r"^    \d+ assertions? failed \(GoogleTest's text in the property log, " + re.escape(str(log)),
                 properties, re.M):
    failures.append(f"the raw assertions' line does not name the property log {log}:\n{properties}")
if not re.search(r"^    rope\.\S+ at p=\d+ channel \d+: .* > budget .* \(llama3 s = 0\.5\)$", properties, re.M):
    failures.append(f"ScalingBoundaries' assertion not given as its one readable line:\n{properties}")

# The census table: a kernel off by a position has err/budget in the millions; the column holds it.
out = verify("plugtest_offset_by_one.so", "--variant", "rope.halfsplit.plugtest_f64/f32", "--max-position", "256",
             "--no-properties")
table = out.split("== census")[-1].splitlines()
header = next((i for i, line in enumerate(table) if line.startswith("instance ")), None)
if header is None:
    failures.append(f"no census table:\n{out}")
else:
    end = table[header].index("err/bud") + len("err/bud")
    rows = [line for line in table[header + 1:] if line.startswith("rope.")]
    bad = [r for r in rows if len(r) <= end or r[end - 1] == " " or r[end] != " "]
    if not rows or bad:
        failures.append(f"err/bud out of its column:\n{table[header]}\n" + "\n".join(bad or ["(no rows)"]))

for f in failures:
    print("FAIL", f)
print(f"failure_report: {len(failures)} failures")
sys.exit(1 if failures else 0)
