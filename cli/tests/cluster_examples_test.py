"""The cluster examples say what they run: every Kubernetes manifest parses (PyYAML) as a batch/v1 Job, the
Indexed Job's --shard count is its `completions`, and every pe-suite command in the manifests and in the
Slurm scripts names a subcommand and flags that `pe-suite SUB --help` lists (a renamed flag fails here,
not on a user's cluster).
    cluster_examples_test.py PE_SUITE SOURCE_DIR"""
import pathlib
import re
import subprocess
import sys

import yaml

pe, src = sys.argv[1], pathlib.Path(sys.argv[2])
failures = []
commands = []  # (where, text of one pe-suite command)


def pe_commands(where, text):
    """Each `pe-suite SUB ...` in a shell text (continuations joined), up to the next && / ; / line end."""
    text = re.sub(r"\\\n", " ", text)
    for m in re.finditer(r"pe-suite\s+([a-z]+)([^&;\n]*)", text):
        commands.append((where, m.group(1), m.group(2)))


for path in sorted((src / "examples/kubernetes").glob("*.yaml")):
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    if not docs:
        failures.append(f"{path.name}: no document")
    for doc in docs:
        if doc.get("apiVersion") != "batch/v1" or doc.get("kind") != "Job":
            failures.append(f"{path.name}: not a batch/v1 Job: {doc.get('apiVersion')} {doc.get('kind')}")
            continue
        spec = doc["spec"]
        for container in spec["template"]["spec"]["containers"]:
            pe_commands(path.name, " ".join(container.get("command", []) + container.get("args", [])))
        shards = re.findall(r"--shard\s+\"?\$\{JOB_COMPLETION_INDEX\}/(\d+)", yaml.safe_dump(spec))
        if shards:
            if spec.get("completionMode") != "Indexed":
                failures.append(f"{path.name}: --shard from JOB_COMPLETION_INDEX but completionMode is not Indexed")
            if any(int(n) != spec.get("completions") for n in shards):
                failures.append(f"{path.name}: --shard .../{shards} but completions: {spec.get('completions')}")

for path in sorted((src / "examples/slurm").iterdir()):
    if path.suffix in (".sh", ".sbatch"):
        pe_commands(path.name, path.read_text())

if not any(w.endswith(".yaml") for w, _, _ in commands) or not any(w.endswith(".sbatch") for w, _, _ in commands):
    failures.append(f"found too few pe-suite commands: {commands}")
helps = {}
for where, sub, rest in commands:
    if sub not in helps:
        run = subprocess.run([pe, sub, "--help"], capture_output=True, text=True)
        helps[sub] = run.stdout if run.returncode == 0 else None
    if helps[sub] is None:
        failures.append(f"{where}: pe-suite {sub}: no such subcommand")
        continue
    for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helps[sub]):
            failures.append(f"{where}: pe-suite {sub} {flag}: not a flag of `pe-suite {sub}`")

if failures:
    print("\n".join("FAIL " + f for f in failures))
    sys.exit(1)
print(f"cluster examples: {len(commands)} pe-suite commands in the Kubernetes manifests and Slurm scripts, "
      f"every flag listed by its subcommand's --help; the Indexed Job's shards match its completions")
