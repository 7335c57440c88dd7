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
cmake --build --preset release -j 2 --target pe-suite
exec build/release/cli/pe-suite run "$@"
