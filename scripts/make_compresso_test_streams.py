"""Writes src/tessera/precomputed/compresso_test_streams.inc: compresso streams made by the PyPI
package (the format's reference implementation) for label volumes that compresso_test.cc rebuilds
from a short recipe, decodes and compares voxel for voxel (and, for streams made with the
package's defaults, encodes and compares byte for byte).

    .venv/bin/python scripts/make_compresso_test_streams.py

A recipe: extent (x, y, z), dtype, a pattern, cell size, label count k, palette, seed.
  hash     voxel label = palette[splitmix64(key of the voxel's cell) % k]
  parity   voxel label = palette[(cell x + cell y + cell z) % k]
  spheres  k - 1 balls; a voxel takes palette[1 + the first ball holding it], else palette[0]
  palette  "high": max - j (labels near the top need compresso's escape entry); else
           splitmix64(palette key j) masked to the dtype's width
The C++ test (compresso_test.cc, CompressoRecipe) implements the same arithmetic.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import compresso
import numpy as np

MASK64 = (1 << 64) - 1
OUT = Path(__file__).resolve().parent.parent / "src/tessera/precomputed/compresso_test_streams.inc"


def splitmix64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def mix(value: int) -> int:
    return int(splitmix64(np.array([value & MASK64], dtype=np.uint64))[0])


# Keys: the seed in the top 16 bits, a tag in bits 44..47, the rest below.
def key(seed: int, tag: int, rest: int) -> int:
    return ((seed << 48) | (tag << 44) | rest) & MASK64


def volume(extent, dtype, pattern, cell, k, high, seed) -> np.ndarray:
    """The labels, C order [z][y][x]."""
    sx, sy, sz = extent
    mask = (1 << (8 * np.dtype(dtype).itemsize)) - 1
    palette = np.array([(mask - j) if high else (mix(key(seed, 1, j)) & mask) for j in range(k)], dtype=np.uint64)
    z, y, x = np.meshgrid(np.arange(sz, dtype=np.uint64), np.arange(sy, dtype=np.uint64),
                          np.arange(sx, dtype=np.uint64), indexing="ij")
    cx, cy, cz = (x // np.uint64(cell[0]), y // np.uint64(cell[1]), z // np.uint64(cell[2]))
    if pattern == "hash":
        index = splitmix64(np.uint64(key(seed, 2, 0)) | cx | (cy << np.uint64(16)) | (cz << np.uint64(32))) % np.uint64(k)
    elif pattern == "parity":
        index = (cx + cy + cz) % np.uint64(k)
    else:  # spheres
        index = np.zeros(x.shape, dtype=np.uint64)
        radius_limit = max(extent) // 3 + 1
        for ball in range(k - 1):
            bx, by, bz = (mix(key(seed, 3, 4 * ball + d)) % s for d, s in enumerate(extent))
            r = 1 + mix(key(seed, 3, 4 * ball + 3)) % radius_limit
            inside = ((x.astype(np.int64) - bx) ** 2 + (y.astype(np.int64) - by) ** 2 +
                      (z.astype(np.int64) - bz) ** 2 <= r * r) & (index == 0)
            index[inside] = ball + 1
    return palette[index].astype(dtype)


# name, extent xyz, dtype, pattern, cell xyz, k, high palette, seed, compress() options
CASES = [
    ("one_voxel", (1, 1, 1), "uint8", "hash", (1, 1, 1), 1, False, 1, {}),
    ("random_7x5x3_u8", (7, 5, 3), "uint8", "hash", (1, 1, 1), 4, False, 2, {}),
    ("high_7x5x3_u16", (7, 5, 3), "uint16", "hash", (1, 1, 1), 3, True, 3, {}),
    ("checkerboard_7x5x3_u32", (7, 5, 3), "uint32", "parity", (1, 1, 1), 2, False, 4, {}),
    ("distinct_7x5x3_u64", (7, 5, 3), "uint64", "hash", (1, 1, 1), 50, False, 5, {}),
    ("spheres_64_u32", (64, 64, 64), "uint32", "spheres", (1, 1, 1), 6, False, 6, {}),
    ("spheres_high_64_u64", (64, 64, 64), "uint64", "spheres", (1, 1, 1), 4, True, 7, {}),
    ("cubes_64_u8", (64, 64, 64), "uint8", "parity", (16, 16, 16), 3, False, 8, {}),
    ("cells_48x40x24_u16", (48, 40, 24), "uint16", "hash", (8, 8, 8), 5, False, 9, {}),
    ("column_1x1x50_u16", (1, 1, 50), "uint16", "hash", (1, 1, 1), 3, False, 10, {}),
    ("row_50x1x1_u32", (50, 1, 1), "uint32", "hash", (1, 1, 1), 3, False, 11, {}),
    ("row_1x37x1_u64", (1, 37, 1), "uint64", "hash", (1, 1, 1), 2, False, 12, {}),
    ("high_9x9x9_u64", (9, 9, 9), "uint64", "hash", (1, 1, 1), 7, True, 13, {}),
    ("high_13x1x11_u8", (13, 1, 11), "uint8", "hash", (1, 1, 1), 20, True, 14, {}),
    ("spheres_33x17x5_u16", (33, 17, 5), "uint16", "spheres", (1, 1, 1), 8, False, 15, {}),
    ("cells_16_u32", (16, 16, 16), "uint32", "hash", (2, 3, 4), 9, False, 16, {}),
    ("constant_max_5x5x5_u64", (5, 5, 5), "uint64", "hash", (1, 1, 1), 1, True, 17, {}),
    ("stripes_31x29x3_u8", (31, 29, 3), "uint8", "parity", (1, 2, 1), 3, False, 18, {}),
    ("binary_40x40x2_u32", (40, 40, 2), "uint32", "hash", (1, 1, 1), 2, False, 19, {}),
    ("many_17_u16", (17, 17, 17), "uint16", "hash", (1, 1, 1), 1000, False, 20, {}),
    ("wide_130x3x2_u8", (130, 3, 2), "uint8", "hash", (3, 1, 1), 6, False, 21, {}),
    # Options other than the defaults: only decoded (the encoder makes the defaults' streams).
    ("conn6_30x20x6_u32", (30, 20, 6), "uint32", "spheres", (1, 1, 1), 6, False, 22, dict(connectivity=6)),
    ("no_z_index_30x20x6_u16", (30, 20, 6), "uint16", "spheres", (1, 1, 1), 6, False, 23,
     dict(random_access_z_index=False)),
    ("steps_8x8x1_21x19x4_u64", (21, 19, 4), "uint64", "hash", (2, 2, 1), 4, False, 24, dict(steps=(8, 8, 1))),
    ("steps_2x2x1_21x19x4_u8", (21, 19, 4), "uint8", "spheres", (1, 1, 1), 5, False, 25, dict(steps=(2, 2, 1))),
    ("steps_4x4x2_21x19x6_u32", (21, 19, 6), "uint32", "spheres", (1, 1, 1), 5, False, 26, dict(steps=(4, 4, 2))),
    ("conn6_high_9_u64", (9, 9, 9), "uint64", "hash", (1, 1, 1), 3, True, 27, dict(connectivity=6)),
    ("no_z_index_23x11x7_u16", (23, 11, 7), "uint16", "hash", (1, 1, 1), 5, False, 28,
     dict(random_access_z_index=False)),
    ("steps_3x5x2_13x11x5_u16", (13, 11, 5), "uint16", "parity", (2, 3, 1), 3, False, 29, dict(steps=(3, 5, 2))),
]


def main() -> None:
    lines = [
        "// Generated by scripts/make_compresso_test_streams.py with the compresso PyPI package "
        f"{importlib.metadata.version('compresso')} (do not edit).",
        "// {name, extent xyz, dtype, pattern, cell xyz, k, high palette, seed, made with the defaults, stream hex}",
    ]
    total = 0
    for name, extent, dtype, pattern, cell, k, high, seed, options in CASES:
        labels = volume(extent, dtype, pattern, cell, k, high, seed)
        stream = compresso.compress(labels.T, **options)  # (x, y, z) array, as cloud-volume passes it
        back = compresso.decompress(stream)
        assert back.dtype == labels.dtype and np.array_equal(back, labels.T), name
        total += len(stream)
        hex_text = stream.hex()
        chunks = [hex_text[i:i + 96] for i in range(0, len(hex_text), 96)]
        lines.append(f'{{"{name}", {{{extent[0]}, {extent[1]}, {extent[2]}}}, DataType::k{dtype.capitalize()[:1]}'
                     f'{dtype[1:].capitalize()}, CompressoPattern::k{pattern.capitalize()}, '
                     f'{{{cell[0]}, {cell[1]}, {cell[2]}}}, {k}, {str(high).lower()}, {seed}, '
                     f'{str(not options).lower()},')
        lines.extend(f'  "{c}"' for c in chunks)
        lines[-1] += "},"
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(CASES)} streams, {total} bytes -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
