#!/usr/bin/env bash
# Builds the Python package `tessera` (nanobind + scikit-build-core) and installs it into .venv
# with pip. It links the library scripts/build.sh installed into build/install rather than
# compiling it again; `pip wheel .` (no settings) builds everything from source.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f build/install/lib/cmake/tessera/tesseraConfig.cmake ]] || scripts/build.sh >/dev/null
.venv/bin/pip install . -q --no-build-isolation --no-deps \
  -C cmake.define.TESSERA_PREBUILT_PREFIX="$PWD/build/install"
.venv/bin/python -c "import tessera; print('install_python: tessera', tessera.__version__, 'installed in .venv')"
