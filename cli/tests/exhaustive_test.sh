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
echo "exhaustive: 3 Slurm tasks and 3 Kubernetes pods' shards merged by report equal one run; gap and overlap refused"
