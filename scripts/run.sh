#!/usr/bin/env bash
# The main job from a fresh clone: installs dependencies, builds Release, runs `pe-suite run`
# with its defaults (extra arguments are passed on). Exit code: pe-suite's (0 ok, 1 a check failed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# ccache across build trees and clones: paths below the checkout are hashed relative to it (so a fresh
# clone elsewhere hits the same entries), and precompiled headers are shareable with these sloppiness flags.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
cmake --preset release >/dev/null
# The CLI and the Python module: every route the README documents works after this command.
mapfile -t targets < <(bash scripts/main_targets.sh build/release)
cmake --build --preset release -j 2 --target "${targets[@]}"
status=0
build/release/cli/pe-suite run "$@" || status=$?
echo
echo "pe-suite: $PWD/build/release/cli/pe-suite (every command has --help)"
if [ -d build/release/python/pe_suite ]; then
  echo "Python module: PYTHONPATH=$PWD/build/release/python /usr/bin/python3 -c 'import pe_suite'"
else
  echo "Python module: not built (python3-dev, pybind11-dev or libdlpack-dev missing)"
fi
exit "$status"
