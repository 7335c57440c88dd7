#!/usr/bin/env bash
# The installed package from an outside project's side (fmt's find-package-test): installs this build
# into a temporary prefix, builds examples/consumer against it with `ctest --build-and-test` and runs
# its suites (the engine's kernel passes every property; the copy with the angle's sign flipped fails,
# naming the property), then runs the installed CLI, which must find its helper programs beside it.
#   package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
ctest --build-and-test "$src/examples/consumer" "$tmp/consumer" --build-generator Ninja \
  --build-options "-DCMAKE_PREFIX_PATH=$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
  --test-command ctest --output-on-failure
# The installed CLI runs the installed property binary (libexec/pe-suite/pe_props), no build tree.
out=$("$tmp/prefix/bin/pe-suite" verify --variant rope.scalar_f64 --max-position 2000 2>&1)
grep -qE "^([0-9]+) of \1 instances within their contracts" <<<"$out" || { echo "$out"; exit 1; }
grep -qE "^([0-9]+) of \1 property tests passed" <<<"$out" || { echo "FAIL: the installed pe-suite ran no properties"; echo "$out"; exit 1; }
echo "package: installed, consumer built and run, installed CLI found its helpers"
# The Python module, installed into the prefix's dist-packages, imports from there (libpe by its RPATH).
if [ -n "${PE_PYTHON_INSTALL_DIR:-}" ]; then
  v=$(cd "$tmp" && PYTHONPATH="$tmp/prefix/$PE_PYTHON_INSTALL_DIR" /usr/bin/python3 -c \
    "import pe_suite, numpy; print(pe_suite.__version__, pe_suite.reference_sinusoidal(numpy.arange(3), 4)[2, 0])")
  case "$v" in *" 0.9092974"*) echo "package: python module imported from $PE_PYTHON_INSTALL_DIR ($v)" ;;
    *) echo "FAIL: the installed pe_suite module: $v"; exit 1 ;; esac
fi

# The C plugin (examples/plugin_c) built against the same prefix, then loaded by the installed CLI:
# listed beside the built-in variants, the correct kernel passes every property and the census; the
# copy with the angle's sign flipped fails, naming the property, and its exported table is diagnosed
# as an inverse rotation.
ctest --build-and-test "$src/examples/plugin_c" "$tmp/plugin_c" --build-generator Ninja \
  --build-options "-DCMAKE_PREFIX_PATH=$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/plugin_c.log" ||
  { cat "$tmp/plugin_c.log"; exit 1; }
pe=$tmp/prefix/bin/pe-suite
plugin=$tmp/plugin_c/libexample_plugin.so flipped=$tmp/plugin_c/libexample_plugin_flipped.so
fail() { echo "FAIL: $1"; echo "$2"; exit 1; }
out=$("$pe" list --plugin "$plugin" 2>&1) || fail "list --plugin" "$out"
grep -q "^rope\.engine_c " <<<"$out" && grep -q "^rope\.scalar_f32 " <<<"$out" ||
  fail "list --plugin: rope.engine_c beside the built-in variants" "$out"
out=$("$pe" verify --plugin "$plugin" --variant 'rope.engine_c*' --max-position 4096 2>&1) ||
  fail "verify --plugin libexample_plugin.so" "$out"
grep -qE "^([1-9][0-9]*) of \1 property tests passed" <<<"$out" && grep -q "rope\.halfsplit\.engine_c" <<<"$out" ||
  fail "verify --plugin: no property tests, or no rope.engine_c row in the summary" "$out"
out=$("$pe" verify --plugin "$flipped" --variant 'rope.engine_c*' --max-position 4096 2>&1) &&
  fail "the flipped plugin passed verify" "$out"
grep -qE "FAILED .*RopeProps.*AgreesWithReferenceWithinBudget" <<<"$out" ||
  fail "verify of the flipped plugin: the failing property not named" "$out"
# Any values rotated by the flipped kernel (a sinusoidal table as the input), then checked.
"$pe" export --family sinusoidal --dim 64 --positions 0:256 --reference --out "$tmp/x.npy" >/dev/null
"$pe" export --plugin "$flipped" --family rope --variant rope.engine_c --dim 0 --positions 0:256 \
  --input "$tmp/x.npy" --out "$tmp/y.npy" >/dev/null
