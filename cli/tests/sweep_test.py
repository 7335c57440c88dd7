"""A sweep split into array tasks merges into the verdicts of one unsharded run: `pe-suite verify` of two
plugins (a correct one, and one that never applies YaRN's attention factor) x three model configs
(Llama-3.1's llama3, Qwen2.5's YaRN, Llama-3.2's llama3) run whole and as 3 tasks (--shard I/3), each
merged by `pe-suite report`; the merged documents agree in every census record and property verdict, and
the verdicts are the ones the plugins deserve (the second plugin outside its contract under YaRN alone).
The merge refuses a missing shard, a repeated one, and a task of another run, naming them. The census alone
sweeps the same way (two configs, 2 tasks).
    sweep_test.py PE_SUITE PLUGIN_DIR SOURCE_DIR WORK_DIR"""
import json
import pathlib
import shutil
import subprocess
import sys

pe, plugins, src, work = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
configs = [src / "examples/hf_configs" / name
           for name in ("Llama-3.1-8B.json", "Qwen2.5-7B-Instruct-yarn.json", "Llama-3.2-1B.json")]
good, bad = plugins / "plugtest_good.so", plugins / "plugtest_b_no_attention_factor.so"
failures = []


def run(args, want):
    r = subprocess.run([pe] + [str(a) for a in args], capture_output=True, text=True, cwd=work)
    if r.returncode not in (want if isinstance(want, tuple) else (want,)):
        failures.append(f"exit {r.returncode} (want {want}): pe-suite {' '.join(map(str, args))}\n"
                        f"{(r.stdout + r.stderr)[-3000:]}")
    return r.stdout + r.stderr


def sweep(command, out, shard=None, max_position=4096, hf=configs):
    args = [command, "--plugin", good, "--plugin", bad, "--variant", "rope.*plugtest*",
            "--max-position", max_position, "--out", out]
    for c in hf:
        args += ["--hf-config", c]
    if shard:
        args += ["--shard", shard]
    return args


def merged(name, *shards):
    # 1: the merged sweep holds a pair outside its contract (the second plugin under YaRN), as verify's exit.
    run(["report", "--out", name] + [a for s in shards for a in ("--census", s)], 1)
    return json.loads((work / name / "sweep.json").read_text())


# verify: whole, then as 3 array tasks. A task exits 1 when its share holds a failing pair or property test,
# else 0 (which share does depends on the configs' paths as given: the hash's key).
run(sweep("verify", "whole.json"), 1)
for i in range(3):
    run(sweep("verify", f"task{i}.json", f"{i}/3"), (0, 1))
whole, tasks = merged("whole", "whole.json"), merged("tasks", *[f"task{i}.json" for i in range(3)])
if whole["census"] != tasks["census"]:
    failures.append("the tasks' census records differ from the unsharded run's")
verdicts = {name: v["result"] for name, v in whole.get("properties", {}).items()}
if verdicts != {name: v["result"] for name, v in tasks.get("properties", {}).items()}:
    failures.append("the tasks' property verdicts differ from the unsharded run's")

# The verdicts are the right ones, not merely equal: every pair present; the second plugin outside its
# contract under YaRN (attention factor != 1) and within it under llama3 (none to apply); the first within.
for c in whole["census"]:
    names = {i["instance"]: i["within_contract"] for i in c["instances"]}
    if len(names) != 8:
        failures.append(f"{c['config']}: {len(names)} instances, want 8 (2 plugins x 2 layouts x 2 dtypes)")
    yarn = c.get("rope_scaling", {}).get("type") == "yarn"
    for name, within in names.items():
        want = not ("plugtest_b_" in name and yarn)
        if within != want:
            failures.append(f"{c['config']}: {name} within_contract {within}, want {want}")
per_task = [json.loads((work / f"task{i}.json").read_text()) for i in range(3)]
pairs = [sum(len(c["instances"]) for c in t["census"]) for t in per_task]
if sum(pairs) != 24 or max(pairs) == 24:
    failures.append(f"the tasks hold {pairs} config x instance pairs: want 24 in all, spread over the tasks")
# $PE_SHARD splits the property tests: each task ran a part of the instance-bound ones, together all of them.
bound = {n for n in verdicts if n.endswith(("_f32", "_f64"))}
parts = [{n for n in t.get("properties", {}) if n in bound} for t in per_task]
if not bound or any(not (p < bound) for p in parts) or set().union(*parts) != bound:
    failures.append(f"instance-bound property tests per task: {[len(p) for p in parts]} of {len(bound)}: "
                    "want each a strict part, together all")
