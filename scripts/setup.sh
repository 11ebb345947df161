#!/usr/bin/env bash
# Installs everything tessera needs on a fresh Debian machine: system packages with apt-get and a
# project-local Python virtual environment (.venv) with pip. Safe to run again; skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(build-essential cmake pkg-config zlib1g-dev libbz2-dev liblzma-dev libzstd-dev liblz4-dev libblosc-dev libdeflate-dev libjpeg62-turbo-dev libpng-dev libjxl-dev libaec-dev liblzf-dev hdf5-tools
  nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev libcurl4-openssl-dev libssl-dev python3-venv python3-dev
  clang libclang-rt-dev nodejs
  debootstrap ccache  # scripts/wheel_test.sh: the minimal Debian root; the wheel build's compiler cache
  iproute2)  # tests/interop/test_multihost.py: hosts as network namespaces (ip netns)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.tessera-requirements
if ! cmp -s requirements.txt "$stamp" 2>/dev/null; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.txt
  cp requirements.txt "$stamp"
fi
