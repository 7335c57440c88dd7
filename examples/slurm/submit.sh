#!/usr/bin/env bash
# Submits the shards as an array and the merge (pe-suite report, which refuses gaps and overlaps) as a
# job that runs after every shard succeeded.   SHARDS=64 VARIANT=sinusoidal.exact bash submit.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SHARDS:=64}"
export SHARDS
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) "$here/exhaustive.sbatch")
out=${OUT:-exhaustive}
sbatch --dependency=afterok:"$array" --job-name=pe-exhaustive-merge --wrap \
  "pe-suite census --variant '${VARIANT:-sinusoidal.exact}' --max-position 1000 --out $out/sampled.json && \
   pe-suite report --census $out/sampled.json --exhaustive $out/shard-*.json --out $out/report"
