"""Region writes into existing Zarr v3 arrays made by zarr-python and tensorstore, read back exactly
by both peers.

Each array (sharded with the index at the end or the start, with and without the index's crc32c,
inner codecs none / gzip / zstd / blosc / crc32c, transpose, big-endian bytes; unsharded; chunk keys
"c/i/j" and "c.i.j") is written whole by its peer, then opened with
``tessera.open(path, mode="r+")`` and written with ``a[key] = value`` (random slices, steps,
negative steps, single indices, broadcast scalars, the fill value, which removes chunks); after
each round zarr-python, tensorstore and tessera read the whole array and must equal a numpy model.
Writing the fill value everywhere must leave no chunk or shard stored; shrinking then growing
must show the fill value where data was cut off, to all three readers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorstore as ts
import zarr

from interop_support import (BYTES_BE, BYTES_LE, CRC32C, ZARR_DTYPES, assert_identical, codec_chain,
                             random_data, random_key, sharding, stable_seed, write_peer)

tessera_py = pytest.importorskip("tessera")

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}


def blosc(typesize):
    return {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                               "typesize": typesize, "blocksize": 0}}


DOT_KEYS = {"name": "default", "configuration": {"separator": "."}}

# name: (writer, dtype, shape, grid (the shard shape when sharded), codecs, fill value, chunk key encoding)
CASES = {
    "zarr-sharded-zstd": ("zarr", "uint16", (37, 29), (16, 12),
                          codec_chain(inner_chunks=(4, 6), compressors=[ZSTD]), 0, None),
    "zarr-sharded-index-start-gzip": ("zarr", "float32", (20, 18, 7), (8, 6, 7),
                                      codec_chain(inner_chunks=(4, 3, 7), index_location="start",
                                                  compressors=[GZIP]), 0.0, None),
    "zarr-sharded-transpose-crc32c": ("zarr", "uint8", (24, 21), (12, 14),
                                      codec_chain(inner_chunks=(6, 7), transpose=(1, 0), compressors=[CRC32C]),
                                      7, None),
    "zarr-unsharded-blosc-dot-keys": ("zarr", "int32", (33, 21), (8, 8), codec_chain(compressors=[blosc(4)]),
                                      -5, DOT_KEYS),
    "tensorstore-sharded-zstd": ("tensorstore", "uint16", (30, 26, 5), (10, 13, 5),
                                 codec_chain(inner_chunks=(5, 13, 5), compressors=[ZSTD]), 3, None),
    "tensorstore-sharded-index-without-crc32c": (
        "tensorstore", "int64", (19, 40), (8, 16),
        [sharding((4, 8), [BYTES_LE, GZIP], index_codecs=[BYTES_LE])], 0, None),
    "tensorstore-unsharded-big-endian": ("tensorstore", "uint32", (17, 23), (5, 6), [BYTES_BE, GZIP], 9, None),
}


def random_values(rng, dtype, shape, fill):
    dt = ZARR_DTYPES[dtype].newbyteorder("=")
    kind = rng.integers(0, 5)
    if kind == 0:
        return dt.type(fill)  # the fill value: chunks left holding only it are removed
    if kind == 1:
        return dt.type(3)  # a broadcast scalar
    return random_data(rng, dtype, shape)


def read_with_zarr(path):
    return zarr.open_array(str(path), mode="r")[...]


def read_with_tensorstore(path):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result().read().result()


def assert_peers_read(path, expected, context):
    assert_identical(read_with_zarr(path), expected, f"zarr-python, {context}")
    assert_identical(read_with_tensorstore(path), expected, f"tensorstore, {context}")
    assert_identical(tessera_py.open(str(path))[...], expected, f"tessera, {context}")


def stored_chunks(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and p.name != "zarr.json")


def make_array(tmp_path, name):
    writer, dtype, shape, grid, codecs, fill, keys = CASES[name]
    rng = np.random.default_rng(stable_seed(name))
    path = tmp_path / "a.zarr"
    model = random_data(rng, dtype, shape)
    write_peer(writer, path, model, grid=grid, codecs=codecs, fill_value=fill, chunk_key_encoding=keys)
    return path, model, rng


@pytest.mark.parametrize("name", list(CASES))
def test_region_writes_read_back_by_peers(tmp_path, name):
    _, dtype, shape, _, _, fill, _ = CASES[name]
    path, model, rng = make_array(tmp_path, name)
    a = tessera_py.open(str(path), mode="r+")
    for round_ in range(3):
        for _ in range(4):
            key = random_key(rng, shape)
            values = random_values(rng, dtype, model[key].shape, fill)
            a[key] = values
            model[key] = values
        assert_peers_read(path, model, f"{name} round {round_}")
    # The whole array at once: every object replaced without being read.
    whole = random_data(rng, dtype, shape)
    a[...] = whole
    assert_peers_read(path, whole, f"{name} whole")
    # The fill value everywhere: nothing stays stored.
    a[...] = ZARR_DTYPES[dtype].newbyteorder("=").type(fill)
    assert stored_chunks(path) == []
    assert_peers_read(path, np.full(shape, fill, dtype=whole.dtype), f"{name} all fill")


@pytest.mark.parametrize("name", ["zarr-sharded-zstd", "zarr-unsharded-blosc-dot-keys", "tensorstore-sharded-zstd"])
def test_resize_shrink_then_grow_shows_fill(tmp_path, name):
    _, dtype, shape, grid, _, fill, _ = CASES[name]
    path, model, _ = make_array(tmp_path, name)
    a = tessera_py.open(str(path), mode="r+")
    # Cut inside a shard (or chunk) along dimension 0 and inside the first one along dimension 1.
    smaller = (shape[0] - grid[0] // 2 - 1, 3) + tuple(shape[2:])
    a.resize(smaller)
    assert a.shape == smaller
    assert_peers_read(path, model[: smaller[0], : smaller[1]], f"{name} shrunk")
    a.resize(shape)
    expected = np.full(shape, fill, dtype=model.dtype)
    expected[: smaller[0], : smaller[1]] = model[: smaller[0], : smaller[1]]
    assert_peers_read(path, expected, f"{name} grown")