out=$("$pe" check --family rope --input "$tmp/x.npy" --output "$tmp/y.npy" --positions 0:256 2>&1) &&
  fail "check passed the flipped kernel's output" "$out"
grep -q "inverse rotation" <<<"$out" || fail "check of the flipped table: the convention not named" "$out"
# ABI version 2: a kernel forming Llama-3's frequencies from the model's config passes every property (the
# Llama-3 configs they draw) and the census under Llama-3.1's config; its copy with Llama-3.1's
# original_max_position_embeddings written in fails, and its output is read back as that value.
llama3=$tmp/plugin_c/libexample_plugin_llama3.so llama3_8192=$tmp/plugin_c/libexample_plugin_llama3_8192.so
out=$("$pe" verify --plugin "$llama3" --variant 'rope.*llama3_c*' --max-position 4096 \
  --hf-config "$src/examples/hf_configs/Llama-3.1-8B.json" 2>&1) || fail "verify --plugin libexample_plugin_llama3.so" "$out"
grep -qE "^([1-9][0-9]*) of \1 property tests passed" <<<"$out" || fail "verify of the llama3 plugin: no property tests" "$out"
out=$("$pe" verify --plugin "$llama3" --variant 'rope.*llama3_c*' --max-position 4096 --effort full --seed 3 \
  --no-properties 2>&1) || fail "census --effort full of the llama3 plugin" "$out"
out=$("$pe" verify --plugin "$llama3" --variant 'rope.*llama3_c*' --max-position 4096 --effort full --seed 3 \
  --property '*RopeProps*:*Scaling*' 2>&1) || fail "verify --effort full --seed 3 of the llama3 plugin" "$out"
out=$("$pe" verify --plugin "$llama3_8192" --variant 'rope.*llama3_c*' --max-position 4096 2>&1) &&
  fail "the llama3 plugin with original_max_position_embeddings written in passed verify" "$out"
grep -qE "FAILED .*RopeProps.*AgreesWithReferenceWithinBudget" <<<"$out" ||
  fail "verify of the 8192 copy: the failing property not named" "$out"
llama3_flags=(--scaling llama3 --factor 8 --low-freq-factor 1 --high-freq-factor 4 --original-max-position 4096)
"$pe" export --family sinusoidal --dim 128 --positions 0:64 --reference --out "$tmp/x128.npy" >/dev/null
"$pe" export --plugin "$llama3_8192" --family rope --variant rope.llama3_c --dim 0 --positions 20000:20064 \
  --input "$tmp/x128.npy" "${llama3_flags[@]}" --out "$tmp/y128.npy" >/dev/null
out=$("$pe" check --family rope --input "$tmp/x128.npy" --output "$tmp/y128.npy" --positions 20000:20064 \
  "${llama3_flags[@]}" 2>&1) && fail "check passed the 8192 copy's output" "$out"
grep -q "the data fits: llama3, original_max_position 8192 (given 4096)" <<<"$out" ||
  fail "check of the 8192 copy's output: original_max_position 8192 not named" "$out"
# The main job on the plugin's kernel: what a built-in gets (properties, census, benchmark rows with the
# machine's fill fraction, the report and its accuracy plot).
out=$("$pe" run --plugin "$plugin" --variant 'rope.*engine_c*' --out-dir "$tmp/run" 2>&1) ||
  fail "run --plugin" "$out"
grep -qE "^rope\.engine_c +[0-9]+ pass .* [0-9.]+ +[0-9]+% +0 +pass$" <<<"$out" ||
  fail "run --plugin: no summary row for rope.engine_c with properties, ns/elem and fill" "$out"
grep -q "engine_c" "$tmp/run/report.md" && [ -s "$tmp/run/accuracy_rope.engine_c.dat" ] && [ -s "$tmp/run/accuracy_rope.svg" ] ||
  fail "run --plugin: the report or its plot lacks rope.engine_c" "$(ls "$tmp/run")"
echo "package: C plugin built, listed, verified, run into the report; the flipped one failed with the property and the convention named; the ABI-2 Llama-3 kernel passed, its 8192 copy failed with original_max_position 8192 named"
