"""Zarr v3 arrays written by `tessera stream`, read back by zarr-python 3 and by tensorstore.

Values are compared bit for bit with the bytes fed to the CLI; metadata (shape, dtype, fill value,
chunking) is compared with what the CLI was asked for, and `tessera info --json` with zarr.json.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorstore as ts
import zarr

from interop_support import (ALL_DTYPES, WRITERS, assert_identical, codec_chain,
                             load_zarr_json, random_data, smooth_data, write_peer)

CLI_CODECS = ["none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"]


def read_with_zarr(store) -> tuple[np.ndarray, zarr.Array]:
    arr = zarr.open_array(str(store), mode="r")
    return arr[...], arr


def read_with_tensorstore(store) -> tuple[np.ndarray, ts.TensorStore]:
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)}, "open": True}).result()
    return t.read().result(), t


def same_fill(actual, expected) -> bool:
    actual, expected = complex(actual), complex(expected)
    same = lambda a, b: (math.isnan(a) and math.isnan(b)) or a == b
    return same(actual.real, expected.real) and same(actual.imag, expected.imag)


def check_peers_read(store, data: np.ndarray, fill_value=0, chunk=None, shard=None) -> None:
    """zarr-python and tensorstore both read STORE as DATA, with the same metadata."""
    got, arr = read_with_zarr(store)
    assert arr.shape == data.shape
    assert arr.dtype == data.dtype.newbyteorder("=")
    assert same_fill(arr.fill_value, fill_value), f"zarr fill_value {arr.fill_value!r} != {fill_value!r}"
    if chunk is not None:
        assert arr.chunks == tuple(chunk)
        assert arr.shards == (None if shard is None else tuple(shard))
    assert_identical(got, data, "zarr-python read")

    got, t = read_with_tensorstore(store)
    assert tuple(t.shape) == data.shape
    assert t.dtype.numpy_dtype == data.dtype.newbyteorder("=")
    assert same_fill(t.fill_value, fill_value), f"tensorstore fill_value {t.fill_value!r} != {fill_value!r}"
    assert_identical(got, data, "tensorstore read")


def shard_of(chunk, shard_chunks):
    return None if shard_chunks is None else tuple(c * p for c, p in zip(chunk, shard_chunks))


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype(tessera, tmp_path, rng, dtype, sharded):
    data = random_data(rng, dtype, (10, 7))
    chunk, shard_chunks = (4, 3), ((2, 2) if sharded else None)
    store = tmp_path / "out.zarr"
    tessera.write(store, data, chunk, shard_chunks=shard_chunks, codec="zstd")
    check_peers_read(store, data, chunk=chunk, shard=shard_of(chunk, shard_chunks))


CODEC_LEVELS = [("none", None)] + [(c, level) for c in CLI_CODECS[1:] for level in (None, 1, 5)]


@pytest.mark.parametrize("layout", ["unsharded", "index-start", "index-end"])
@pytest.mark.parametrize("codec, level", CODEC_LEVELS, ids=[f"{c}-{lv}" for c, lv in CODEC_LEVELS])
def test_codecs(tessera, tmp_path, rng, codec, level, layout):
    data = smooth_data("uint16", (13, 11, 6))
    data[5:7] = rng.integers(0, 2**16, size=(2, 11, 6), dtype=np.uint16)
    chunk = (4, 3, 6)
    shard_chunks = None if layout == "unsharded" else (2, 2, 1)
    index_location = None if layout == "unsharded" else layout.removeprefix("index-")
    store = tmp_path / "out.zarr"
    tessera.write(store, data, chunk, shard_chunks=shard_chunks, codec=codec, level=level,
                  index_location=index_location)
    check_peers_read(store, data, chunk=chunk, shard=shard_of(chunk, shard_chunks))

    codecs = load_zarr_json(store)["codecs"]
    if shard_chunks is not None:
        assert [c["name"] for c in codecs] == ["sharding_indexed"]
        config = codecs[0]["configuration"]
        assert config.get("index_location", "end") == index_location
        assert config["chunk_shape"] == list(chunk)
        codecs = config["codecs"]
    names = [c["name"] for c in codecs]
    expected_names = {"none": ["bytes"], "zstd": ["bytes", "zstd"], "gzip": ["bytes", "gzip"],
                      "blosc-lz4": ["bytes", "blosc"], "blosc-zstd": ["bytes", "blosc"]}[codec]
    assert names == expected_names, codecs
    if codec.startswith("blosc"):
        assert codecs[1]["configuration"]["cname"] == codec.removeprefix("blosc-")
    if level is not None:
        key = "clevel" if codec.startswith("blosc") else "level"
        assert codecs[1]["configuration"][key] == level


@pytest.mark.parametrize("via", ["stdin", "file"])
@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("rows", [1, 4, 13, 16])
def test_unbounded_dim0(tessera, tmp_path, rng, rows, sharded, via):
    """--shape 0,... : the final extent along dimension 0 is however many rows the input held."""
    data = random_data(rng, "int32", (rows, 5, 6))
    chunk, shard_chunks = (4, 5, 3), ((2, 1, 2) if sharded else None)
    store = tmp_path / "out.zarr"
    tessera.write(store, data, chunk, shard_chunks=shard_chunks, codec="zstd", unbounded=True,
                  input_file=tmp_path / "in.raw" if via == "file" else None)
    assert load_zarr_json(store)["shape"] == [rows, 5, 6]
    check_peers_read(store, data, chunk=chunk, shard=shard_of(chunk, shard_chunks))


def test_unbounded_rank1(tessera, tmp_path, rng):
    data = random_data(rng, "float64", (37,))
    store = tmp_path / "out.zarr"
    tessera.write(store, data, (8,), shard_chunks=(2,), codec="gzip", unbounded=True)
    check_peers_read(store, data, chunk=(8,), shard=(16,))


FILL_CASES = {
    # id: (dtype, CLI --fill-value text, expected Python value)
    "int16-neg3": ("int16", "-3", -3),
    "uint8-255": ("uint8", "255", 255),
    "int64-big": ("int64", str(2**40 + 1), 2**40 + 1),
    "float32-1.5": ("float32", "1.5", 1.5),
    "float64-NaN": ("float64", "NaN", float("nan")),
    "float32-Infinity": ("float32", "-Infinity", float("-inf")),
    "bool-true": ("bool", "true", True),
}


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("case", list(FILL_CASES))
def test_fill_value(tessera, tmp_path, rng, case, sharded):
    dtype, text, value = FILL_CASES[case]
    data = random_data(rng, dtype, (9, 8))
    # Whole chunks equal to the fill value: a writer may skip them; readers must still see them.
    data[:4, :4] = value
    chunk, shard_chunks = (4, 4), ((1, 2) if sharded else None)
    store = tmp_path / "out.zarr"
    tessera.write(store, data, chunk, shard_chunks=shard_chunks, codec="zstd", fill_value=text)
    check_peers_read(store, data, fill_value=value, chunk=chunk, shard=shard_of(chunk, shard_chunks))


SHAPE_CASES = {
    # id: (shape, chunk, shard chunks or None)
    "rank1": ((100,), (7,), None),
    "rank1-sharded": ((100,), (7,), (3,)),
    "rank4": ((3, 5, 2, 7), (2, 2, 2, 3), None),
    "rank4-sharded": ((3, 5, 2, 7), (2, 2, 1, 3), (1, 2, 2, 2)),
    "rank5-sharded": ((3, 4, 2, 5, 3), (1, 2, 1, 2, 3), (2, 2, 2, 2, 1)),
    "one-element-dims": ((1, 17, 1), (1, 5, 1), (1, 2, 1)),
    "chunk-larger-than-array": ((3, 4), (8, 8), None),
    "shard-larger-than-array": ((3, 4), (2, 2), (4, 4)),
    "not-divisible": ((17, 23), (5, 7), None),
    "not-divisible-sharded": ((17, 23), (5, 7), (2, 2)),
}


@pytest.mark.parametrize("case", list(SHAPE_CASES))
def test_shapes(tessera, tmp_path, rng, case):
    shape, chunk, shard_chunks = SHAPE_CASES[case]
    data = random_data(rng, "float32", shape)
    store = tmp_path / "out.zarr"
    tessera.write(store, data, chunk, shard_chunks=shard_chunks, codec="blosc-lz4")
    check_peers_read(store, data, chunk=chunk, shard=shard_of(chunk, shard_chunks))


@pytest.mark.parametrize("threads", [1, 3])
def test_thread_counts_give_identical_stores(tessera, tmp_path, rng, threads):
    """The store's contents do not depend on how many threads wrote it."""
    data = random_data(rng, "uint16", (40, 9, 10))
    reference, store = tmp_path / "ref.zarr", tmp_path / "out.zarr"
    tessera.write(reference, data, (4, 3, 5), shard_chunks=(2, 3, 2), codec="zstd", threads=1)
    tessera.write(store, data, (4, 3, 5), shard_chunks=(2, 3, 2), codec="zstd", threads=threads)
    check_peers_read(store, data)
    files = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert files(store) == files(reference)


