#!/usr/bin/env bash
# The commands examples/slurm and examples/kubernetes run, here on a small range: each shard as its
# task or pod would run it (SLURM_ARRAY_TASK_ID / JOB_COMPLETION_INDEX -> --shard), then the merge by
# `report`, which must equal one unsharded run and refuse a missing or doubled shard.
#   exhaustive_test.sh PE_SUITE SOURCE_DIR
set -euo pipefail
pe=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $1"; [ -n "${2:-}" ] && echo "$2"; exit 1; }
# The scripts call `pe-suite` from PATH: this build's, ahead of any installed one.
mkdir -p "$tmp/bin"
ln -s "$(realpath "$pe")" "$tmp/bin/pe-suite"
export PATH="$tmp/bin:$PATH"
export SHARDS=3 VARIANT='sinusoidal.interleaved.exact/f32' POSITIONS=900:40000 DIM=32 OUT=$tmp/slurm
for i in 0 1 2; do SLURM_ARRAY_TASK_ID=$i SLURM_CPUS_PER_TASK=1 bash "$src/examples/slurm/exhaustive.sbatch" >/dev/null; done
# The Kubernetes pod's command, from the manifest, with the index and a small range.
cmd=$(sed -n '/^            - >-$/,/^          resources/p' "$src/examples/kubernetes/exhaustive-job.yaml" | sed '1d;$d' | tr -s ' \n' ' ')
mkdir -p "$tmp/k8s"
for i in 0 1 2; do
  c=${cmd//\/results/$tmp/k8s}
  c=${c//0:2147483648/900:40000}
  c=${c//--dim 128/--dim 32}
  c=${c//sinusoidal.exact/sinusoidal.interleaved.exact\/f32}
  c=${c//\/64/\/3}
  JOB_COMPLETION_INDEX=$i sh -c "$c" >/dev/null
done
"$pe" census --exhaustive --variant "$VARIANT" --positions 900:40000 --dim 32 --out "$tmp/whole.json" >/dev/null
"$pe" census --variant "$VARIANT" --max-position 1000 --out "$tmp/sampled.json" >/dev/null
for dir in slurm k8s; do
  out=$("$pe" report --census "$tmp/sampled.json" --exhaustive "$tmp/$dir"/shard-*.json --out "$tmp/report-$dir" 2>&1) ||
    fail "report of the $dir shards" "$out"
  grep -q "^## Exhaustive" "$tmp/report-$dir/report.md" || fail "$dir: no Exhaustive section" "$(cat "$tmp/report-$dir/report.md")"
  grep -q "Every position of \[900, 40000)" "$tmp/report-$dir/report.md" || fail "$dir: the range is not stated"
  python3 - "$tmp/report-$dir/exhaustive.json" "$tmp/whole.json" <<'PY' || fail "$dir: merged shards differ from one run"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    for k in ("seconds", "merged_from", "shard"):
        d.pop(k, None)
assert a == b, (a, b)
PY
done
out=$("$pe" report --census "$tmp/sampled.json" --exhaustive "$tmp/slurm/shard-0.json" "$tmp/slurm/shard-2.json" --out "$tmp/r" 2>&1) &&
  fail "a missing shard was merged" "$out"
grep -q "gap" <<<"$out" || fail "a missing shard: the gap not named" "$out"
out=$("$pe" report --census "$tmp/sampled.json" --exhaustive "$tmp"/slurm/shard-*.json "$tmp/slurm/shard-1.json" --out "$tmp/r" 2>&1) &&
  fail "a doubled shard was merged" "$out"
grep -q "overlap" <<<"$out" || fail "a doubled shard: the overlap not named" "$out"
# A task killed mid-way (SIGKILL, as a preempted node): no shard file, only its checkpoint, which the merge
# refuses, as it refuses the gap, naming the shard to run again; that task run again alone resumes and
# writes the bytes of an uninterrupted run (but for its seconds).
export POSITIONS=0:20000000 CHECKPOINT_EVERY=500000 OUT=$tmp/killed
mkdir -p "$OUT"
for i in 0 2; do SLURM_ARRAY_TASK_ID=$i SLURM_CPUS_PER_TASK=1 bash "$src/examples/slurm/exhaustive.sbatch" >/dev/null; done
SLURM_ARRAY_TASK_ID=1 SLURM_CPUS_PER_TASK=1 bash "$src/examples/slurm/exhaustive.sbatch" >"$tmp/killed.log" 2>&1 &
task=$!
for _ in $(seq 1 1500); do [ -e "$OUT/shard-1.json.checkpoint" ] && break; sleep 0.02; done
kill -9 "$task" 2>/dev/null || fail "the task ended before it could be killed" "$(cat "$tmp/killed.log")"
wait "$task" 2>/dev/null || true
[ -e "$OUT/shard-1.json.checkpoint" ] || fail "no checkpoint before the kill" "$(cat "$tmp/killed.log")"
[ ! -e "$OUT/shard-1.json" ] || fail "a killed task left a shard file"
out=$("$pe" report --census "$tmp/sampled.json" --exhaustive "$OUT"/shard-*.json --out "$tmp/r" 2>&1) &&
  fail "a merge went ahead without the killed shard" "$out"
grep -q "a gap: positions \[6666666, 13333333) are in no shard (missing: shard 1/3)" <<<"$out" ||
  fail "the gap does not name the missing shard" "$out"
out=$("$pe" report --census "$tmp/sampled.json" --exhaustive "$OUT"/shard-0.json "$OUT/shard-1.json.checkpoint" \
  "$OUT"/shard-2.json --out "$tmp/r" 2>&1) && fail "a checkpoint was merged as a shard" "$out"
grep -q "shard 1/3 is a checkpoint, not a finished shard" <<<"$out" || fail "the checkpoint not named" "$out"
out=$(SLURM_ARRAY_TASK_ID=1 SLURM_CPUS_PER_TASK=1 bash "$src/examples/slurm/exhaustive.sbatch" 2>&1) ||
  fail "the resubmitted task" "$out"
grep -q "^resuming from $OUT/shard-1.json.checkpoint: positions done up to [1-9]" <<<"$out" || fail "no resume" "$out"
[ ! -e "$OUT/shard-1.json.checkpoint" ] || fail "a finished task left its checkpoint"
OUT=$tmp/uninterrupted SLURM_ARRAY_TASK_ID=1 SLURM_CPUS_PER_TASK=1 CHECKPOINT_EVERY=0 \
  bash "$src/examples/slurm/exhaustive.sbatch" >/dev/null
python3 - "$OUT/shard-1.json" "$tmp/uninterrupted/shard-1.json" <<'PY' || fail "the resumed shard differs from an uninterrupted one"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("seconds")
assert a == b, (a, b)
PY
out=$("$pe" report --census "$tmp/sampled.json" --exhaustive "$OUT"/shard-*.json --out "$tmp/r" 2>&1) ||
  fail "the merge after the resumed task" "$out"
echo "exhaustive: 3 Slurm tasks and 3 Kubernetes pods' shards merged by report equal one run; gap and overlap refused;"
echo "  a killed task leaves only its checkpoint (refused by the merge, the gap naming shard 1/3), resumes to an uninterrupted run's result"