scaled = [n for n, r in verdicts.items() if "plugtest_b_" in n and r == "failed"]
if not scaled or any(r != "passed" for n, r in verdicts.items() if n.endswith("plugtest_f64_f32")):
    failures.append(f"property verdicts: want failures of the second plugin only, got {verdicts}")

# The merge refuses what is not one whole run.
out = run(["report", "--census", "task0.json", "--census", "task2.json", "--out", "gap"], 2)
if "shard 1/3 is missing" not in out:
    failures.append(f"a missing task: want 'shard 1/3 is missing', got: {out}")
out = run(["report", "--census", "task0.json", "--census", "task1.json", "--census", "task1.json",
           "--census", "task2.json", "--out", "twice"], 2)
if "shard 1/3 is given twice" not in out:
    failures.append(f"a repeated task: want 'shard 1/3 is given twice', got: {out}")
run(sweep("verify", "other1.json", "1/3", max_position=2048), (0, 1))
out = run(["report", "--census", "task0.json", "--census", "other1.json", "--census", "task2.json",
           "--out", "mixed"], 2)
if "max_position differ" not in out:
    failures.append(f"a task of another run: want 'max_position differ', got: {out}")

# census alone: two configs, 2 tasks, no properties; the same records as unsharded.
two = configs[:2]
run(sweep("census", "census_whole.json", hf=two), 1)
for i in range(2):
    run(sweep("census", f"census_task{i}.json", f"{i}/2", hf=two), (0, 1))
a = merged("census_whole", "census_whole.json")
b = merged("census_tasks", "census_task0.json", "census_task1.json")
if a["census"] != b["census"] or "properties" in a or [c["config"] for c in a["census"]] != [str(c) for c in two]:
    failures.append("census sweep: the tasks' records differ from the unsharded run's (or properties appear)")
report = (work / "census_tasks/report.md").read_text()
if "config-1-Qwen2.5-7B-Instruct-yarn/report.md" not in report or "**OUTSIDE**" not in report:
    failures.append(f"census sweep report: want each config's report linked and the failing pairs marked:\n{report}")

# One config split into tasks is a sweep for census as for verify: the same merge and the same exit status.
for i in range(2):
    run(["census", "--plugin", good, "--plugin", bad, "--variant", "rope.*plugtest*", "--max-position", 1024,
         "--hf-config", configs[1], "--shard", f"{i}/2", "--out", f"one_config{i}.json"], (0, 1))
run(["report", "--census", "one_config0.json", "--census", "one_config1.json", "--out", "one_config"], 1)

# A kernel writing NaN: its pairs are outside their contracts and the report still reads them (NaN is null
# in JSON).
run(["census", "--plugin", plugins / "plugtest_nan.so", "--variant", "rope.*plugtest*", "--max-position", 256,
     "--hf-config", configs[0], "--hf-config", configs[1], "--out", "nan.json"], 1)
run(["report", "--census", "nan.json", "--out", "nan"], 1)
if "| nan |" not in (work / "nan/report.md").read_text():
    failures.append("a NaN kernel's worst err/budget is not shown as nan in the sweep report")

# An error of one config among several names it; an empty path is refused.
out = run(["census", "--variant", "rope.scalar_f64", "--out", "x.json", "--hf-config", configs[0],
           "--hf-config", src / "examples/hf_configs/phi-2.json"], 2)
if "(under --hf-config " not in out or "phi-2.json" not in out:
    failures.append(f"a failing config of a sweep is not named: {out}")
out = run(["census", "--variant", "rope.scalar_f64", "--out", "x.json", "--hf-config", configs[0],
           "--hf-config", ""], 2)
if "--hf-config: an empty path" not in out:
    failures.append(f"an empty --hf-config: {out}")

# A sweep with nothing outside its contract merges with exit 0.
run(["census", "--plugin", good, "--variant", "rope.*plugtest_f64*", "--max-position", 1024, "--out", "good.json",
     "--hf-config", configs[0], "--hf-config", configs[1]], 0)
run(["report", "--census", "good.json", "--out", "good"], 0)

for f in failures:
    print("FAIL", f)
print(f"sweep: {'PASS' if not failures else f'{len(failures)} failures'}")
sys.exit(1 if failures else 0)
