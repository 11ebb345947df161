"""Zarr v3 arrays written by zarr-python 3 and by tensorstore, read back with `tessera read`.

Each test writes a small array with a peer, then compares tessera's raw output with numpy's own
indexing of the source data, bit for bit (NaNs of any payload compare equal).
"""

from __future__ import annotations

import numpy as np
import pytest

from interop_support import (ALL_DTYPES, CRC32C, WRITERS, assert_identical, check_reads, codec_chain,
                             filled, random_data, random_slice, sharding, smooth_data, write_peer)

ZSTD1 = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def blosc(cname: str, shuffle: str, typesize: int, clevel: int = 5, blocksize: int = 0) -> dict:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                               "typesize": typesize, "blocksize": blocksize}}


# Layout id -> shard index location (None: unsharded). Grids and chunk shapes are chosen per test.
LAYOUTS = {"unsharded": None, "shard-end": "end", "shard-start": "start"}


# ---------------------------------------------------------------------------------------------
# Data types.


@pytest.mark.parametrize("layout", ["unsharded", "shard-end"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("writer", WRITERS)
def test_every_dtype(tessera, tmp_path, rng, writer, dtype, layout):
    data = random_data(rng, dtype, (11, 9))
    if layout == "unsharded":
        grid, codecs = (4, 5), codec_chain(compressors=[ZSTD1])
    else:
        grid, codecs = (6, 6), codec_chain(inner_chunks=(3, 2), index_location="end", compressors=[ZSTD1])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=grid, codecs=codecs)
    check_reads(tessera, store, data, dtype)


# ---------------------------------------------------------------------------------------------
# Bytes -> bytes codecs, inside and outside sharding.

COMPRESSORS = {
    "none": [],
    "gzip-1": [{"name": "gzip", "configuration": {"level": 1}}],
    "gzip-9": [{"name": "gzip", "configuration": {"level": 9}}],
    "zstd-0": [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
    "zstd-3-checksum": [{"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "blosc-lz4-shuffle": [blosc("lz4", "shuffle", 4)],
    "blosc-lz4-bitshuffle": [blosc("lz4", "bitshuffle", 4)],
    "blosc-lz4-noshuffle": [blosc("lz4", "noshuffle", 4)],
    "blosc-zstd-shuffle": [blosc("zstd", "shuffle", 4)],
    "blosc-zstd-bitshuffle": [blosc("zstd", "bitshuffle", 4)],
    "blosc-zstd-noshuffle": [blosc("zstd", "noshuffle", 4)],
    "blosc-lz4-clevel0": [blosc("lz4", "shuffle", 4, clevel=0)],
    "blosc-zstd-blocksize256": [blosc("zstd", "shuffle", 4, blocksize=256)],
    "crc32c": [CRC32C],
    "zstd+crc32c": [ZSTD1, CRC32C],
    "gzip+crc32c": [{"name": "gzip", "configuration": {"level": 5}}, CRC32C],
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("writer", WRITERS)
def test_compressors(tessera, tmp_path, rng, writer, compressor, layout):
    # Smooth data so the compressors have something to do, with noise in one corner.
    data = smooth_data("int32", (13, 10, 7))
    data[:3, :3, :3] = rng.integers(-(2**31), 2**31 - 1, size=(3, 3, 3), dtype=np.int32)
    compressors = COMPRESSORS[compressor]
    if layout == "unsharded":
        grid, codecs = (5, 4, 7), codec_chain(compressors=compressors)
    else:
        grid = (8, 6, 4)
        codecs = codec_chain(inner_chunks=(4, 3, 2), index_location=LAYOUTS[layout], compressors=compressors)
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=grid, codecs=codecs)
    check_reads(tessera, store, data, "int32")


@pytest.mark.parametrize("typesize_dtype", ["uint8", "int16", "float64", "complex128"])
@pytest.mark.parametrize("writer", WRITERS)
def test_blosc_typesizes(tessera, tmp_path, rng, writer, typesize_dtype):
    """Shuffle works on the element size; each dtype declares its own typesize."""
    data = random_data(rng, typesize_dtype, (9, 14))
    itemsize = data.dtype.itemsize
    codecs = codec_chain(inner_chunks=(3, 7), compressors=[blosc("lz4", "shuffle", itemsize)])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=(9, 7), codecs=codecs)
    check_reads(tessera, store, data, typesize_dtype)


# ---------------------------------------------------------------------------------------------
# Transpose and byte order.


@pytest.mark.parametrize("where", ["unsharded", "inside-shard"])
@pytest.mark.parametrize("order", [(2, 0, 1), (1, 2, 0), (2, 1, 0)])
@pytest.mark.parametrize("writer", WRITERS)
def test_transpose(tessera, tmp_path, rng, writer, order, where):
    data = random_data(rng, "uint16", (9, 10, 11))
    if where == "unsharded":
        grid, codecs = (4, 5, 3), codec_chain(transpose=order, compressors=[ZSTD1])
    else:
        grid = (8, 10, 6)
        codecs = codec_chain(inner_chunks=(4, 5, 3), transpose=order, compressors=[ZSTD1])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=grid, codecs=codecs)
    check_reads(tessera, store, data, "uint16")


def test_transpose_before_sharding(tessera, tmp_path, rng):
    """transpose as the outer array -> array codec: the sharding codec sees the transposed shard,
    so its chunk_shape is in transposed order. zarr-python rejects this layout; tensorstore writes it."""
    data = random_data(rng, "int32", (10, 13))
    codecs = [{"name": "transpose", "configuration": {"order": [1, 0]}},
              sharding((3, 2), codec_chain(compressors=[ZSTD1]), "start")]
    store = tmp_path / "a.zarr"
    write_peer("tensorstore", store, data, grid=(4, 6), codecs=codecs)
    check_reads(tessera, store, data, "int32")


BIG_ENDIAN_DTYPES = ["int16", "uint32", "int64", "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("layout", ["unsharded", "shard-start"])
@pytest.mark.parametrize("dtype", BIG_ENDIAN_DTYPES)
@pytest.mark.parametrize("writer", WRITERS)
def test_big_endian_bytes_codec(tessera, tmp_path, rng, writer, dtype, layout):
    data = random_data(rng, dtype, (7, 12))
    if layout == "unsharded":
        grid, codecs = (3, 5), codec_chain(endian="big", compressors=[ZSTD1])
    else:
        grid, codecs = (6, 12), codec_chain(inner_chunks=(3, 4), index_location="start", endian="big")
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=grid, codecs=codecs)
    check_reads(tessera, store, data, dtype)


# ---------------------------------------------------------------------------------------------
# Nested sharding: a shard whose inner chunks are themselves shards.


@pytest.mark.parametrize("compress_inner", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("inner_index", ["start", "end"])
@pytest.mark.parametrize("outer_index", ["start", "end"])
@pytest.mark.parametrize("writer", WRITERS)
def test_nested_sharding(tessera, tmp_path, rng, writer, outer_index, inner_index, compress_inner):
    data = random_data(rng, "int16", (13, 11))
    leaf = codec_chain(compressors=[ZSTD1] if compress_inner else [])
    codecs = [sharding((4, 4), [sharding((2, 2), leaf, inner_index)], outer_index)]
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=(8, 8), codecs=codecs)
    check_reads(tessera, store, data, "int16")


@pytest.mark.parametrize("writer", WRITERS)
def test_nested_sharding_partially_written(tessera, tmp_path, rng, writer):
    data = random_data(rng, "float32", (16, 16))
    codecs = [sharding((4, 4), [sharding((2, 2), codec_chain(compressors=[ZSTD1]), "end")], "start")]
    regions = [(slice(0, 3), slice(1, 2)), (slice(9, 10), slice(5, 16))]
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=(8, 8), codecs=codecs, fill_value=-2.5, regions=regions)
    expected = filled(data.shape, "float32", -2.5)
    for region in regions:
        expected[region] = data[region]
    check_reads(tessera, store, expected, "float32")


# ---------------------------------------------------------------------------------------------
# Partially written arrays: unwritten chunks, shards and inner chunks read as the fill value.

FILL_CASES = {
    "int16-0": ("int16", 0),
    "int32-neg7": ("int32", -7),
    "uint8-255": ("uint8", 255),
    "uint64-max": ("uint64", 2**64 - 1),
    "float32-nan": ("float32", float("nan")),
    "float64-nan": ("float64", float("nan")),
    "float16-nan": ("float16", float("nan")),
    "float64-1.5": ("float64", 1.5),
    "float32-neginf": ("float32", float("-inf")),
    "complex64-1+2j": ("complex64", 1 + 2j),
    "complex128-nan": ("complex128", complex(float("nan"), 0.5)),
    "bool-true": ("bool", True),
}

PARTIAL_REGIONS = [
    (slice(0, 3), slice(0, 5)),      # part of the first chunk and its neighbour
    (slice(9, 14), slice(12, 17)),   # crosses chunk (and shard) boundaries, touches the edge
    (slice(19, 20), slice(None)),    # the last row: a partial edge chunk row
]


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", list(FILL_CASES))
@pytest.mark.parametrize("writer", WRITERS)
def test_partially_written(tessera, tmp_path, rng, writer, case, layout):
    dtype, fill = FILL_CASES[case]
    data = random_data(rng, dtype, (20, 17))
    if layout == "unsharded":
        grid, codecs = (4, 4), codec_chain(compressors=[ZSTD1])
    else:
        grid, codecs = (8, 8), codec_chain(inner_chunks=(4, 4), index_location=LAYOUTS[layout],
                                           compressors=[ZSTD1])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=grid, codecs=codecs, fill_value=fill, regions=PARTIAL_REGIONS)
    expected = filled(data.shape, dtype, fill)
    for region in PARTIAL_REGIONS:
        expected[region] = data[region]
    check_reads(tessera, store, expected, dtype)


