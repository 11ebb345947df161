#!/usr/bin/env bash
# Installs a tessera build's Development component (headers, static libraries, CMake package) into
# a temporary prefix and checks that the headers are the public ones only: every
# `#include "tessera/..."` in an installed header names an installed header (an internal header,
# kept out with tessera_add_layer's INTERNAL, must not be reachable from a public one), and the
# headers known to be internal are absent.
# Usage: check_installed_headers.sh <tessera build dir> [cmake]
set -euo pipefail
build_dir=$1
cmake=${2:-cmake}
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-headers.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build_dir" --prefix "$work" --component Development >/dev/null
include=$work/include
status=0
for internal in precomputed/compresso_format.h api/format_writers.h; do
  if [[ -e $include/tessera/$internal ]]; then
    echo "installed_headers: the internal header tessera/$internal is installed" >&2
    status=1
  fi
done
count=0
while IFS= read -r header; do
  count=$((count + 1))
  while IFS= read -r included; do
    if [[ ! -f $include/$included ]]; then
      echo "installed_headers: ${header#$include/} includes $included, which is not installed" >&2
      status=1
    fi
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"(tessera\/[^"]+)".*/\1/p' "$header")
done < <(find "$include/tessera" -name '*.h' | sort)
((count > 0)) || { echo "installed_headers: no header installed under $include/tessera" >&2; exit 1; }
((status == 0)) && echo "installed_headers: $count public headers, each including installed headers only"
exit $status
