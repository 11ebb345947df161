"""Uses the installed tessera wheel the way a new user would: stream, read and convert through the
Python package, with every codec family the wheel bundles a library for (zstd, blosc, lz4, deflate,
png, jpeg). Run by tests/packaging/check_in_root.sh inside the minimal Debian root; prints one line
per check and exits non-zero at the first failure.

Usage: wheel_smoke.py DIR (an empty directory; the arrays are left there for the CLI's checks)."""

import sys
from pathlib import Path

import numpy as np

import tessera


def check(name, ok):
    print(f"wheel_smoke: {'ok  ' if ok else 'FAIL'} {name}")
    if not ok:
        sys.exit(1)


def main():
    work = Path(sys.argv[1])
    print(f"wheel_smoke: tessera {tessera.__version__} from {Path(tessera.__file__).parent}")
    rng = np.random.default_rng(29)
    frames = rng.integers(0, 4000, size=(6, 40, 36), dtype=np.uint16)

    # Stream frames into a sharded Zarr v3 array (blosc over zstd), then into one per other codec.
    for codec in ("blosc-zstd", "blosc-lz4", "zstd", "gzip"):
        path = work / f"{codec}.zarr"
        with tessera.create(path, dtype="uint16", shape=(0, 40, 36), chunks=(2, 16, 16),
                            shard_chunks=(1, 2, 2), codec=codec) as w:
            for frame in frames:
                w.append(frame)
        a = tessera.open(path)
        check(f"zarr3 {codec}: stream {frames.shape} and read back", np.array_equal(a[:], frames))
        check(f"zarr3 {codec}: strided read", np.array_equal(a[1:6:2, ::-3, 5], frames[1:6:2, ::-3, 5]))

    # Convert into HDF5 (deflate through libdeflate) and precomputed (png and jpeg chunk encodings).
    src = work / "blosc-zstd.zarr"
    tessera.convert(src, work / "a.h5", codec="gzip", shuffle=True, shard_chunks=None)
    check("convert zarr3 -> hdf5 gzip", np.array_equal(tessera.open(work / "a.h5")[:], frames))
    volume = (frames >> 4).astype(np.uint8)
    tessera.convert(volume, work / "u8.zarr", chunks=(2, 16, 16), codec="zstd")
    tessera.convert(work / "u8.zarr", work / "png", format="precomputed", encoding="png", shard_chunks=None)
    check("convert -> precomputed png", np.array_equal(tessera.open(work / "png")[:], volume))
    tessera.convert(work / "u8.zarr", work / "jpeg", format="precomputed", encoding="jpeg", shard_chunks=None)
    lossy = tessera.open(work / "jpeg")[:]
    check("convert -> precomputed jpeg (lossy, close)",
          lossy.shape == volume.shape and np.abs(lossy.astype(int) - volume).mean() < 8)


if __name__ == "__main__":
    main()
