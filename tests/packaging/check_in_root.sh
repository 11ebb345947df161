#!/bin/bash
# Runs inside the minimal Debian root that scripts/wheel_test.sh makes (chroot), as root:
# shows the root lacks the libraries the wheel bundles and any compiler, installs the repaired
# wheel into a fresh virtual environment without an index (numpy from a local wheel; a dependency on
# nvcomp would fail to resolve), then uses the package (wheel_smoke.py) and the `tessera` command,
# and checks with ldd that the extension and the CLI find every library in the wheel or the base system.
# Usage: check_in_root.sh DIR   (DIR holds the tessera wheel, the numpy wheel and this folder's files)
set -euo pipefail
dir=$1
fail() { echo "check_in_root: FAIL: $*" >&2; exit 1; }

. /etc/os-release
echo "check_in_root: $PRETTY_NAME, $(ldd --version | head -1)"
# The libraries the extension needs on the build machine: none may be in the root (zstd, lz4 and
# zlib are: dpkg and apt need them; the wheel carries its own zstd and lz4 all the same).
present=$(ldconfig -p | grep -oE 'lib(blosc|deflate|curl|jpeg|png16|jxl|hwy|brotli[a-z]*|zstd|lz4|z)\.so\.[0-9]+' | sort -u | tr '\n' ' ')
echo "check_in_root: codec/HTTP libraries in the root's ldconfig cache: ${present:-none}"
for lib in libblosc libdeflate libcurl libjpeg libpng16 libjxl; do
  ! ldconfig -p | grep -q "$lib\.so" || fail "the root has $lib; it must lack the libraries the wheel bundles"
done
for tool in cc gcc g++ c++ clang cmake make; do
  ! command -v "$tool" >/dev/null || fail "the root has a build tool: $tool"
done
echo "check_in_root: no compiler, cmake or make in the root"

python3 -m venv /opt/venv
wheel=$(ls "$dir"/tessera-*.whl)
/opt/venv/bin/pip install -q --no-index --find-links "$dir" "$wheel"
installed=$(/opt/venv/bin/pip list --format=freeze | tr '\n' ' ')
echo "check_in_root: installed: $installed"
! grep -qi nvidia <<<"$installed" || fail "the plain wheel pulled nvcomp"
export PATH=/opt/venv/bin:$PATH

smoke=$(mktemp -d)
python "$dir/wheel_smoke.py" "$smoke"

# The command on the PATH is the C++ tool shipped in the package.
py_version=$(python -c 'import tessera; print(tessera.__version__)')
cli_version=$(tessera --version)
echo "check_in_root: tessera --version: $cli_version (tessera.__version__ $py_version)"
[[ $cli_version == "tessera $py_version" ]] || fail "tessera --version ($cli_version) is not $py_version"
tessera info "$smoke/blosc-zstd.zarr"
tessera read "$smoke/blosc-zstd.zarr" --slice "1:6:2, ::-3, 5" --output "$smoke/cli.raw"
python - "$smoke" <<'PY'
import sys, numpy as np, tessera
d = sys.argv[1]
want = tessera.open(f"{d}/blosc-zstd.zarr")[1:6:2, ::-3, 5]
got = np.fromfile(f"{d}/cli.raw", dtype="<u2").reshape(want.shape)
assert np.array_equal(got, want), "tessera read's bytes differ from tessera.open's"
PY
echo "check_in_root: ok   tessera read matches the Python read"
tessera convert "$smoke/blosc-zstd.zarr" "$smoke/cli.h5" --codec gzip --shard-chunks none
head -c $((6 * 40 * 36 * 2)) /dev/urandom > "$smoke/frames.raw"
tessera stream "$smoke/cli.zarr" --dtype uint16 --shape 0,40,36 --chunk 2,16,16 --shard-chunks 1,2,2 \
  --codec blosc-lz4 --input "$smoke/frames.raw"
python - "$smoke" <<'PY'
import sys, numpy as np, tessera
d = sys.argv[1]
assert np.array_equal(tessera.open(f"{d}/cli.h5")[:], tessera.open(f"{d}/blosc-zstd.zarr")[:]), "CLI convert"
raw = np.fromfile(f"{d}/frames.raw", dtype="<u2").reshape(6, 40, 36)
assert np.array_equal(tessera.open(f"{d}/cli.zarr")[:], raw), "CLI stream"
PY
echo "check_in_root: ok   tessera convert and tessera stream"

# Every library the extension and the CLI load: in the wheel (tessera.libs) or the base system.
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
for elf in "$site"/tessera/_tessera*.so "$site/tessera/_bin/tessera"; do
  deps=$(ldd "$elf")
  ! grep -q "not found" <<<"$deps" || { sed 's/^/    /' <<<"$deps"; fail "ldd $elf: a library is not found"; }
  bundled=(); base=()
  while read -r name _ path _; do
    [[ -z $path ]] || path=$(realpath -m "$path")
    case $path in
      "$site"/tessera.libs/*) bundled+=("${name%%-*}") ;;
      /lib/*|/usr/lib/*|/lib64/*)
        # The base system's own: glibc, libstdc++, libgcc_s and the like, never a codec or libcurl.
        ! grep -qE '^lib(blosc|deflate|curl|jpeg|png|jxl|zstd|lz4)' <<<"$name" ||
          fail "ldd $elf: $name comes from the root, not from the wheel"
        base+=("$name") ;;
      *) [[ $name == linux-vdso* || $name == /lib64/ld-linux* ]] ||
           fail "ldd $elf: $name resolves to $path, neither the wheel's nor the base system's" ;;
    esac
  done <<<"$deps"
  for lib in libblosc libzstd liblz4 libdeflate libcurl libjpeg libpng16 libjxl; do
    [[ " ${bundled[*]} " == *" $lib "* ]] || fail "ldd $elf: $lib is not loaded from the wheel's tessera.libs"
  done
  echo "check_in_root: ldd ${elf#$site/}: every library found; ${#bundled[@]} from the wheel (${bundled[*]}),"
  echo "    ${#base[@]} from the base system (${base[*]})"
done
echo "check_in_root: all checks passed"