@pytest.mark.parametrize("layout", ["unsharded", "shard-end"])
@pytest.mark.parametrize("writer", WRITERS)
def test_nothing_written(tessera, tmp_path, writer, layout):
    """Only zarr.json exists: every element is the fill value."""
    data = np.zeros((6, 5), dtype="<i4")
    codecs = codec_chain(compressors=[ZSTD1]) if layout == "unsharded" else \
        codec_chain(inner_chunks=(2, 5), compressors=[ZSTD1])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=(4, 5), codecs=codecs, fill_value=42, regions=[])
    assert sorted(p.name for p in store.iterdir()) == ["zarr.json"]
    check_reads(tessera, store, filled(data.shape, "int32", 42), "int32")


# ---------------------------------------------------------------------------------------------
# Chunk key encodings.

KEY_ENCODINGS = {
    "default-slash": ({"name": "default", "configuration": {"separator": "/"}}, "c/1/0"),
    "default-dot": ({"name": "default", "configuration": {"separator": "."}}, "c.1.0"),
    "v2-slash": ({"name": "v2", "configuration": {"separator": "/"}}, "1/0"),
    "v2-dot": ({"name": "v2", "configuration": {"separator": "."}}, "1.0"),
}


@pytest.mark.parametrize("layout", ["unsharded", "shard-end"])
@pytest.mark.parametrize("encoding", list(KEY_ENCODINGS))
@pytest.mark.parametrize("writer", WRITERS)
def test_chunk_key_encodings(tessera, tmp_path, rng, writer, encoding, layout):
    key_encoding, sample_key = KEY_ENCODINGS[encoding]
    data = random_data(rng, "uint32", (7, 9))
    codecs = codec_chain(compressors=[ZSTD1]) if layout == "unsharded" else \
        codec_chain(inner_chunks=(2, 3), compressors=[ZSTD1])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=(4, 6), codecs=codecs, chunk_key_encoding=key_encoding)
    assert (store / sample_key).is_file(), f"{writer} did not write key {sample_key}"
    check_reads(tessera, store, data, "uint32")


