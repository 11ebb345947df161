#!/usr/bin/env python3
"""One acquisition, as a microscope writes it: two cameras (one an OME-Zarr image with a pyramid,
channel names and a voxel size), a label image of the first, and an HCS plate of 2 x 3 wells with
2 fields each, all streamed under one root on one pool of compression threads; metadata set while
it streams. Then the hierarchy is read back with tessera and zarr-python.

Usage: python acquisition.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import tessera

out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tessera-example-"))
root = out_dir / "acquisition.ome.zarr"
rng = np.random.default_rng(0)
T, C, Y, X = 12, 2, 256, 256

with tessera.create_group(root, threads=0, memory_limit=1 << 30, attributes={"instrument": "scope 1"}) as acq:
    # Camera 1: (t, c, y, x) frames, an OME-Zarr image with 3 levels; omero names the channels.
    cam1 = acq.create("cam1", dtype="uint16", shape=(0, C, Y, X), chunks=(1, 1, 128, 128), shard_chunks=(8, 1, 2, 2),
                      codec="zstd", level=1, pyramid=3,
                      axes="t:time:second,c:channel,y:space:micrometer,x:space:micrometer",
                      voxel_size=(2.0, 1.0, 0.65, 0.65), translation=(0, 0, 1200.0, 800.0),
                      attributes={"omero": {"channels": [
                          {"label": "GFP", "color": "00FF00", "window": {"start": 90, "end": 4000, "min": 0, "max": 65535}},
                          {"label": "mCherry", "color": "FF0000", "window": {"start": 90, "end": 4000, "min": 0, "max": 65535}}]}})
    # Camera 2: a plain array of (t, y, x) frames.
    cam2 = acq.create("cam2", dtype="uint16", shape=(0, Y, X), chunks=(4, 128, 128), codec="blosc-lz4")
    # Labels of camera 1 (its levels, reduced by mode), with colours and properties per label value.
    cells = acq.create_labels("cam1", "cells", dtype="uint32", shape=(0, 1, Y, X), chunks=(1, 1, 128, 128),
                              colors={1: (255, 0, 0, 255), 2: (0, 0, 255, 255)},
                              properties={1: {"class": "nucleus"}, 2: {"class": "cytoplasm"}})
    # A plate: its wells and fields of view are listed as their images are created.
    acq.create_plate("plate", rows=["A", "B"], columns=["1", "2", "3"], field_count=2, name="screen 1")
    fields = [acq.create(f"plate/{row}/{col}/{field}", dtype="uint16", shape=(C, 64, 64), chunks=(1, 64, 64),
                         axes="c:channel,y:space:micrometer,x:space:micrometer", voxel_size=(1, 0.65, 0.65))
              for row in "AB" for col in "123" for field in "01"]

    print(acq.plan.splitlines()[0])
    for t in range(T):  # frames of both cameras arrive in turn; a channel plane at a time for camera 1
        for c in range(C):
            cam1.append(rng.integers(90, 4000, size=(Y, X), dtype=np.uint16))
        cam2.append(rng.integers(90, 4000, size=(Y, X), dtype=np.uint16))
        cells.append((rng.integers(0, 3, size=(1, Y, X))).astype(np.uint32))
        if t == 5:
            acq.set_attributes("", {"instrument": "scope 1", "state": "running"})
            acq.flush()  # readers now see 6 frames of each camera and the new attributes
            print(f"after flush: {tessera.open(root / 'cam2').shape[0]} frames of cam2 readable")
    for f in fields:
        f.append(rng.integers(0, 1000, size=(C, 64, 64), dtype=np.uint16))
    acq.set_attributes("", {"instrument": "scope 1", "state": "done"})

image = tessera.open(root / "cam1")
print(f"cam1: levels {[lv.shape for lv in image.levels]}")
print(f"cells level 1: {tessera.open(root / 'cam1' / 'labels' / 'cells', level=1).shape}")
print(f"field plate/B/3/1: {tessera.open(root / 'plate' / 'B' / '3' / '1').shape}")
try:
    import zarr

    print(zarr.open_group(str(root), mode="r").tree())
except ImportError:
    pass
