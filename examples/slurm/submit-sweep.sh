#!/usr/bin/env bash
# Submits a verification sweep (sweep.sbatch) as an array and its merge (pe-suite report: every task's
# document, a missing one refused by name) as a job that runs after every task succeeded. The merge job
# exits 1 when a config x instance pair is outside its contract or a property test failed.
#   SHARDS=8 CONFIGS=llama.json:qwen.json PLUGINS=./libmine.so bash submit-sweep.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SHARDS:=8}"
: "${CONFIGS:?set CONFIGS to the model configs (config.json files), ':'-separated}"
export SHARDS CONFIGS
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) "$here/sweep.sbatch")
out=${OUT:-sweep}
# --kill-on-invalid-dep: a failed task cancels the merge rather than leaving it pending for ever.
sbatch --dependency=afterok:"$array" --kill-on-invalid-dep=yes --job-name=pe-sweep-merge \
  --output="sweep-merge-%j.log" --wrap "pe-suite report --census '$out'/task-*.json --out '$out/report'"
