#!/usr/bin/env python3
"""Write a Neuroglancer precomputed volume (sharded image + a segmentation), read a block back.

Shapes are in tessera's C order (z, y, x); resolution and voxel_offset in Neuroglancer's
x, y, z order, as the info file writes them.

Usage: python precomputed_volume.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import tessera

out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tessera-example-"))

# An image volume, 128 x 128 x 128 uint8, sharded in 2 x 2 x 2 boxes of 32^3 chunks, written one
# z-slice at a time as a microscope would deliver it.
z, y, x = np.mgrid[0:128, 0:128, 0:128]
image = ((np.sin(x / 9.0) + np.cos(y / 7.0) + np.sin(z / 5.0)) * 40 + 128).astype(np.uint8)
with tessera.create(out_dir / "image", format="precomputed", dtype="uint8", shape=image.shape, chunks=(32, 32, 32),
                    shard_chunks=(2, 2, 2), resolution=(4, 4, 40), voxel_offset=(0, 0, 0)) as w:
    for plane in image:
        w.append(plane)
print(f"wrote {out_dir / 'image'}: {w.stats.shards_written} shard files, {w.stats.bytes_out / 2**20:.2f} MiB")

# A segmentation (uint32 labels), compressed_segmentation encoding, unsharded.
labels = ((x // 32) + 4 * (y // 32) + 16 * (z // 32)).astype(np.uint32)
with tessera.create(out_dir / "segmentation", format="precomputed", dtype="uint32", shape=labels.shape,
                    chunks=(64, 64, 64), encoding="compressed_segmentation", cseg_block=(8, 8, 8),
                    resolution=(4, 4, 40)) as w:
    w.append(labels)
print(f"wrote {out_dir / 'segmentation'}: {w.stats.bytes_in / 2**20:.1f} MiB of labels -> "
      f"{w.stats.bytes_out / 2**20:.2f} MiB")

# Read a block back from each.
img = tessera.open(out_dir / "image")
seg = tessera.open(out_dir / "segmentation")
print(f"opened {img!r}")
print(f"scales: {[s['key'] for s in img.metadata['scales']]}, resolution {img.metadata['scales'][0]['resolution']}")
block = img[40:72, 10:20, ::4]
assert np.array_equal(block, image[40:72, 10:20, ::4])
ids = np.unique(seg[64:96, 0:64, 0:64])
assert np.array_equal(ids, np.unique(labels[64:96, 0:64, 0:64]))
print(f"image block {block.shape} matches; labels in a 32x64x64 block: {ids.tolist()}")
