#!/usr/bin/env python3
"""Stream frames into an HDF5 dataset (gzip + shuffle + checksum), with attributes; read it back.

The file is an ordinary HDF5 file: h5py, h5dump and every HDF5 tool open it.

Usage: python hdf5_dataset.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import tessera

out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tessera-example-"))
path = out_dir / "scan.h5"

rng = np.random.default_rng(1)
frames = rng.normal(1000, 30, size=(40, 256, 320)).astype(np.float32)
# The .h5 suffix picks the format; shape[0] = 0 gives the dataset an unlimited first dimension.
with tessera.create(path, dtype="float32", shape=(0, 256, 320), chunks=(4, 128, 320), codec="gzip", level=4,
                    shuffle=True, fletcher32=True, dataset="/scan/frames",
                    attributes={"exposure_ms": 2.5, "detector": "sCMOS", "binning": 2}) as w:
    for i in range(0, len(frames), 8):
        w.append(frames[i:i + 8])
print(f"wrote {path}: dataset /scan/frames, {len(frames)} frames, "
      f"{path.stat().st_size / 2**20:.1f} MiB on disk ({frames.nbytes / 2**20:.1f} MiB raw)")

a = tessera.open(path, dataset="/scan/frames")
print(f"opened {a!r}")
mean_frame = a[::10].mean(axis=0)
assert np.allclose(mean_frame, frames[::10].mean(axis=0))
print(f"mean of every 10th frame: {mean_frame.mean():.2f}")
print(f"dataset description: {sorted(a.metadata)}")

try:
    import h5py
except ImportError:
    print("(h5py is not installed: skipped reading the file with it)")
else:
    with h5py.File(path, "r") as f:
        d = f["/scan/frames"]
        assert np.array_equal(d[...], frames)
        print(f"h5py reads it too: shape {d.shape}, chunks {d.chunks}, compression {d.compression}, "
              f"attrs {dict(d.attrs)}")
