#!/usr/bin/env bash
# Runs pe_bench in smoke mode and checks its JSON: every registered variant timed, every counter
# present, zero allocations per call, and the context stamped. Asserts no timing.
set -u
exe=$1 cli=${2:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$exe" --mode smoke --out "$out" >/dev/null || { echo "pe_bench failed"; exit 1; }
python_free_check() {  # grep-based: the JSON is Google Benchmark's pretty-printed format
  local failed=0
  for key in '"items_per_second"' '"bytes_per_second"' '"ns_per_element"' '"fill_fraction"' '"copy_fraction"' \
             '"fill_limit_streams"' '"copy_limit_streams"' '"limits/fill_stream/' '"limits/copy_stream/' \
             '"allocs_per_call"' '"peak_heap_bytes_per_call"' '"max_abs_error"' '"error_over_budget"' '"pace_ns"' \
             '"pe_compiler"' '"pe_cxx_flags"' '"pe_cpu"' '"pe_hwy_best_target"' '"pe_eigen_simd"' '"pe_versions"'; do
    grep -q "$key" "$out" || { echo "missing $key"; failed=1; }
  done
  grep -q '"error_occurred": true' "$out" && { echo "a kernel was outside its contract:"; grep -B3 error_message "$out"; failed=1; }
  # The kernels' own calls allocate nothing.
  if grep -E '"(allocs_per_call|peak_heap_bytes_per_call)"' "$out" | grep -vqE ': 0(\.0+(e\+00)?)?,?$'; then
    echo "allocations on a hot path:"; grep -E '"allocs_per_call"' "$out" | sort | uniq -c; failed=1
  fi
  local kernels; kernels=$(grep -c '"name": "\(sinusoidal\|rope\)/' "$out")
  [ "$kernels" -ge 40 ] || { echo "only $kernels kernel benchmarks"; failed=1; }
  return $failed
}
# The quick grid (pe-suite bench --quick, pe-suite run) times every registered variant: a 16-bit-only one
# (rope.torch_bf16, rope.math_f16, ...) in its own type. Instance names are family.layout.variant[@target].
quick_covers_every_variant() {
  local quick variants missing=0
  quick=$("$exe" --mode quick --benchmark_list_tests=true 2>/dev/null | awk -F/ '{print $2}' | sort -u |
          sed -E 's/^([^.]+)\.[^.]+\./\1./' | sort -u)
  variants=$("$cli" list --json | /usr/bin/python3 -c 'import json, sys; print("\n".join(v["name"] for v in json.load(sys.stdin)))')
  for v in $variants; do
    grep -qx -- "$v" <<<"$quick" || { echo "bench --quick does not time $v"; missing=1; }
  done
  [ -n "$variants" ] || { echo "no variants listed"; missing=1; }
  return $missing
}
# The console shows our counters in their own units (issue 54): ns_per_element and the fractions are
# plain numbers, not "2.04s" or "0.013/s"; the spread (cv) of a counter 0 in every repetition is 0, not
# -nan%; Google Benchmark's DEBUG warning about its own library is replaced by a line saying whose it is.
console_units() {
  local console bad=0
  console=$("$exe" --mode smoke --variant 'rope.halfsplit.scalar_f32*' --benchmark_filter='T2/H2/D64/start$' \
            --benchmark_repetitions=2 2>&1)
  grep -qE 'ns_per_element=[0-9.]+ ' <<<"$console" || { echo "ns_per_element not a plain number"; bad=1; }
  grep -qE 'copy_fraction=[0-9.]+ ' <<<"$console" || { echo "copy_fraction not a plain number"; bad=1; }
  grep -qE 'allocs_per_call=0(\.00)?% ' <<<"$console" || { echo "allocs_per_call's spread is not 0%"; bad=1; }
  grep -qiE 'nan|[0-9]s ns_per|fraction=[0-9.e+-]+/s|Library was built as DEBUG' <<<"$console" &&
    { echo "console in the wrong units:"; grep -iE 'nan|/s |DEBUG' <<<"$console" | cut -c1-300; bad=1; }
  return $bad
}
# The check benchmarks (issue 53; registered only where --variant names them) run once each, on their large
# inputs: a correct kernel's check must pass there (the benchmark calls SkipWithError otherwise: a false
# alarm), and each reports the fraction of the read limit it reached, sampled in its own loop (ReadWindow):
# above 0, and at most 1 on one thread (a check reads each of its bytes at least once). Every one of them
# must have run. Asserts no speed.
check_json=$(mktemp) check_err=$(mktemp)
trap 'rm -f "$out" "$check_json" "$check_err"' EXIT
check_benchmarks_run() {
  "$exe" --variant 'check/*' --benchmark_min_time=0.001 --benchmark_repetitions=1 --benchmark_format=json \
    >"$check_json" 2>"$check_err" || { echo "pe_bench --variant 'check/*' failed:"; tail -5 "$check_err"; return 1; }
  /usr/bin/python3 - "$check_json" <<'PY'
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
bad = []
for b in rows:
    name, rf = b["name"], b.get("read_fraction")
    if b.get("error_occurred"):
        bad.append(f"{name}: {b.get('error_message')}")
    elif rf is None or not rf > 0 or (rf > 1 and "/threads:" not in name):
        bad.append(f"{name}: read_fraction {rf}")
ran = {b["name"] for b in rows}
for want in ["check/rope/f32/T4096/H32/D128", "check/rope/f32/T4096/H32/D128/threads:all/real_time",
             "check/rope/bf16/T4096/H32/D128", "check/rope/f16/T4096/H32/D128", "check/rope/f32/T256/H32/D128",
             "check/sinusoidal/f32/L131072/d128", "check/sinusoidal/grid/f32/64x64/d1024",
             "check/sinusoidal/diffusers/f32/N1/d256", "check/sinusoidal/diffusers/f32/N1024/d1280",
             "check/sinusoidal/diffusers/f32/N4096/d1280", "check/sinusoidal/diffusers/f32/N4096/d1280/scale1000",
             "check/alibi/f32/H32/Q1024/K1024/symmetric", "check/fp8/e4m3fn/T1024/H32/D128",
             "check/scores/rope/f32/H8/Q256/K1024/D64", "check/scores/alibi/f32/H8/Q256/K1024/D64"]:
    if want not in ran:
        bad.append(f"{want}: not run")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
passed=0 failed=0
if check_benchmarks_run; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
if console_units; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
if python_free_check; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
if [ -z "$cli" ]; then echo "no pe-suite given: the quick grid's coverage not checked"; failed=$((failed + 1))
elif quick_covers_every_variant; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
