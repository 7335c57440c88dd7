#!/usr/bin/env bash
# Every kernel benchmark pe_bench writes reaches the report: pe_bench in smoke mode (unscaled and
# YaRN-scaled RoPE shapes), a one-instance census, `pe-suite report`, then each benchmark name of
# the JSON (limits/ and plan/ rows aside) must have its row in bench.md; and the exact variants'
# floors of a quick run theirs.
set -u
bench_exe=$1 suite_exe=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bench_exe" --mode smoke --out "$tmp/b.json" >/dev/null || { echo "pe_bench failed"; echo "0 passed, 1 failed"; exit 1; }
"$suite_exe" census --variant "rope.halfsplit.scalar_f64/f32" --max-position 1000 --out "$tmp/c.json" >/dev/null ||
  { echo "census failed"; echo "0 passed, 1 failed"; exit 1; }
"$suite_exe" report --census "$tmp/c.json" --bench "$tmp/b.json" --out "$tmp/rep" >/dev/null ||
  { echo "report failed"; echo "0 passed, 1 failed"; exit 1; }
names=$(sed -n 's/^ *"run_name": "\(.*\)",$/\1/p' "$tmp/b.json" | grep -v '^\(limits\|plan\)/' | sort -u)
failed=0 count=0 scaled=0
while IFS= read -r name; do
  count=$((count + 1))
  case $name in */yarn) scaled=$((scaled + 1)) ;; esac
  grep -qF "| \`$name\` |" "$tmp/rep/bench.md" || { echo "no report row for $name"; failed=1; }
done <<< "$names"
[ "$count" -ge 40 ] || { echo "only $count kernel benchmarks in the smoke run"; failed=1; }
[ "$scaled" -ge 1 ] || { echo "no YaRN-scaled benchmark in the smoke run"; failed=1; }
# The exact variants' floors (quick mode and up, beside the exact variants) get their own table.
"$bench_exe" --mode quick --variant "sinusoidal.exact" --benchmark_filter='^floor/|exact/table/f32/L128/d128/start$' --benchmark_repetitions=1 \
  --out "$tmp/f.json" >/dev/null || { echo "pe_bench (floors) failed"; failed=1; }
"$suite_exe" report --census "$tmp/c.json" --bench "$tmp/f.json" --out "$tmp/frep" >/dev/null || failed=1
floors=$(grep -c '^| `floor/[^`]*` | [0-9.e+-]* | [0-9]*% |$' "$tmp/frep/bench.md" 2>/dev/null)
[ "${floors:-0}" -ge 2 ] || { echo "floors: ${floors:-0} rows with a % of fill in bench.md"; failed=1; }
echo "$count benchmarks ($scaled scaled), each with its row in bench.md; ${floors:-0} floors with a % of fill"
if [ $failed -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
