#!/usr/bin/env bash
# The test command: set up, build, run every C++ test (ctest) and every interop test (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --preset release -j "$(nproc)"
.venv/bin/python -m pytest -q tests/interop
