#!/usr/bin/env bash
# Installs pe-suite's build and test dependencies (gnuplot for the report's plots, clang for the
# libFuzzer targets, numpy for the HF-style form tests, PyYAML for the Kubernetes manifests' test;
# pybind11, DLPack, pytest, PyTorch and Hypothesis for the Python module and its tests; python3-venv for the engines'
# leg (scripts/engines.sh); slurm-wlm and munge for the
# one-node cluster of scripts/slurm_test.sh) from Debian's packages (Debian 12, as root).
# Idempotent: packages already present are left alone and apt-get is not called at all.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libeigen3-dev libboost-dev libmpfr-dev libgmp-dev libhwy-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
  gnuplot-nox python3-numpy python3-yaml
  python3-dev pybind11-dev libdlpack-dev python3-pytest python3-torch python3-hypothesis python3-venv
  clang-14 libclang-rt-14-dev
  slurm-wlm munge universal-ctags
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
