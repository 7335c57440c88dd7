#!/usr/bin/env bash
# Every kernel benchmark pe_bench writes reaches the report: pe_bench in smoke mode (unscaled and
# YaRN-scaled RoPE shapes), a one-instance census, `pe-suite report`, then each benchmark name of
# the JSON (limits/ and plan/ rows aside) must have its row in bench.md; the exact variants'
# floors of a quick run theirs; quick mode's ALiBi and RoPE shapes their summary speed and plots; and the
# quick run alone (no census) a speed report.
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
# The report states each variant's contract: the budget per output type and its largest position.
grep -qF -- '- `rope.scalar_f64`: f32: 1·u_f32 + 2.03·u_f64·|φ|' "$tmp/rep/report.md" && grep -q '^## Contracts$' "$tmp/rep/report.md" &&
  grep -qF 'positions up to 2^31' "$tmp/rep/report.md" || { echo "report.md states no contract for rope.scalar_f64"; failed=1; }
[ "$scaled" -ge 1 ] || { echo "no YaRN-scaled benchmark in the smoke run"; failed=1; }
# The exact variants' floors (quick mode and up, beside the exact variants) get their own table.
"$bench_exe" --mode quick --variant "sinusoidal.exact" --benchmark_filter='^floor/|exact/table/f32/L128/d128/start$' --benchmark_repetitions=1 \
  --out "$tmp/f.json" >/dev/null || { echo "pe_bench (floors) failed"; failed=1; }
"$suite_exe" report --census "$tmp/c.json" --bench "$tmp/f.json" --out "$tmp/frep" >/dev/null || failed=1
floors=$(grep -c '^| `floor/[^`]*` | [0-9.e+-]* | [0-9]*% |$' "$tmp/frep/bench.md" 2>/dev/null)
[ "${floors:-0}" -ge 2 ] || { echo "floors: ${floors:-0} rows with a % of fill in bench.md"; failed=1; }
# Quick mode's shapes where the summary's length is not among them (issue 31 item 6): ALiBi is timed at
# Q1 and Q128 (no Q2048), RoPE's text shape at T2048 from 0 and T1 from 2^20 only. The summary shows the
# nearest length timed with its shape, not "-"; RoPE gets its speed plot; the Pareto plots label their
# front at placed screen positions (no gnuplot `labels` style at fixed offsets).
"$bench_exe" --mode quick --variant '*.scalar_f*' --benchmark_repetitions=1 \
  --benchmark_filter='^(alibi/.*/L128/d2048/start|rope/[^/]*/f32/T[0-9]*/H32/D128/(far|start))$' \
  --out "$tmp/q.json" >/dev/null || { echo "pe_bench (quick shapes) failed"; failed=1; }
"$suite_exe" census --variant '*.scalar_f*/f32' --max-position 1000 --out "$tmp/qc.json" >/dev/null || failed=1
"$suite_exe" report --census "$tmp/qc.json" --bench "$tmp/q.json" --out "$tmp/qrep" >/dev/null || failed=1
alibi_rows=$(grep -c '^| `alibi\.scalar_f[0-9]*` | .* | H32·Q128·K2048 | [0-9.]* | [0-9]*% | 0 | pass |$' "$tmp/qrep/report.md" 2>/dev/null)
[ "${alibi_rows:-0}" -eq 2 ] || { echo "ALiBi summary rows with Q128 speed: ${alibi_rows:-0} of 2"; failed=1; }
if command -v gnuplot >/dev/null; then
  [ -s "$tmp/qrep/speed_rope.svg" ] || { echo "no RoPE speed plot from T2048 (start) + T1 (2^20)"; failed=1; }
  grep -q "w labels" "$tmp/qrep"/pareto_*.gp && { echo "a Pareto plot labels points at fixed offsets"; failed=1; }
  grep -q "^set label 1 'rope\.scalar_f[0-9]*' at screen" "$tmp/qrep/pareto_rope.gp" ||
    { echo "the RoPE Pareto front is not labelled"; failed=1; }
fi
# A benchmark run alone makes a speed report (issue 54): bench.md and the speed section, no accuracy.
"$suite_exe" report --bench "$tmp/q.json" --out "$tmp/speed" >/dev/null || { echo "report --bench alone failed"; failed=1; }
{ [ -s "$tmp/speed/bench.md" ] && grep -q '^## Speed$' "$tmp/speed/report.md" && [ ! -e "$tmp/speed/census.md" ] &&
  ! grep -q '^## Accuracy' "$tmp/speed/report.md"; } || { echo "report --bench alone: no speed report"; failed=1; }
if command -v gnuplot >/dev/null; then
  ls "$tmp/speed"/speed_*.svg >/dev/null 2>&1 || { echo "report --bench alone: no speed plot"; failed=1; }
fi
echo "$count benchmarks ($scaled scaled), each with its row in bench.md; ${floors:-0} floors with a % of fill;" \
  "${alibi_rows:-0} ALiBi summary rows at Q128"
if [ $failed -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
