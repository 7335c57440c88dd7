#!/usr/bin/env bash
# The cluster route run for real: a one-node Slurm cluster on this machine (Debian's slurm-wlm and munge,
# slurmctld and slurmd on localhost from a generated slurm.conf), examples/slurm/submit.sh submitted as
# documented on a small range, the merge job's report checked; then a shard cancelled mid-way (scancel):
# no shard file, the merge job never runs, `report` refuses the gap naming the shard, and that shard
# resubmitted alone resumes from its checkpoint and the merge completes with the first run's result. Then a
# verification sweep (submit-sweep.sh: verify under two model configs as 3 tasks) merged, its verdicts
# those of one unsharded run.
# Everything is stopped and removed at the end. Needs root (the daemons); not in the default test command.
#   bash scripts/slurm_test.sh            (builds pe-suite first when build/release has none)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
started=$(date +%s)
say() { echo "[slurm_test $(($(date +%s) - started))s] $*"; }
fail() { say "FAIL: $1"; [ -n "${2:-}" ] && echo "$2"; exit 1; }

pe=$root/build/release/cli/pe-suite
if [ ! -x "$pe" ]; then
  bash "$root/scripts/setup.sh"
  (cd "$root" && cmake --preset release >/dev/null && cmake --build --preset release -j 2 --target pe-suite)
fi
command -v slurmctld >/dev/null && command -v munged >/dev/null || bash "$root/scripts/setup.sh"

