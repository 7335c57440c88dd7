#!/usr/bin/env bash
# The engines' leg (run by scripts/test.sh after the suite, or on its own): real engines installed from PyPI at
# pinned versions (engines/requirements.txt, every dependency pinned by engines/constraints.txt) into a virtual
# environment over Debian's Python, `pip install .` of this tree into it, the Python tests run against that wheel,
# the conformance matrix run (engines/conformance.py) and compared with the checked-in engines/matrix.json (a
# changed verdict fails), and the speed peers measured (engines/speed_peers.py).
#
#   bash scripts/engines.sh            # the leg as CI runs it
#   bash scripts/engines.sh --record   # rewrite engines/matrix.json and docs/engines.md from this run
#
# Optional by design: without PyPI (or with PE_SUITE_ENGINES=0) it says why it is skipped and exits 0, so the
# README's commands work with Debian's packages alone. The environment is kept under ~/.cache/pe-suite, named by a
# hash of the pins, and pip's own cache keeps the wheels: a machine that keeps its home reinstalls nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
record=0
[ "${1:-}" = --record ] && record=1
if [ "${PE_SUITE_ENGINES:-1}" = 0 ]; then
  echo "engines leg: skipped (PE_SUITE_ENGINES=0)"
  exit 0
fi
index="${PIP_INDEX_URL:-https://pypi.org/simple}"
if ! reason=$(/usr/bin/python3 - "$index" <<'PY' 2>&1
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/pip/", timeout=15).read(1)
except Exception as e:
    sys.exit(f"{type(e).__name__}: {e}")
PY
); then
  echo "engines leg: skipped: the package index $index cannot be reached ($reason); the engines come from PyPI"
  exit 0
fi
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 TRANSFORMERS_VERBOSITY=error
pins=$(cat engines/requirements.txt engines/constraints.txt | sha256sum | cut -c1-12)
venv="${PE_SUITE_ENGINES_VENV:-$HOME/.cache/pe-suite/engines-$pins}"
out="$PWD/build/engines"
mkdir -p "$out"
start=$(date +%s)
if [ ! -f "$venv/.installed" ]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  t0=$(date +%s)
  "$venv/bin/pip" install -q -r engines/requirements.txt -c engines/constraints.txt
  touch "$venv/.installed"
  echo "engines leg: engines installed in $(( $(date +%s) - t0 )) s, $(du -sh "$venv" | cut -f1) in $venv"
else
  echo "engines leg: engines already installed in $venv (pins $pins)"
fi
# `pip install .` as the README gives it, into a fresh environment over Debian's packages: the module imports from
# outside the tree, the pe-suite command runs, and the README's pytest example passes. The compiler is named as the
# Release build names it, so ccache serves the objects that build made (scikit-build-core would take sysconfig's).
export CXX="${CXX:-/usr/bin/c++}"
fresh="$out/fresh-venv"
rm -rf "$fresh"
/usr/bin/python3 -m venv --system-site-packages "$fresh"
t0=$(date +%s)
werror=(--config-settings=cmake.define.PE_WERROR=ON)
"$fresh/bin/pip" install -q "${werror[@]}" .
echo "engines leg: pip install . into a fresh environment in $(( $(date +%s) - t0 )) s"
(cd /tmp && "$fresh/bin/python" -c "import pe_suite; print('engines leg: pe_suite', pe_suite.__version__, 'from', pe_suite.__file__)")
"$fresh/bin/pe-suite" --version
(cd /tmp && "$fresh/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests/test_example.py")
# The same wheel into the engines' environment (PyPI's numpy and torch, not Debian's), and the Python tests
# against it. test_readme's build-tree test reads scripts of the source build, which the wheel does not carry.
"$venv/bin/pip" install -q --force-reinstall --no-deps "${werror[@]}" .
status=0
(cd python/tests && PE_SUITE_CLI="$venv/bin/pe-suite" "$venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore \
  . -k "not test_the_first_command_builds_the_module") || status=$?
if [ "$record" = 1 ]; then
  TRITON_INTERPRET=1 "$venv/bin/python" engines/conformance.py --out engines/matrix.json --markdown docs/engines.md
else
  TRITON_INTERPRET=1 "$venv/bin/python" engines/conformance.py --out "$out/matrix.json" --markdown "$out/engines.md" \
    --compare engines/matrix.json || status=$?
fi
# The matrix's bookkeeping and the claims its page makes of Triton's interpreter
"$venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore engines/tests || status=$?
"$venv/bin/python" engines/speed_peers.py --out "$out/speed_peers.md" || status=$?
echo "engines leg: $(( $(date +%s) - start )) s in all"
exit "$status"