# ---------------------------------------------------------------------------------------------
# Shapes: ranks 1 and 5, one-element dimensions, edge chunks, chunks larger than the array.

SHAPE_CASES = {
    # id: (shape, grid, inner chunks or None)
    "rank1": ((100,), (7,), None),
    "rank1-sharded": ((100,), (21,), (7,)),
    "rank5": ((3, 4, 2, 5, 3), (2, 3, 1, 2, 2), None),
    "rank5-sharded": ((3, 4, 2, 5, 3), (2, 4, 2, 4, 3), (1, 2, 1, 2, 3)),
    "one-element-dims": ((1, 17, 1), (1, 5, 1), None),
    "one-element-dims-sharded": ((1, 17, 1), (1, 10, 1), (1, 5, 1)),
    "one-by-one-chunks": ((5, 1), (1, 1), None),
    "chunk-larger-than-array": ((3, 4), (8, 8), None),
    "shard-larger-than-array": ((3, 4), (8, 8), (4, 4)),
    "not-divisible": ((17, 23), (5, 7), None),
    "not-divisible-sharded": ((17, 23), (10, 14), (5, 7)),
}


@pytest.mark.parametrize("case", list(SHAPE_CASES))
@pytest.mark.parametrize("writer", WRITERS)
def test_shapes(tessera, tmp_path, rng, writer, case):
    shape, grid, inner = SHAPE_CASES[case]
    data = random_data(rng, "float64", shape)
    codecs = codec_chain(inner_chunks=inner, compressors=[ZSTD1])
    store = tmp_path / "a.zarr"
    write_peer(writer, store, data, grid=grid, codecs=codecs)
    check_reads(tessera, store, data, "float64")


# ---------------------------------------------------------------------------------------------
# Slicing: fixed edge cases, then a seeded batch of random basic indexings, each against numpy.