work=$(mktemp -d /tmp/pe-slurm.XXXXXX)
export SLURM_CONF=$work/slurm.conf
host=$(hostname -s)
cleanup() {  # the jobs, then each daemon (TERM, then KILL after 10 s), then every file
  scancel --quiet --user=root 2>/dev/null || true
  for f in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munged.pid; do
    [ -s "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# munge: its own key, socket and files under $work (root must force it).
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/out" "$work/bin"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$work/munge" && chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed"

cat >"$SLURM_CONF" <<EOF
ClusterName=pe
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start" "$(cat "$work/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start" "$(cat "$work/slurmd.log" 2>/dev/null)"
for _ in $(seq 1 60); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done
sinfo -h -o %T | grep -q idle || fail "the node never came up" "$(sinfo; tail -20 "$work/slurmctld.log")"
say "cluster up: $(sinfo -h -o '%P %D %T %c')"

# The jobs find this build's pe-suite on PATH (sbatch passes the environment, as on a real cluster with
# a module loaded).
ln -s "$pe" "$work/bin/pe-suite"
export PATH="$work/bin:$PATH"
export SHARDS=3 VARIANT='sinusoidal.interleaved.exact/f32' POSITIONS=0:150000000 DIM=32 CHECKPOINT_EVERY=4000000
cd "$work/out"
wait_idle() {  # wait_idle SECONDS: until no job of ours is pending or running
  for _ in $(seq 1 "$1"); do [ -z "$(squeue -h -o %i)" ] && return 0; sleep 1; done
  fail "jobs still queued after $1 s" "$(squeue)"
}

# 1. As documented: submit.sh, the array then the merge.
OUT=$work/out/first bash "$root/examples/slurm/submit.sh"
say "submitted: $(squeue -h -o '%i %j %T' | tr '\n' ';')"
wait_idle 600
[ -s first/report/exhaustive.json ] || fail "the merge job wrote no report" "$(cat ./*.log 2>/dev/null | tail -30)"
grep -q "Every position of \[0, 150000000)" first/report/report.md || fail "the report does not state the range"
say "first run: 3 shards and the merge; report: $(grep -c . first/report/report.md) lines"

# 2. A shard cancelled mid-way: only its checkpoint remains; the merge job never runs.
OUT=$work/out/second bash "$root/examples/slurm/submit.sh"
for _ in $(seq 1 600); do [ -e second/shard-1.json.checkpoint ] && break; sleep 0.2; done
[ -e second/shard-1.json.checkpoint ] || fail "shard 1 wrote no checkpoint" "$(squeue)"
array=$(squeue -h -n pe-exhaustive -o %A | head -1)
scancel "${array}_1"
say "cancelled task ${array}_1 after its checkpoint"
for _ in $(seq 1 60); do squeue -h -o '%j %r' | grep -q "pe-exhaustive-merge DependencyNeverSatisfied" && break; sleep 1; done
squeue -h -o '%j %r' | grep -q "pe-exhaustive-merge DependencyNeverSatisfied" ||
  fail "the merge job is not held back by the cancelled shard" "$(squeue -o '%i %j %T %r')"
scancel --name=pe-exhaustive-merge
wait_idle 600
[ ! -e second/shard-1.json ] || fail "a cancelled shard left a shard file"
pe-suite census --variant "$VARIANT" --max-position 1000 --out second/sampled.json >/dev/null
out=$(pe-suite report --census second/sampled.json --exhaustive second/shard-*.json --out second/r 2>&1) &&
  fail "the merge went ahead without shard 1" "$out"
grep -q "(missing: shard 1/3)" <<<"$out" || fail "the refused merge does not name shard 1/3" "$out"
say "refused merge: $(grep -o 'a gap.*' <<<"$out")"

# 3. Shard 1 resubmitted alone resumes from its checkpoint; the merge then completes.
task=$(OUT=$work/out/second sbatch --parsable --array=1 "$root/examples/slurm/exhaustive.sbatch")
wait_idle 600
grep -q "^resuming from .*shard-1.json.checkpoint" "exhaustive-${task}_1.log" ||
  fail "the resubmitted shard did not resume" "$(cat "exhaustive-${task}_1.log")"
[ ! -e second/shard-1.json.checkpoint ] || fail "the finished shard left its checkpoint"
pe-suite report --census second/sampled.json --exhaustive second/shard-*.json --out second/report >/dev/null ||
  fail "the merge after the resubmitted shard"
python3 - first/report/exhaustive.json second/report/exhaustive.json <<'PY' || fail "the resumed run's result differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    for k in ("seconds", "merged_from"):
        d.pop(k, None)
assert a == b
PY
say "resubmitted shard resumed ($(grep -o 'positions done up to [0-9]*' "exhaustive-${task}_1.log")); merged result equals the first run's"

# 4. A verification sweep (examples/slurm/submit-sweep.sh): verify of a variant under two model configs as
# 3 array tasks and their merge, whose verdicts equal one unsharded run's.
configs=$root/examples/hf_configs/Llama-3.1-8B.json:$root/examples/hf_configs/Qwen2.5-7B-Instruct-yarn.json
SHARDS=3 CONFIGS=$configs VARIANT=rope.scalar_f64 MAX_POSITION=4096 OUT=$work/out/sweep \
  bash "$root/examples/slurm/submit-sweep.sh"
say "submitted the sweep: $(squeue -h -o '%i %j %T' | tr '\n' ';')"
wait_idle 600
[ -s sweep/report/sweep.json ] || fail "the sweep's merge job wrote no report" "$(tail -30 sweep-*.log 2>/dev/null)"
pe-suite verify --variant rope.scalar_f64 --max-position 4096 --hf-config "${configs%%:*}" \
  --hf-config "${configs#*:}" --out whole.json >/dev/null || fail "the unsharded sweep has findings"
pe-suite report --census whole.json --out whole >/dev/null || fail "the unsharded sweep's report"
python3 - sweep/report/sweep.json whole/sweep.json <<'PY' || fail "the sweep's tasks merged into other verdicts"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["merged_from"] == 3 and b["merged_from"] == 1
assert a["census"] == b["census"]
assert {k: v["result"] for k, v in a["properties"].items()} == {k: v["result"] for k, v in b["properties"].items()}
PY
say "sweep: $(grep -o 'merged from 3 shards' sweep/report/report.md), $(python3 -c "import json; d=json.load(open('sweep/report/sweep.json')); print(sum(len(c['instances']) for c in d['census']), 'config x instance pairs,', len(d['properties']), 'property tests')"), the same verdicts as unsharded"
say "PASS"
