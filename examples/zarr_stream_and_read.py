#!/usr/bin/env python3
"""Stream camera frames into a sharded Zarr v3 array, then read parts of it back.

Usage: python zarr_stream_and_read.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import tessera

out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tessera-example-"))
location = out_dir / "frames.zarr"

# 1. Stream 50 frames of 512 x 512 uint16. shape[0] = 0: the array is as long as the stream.
rng = np.random.default_rng(0)
frames = rng.integers(90, 110, size=(50, 512, 512), dtype=np.uint16)
with tessera.create(location, dtype="uint16", shape=(0, 512, 512), chunks=(8, 128, 128), shard_chunks=(1, 2, 2),
                    codec="zstd", level=1, dimension_names=["t", "y", "x"],
                    attributes={"exposure_ms": 10}) as stream:
    for frame in frames[:20]:
        stream.append(frame)           # one frame at a time (zero-copy, GIL released)
    stream.flush()                     # the first 20 frames are now visible to readers
    print(f"after flush: {tessera.open(location).shape[0]} frames readable")
    stream.append(frames[20:])         # or many frames at once
stats = stream.stats
print(f"wrote {location}: {stats.bytes_in / 2**20:.1f} MiB in, {stats.bytes_out / 2**20:.1f} MiB stored, "
      f"{stats.shards_written} shards, {stats.gbps:.2f} GB/s")

# 2. Read it back with numpy indexing: only the chunks a selection touches are read.
a = tessera.open(location)
print(f"opened {a!r}")
crop = a[10:40:3, 100:-100, ::-1]
assert np.array_equal(crop, frames[10:40:3, 100:-100, ::-1])
print(f"a[10:40:3, 100:-100, ::-1] -> {crop.shape} {crop.dtype}, matches what was written")
pixel = a[5, 7, 9]
print(f"a[5, 7, 9] = {pixel!r}")
row = np.empty(512, np.uint16)
a.read((49, 256), out=row)             # into a buffer of your own
print(f"read row 256 of the last frame into a preallocated buffer: mean {row.mean():.1f}")
print(f"metadata: zarr_format={a.metadata['zarr_format']}, attributes={a.metadata['attributes']}")
