#!/usr/bin/env bash
# The run command: set up, build (Release), install the Python package, stream a generated demo
# dataset into ./demo.zarr (sharded, zstd) with the CLI, read a strided slice back with the CLI
# and with Python, printing a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
scripts/install_python.sh
T=build/release/tessera
echo "== streaming a 256 x 512 x 512 uint16 camera stream into demo.zarr (32x128x128 chunks, 4x2x2 per shard, zstd)"
start=$(date +%s.%N)
$T stream demo.zarr --format zarr3 --dtype uint16 --shape 256,512,512 --chunk 32,128,128 \
  --shard-chunks 4,2,2 --codec zstd --level 1 --synthetic camera --overwrite
end=$(date +%s.%N)
bytes=$((256 * 512 * 512 * 2))
stored=$(du -sb demo.zarr | cut -f1)
python3 -c "import sys; t=$end-$start; print(f'   {$bytes/1e6:.0f} MB in {t:.2f} s = {$bytes/1e9/t:.2f} GB/s, stored {$stored/1e6:.1f} MB (ratio {$bytes/$stored:.1f}x)')"
echo "== tessera info demo.zarr"
$T info demo.zarr
echo "== reading the strided slice [::16, 100:400:50, ::-128] back"
$T read demo.zarr --slice "::16,100:400:50,::-128" --output demo-slice.raw
.venv/bin/python - <<'PY'
import numpy as np, zarr
got = np.fromfile("demo-slice.raw", dtype="<u2").reshape(16, 6, 4)
ref = zarr.open_array("demo.zarr", mode="r")[::16, 100:400:50, :][:, :, ::-128]  # zarr-python has no negative steps
print(f"   shape {got.shape}, min {got.min()}, max {got.max()}, mean {got.mean():.2f}")
print("   zarr-python reads the same values:", bool(np.array_equal(got, ref)))
PY
echo "== the same from Python: tessera.open('demo.zarr')[::16, 100:400:50, ::-128]"
.venv/bin/python - <<'PY'
import numpy as np, tessera, zarr
a = tessera.open("demo.zarr")
got = a[::16, 100:400:50, ::-128]
print(f"   {a!r}")
print(f"   shape {got.shape}, dtype {got.dtype}, equal to zarr-python:",
      bool(np.array_equal(got, zarr.open_array("demo.zarr", mode="r")[::16, 100:400:50, :][:, :, ::-128])))
PY
rm -f demo-slice.raw
