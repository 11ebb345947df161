#!/usr/bin/env bash
# The test command: set up, build, install the Python package, run every C++ test (ctest), the
# interop tests against the peers and the Python package's tests (pytest); the wheel's test (an sdist
# and a manylinux wheel from a clean checkout, used inside a minimal Debian root: scripts/wheel_test.sh);
# then the sanitizer build (clang, ASan + UBSan): the C++ tests again and every fuzz target for
# FUZZ_SECONDS each.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's start, with the seconds since this script started (where a slow run spends its time).
step() { echo "test.sh: $1 (at +${SECONDS}s)"; }
step setup
scripts/setup.sh
# The compilers run through ccache (a fresh build directory takes the launcher from the environment),
# with paths taken relative to the checkout: scripts/wheel_test.sh's wheel build, from a clean copy
# of the sources under build/, then reuses the release build's library and CLI objects.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
step build
scripts/build.sh
scripts/install_python.sh
step "release ctest"
ctest --preset release -j "$(nproc)"
scripts/ctest_skips.sh build/release
# tests/python imports the installed package (the sources live in python/tessera, not on sys.path);
# -rs prints why each skipped test skipped (on a machine without a GPU: only the GPU tests).
# The test files run on one pytest-xdist worker a core (--dist loadfile: a file's tests, and its
# module fixtures, stay on one worker). Most of a test's time is spent waiting on its child
# processes, its servers and its files, so two workers on two cores halve the step's time. Each
# worker has its own temporary directories and its own S3 server (SeaweedFS on free ports).
step pytest
.venv/bin/python -m pytest -q -rs -p no:cacheprovider -n "$(nproc)" --dist loadfile \
  --ignore=tests/interop/test_multihost.py tests/interop tests/python
# The multi-host test (network namespaces: S3 server, Dask scheduler, two workers and the client
# each a host; about 5 minutes, most of it waiting out the outages it injects) runs beside the
# wheel test and the sanitizer build, its output printed when it ends.
.venv/bin/python -m pytest -q -rs -p no:cacheprovider tests/interop/test_multihost.py >build/multihost.log 2>&1 &
multihost=$!
step "wheel test (multi-host test beside it)"
scripts/wheel_test.sh
step "debug build"
cmake --preset debug >/dev/null
cmake --build --preset debug -j "$(nproc)"
multihost_rc=0
wait "$multihost" || multihost_rc=$?
cat build/multihost.log
if ((multihost_rc != 0)); then
  echo "test.sh: tests/interop/test_multihost.py failed (exit $multihost_rc)" >&2
  exit 1
fi
step "debug ctest"
ctest --preset debug -j "$(nproc)"
scripts/ctest_skips.sh build/debug
step fuzz
scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
step done
