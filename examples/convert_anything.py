#!/usr/bin/env python3
"""Convert anything sliceable along dimension 0 into a tessera array, then tessera to tessera.

tessera.convert(src, dst, ...) takes an array tessera reads (Zarr v3, precomputed, HDF5) or any
array-like with .shape, .dtype and src[i:j] slicing: a numpy memmap, an h5py dataset, a zarr
array, a TIFF stack through tifffile's zarr store. It reads whole destination shard rows at a time
(the next slab while the current one is encoded), so memory stays bounded however large the source.
A tessera source also gives the defaults: its chunks, codec, fill value, names and attributes.

Usage: python convert_anything.py [WORK_DIR]   (default: a new temporary directory)
"""

import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np
import tifffile
import zarr

import tessera

work = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tessera-example-"))
rng = np.random.default_rng(7)
volume = rng.integers(0, 4000, size=(37, 96, 80), dtype=np.uint16)


def check(dst, expected, what):
    a = tessera.open(dst)
    assert np.array_equal(a[...], expected), dst
    print(f"{what:<42} -> {Path(dst).name}: {a.format}, shape {a.shape}, chunks {a.chunks}")


# 1. A raw .npy file on disk, memory-mapped: rows are read from disk only as the conversion needs them.
mm = np.lib.format.open_memmap(work / "volume.npy", mode="w+", dtype=volume.dtype, shape=volume.shape)
mm[...] = volume
mm.flush()
tessera.convert(np.load(work / "volume.npy", mmap_mode="r"), work / "from_memmap.zarr", chunks=(8, 32, 32),
                shard_chunks=(1, 3, 3), codec="zstd")
check(work / "from_memmap.zarr", volume, "numpy memmap (volume.npy)")

# 2. An h5py dataset, sliced by h5py (compressed chunks and all).
with h5py.File(work / "scan.h5", "w") as f:
    f.create_dataset("raw/frames", data=volume, chunks=(1, 96, 80), compression="gzip")
    f["raw/frames"].attrs["exposure_ms"] = 2.5
with h5py.File(work / "scan.h5", "r") as f:
    tessera.convert(f["raw/frames"], work / "from_h5py.zarr", chunks=(4, 48, 40))
check(work / "from_h5py.zarr", volume, "h5py dataset (scan.h5:/raw/frames)")

# 3. A zarr-python 3 array.
z = zarr.create_array(work / "zarr_python.zarr", shape=volume.shape, chunks=(5, 50, 50), dtype=volume.dtype)
z[...] = volume
tessera.convert(zarr.open_array(work / "zarr_python.zarr", mode="r"), work / "from_zarr.h5", chunks=(8, 48, 40),
                codec="gzip")
check(work / "from_zarr.h5", volume, "zarr-python array (zarr_python.zarr)")

# 4. A multi-page TIFF: tifffile exposes it as a (read-only) zarr store, zarr opens that store as an
#    array (one chunk per page here), and tessera.convert slices it along the pages.
tifffile.imwrite(work / "stack.tif", volume)
with tifffile.imread(work / "stack.tif", aszarr=True) as store:
    tessera.convert(zarr.open(store, mode="r"), work / "from_tiff.zarr", chunks=(4, 96, 80))
check(work / "from_tiff.zarr", volume, "TIFF stack via tifffile's zarr store")

# 5. tessera to tessera: the HDF5 file into an OME-Zarr image with two levels. dataset= names the
#    source's dataset (optional here: the file holds only one); the chunk shape and the gzip filter
#    come from the HDF5 dataset, the second level is downsampled while streaming.
tessera.convert(work / "scan.h5", work / "pyramid.ome.zarr", dataset="/raw/frames", pyramid=2)
image = zarr.open_group(work / "pyramid.ome.zarr", mode="r")
assert np.array_equal(image["0"][...], volume)
levels = [a.shape for a in tessera.open(work / "pyramid.ome.zarr").levels]
print(f"{'tessera HDF5 scan.h5:/raw/frames':<42} -> pyramid.ome.zarr: OME-Zarr, levels {levels}, "
      f"codec {image['0'].metadata.codecs[-1].to_dict()['name']}")
