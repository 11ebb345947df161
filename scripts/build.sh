#!/usr/bin/env bash
# Configures and builds the release preset (library, CLI, tests, benchmarks), then installs the
# library's CMake package into build/install (what the Python package links; see install_python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
cmake --install build/release --prefix build/install --component Development >/dev/null
