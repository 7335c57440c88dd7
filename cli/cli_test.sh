#!/usr/bin/env bash
# End-to-end checks of the pe-suite command: exit codes, messages, and exported values against
# published constants. Usage: cli_test.sh PATH/TO/pe-suite
set -u
exe=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

check() {  # check NAME EXPECTED_EXIT GREP_PATTERN -- ARGS...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out rc
  out=$("$exe" "$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ] && grep -qE -- "$pattern" <<<"$out"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $rc (want $want), output:"; echo "$out" | head -20
  fi
}

check list 0 "sinusoidal.scalar_f64" -- list
check list-json 0 '"name": "rope.scalar_f32"' -- list --json
check no-subcommand 2 "subcommand is required" --
check odd-dim 2 "dim must be even and positive, got 7" -- export --family sinusoidal --dim 7 --positions 0:3 --reference --out "$tmp/a.npy"
check bad-range 2 "--positions" -- export --family sinusoidal --dim 8 --positions 5:2 --reference --out "$tmp/a.npy"
check bad-family 2 "--family: unknown value 'sine'" -- export --family sine --dim 8 --positions 0:2 --reference --out "$tmp/a.npy"
check bad-base 2 "base must be finite and > 1, got 1" -- export --family rope --dim 8 --base 1 --positions 0:2 --reference --out "$tmp/a.npy"
check unknown-variant 2 "no variant named 'nope'" -- export --family rope --dim 8 --positions 0:2 --variant nope --out "$tmp/a.npy"
check wrong-family 2 "not a sinusoidal variant" -- export --family sinusoidal --dim 8 --positions 0:2 --variant rope.scalar_f64 --out "$tmp/a.npy"
check both-sources 2 "exactly one" -- export --family rope --dim 8 --positions 0:2 --reference --variant rope.scalar_f64 --out "$tmp/a.npy"
check unknown-glob 2 "no variant matches" -- verify --variant "nothing.*"

# dim 2 has ω_0 = 1, so position 1 is (sin 1, cos 1); Abramowitz & Stegun 4.6 give
# sin 1 = 0.84147098480789650665, cos 1 = 0.54030230586813971740; their nearest floats (IEEE
# round-to-nearest of those decimals) print with %.9g as below.
check export-csv 0 "wrote" -- export --family sinusoidal --dim 2 --positions 1:2 --reference --out "$tmp/one.csv"
if [ "$(cat "$tmp/one.csv")" = "0.841470957,0.540302277" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL export-values: $(cat "$tmp/one.csv")"; fi
check export-rope-f64 0 "wrote" -- export --family rope --dim 2 --positions 1:2 --dtype f64 --reference --out "$tmp/r.csv"
if [ "$(cat "$tmp/r.csv")" = "0.54030230586813977,0.8414709848078965" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL export-rope-values: $(cat "$tmp/r.csv")"; fi

# .npy: magic, version 1.0, a header padded to 64 bytes, then 3 x 8 float32 = 96 bytes.
check export-npy 0 "3 x 8 f32" -- export --family sinusoidal --dim 8 --positions 0:3 --reference --out "$tmp/t.npy"
header=$(head -c 128 "$tmp/t.npy" | tr -d '\000' | strings -n 8 | head -1)
size=$(stat -c %s "$tmp/t.npy")
if [[ "$header" == *"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 8), }"* ]] && [ $(( (size - 96) % 64 )) -eq 0 ]; then
  passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL npy header: '$header' size $size"; fi

check verify-one 0 "^([0-9]+) of \\1 instances within their contracts" -- verify --variant "rope.scalar_f64" --max-position 2000
check help 0 "--positions-file" -- export --help

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