def test_overwrites_existing_store_in_place_or_refuses(tessera, tmp_path, rng):
    """Streaming twice into the same directory never leaves a mix of old and new data."""
    first = random_data(rng, "int16", (12, 8))
    second = random_data(rng, "int16", (6, 8))
    store = tmp_path / "out.zarr"
    tessera.write(store, first, (4, 4), shard_chunks=(1, 2), codec="zstd")
    proc = tessera.run(["stream", store, "--format", "zarr3", "--dtype", "int16", "--shape", "6,8",
                        "--chunk", "4,4", "--shard-chunks", "1,2", "--codec", "zstd"], second.tobytes())
    if proc.returncode != 0:
        assert proc.stderr.decode().startswith("tessera: error:")
        check_peers_read(store, first)
    else:
        check_peers_read(store, second)


# ---------------------------------------------------------------------------------------------
# tessera info --json


def check_info(info: dict, store) -> None:
    meta = load_zarr_json(store)
    assert info["format"] == "zarr3"
    assert info["dtype"] == meta["data_type"]
    assert info["shape"] == meta["shape"]
    assert info["codecs"] == meta["codecs"]
    assert info["fill_value"] == meta["fill_value"]
    grid = meta["chunk_grid"]["configuration"]["chunk_shape"]
    if meta["codecs"][0]["name"] == "sharding_indexed":
        assert info["shard_shape"] == grid
        assert info["chunk_shape"] == meta["codecs"][0]["configuration"]["chunk_shape"]
    else:
        assert info["shard_shape"] is None
        assert info["chunk_shape"] == grid


