#!/usr/bin/env bash
# The targets the README's first command builds in the build folder $1, one a line: the CLI, and the Python
# module where the build configured it (python3-dev, pybind11-dev and libdlpack-dev present).
set -euo pipefail
echo pe-suite
# The target list read whole first: `grep -q` at the end of a pipe under pipefail fails when cmake then
# writes into the closed pipe.
known=$(cmake --build "$1" --target help 2>/dev/null || true)
if grep -q '^pe_suite_python:' <<<"$known"; then echo pe_suite_python; fi