EDGE_SLICES = [
    "5:2", "::-1", "-1", "-1,-1,-1", "0", ":0", "100:", "-100:", ":-100", "::100", "::-100",
    "10:-100:-2", "1:5:-1", "-2:-5:-1", "1,2", "8,9,10", "-9,-10,-11", "::3,::-4,2::5",
    "3:3,::,::", "2,:,-3", ":,:,:", "::2", "-3:-1,1:-1:3,-1::-2", "7:1:-2,4,:",
]


def _edge_index(expr: str) -> tuple:
    entries = []
    for text in expr.split(","):
        if ":" in text:
            entries.append(slice(*[int(p) if p else None for p in text.split(":")]))
        else:
            entries.append(int(text))
    return tuple(entries)


@pytest.fixture(scope="module")
def edge_store(tmp_path_factory):
    data = random_data(np.random.default_rng(7), "int16", (9, 10, 11))
    store = tmp_path_factory.mktemp("edge") / "a.zarr"
    write_peer("zarr", store, data, grid=(8, 6, 6),
               codecs=codec_chain(inner_chunks=(4, 3, 2), compressors=[ZSTD1]))
    return store, data


@pytest.mark.parametrize("expr", EDGE_SLICES)
def test_edge_slices(tessera, edge_store, expr):
    store, data = edge_store
    want = data[_edge_index(expr)]
    assert_identical(tessera.read(store, expr, "int16", want.shape), want, f"--slice {expr!r}")


RANDOM_STORES = {
    # id: (writer, dtype, shape, grid, codecs, fill or None, partial regions or None)
    "2d-zarr-sharded": ("zarr", "int16", (23, 17), (10, 8),
                        codec_chain(inner_chunks=(5, 4), compressors=[ZSTD1]), None, None),
    "3d-ts-transpose-gzip": ("tensorstore", "float32", (9, 10, 11), (4, 5, 3),
                             codec_chain(transpose=(2, 0, 1), compressors=[{"name": "gzip", "configuration": {"level": 3}}]),
                             None, None),
    "5d-zarr": ("zarr", "uint8", (4, 3, 5, 2, 6), (3, 2, 2, 2, 4), codec_chain(compressors=[ZSTD1]), None, None),
    "1d-ts-nested": ("tensorstore", "int64", (50,), (16,),
                     [sharding((8,), [sharding((2,), codec_chain(), "start")], "end")], None, None),
    "3d-ts-partial-start": ("tensorstore", "complex64", (12, 13, 7), (6, 8, 7),
                            codec_chain(inner_chunks=(3, 4, 7), index_location="start", compressors=[ZSTD1]),
                            -1.0 + 0j, [(slice(0, 5), slice(2, 9), slice(None)), (slice(11, 12), slice(None), slice(3, 4))]),
}
RANDOM_SLICES_PER_STORE = 40


@pytest.fixture(scope="module")
def random_stores(tmp_path_factory):
    stores = {}
    for name, (writer, dtype, shape, grid, codecs, fill, regions) in RANDOM_STORES.items():
        data = random_data(np.random.default_rng(len(name)), dtype, shape)
        store = tmp_path_factory.mktemp(name) / "a.zarr"
        write_peer(writer, store, data, grid=grid, codecs=codecs, fill_value=fill, regions=regions)
        expected = data
        if regions is not None:
            expected = filled(shape, dtype, fill)
            for region in regions:
                expected[region] = data[region]
        stores[name] = (store, expected, dtype)
    return stores


@pytest.mark.parametrize("i", range(RANDOM_SLICES_PER_STORE))
@pytest.mark.parametrize("name", list(RANDOM_STORES))
def test_random_slices(tessera, random_stores, name, i):
    store, expected, dtype = random_stores[name]
    rng = np.random.default_rng([20240, i, len(name)])
    expr, index = random_slice(rng, expected.shape)
    want = expected[index]
    assert_identical(tessera.read(store, expr, dtype, want.shape), want, f"--slice {expr!r}")


@pytest.mark.parametrize("expr", [None, "2:7,::-3,1"])
def test_output_to_file_and_dash(tessera, edge_store, tmp_path, expr):
    """--output FILE and --output - write the same bytes as the default (stdout)."""
    store, data = edge_store
    slice_args = [] if expr is None else [f"--slice={expr}"]
    default = tessera.run_ok(["read", store, *slice_args]).stdout
    dash = tessera.run_ok(["read", store, *slice_args, "--output", "-"]).stdout
    out = tmp_path / "out.raw"
    assert tessera.run_ok(["read", store, *slice_args, "--output", out]).stdout == b""
    want = data[() if expr is None else _edge_index(expr)]
    assert default == dash == out.read_bytes() == want.astype("<i2").tobytes()
