#!/usr/bin/env bash
# The C plugin path (pe/plugin.h, --plugin, $PE_PLUGINS) end to end, without timing: a correct plugin of
# both families is listed beside the built-in variants, verified, exported and benchmarked (smoke);
# a well-formed plugin writing NaN is reported, not crashed on; every refused plugin exits 2 naming
# its path and the reason, from each subcommand that takes --plugin and from pe_props and pe_bench.
#   plugin_test.sh PE_SUITE PLUGIN_DIR PE_PROPS|- PE_BENCH|-
set -u
exe=$(realpath "$1") dir=$(realpath "$2") props=$3 bench=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
good=$dir/plugtest_good.so

expect() {  # expect NAME WANT_EXIT PATTERN... -- COMMAND...: every pattern matches a line
  local name=$1 want=$2 patterns=() out rc ok=1
  shift 2
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$want" ] || ok=0
  for p in "${patterns[@]}"; do grep -qE -- "$p" <<<"$out" || ok=0; done
  if [ "$ok" -eq 1 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $rc (want $want, output matching each of: ${patterns[*]}):"; echo "$out" | tail -25
  fi
}

# Listed beside the built-in variants, with where they came from; once however often named.
expect list 0 "rope\.plugtest_f64 .*" -- "$exe" list --plugin "$good"
expect list-builtins 0 "rope\.scalar_f32 " -- "$exe" list --plugin "$good"
expect list-origin 0 "sinusoidal\.plugtest_f64 is from .*/plugtest_good\.so" -- "$exe" list --plugin "$good"
expect list-json 0 "\"origin\": \".*/plugtest_good\.so\"" -- "$exe" list --json --plugin "$good"
expect list-twice 0 "rope\.plugtest_f64" -- "$exe" list --plugin "$good" --plugin "$good"
expect list-env 0 "rope\.plugtest_f64" -- env PE_PLUGINS="$good" "$exe" list --plugin "$good"
expect list-relative 0 "rope\.plugtest_f64" -- bash -c "cd '$dir' && '$exe' list --plugin plugtest_good.so"

# A plugin built for ABI version 1 still loads and passes (its plan's config pointer is never read).
expect v1-list 0 "rope\.plugtest_f64 is from .*/plugtest_v1\.so" -- "$exe" list --plugin "$dir/plugtest_v1.so"
expect v1-verify 0 "^([1-9][0-9]*) of \\1 property tests passed" "^([0-9]+) of \\1 instances within their contracts" -- \
  "$exe" verify --plugin "$dir/plugtest_v1.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 4096 \
  --properties-log "$tmp/v1.log"

# Everything a built-in variant gets: properties (in pe_props, through $PE_PLUGINS) and the census.
expect verify 0 "^([1-9][0-9]*) of \\1 property tests passed" "^([0-9]+) of \\1 instances within their contracts" \
  "rope\.halfsplit\.plugtest_f64" "sinusoidal\.concatenated\.plugtest_f64" -- \
  "$exe" verify --plugin "$good" --variant '*plugtest*' --max-position 4096 --properties-log "$tmp/props.log"
expect census-rows 0 "rope\.halfsplit\.plugtest_f64" -- \
  "$exe" census --plugin "$good" --variant 'rope.plugtest*' --max-position 256 --out "$tmp/census.json"
# A table (any values do) rotated by the plugin, then checked against the reference.
expect export-input 0 "wrote" -- \
  "$exe" export --family sinusoidal --dim 64 --positions 3:35 --reference --out "$tmp/x.npy"
expect export 0 "wrote .*rope.plugtest_f64" -- \
  "$exe" export --plugin "$good" --family rope --variant rope.plugtest_f64 --dim 0 --positions 0:32 --input "$tmp/x.npy" --out "$tmp/y.npy"
expect export-checks 0 "verdict: PASS" -- \
  "$exe" check --family rope --input "$tmp/x.npy" --output "$tmp/y.npy" --positions 0:32
expect export-sinusoidal 0 "wrote" -- \
  "$exe" export --plugin "$good" --family sinusoidal --variant sinusoidal.plugtest_f64 --dim 16 --positions 0:64 --out "$tmp/s.npy"
expect export-sinusoidal-checks 0 "verdict: PASS" -- "$exe" check "$tmp/s.npy" --family sinusoidal --positions 0:64

# Well formed, wrong numbers: reported by the census and the properties, exit 1, never a crash.
expect nan-census 1 "^0 of 4 instances within their contracts" -- \
  "$exe" verify --no-properties --plugin "$dir/plugtest_nan.so" --variant 'rope.plugtest*' --max-position 256
# NaN is shown as NaN in the census row (never max |err| 0), and the report reads the census back.
expect nan-census-row 1 "rope\.halfsplit\.plugtest_f64/f32 +1 +nan " -- \
  "$exe" verify --no-properties --plugin "$dir/plugtest_nan.so" --variant 'rope.plugtest*' --max-position 256 \
  --out "$tmp/nan-census.json"
expect nan-report 0 "report: .*report\.md" -- "$exe" report --census "$tmp/nan-census.json" --out "$tmp/nan-report"
# A kernel that crashes or hangs: its census worker dies, the census names the plugin, the kernel, the
# signal (SIGSEGV; under ASan its handler's abort, or exit status) or the time limit, and the case, and goes
# on; exit 1.
expect crash-census 1 \
  "plugtest_crash\.so kernel rope\.halfsplit\.plugtest_f64/f32 crashed: (signal [0-9]+ \([A-Za-z ]+\)|its worker exited with status [0-9]+) in the census cell of positions 1000\.\.9999, dim 128, base 10000" \
  "^0 of 4 instances within their contracts" -- \
  "$exe" verify --no-properties --plugin "$dir/plugtest_crash.so" --variant 'rope.plugtest*' --max-position 100000 \
  --out "$tmp/crash.json" --markdown "$tmp/crash.md"
expect crash-in-json 0 '"fault": "plugin .*plugtest_crash\.so kernel rope\.' -- cat "$tmp/crash.json"
expect crash-in-markdown 0 'plugtest_crash\.so kernel rope\.halfsplit\.plugtest_f64/f32 crashed' -- cat "$tmp/crash.md"
expect hang-census 1 \
  "plugtest_hang\.so kernel rope\.halfsplit\.plugtest_f64/f32 hung: no call returned within 1 s \(the worker was killed\) in the census cell of positions 1000\.\.9999" \
  "^0 of 2 instances within their contracts" -- \
  "$exe" verify --no-properties --plugin "$dir/plugtest_hang.so" --variant 'rope.halfsplit.plugtest*' --max-position 100000 \
  --call-timeout 1
expect crash-export 1 \
  "plugtest_crash\.so kernel rope\.plugtest_f64 crashed: (signal [0-9]+ \([A-Za-z ]+\)|its worker exited with status [0-9]+) in export's call; nothing written" -- \
  "$exe" export --plugin "$dir/plugtest_crash.so" --variant rope.plugtest_f64 --family rope --dim 64 --positions 990:1010 \
  --out "$tmp/crash-export.npy"
absent() {  # absent NAME FILE: a failed export wrote nothing
  if [ ! -e "$2" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1 wrote $2"; fi
}
absent crash-export "$tmp/crash-export.npy"
expect crash-properties 1 \
  "CRASHED Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32: (signal [0-9]+ \([A-Za-z ]+\)|exit status [0-9]+) in plugin /.*/plugtest_crash\.so kernel rope\.plugtest_f64; last case started: rope\.halfsplit\.plugtest_f64/f32 \(f32\), (forward|inverse); head_dim [0-9]+, .*; [0-9]+ tokens? x [0-9]+ heads?, positions \[.*\] \(the binary died there; the other properties ran without it\)" \
  "^[0-9]+ of [0-9]+ property tests passed" -- \
  "$exe" verify --plugin "$dir/plugtest_crash.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --properties-log "$tmp/crash-props.log"
expect call-timeout-bad 2 "--call-timeout: must be > 0 seconds, got 0" -- "$exe" verify --no-properties --call-timeout 0
expect nan-properties 1 "FAILED Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32" -- \
  "$exe" verify --plugin "$dir/plugtest_nan.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --properties-log "$tmp/nan.log"

# Guard zones (pe/kernel_guard.h): a kernel writing outside its rows fails the property that called it,
# named with where, its minimal case and a rerun line; the census names it with its cell; exit 1.
stray() {  # stray NAME WHERE_PATTERN CENSUS_PATTERN: one property and the census of a planted stray write
  local name=$1 where=$2 census=$3
  expect "stray-$name" 1 \
    "FAILED Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32" \
    "failure: rope\.plugtest_f64 wrote outside its rows: $where" \
    "minimal case: rope\.halfsplit\.plugtest_f64/f32 \(f32\), forward" \
    "diagnosis: the kernel writes outside its rows" \
    "rerun: pe-suite verify --plugin /.*/plugtest_$name\.so --seed 20261130 --variant 'rope\.halfsplit\.plugtest_f64/f32' --property '\*RopeProps\.AgreesWithReferenceWithinBudget\*'" \
    "$census" -- \
    "$exe" verify --plugin "$dir/plugtest_$name.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
    --property '*RopeProps.AgreesWithReferenceWithinBudget*'
}
census_names() {  # the census line of a stray write: the plugin, the kernel, where, the cell
  echo "plugtest_$1\.so kernel rope\.plugtest_f64 wrote outside its rows: $2.* \(case: the census cell of positions 0\.\.256, dim [0-9]+, base [0-9e+.]+\)"
}
stray past_row "1 element past row \(token 0, head 0\), the last row in memory: channel 2 of a 2-channel row \(rotary_offset 0, rotary_dim 2\)" \
  "$(census_names past_row "1 element past row \(token [0-9]+, head [0-9]+\), (in the gap between|the last row in memory).*: channel [0-9]+ of a [0-9]+-channel row")"
stray head_gap "[0-9]+ elements? past row \(token [0-9]+, head 0\), in the gap between heads 0 and 1 of token [0-9]+: channels? " \
  "$(census_names head_gap "[0-9]+ elements past row \(token [0-9]+, head 0\), in the gap between heads 0 and 1")"
# (a kernel ignoring head_stride is right on contiguous rows: the census finds it in its gapped calls)
# The census rotates whole heads (no pass-through channel): the properties alone find this one.
stray pass_through "1 element into pass-through channel [0-9]+ of row \(token 0, head 0\)" "^1 of 1 instances within"
stray before "1 element before the buffer: channel -1 before row \(token 0, head 0\)" \
  "$(census_names before "1 element before the buffer: channel -1 before row \(token 0, head 0\)")"
expect stray-export 1 \
  "plugin /.*/plugtest_past_row\.so kernel rope\.plugtest_f64 wrote outside its rows: 1 element past row \(token 3, head 0\), the last row in memory: channel 64 of a 64-channel row .*; nothing written" -- \
  "$exe" export --plugin "$dir/plugtest_past_row.so" --variant rope.plugtest_f64 --family rope --dim 64 --positions 0:4 \
  --out "$tmp/stray-export.npy"
absent stray-export "$tmp/stray-export.npy"
# abort() inside a kernel: the census and the property binary name the signal (or ASan's exit status).
expect abort-census 1 \
  "plugtest_abort\.so kernel rope\.halfsplit\.plugtest_f64/f32 crashed: (signal 6 \(Aborted\)|its worker exited with status [0-9]+) in the census cell of positions 1000\.\.9999" -- \
  "$exe" verify --no-properties --plugin "$dir/plugtest_abort.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 100000
expect abort-properties 1 \
  "CRASHED Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32: (signal 6 \(Aborted\)|exit status [0-9]+) in plugin /.*/plugtest_abort\.so kernel rope\.plugtest_f64; last case started: " -- \
  "$exe" verify --plugin "$dir/plugtest_abort.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --property '*RopeProps.AgreesWithReferenceWithinBudget*'
# An endless loop inside a property test: the binary is killed after 10 x --call-timeout, the test named.
expect hang-properties 1 \
  "HUNG Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32: hung: no result within 5 s \(the binary was killed\) in plugin /.*/plugtest_hang\.so kernel rope\.plugtest_f64; last case started: .*positions \[" -- \
  "$exe" verify --plugin "$dir/plugtest_hang.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --property '*RopeProps.AgreesWithReferenceWithinBudget*' --call-timeout 0.5
# A kernel that forms the frequencies with pair j's own index (right for text RoPE and M-RoPE, wrong for the
# 2-D vision forms): the agreement property compares every form in every case, so a quick run catches it.
expect vision-index 1 "FAILED Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32" -- \
  "$exe" verify --plugin "$dir/plugtest_vision_index.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --property '*RopeProps.AgreesWithReferenceWithinBudget*'
expect vision-index-good 0 "1 of 1 property tests passed" -- \
  "$exe" verify --plugin "$dir/plugtest_good.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --property '*RopeProps.AgreesWithReferenceWithinBudget*'
# The default bounds the wait to a few minutes whatever --call-timeout says; --property-timeout sets it.
expect hang-properties-bounded 1 \
  "HUNG Registry/RopeProps\.AgreesWithReferenceWithinBudget/rope_halfsplit_plugtest_f64_f32: hung: no result within 3 s" -- \
  "$exe" verify --plugin "$dir/plugtest_hang.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
  --property '*RopeProps.AgreesWithReferenceWithinBudget*' --property-timeout 3
expect property-timeout-default 0 "--property-timeout FLOAT=180" -- "$exe" verify --help
# Wrong numbers read like a bug report: the minimal case, its output, and the check engine's diagnosis of the
# kernel rerun under that case's configuration; the property log per run, beside --out.
diagnosed() {  # diagnosed NAME CLAIM_PATTERN
  expect "diagnosis-$1" 1 "minimal case: rope\.halfsplit\.plugtest_f64/f32 \(f32\), forward" "  y = \[" \
    "diagnosis \(the kernel rerun under this case's configuration on 64 tokens x 4 heads" "the data fits: $2" \
    "property log .*: $tmp/$1\.json\.properties\.log" -- \
    "$exe" verify --plugin "$dir/plugtest_$1.so" --variant 'rope.halfsplit.plugtest_f64/f32' --max-position 256 \
    --property '*RopeProps.AgreesWithReferenceWithinBudget*' --out "$tmp/$1.json"
}
diagnosed offset_by_one "positions shifted by \+1"
diagnosed pairs_interleaved "layout interleaved \(given: halfsplit\)"
diagnosed no_attention_factor ".*no attention factor"
expect log-per-run 1 "property log .*: /.*/pe-suite-verify-[A-Za-z0-9]{6}/properties\.log" -- \
  "$exe" verify --plugin "$dir/plugtest_offset_by_one.so" --variant 'rope.halfsplit.plugtest_f64/f32' \
  --max-position 256 --property '*RopeProps.AgreesWithReferenceWithinBudget*'

# ABI version 3: a RoPE forming its frequencies from pe_rope_config's fields passes each engine reading; its
# version-2 build gets the same rope type names without their parameters, reads inv_freq and passes; its build
# that takes each reading for HF's method of that family fails, named.
config_case() {  # config_case NAME POSITIONS MISREAD_PATTERN|- FLAGS...
  local name=$1 positions=$2 misread=$3
  shift 3
  expect "config-$name-v3" 0 "verdict: PASS" -- bash -c '"$1" export --plugin "$2" --family rope --variant rope.plugtest_config \
    --dim 0 --positions "$3" --input "$4" --out "$5" "${@:6}" >/dev/null && "$1" check --family rope --input "$4" \
    --output "$5" --positions "$3" "${@:6}"' _ "$exe" "$dir/plugtest_config.so" "$positions" "$tmp/x.npy" "$tmp/c3.npy" "$@"
  expect "config-$name-v2" 0 "verdict: PASS" -- bash -c '"$1" export --plugin "$2" --family rope --variant rope.plugtest_config \
    --dim 0 --positions "$3" --input "$4" --out "$5" "${@:6}" >/dev/null && "$1" check --family rope --input "$4" \
    --output "$5" --positions "$3" "${@:6}"' _ "$exe" "$dir/plugtest_config_v2.so" "$positions" "$tmp/x.npy" "$tmp/c2.npy" "$@"
  [ "$misread" = - ] && return
  expect "config-$name-misread" 1 "verdict: FAIL" "$misread" -- bash -c '"$1" export --plugin "$2" --family rope \
    --variant rope.plugtest_config --dim 0 --positions "$3" --input "$4" --out "$5" "${@:6}" >/dev/null && "$1" check \
    --family rope --input "$4" --output "$5" --positions "$3" "${@:6}"' _ "$exe" "$dir/plugtest_config_misreads.so" \
    "$positions" "$tmp/x.npy" "$tmp/ci.npy" "$@"
}
config_case dynamic-static 3000:3032 "HF's live length where vLLM's static base was expected" \
  --scaling dynamic --factor 4 --original-max-position 2048 --dynamic-semantics static
config_case dynamic-alpha 3000:3032 "scaling ignored: plain RoPE \(given: dynamic alpha 100\)" \
  --scaling dynamic --alpha 100 --factor 1 --original-max-position 2048
config_case yarn-multiply 100:132 "yarn attention_factor replacing its mscale \(HF's yarn_attention replace" \
  --scaling yarn --factor 8 --original-max-position 4096 --attention-factor 1.2 --yarn-attention multiply
config_case proportional 500:532 - --scaling proportional --partial-rotary-factor 0.25 --factor 1
config_case axial 5:37 "axial RoPE \(axes_dim 16,24,24\) run as 1-D RoPE on the first axis's positions" \
  --axes-dim 16,24,24

# Refused plugins: exit 2, the plugin's path and the reason, from every subcommand that takes --plugin.
bad() { echo "$dir/plugtest_bad_$1.so"; }
expect no-such-file 2 "plugin /[^ ]*/nothing_here\.so: no such file" -- "$exe" verify --plugin "$dir/nothing_here.so"
expect not-a-library 2 "plugin /[^ ]*/plugin_test\.sh: dlopen failed" -- "$exe" list --plugin "$0"
expect missing-entry 2 "plugin /[^ ]*/plugtest_bad_no_entry\.so: missing entry: exports no pe_plugin_register" -- \
  "$exe" list --plugin "$(bad no_entry)"
expect wrong-abi 2 "plugin /[^ ]*/plugtest_bad_abi\.so: wrong ABI version: built for pe/plugin\.h ABI version 99, this pe-suite reads versions 1 to 3" -- \
  "$exe" census --plugin "$(bad abi)" --out "$tmp/c.json"
expect null-function 2 "plugin /[^ ]*/plugtest_bad_null_function\.so: kernel rope\.plugtest_bad: null function pointer rope_apply" -- \
  "$exe" run --plugin "$(bad null_function)" --out-dir "$tmp/run"
expect invalid-contract 2 "plugin /[^ ]*/plugtest_bad_contract\.so: kernel rope\.plugtest_bad: contract\.c1 must be finite and >= 0, got -1" -- \
  "$exe" bench --plugin "$(bad contract)"
expect duplicate-builtin 2 "plugin /[^ ]*/plugtest_bad_duplicate_builtin\.so: kernel rope\.scalar_f32: duplicate name, already registered by .*libpe" -- \
  "$exe" export --plugin "$(bad duplicate_builtin)" --family rope --reference --dim 8 --positions 0:2 --out "$tmp/x.npy"
expect duplicate-in-plugin 2 "plugin /[^ ]*/plugtest_bad_twice\.so: kernel rope\.plugtest_bad: registered twice \(duplicate name\)" -- \
  "$exe" verify --plugin "$(bad twice)"
expect bad-name 2 "plugin /[^ ]*/plugtest_bad_name\.so: kernel rope\.Engine-C: the name 'rope\.Engine-C' is not rope\.<backend>" -- \
  "$exe" list --plugin "$(bad name)"
expect refuses 2 "plugin /[^ ]*/plugtest_bad_refuses\.so: pe_plugin_register refused \(returned 3\): needs AVX-512" -- \
  "$exe" list --plugin "$(bad refuses)"
expect bad-env 2 "plugin /[^ ]*/plugtest_bad_abi\.so: wrong ABI version" -- env PE_PLUGINS="$(bad abi)" "$exe" list

# The helper binaries read $PE_PLUGINS themselves (so do those pe_add_variant_suite builds).
if [ "$props" != "-" ]; then
  expect props-refuses 2 "plugtest_bad_contract\.so: kernel rope\.plugtest_bad: contract\.c1" -- \
    env PE_PLUGINS="$(bad contract)" "$props" --gtest_list_tests
  expect props-lists 0 "rope_halfsplit_plugtest_f64_f32" -- env PE_PLUGINS="$good" "$props" --gtest_list_tests
fi
if [ "$bench" != "-" ]; then
  expect bench-refuses 2 "pe_bench: plugin /[^ ]*/plugtest_bad_no_entry\.so: missing entry" -- \
    env PE_PLUGINS="$(bad no_entry)" "$bench" --mode smoke
  expect bench-times 0 "rope\.halfsplit\.plugtest_f64" -- \
    env PE_PLUGINS="$good" "$bench" --mode smoke --variant 'rope.plugtest*' --benchmark_min_time=0.0001
fi

echo "plugin: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
