#!/usr/bin/env bash
# Installs a tessera build into a temporary prefix, builds tests/consumer against that install
# (find_package(tessera)) and runs the program, which writes and reads back a small Zarr array.
# Usage: run_consumer_test.sh <tessera build dir> [cmake] [C++ compiler]
set -euo pipefail
build_dir=$1
cmake=${2:-cmake}
cxx=${3:-c++}
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"
# The consumer must see the install only, never the source tree.
if grep -rq "$(cd "$here/../.." && pwd)/src" "$work/prefix/lib"*/cmake/tessera/; then
  echo "install_consumer: the installed package refers to the source tree" >&2
  exit 1
fi
"$cmake" -S "$here" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$work/prefix"
"$cmake" --build "$work/build" -j2
"$work/build/app" "$work/array.zarr"
