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
# An odd dim's last channel is a zero pad (diffusers, fairseq): the reference and the variants write it.
check odd-dim 0 "wrote" -- export --family sinusoidal --dim 7 --positions 0:3 --reference --out "$tmp/a.npy"
check odd-dim-variant 0 "wrote" -- export --family sinusoidal --dim 7 --positions 0:3 --variant sinusoidal.scalar_f32 --out "$tmp/a.npy"
check dim-one 2 "--dim: dim must be in .2, 16777216., got 1" -- export --family sinusoidal --dim 1 --positions 0:3 --reference --out "$tmp/a.npy"
check bad-range 2 "--positions" -- export --family sinusoidal --dim 8 --positions 5:2 --reference --out "$tmp/a.npy"
check bad-family 2 "--family: unknown value 'sine'" -- export --family sine --dim 8 --positions 0:2 --reference --out "$tmp/a.npy"
check bad-base 2 "base must be finite and > 1, got 1" -- export --family rope --dim 8 --base 1 --positions 0:2 --reference --out "$tmp/a.npy"
check unknown-variant 2 "no variant named 'nope'" -- export --family rope --dim 8 --positions 0:2 --variant nope --out "$tmp/a.npy"
check wrong-family 2 "not a sinusoidal variant" -- export --family sinusoidal --dim 8 --positions 0:2 --variant rope.scalar_f64 --out "$tmp/a.npy"
check export-too-large 2 "positions 100000 x --dim 16777216 = 1677721600000 values .*more than this machine" -- export --family sinusoidal --dim 16777216 --positions 0:100000 --reference --out "$tmp/t.npy"
check both-sources 2 "exactly one" -- export --family rope --dim 8 --positions 0:2 --reference --variant rope.scalar_f64 --out "$tmp/a.npy"
check unknown-glob 2 "no variant matches" -- verify --variant "nothing.*"
check seed-negative 2 "--seed: expected an integer in \\[0, 2\\^64\\), got -1" -- verify --seed -1 --variant "rope.scalar_f64"
# Bad input, as a new user types it: each message names the flag, the value as typed and what would do.
check unknown-command 2 "unknown command 'frobnicate' \(commands: run, list, verify" -- frobnicate
check int-overflow 2 "--rotary-dim: 99999999999999999999 is out of range" -- check --family rope --input "$tmp/none.npy" --output "$tmp/none.npy" --positions 0:2 --rotary-dim 99999999999999999999
check uint-negative 2 "--threads: -1 is negative" -- census --exhaustive --threads -1 --out "$tmp/c.json"
check missing-input 2 "--input: $tmp/none.npy: cannot open \(no such file\)" -- check --family rope --input "$tmp/none.npy" --output "$tmp/none.npy" --positions 0:2
check input-directory 2 "--input: $tmp: cannot read \(a directory, not a file\)" -- check --family rope --input "$tmp" --output "$tmp" --positions 0:2
check hf-config-directory 2 "--hf-config $tmp: cannot be read \(a directory, not a file\)" -- check --family rope --input "$tmp/none.npy" --output "$tmp/none.npy" --positions 0:2 --hf-config "$tmp"
check rotary-dim-help 0 "0, the default: all of them" -- check --help
# A census of hundreds of instances prints its failing rows and where every row is, not every row.
out=$("$exe" census --out "$tmp/every.json" 2>&1)
if grep -qE "^census: [0-9]+ of [0-9]+ instances within their contracts; every row: pe-suite report --census $tmp/every.json$" <<<"$out" &&
   [ "$(wc -l <<<"$out")" -lt 40 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL census-table: $(wc -l <<<"$out") lines"; echo "$out" | tail -5; fi
check run-seed-negative 2 "--seed: expected an integer in \\[0, 2\\^64\\), got -1" -- run --seed -1

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

# check: a correctly rounded table passes; the same table checked as interleaved when it is
# concatenated fails and the diagnosis names the layout.
check export-concat 0 "wrote" -- export --family sinusoidal --dim 64 --positions 0:256 --layout concatenated --reference --out "$tmp/c.npy"
check check-reference 0 "verdict: PASS" -- check "$tmp/c.npy" --family sinusoidal --positions 0:256 --layout concatenated
check check-exact-p99 0 "verdict: PASS" -- check "$tmp/c.npy" --family sinusoidal --positions 0:256 --layout concatenated --exact-p99
check exact-p99-alibi 2 "--exact-p99: applies to --family rope and sinusoidal only" -- check "$tmp/c.npy" --family alibi --exact-p99
check exact-p99-t5 2 "--exact-p99: not with --family t5" -- check "$tmp/c.npy" --family t5 --exact-p99
check check-layout 1 "the data fits: layout concatenated \(given: interleaved\)" -- check "$tmp/c.npy" --family sinusoidal --positions 0:256
# --against: the interleaved table against the concatenated one, both held to the reference.
check export-interleaved 0 "wrote" -- export --family sinusoidal --dim 64 --positions 0:256 --reference --out "$tmp/i.npy"
check check-against 1 "against: B is wrong, A is within budget" -- check "$tmp/i.npy" --family sinusoidal --positions 0:256 --against "$tmp/c.npy"
# A float32-angle implementation near position 1e5 against a float64-angle contract: outside it.
check export-torch 0 "wrote" -- export --family sinusoidal --dim 128 --positions 100000:100064 --variant sinusoidal.torch_f32 --out "$tmp/torch.npy"
check check-torch-tight 1 "verdict: FAIL" -- check "$tmp/torch.npy" --family sinusoidal --positions 100000:100064 --contract sinusoidal.hwy
check check-torch-own 0 "verdict: PASS" -- check "$tmp/torch.npy" --family sinusoidal --positions 100000:100064 --contract sinusoidal.torch_f32
check check-max-abs 1 "verdict: FAIL" -- check "$tmp/torch.npy" --family sinusoidal --positions 100000:100064 --max-abs 1e-9
# bfloat16 travels as uint16 bits and must be declared.
check export-bf16 0 "wrote" -- export --family sinusoidal --dim 32 --positions 0:64 --dtype bf16 --reference --out "$tmp/b.npy"
check check-bf16-undeclared 2 "pass --dtype bf16" -- check "$tmp/b.npy" --family sinusoidal --positions 0:64
check check-bf16 0 "verdict: PASS" -- check "$tmp/b.npy" --family sinusoidal --positions 0:64 --dtype bf16
check export-f16 0 "wrote" -- export --family sinusoidal --dim 32 --positions 0:64 --dtype f16 --reference --out "$tmp/h.npy"
check check-f16 0 "verdict: PASS" -- check "$tmp/h.npy" --family sinusoidal --positions 0:64
# Bad files and mismatches: exit 2 with a message.
head -c 150 "$tmp/c.npy" > "$tmp/trunc.npy"
check check-truncated 2 "truncated" -- check "$tmp/trunc.npy" --family sinusoidal --positions 0:256
check check-rows 2 "has 256 rows, the positions are 10" -- check "$tmp/c.npy" --family sinusoidal --positions 0:10
check check-not-npy 2 "not a .npy file" -- check "$0" --family sinusoidal --positions 0:10
# RoPE: rotate a table (any values do) with the reference, check it, then check it as interleaved.
check export-x 0 "wrote" -- export --family sinusoidal --dim 64 --positions 3:35 --reference --out "$tmp/x.npy"
check export-rope-golden 0 "wrote" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --reference --out "$tmp/y.npy"
check check-rope 0 "verdict: PASS" -- check --family rope --input "$tmp/x.npy" --output "$tmp/y.npy" --positions 0:32
check check-rope-layout 1 "the data fits: layout halfsplit \(given: interleaved\)" -- check --family rope --input "$tmp/x.npy" --output "$tmp/y.npy" --positions 0:32 --layout interleaved
check check-rope-partial 1 "verdict: FAIL" -- check --family rope --input "$tmp/x.npy" --output "$tmp/y.npy" --positions 0:32 --rotary-dim 32
# The batch view: the same 32 x 64 values read as HF's [2 heads, 16 tokens, 64] (the .npy header
# rewritten, the data untouched), rotated in place by a variant and checked against the reference.
sed '1s/(32, 64), }   /(2, 16, 64), }/' "$tmp/x.npy" > "$tmp/xh.npy"  # the header keeps its length
check export-heads-first 0 "wrote" -- export --family rope --dim 0 --positions 0:16 --input "$tmp/xh.npy" --heads-first --variant rope.scalar_f64 --dtype f32 --out "$tmp/yh.npy"
check check-heads-first 0 "verdict: PASS" -- check --family rope --input "$tmp/xh.npy" --output "$tmp/yh.npy" --positions 0:16 --heads-first
check check-heads-first-shape 0 "16 tokens x 2 heads x head_dim 64" -- check --family rope --input "$tmp/xh.npy" --output "$tmp/yh.npy" --positions 0:16 --heads-first
# A shape that contradicts the positions names both readings and the flag that would fix it.
check check-heads-first-missing 2 "shape \\[2, 16, 64\\] read as \\[tokens, heads, head_dim\\] holds 2 tokens, the positions are 16; read as \\[heads, tokens, head_dim\\] it holds 16: give --heads-first" -- check --family rope --input "$tmp/xh.npy" --output "$tmp/yh.npy" --positions 0:16
check check-heads-first-wrong 2 "shape \\[2, 16, 64\\] read as \\[heads, tokens, head_dim\\] \\(--heads-first\\) holds 16 tokens, the positions are 2; read as \\[tokens, heads, head_dim\\] it holds 2: drop --heads-first" -- check --family rope --input "$tmp/xh.npy" --output "$tmp/yh.npy" --positions 0:2 --heads-first
# Read as [16 tokens, 2 heads, 64] instead, row (t, h) holds another token's data: far outside.
sed '1s/(32, 64), }   /(16, 2, 64), }/' "$tmp/x.npy" > "$tmp/xt.npy"
sed '1s/(2, 16, 64)/(16, 2, 64)/' "$tmp/yh.npy" > "$tmp/yt.npy"
check check-heads-first-as-tokens-first 1 "verdict: FAIL" -- check --family rope --input "$tmp/xt.npy" --output "$tmp/yt.npy" --positions 0:16

# RoPE scaling. Factor lists are 1-D float64 .npy files, written here byte by byte.
npy1d() {  # npy1d FILE N VALUE: N copies of VALUE, given as its 8 little-endian bytes (\xNN)
  local dict="{'descr': '<f8', 'fortran_order': False, 'shape': ($2,), }"
  local hlen=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 - 10 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
    printf '%s%*s\n' "$dict" $((hlen - ${#dict} - 1)) ''
    for ((k = 0; k < $2; k++)); do printf '%b' "$3"; done; } > "$1"
}
one='\x00\x00\x00\x00\x00\x00\xf0\x3f' two='\x00\x00\x00\x00\x00\x00\x00\x40'
npy1d "$tmp/short32.npy" 32 "$one"; npy1d "$tmp/long32.npy" 32 "$two"; npy1d "$tmp/short31.npy" 31 "$one"
npy1d "$tmp/short64.npy" 64 "$one"; npy1d "$tmp/long64.npy" 64 "$two"
# Every method on x.npy (32 tokens x head_dim 64, positions 0:32, L = 16 so that positions pass it):
# the (cos, sin) table and the golden output from the reference, and rope.scalar_f64's rotation of
# the same input; check accepts both under the same flags.
declare -A scaled=(
  [none]=""
  [linear]="--factor 4"
  [ntk]="--factor 4"
  [dynamic]="--factor 2 --original-max-position 16 --seq-len 40"
  [yarn]="--factor 4 --original-max-position 16"
  [llama3]="--factor 8 --original-max-position 16"
  [longrope]="--factor 4 --original-max-position 16 --seq-len 40 --short-factors $tmp/short32.npy --long-factors $tmp/long32.npy"
)
for m in none linear ntk dynamic yarn llama3 longrope; do
  read -ra f <<<"${scaled[$m]}"
  check "scaled-table-$m" 0 "wrote .*32 x 32 x 2 f32, reference" -- export --family rope --dim 64 --positions 0:32 --reference --scaling "$m" "${f[@]}" --out "$tmp/cs-$m.npy"
  check "scaled-golden-$m" 0 "wrote" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --reference --scaling "$m" "${f[@]}" --out "$tmp/ys-$m.npy"
  check "scaled-variant-$m" 0 "wrote" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --variant rope.scalar_f64 --scaling "$m" "${f[@]}" --out "$tmp/yv-$m.npy"
  for y in ys yv; do
    check "scaled-check-$y-$m" 0 "verdict: PASS" -- check --family rope --input "$tmp/x.npy" --output "$tmp/$y-$m.npy" --positions 0:32 --scaling "$m" "${f[@]}"
  done
done
# LongRoPE switched per token (short list below L = 16, long from it): the reference's export passes under the
# same switch, fails under HF's per-sequence choice with the switch named; a variant cannot switch.
lr="--scaling longrope --factor 4 --original-max-position 16 --short-factors $tmp/short32.npy --long-factors $tmp/long32.npy"
read -ra lrf <<<"$lr"
check longrope-per-token-golden 0 "wrote" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --reference "${lrf[@]}" --longrope-switch per-token --out "$tmp/ys-pt.npy"
check longrope-per-token-check 0 "verdict: PASS" -- check --family rope --input "$tmp/x.npy" --output "$tmp/ys-pt.npy" --positions 0:32 "${lrf[@]}" --longrope-switch per-token
check longrope-per-token-named 1 "the data fits: longrope switch per-token \(given: per-sequence\)" -- check --family rope --input "$tmp/x.npy" --output "$tmp/ys-pt.npy" --positions 0:32 "${lrf[@]}" --seq-len 32
check longrope-switch-bad 2 "--longrope-switch: expected per-sequence or per-token, got 'per-batch'" -- check --family rope --input "$tmp/x.npy" --output "$tmp/ys-pt.npy" --positions 0:32 "${lrf[@]}" --longrope-switch per-batch
check longrope-switch-variant 2 "--longrope-switch: per-token applies to --reference" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --variant rope.scalar_f64 "${lrf[@]}" --longrope-switch per-token --out "$tmp/yv-pt.npy"
check longrope-switch-unused 2 "--longrope-switch: not used by --scaling yarn" -- check --family rope --input "$tmp/x.npy" --output "$tmp/ys-pt.npy" --positions 0:32 --scaling yarn --factor 4 --original-max-position 16 --longrope-switch per-token
# Scaled data checked with another factor fails, and the diagnosis names the factor that fits.
check scaled-check-wrong 1 "the data fits: yarn factor 4 \\(given 2\\)" -- check --family rope --input "$tmp/x.npy" --output "$tmp/ys-yarn.npy" --positions 0:32 --scaling yarn --factor 2 --original-max-position 16
# YaRN's attention factor 0.1·ln 4 + 1 multiplies cos and sin: at position 0 every pair is (A, 0).
a="1.1386294361119891"
for src in --reference "--variant rope.scalar_f64"; do
  # shellcheck disable=SC2086
  check "yarn-p0 $src" 0 "wrote" -- export --family rope --dim 8 --positions 0:1 --dtype f64 $src --scaling yarn --factor 4 --original-max-position 64 --out "$tmp/yarn0.csv"
  if [ "$(cat "$tmp/yarn0.csv")" = "$a,0,$a,0,$a,0,$a,0" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL yarn attention factor ($src): $(cat "$tmp/yarn0.csv")"; fi
done
# partial_rotary_factor: HF's int(head_dim·F), the same as the explicit rotary dim.
check partial-golden 0 "wrote" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --reference --partial-rotary-factor 0.5 --out "$tmp/yp.npy"
check partial-check 0 "verdict: PASS" -- check --family rope --input "$tmp/x.npy" --output "$tmp/yp.npy" --positions 0:32 --partial-rotary-factor 0.5
check partial-as-rotary 0 "\(rotary 32\).*" -- check --family rope --input "$tmp/x.npy" --output "$tmp/yp.npy" --positions 0:32 --rotary-dim 32
check partial-conflict 2 "--rotary-dim and --partial-rotary-factor: give one" -- check --family rope --input "$tmp/x.npy" --output "$tmp/yp.npy" --positions 0:32 --rotary-dim 32 --partial-rotary-factor 0.5
check partial-bad 2 "--partial-rotary-factor: partial_rotary_factor must be in \(0, 1\], got 1.5" -- export --family rope --dim 64 --positions 0:2 --reference --partial-rotary-factor 1.5 --out "$tmp/a.npy"
# An output onto one of the command's inputs is refused before any work, the input untouched; an output
# in a folder that does not exist is an error (the folder is not created).
cp "$tmp/x.npy" "$tmp/x-before.npy"
check out-onto-input 2 "--json: '.*x.npy' is this command's --input" -- check --family rope --input "$tmp/x.npy" --output "$tmp/yp.npy" --positions 0:32 --partial-rotary-factor 0.5 --json "$tmp/x.npy"
check export-onto-input 2 "--out: '.*x.npy' is this command's --input" -- export --family rope --dim 0 --positions 0:32 --input "$tmp/x.npy" --reference --out "$tmp/x.npy"
seq 0 31 > "$tmp/pp.json"  # a text positions file whose name export's metadata (--out X writes X.json) would take
check export-json-onto-input 2 "--out: '.*pp.json' is this command's --positions-file" -- export --family rope --dim 0 --positions-file "$tmp/pp.json" --input "$tmp/x.npy" --reference --out "$tmp/pp"
if cmp -s "$tmp/x.npy" "$tmp/x-before.npy"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL the input was overwritten"; fi
check out-no-folder 2 "--json: the folder '.*no-such-folder' does not exist" -- check --family rope --input "$tmp/x.npy" --output "$tmp/yp.npy" --positions 0:32 --partial-rotary-factor 0.5 --json "$tmp/no-such-folder/r.json"
check census-no-folder 2 "--out: the folder '.*no-such-folder' does not exist" -- census --variant "rope.scalar_f64" --max-position 100 --out "$tmp/no-such-folder/c.json"
if [ ! -e "$tmp/no-such-folder" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL a missing folder was created"; fi
# Bad scaling input: exit 2, the flag and the value named.
rope2=(export --family rope --dim 64 --positions 0:2 --reference --out "$tmp/a.npy")
check scaling-factor-0 2 "--factor: factor must be finite and > 0, got 0" -- "${rope2[@]}" --scaling linear --factor 0
check scaling-beta 2 "--beta-fast: beta_fast must be finite and > 0, got 0" -- "${rope2[@]}" --scaling yarn --factor 4 --original-max-position 64 --beta-fast 0
check scaling-betas-either-order 0 "wrote" -- "${rope2[@]}" --scaling yarn --factor 4 --original-max-position 64 --beta-fast 1 --beta-slow 32
check scaling-position-scale-bad 2 "--position-scale: position_scale must be finite and > 0, got -2" -- "${rope2[@]}" --position-scale -2
check scaling-attention-any-method 0 "wrote" -- "${rope2[@]}" --attention-factor 1.5
check scaling-llama3-freqs 2 "--low-freq-factor: low_freq_factor must be <= high_freq_factor=4, got 5" -- "${rope2[@]}" --scaling llama3 --factor 8 --original-max-position 64 --low-freq-factor 5
check scaling-longrope-length 2 "--short-factors: short_factor must have rotary_dim/2 = 32 entries, got 31" -- "${rope2[@]}" --scaling longrope --factor 4 --original-max-position 64 --short-factors "$tmp/short31.npy" --long-factors "$tmp/long32.npy"
check scaling-unused 2 "--beta-fast: not used by --scaling linear" -- "${rope2[@]}" --scaling linear --factor 4 --beta-fast 32
check scaling-without-method 2 "--factor: not used by --scaling none" -- "${rope2[@]}" --factor 4
check scaling-no-factor 2 "--factor: required with --scaling yarn" -- "${rope2[@]}" --scaling yarn --original-max-position 64
check scaling-no-l 2 "--original-max-position: required with --scaling llama3" -- "${rope2[@]}" --scaling llama3 --factor 8
check scaling-unknown 2 "--scaling: unknown method 'su'" -- "${rope2[@]}" --scaling su --factor 8
check scaling-truncate 2 "--truncate: expected true or false, got 'no'" -- "${rope2[@]}" --scaling yarn --factor 4 --original-max-position 64 --truncate no
check scaling-list-rank 2 "--long-factors: .* has rank 3" -- "${rope2[@]}" --scaling longrope --factor 4 --original-max-position 64 --short-factors "$tmp/short32.npy" --long-factors "$tmp/cs-none.npy"
check scaling-sinusoidal 2 "--scaling: RoPE scaling applies to --family rope only" -- export --family sinusoidal --dim 8 --positions 0:2 --reference --scaling linear --factor 2 --out "$tmp/a.npy"
check scaling-sinusoidal-check 2 "--factor: RoPE scaling applies to --family rope only" -- check "$tmp/c.npy" --family sinusoidal --positions 0:256 --factor 2
# census under a scaling: RoPE instances only, the scaling recorded in the JSON.
check census-yarn 0 "shard 0/1: ([0-9]+) of \1 instances within their contracts" -- census --variant "rope.scalar_f64" --max-position 2000 --scaling yarn --factor 4 --original-max-position 512 --out "$tmp/cy.json"
if grep -q '"type": "yarn"' "$tmp/cy.json" && grep -q '"original_max_position": 512' "$tmp/cy.json"; then
  passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL census-yarn JSON lacks the scaling"; fi
check census-longrope 0 "shard 0/1: ([0-9]+) of \1 instances within their contracts" -- census --variant "rope.scalar_f64" --max-position 2000 --scaling longrope --factor 4 --original-max-position 512 --seq-len 1024 --short-factors "$tmp/short64.npy" --long-factors "$tmp/long64.npy" --out "$tmp/cl.json"
check census-longrope-dims 2 "--short-factors: short_factor has 32 entries; the census's head dims are 128" -- census --variant "rope.scalar_f64" --max-position 2000 --scaling longrope --factor 4 --original-max-position 512 --short-factors "$tmp/short32.npy" --long-factors "$tmp/long32.npy" --out "$tmp/cl.json"
check census-scaling-sinusoidal 2 "matches no RoPE instance" -- census --variant "sinusoidal.scalar_f64" --scaling linear --factor 2 --out "$tmp/cs.json"

# census shards are disjoint and report merges them; verify writes JUnit.
check census-0 0 "shard 0/2" -- census --variant "rope.scalar_f64" --max-position 2000 --shard 0/2 --out "$tmp/c0.json"
check census-1 0 "shard 1/2" -- census --variant "rope.scalar_f64" --max-position 2000 --shard 1/2 --out "$tmp/c1.json"
check census-bad-shard 2 "--shard: expected I/N" -- census --shard 2/2 --out "$tmp/c2.json"
check report-merge 0 "report: " -- report --census "$tmp/c0.json" --census "$tmp/c1.json" --out "$tmp/rep"
n_inst=$(grep -c '"instance"' "$tmp/rep/census.json")
if [ "$n_inst" -eq 8 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL merged census has $n_inst instances"; fi
check report-duplicate 2 "shard 0/2 of --variant '.*' is given twice" -- report --census "$tmp/c0.json" --census "$tmp/c0.json" --out "$tmp/rep2"
check verify-junit 0 "wrote .*/j.xml" -- verify --variant "sinusoidal.scalar_f64" --max-position 2000 --junit "$tmp/j.xml" --properties-log "$tmp/p.log"
if grep -q '<testsuite name="census" tests="8" failures="0">' "$tmp/j.xml" && grep -q 'RC_PARAMS' "$tmp/j.xml"; then
  passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL junit content"; head -5 "$tmp/j.xml"; fi

# compare: a run against itself and against a second run of the same build passes; a deliberately
# slowed variant (its kernel called twice per iteration) is a regression.
bench_args=(bench --quick --variant "sinusoidal.interleaved.scalar_f32/f32" -- --benchmark_filter=L128/
            --benchmark_repetitions=9 --benchmark_min_time=0.005)
if "$exe" bench --help | grep -q -- "--quick" && ! "$exe" bench --variant none 2>&1 | grep -q "has no benchmarks"; then
  # bench ends with its summary (plain units, no raw rows); the raw rows go beside the JSON, or with --raw
  # to the terminal too.
  check bench-a 0 "^sinusoidal: ns per element \(median of 9 repetitions\)" -- "${bench_args[@]:0:4}" --out "$tmp/a.json" "${bench_args[@]:4}"
  if [ -s "$tmp/a.console.txt" ] && grep -q "ns_per_element=" "$tmp/a.console.txt" &&
     ! "$exe" "${bench_args[@]:0:4}" --out "$tmp/q.json" -- --benchmark_filter=L128/ --benchmark_repetitions=1 \
       --benchmark_min_time=0.001 | grep -q "ns_per_element="; then
    passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL bench-console: raw rows on the terminal or no $tmp/a.console.txt"; fi
  check bench-raw 0 "ns_per_element=[0-9.]+ " -- "${bench_args[@]:0:4}" --raw --out "$tmp/r.json" -- --benchmark_filter=L128/ --benchmark_repetitions=1 --benchmark_min_time=0.001
  check bench-b 0 "" -- "${bench_args[@]:0:4}" --out "$tmp/b.json" "${bench_args[@]:4}"
  check bench-slow 0 "" -- "${bench_args[@]:0:4}" --out "$tmp/s.json" "${bench_args[@]:4}" --slowdown-for-test "sinusoidal.*"
else
  # This build has no benchmarks (the ASan preset): runs written by hand in Google Benchmark's
  # format, the same timings twice and the slowed one doubled.
  fake() {  # fake FILE FACTOR
    { echo '{"context": {}, "benchmarks": ['
      for b in x y; do for r in 1 2 3 4 5 6 7 8 9; do
        echo "{\"name\": \"sinusoidal/$b\", \"run_name\": \"sinusoidal/$b\", \"run_type\": \"iteration\", \"real_time\": $(( (100 + r) * $2 )), \"time_unit\": \"ns\", \"cv\": NaN},"
      done; done
      echo '{"name": "sinusoidal/x_median", "run_name": "sinusoidal/x", "run_type": "aggregate", "real_time": 0}]}'; } > "$1"
  }
  fake "$tmp/a.json" 1; fake "$tmp/b.json" 1; fake "$tmp/s.json" 2
fi
check compare-self 0 "verdict: no regression" -- compare "$tmp/a.json" "$tmp/a.json"
# Nothing changed: compare still shows what it compared (issue 54), without --all.
check compare-self-lists 0 "^\| \`sinusoidal/[^\`]*\` \|.* same \|" -- compare "$tmp/a.json" "$tmp/a.json"
check compare-self-says 0 "None changed significantly; the [0-9]+ benchmarks? compared" -- compare "$tmp/a.json" "$tmp/a.json"
# Two separate processes on a shared virtual machine: the host can slow the machine for the length of
# a whole run, so a same-build pair may differ for reasons outside the build. Up to two fresh pairs, each
# run back to back, before the comparison counts as a false alarm.
cp "$tmp/a.json" "$tmp/a2.json"; cp "$tmp/b.json" "$tmp/b2.json"
if "$exe" bench --help | grep -q -- "--quick" && ! "$exe" bench --variant none 2>&1 | grep -q "has no benchmarks"; then
  for retry in 1 2; do
    "$exe" compare "$tmp/a2.json" "$tmp/b2.json" 2>&1 | grep -q "verdict: no regression" && break
    echo "note: compare-rerun flagged a change; benchmark pair $retry run again"
    "$exe" "${bench_args[@]:0:4}" --out "$tmp/a2.json" "${bench_args[@]:4}" > /dev/null 2>&1
    "$exe" "${bench_args[@]:0:4}" --out "$tmp/b2.json" "${bench_args[@]:4}" > /dev/null 2>&1
  done
fi
check compare-rerun 0 "verdict: no regression" -- compare "$tmp/a2.json" "$tmp/b2.json"
check compare-slowed 1 "verdict: REGRESSION" -- compare "$tmp/a.json" "$tmp/s.json" --out "$tmp/cmp.json"
check compare-bad 2 "not JSON" -- compare "$tmp/a.json" "$0"
check compare-threshold 2 "--threshold" -- compare "$tmp/a.json" "$tmp/a.json" --threshold abc

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