@pytest.mark.parametrize("fill", [None, "7"])
@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
def test_info_of_tessera_store(tessera, tmp_path, rng, sharded, fill):
    data = random_data(rng, "int32", (10, 7))
    store = tmp_path / "out.zarr"
    tessera.write(store, data, (4, 3), shard_chunks=(2, 2) if sharded else None, codec="zstd", fill_value=fill)
    info = tessera.info(store)
    check_info(info, store)
    assert info["dtype"] == "int32"
    assert info["shape"] == [10, 7]
    assert info["chunk_shape"] == [4, 3]
    assert info["shard_shape"] == ([8, 6] if sharded else None)
    assert info["fill_value"] == (7 if fill else 0)


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("writer", WRITERS)
def test_info_of_peer_store(tessera, tmp_path, rng, writer, sharded):
    data = random_data(rng, "float32", (10, 7))
    ZSTD = {"name": "zstd", "configuration": {"level": 2, "checksum": False}}
    codecs = codec_chain(inner_chunks=(2, 3) if sharded else None, compressors=[ZSTD])
    store = tmp_path / "peer.zarr"
    write_peer(writer, store, data, grid=(4, 6), codecs=codecs, fill_value=float("nan"))
    info = tessera.info(store)
    check_info(info, store)
    assert info["fill_value"] == "NaN"
    assert info["chunk_shape"] == ([2, 3] if sharded else [4, 6])


def test_info_without_json_flag_is_text(tessera, tmp_path, rng):
    data = random_data(rng, "uint8", (5, 5))
    store = tmp_path / "out.zarr"
    tessera.write(store, data, (2, 2), codec="none")
    out = tessera.run_ok(["info", store]).stdout.decode()
    assert "uint8" in out and "5" in out



def test_explicit_stdin_dash(tessera, tmp_path, rng):
    data = random_data(rng, "int16", (6, 5))
    store = tmp_path / "out.zarr"
    tessera.run_ok(["stream", store, "--format", "zarr3", "--dtype", "int16", "--shape", "6,5", "--chunk", "4,4",
                    "--input", "-"], data.tobytes())
    check_peers_read(store, data)


@pytest.mark.parametrize("expr", ["...", "::-1", "3:-5:2, 7:, ::-3", "-1::-7"])
def test_read_larger_than_one_output_piece(tessera, tmp_path, rng, expr):
    """Selections over the CLI's 32 MiB output piece are cut at chunk rows and written in order."""
    data = rng.integers(0, 256, size=(2600, 128, 130), dtype=np.uint8)  # 43 MB
    store = tmp_path / "big.zarr"
    tessera.write(store, data, (7, 64, 64), shard_chunks=(3, 1, 2), codec="blosc-lz4")
    sel = tuple(slice(None) for _ in range(3)) if expr == "..." else eval(f"np.s_[{expr}]")
    expected = data[sel]
    got = tessera.read(store, None if expr == "..." else expr, "uint8", expected.shape)
    assert np.array_equal(got, expected)
