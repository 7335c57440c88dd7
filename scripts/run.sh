#!/usr/bin/env bash
# The main job from a fresh clone: installs dependencies, builds Release, runs `pe-suite run`
# with its defaults (extra arguments are passed on). Exit code: pe-suite's (0 ok, 1 a check failed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j 2 --target pe-suite
exec build/release/cli/pe-suite run "$@"
