"""Zarr v3 `bfloat16` arrays written by tensorstore, read by tessera.

tessera reads them read-only, as numpy arrays of `ml_dtypes.bfloat16` (what tensorstore's Python
returns). Every check compares bits (`.view(np.uint16)`) with tensorstore's own read: the data are
random 16-bit patterns, NaNs of every payload and infinities included, and some chunks are never
written, so they read as the fill value (given as a number, "NaN", "Infinity", "-Infinity" or hex).
"""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import tessera

from interop_support import assert_cli_error, random_slice

ts = pytest.importorskip("tensorstore")
ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def bytes_codec(endian: str = "little") -> dict:
    return {"name": "bytes", "configuration": {"endian": endian}}


def random_bits(rng: np.random.Generator, shape) -> np.ndarray:
    """Any 16-bit pattern: normal and subnormal values, zeros of both signs, infinities, NaNs."""
    return rng.integers(0, 2**16, size=shape, dtype=np.uint16).view(BF16)


def write_random_chunks(store, rng, shape, chunks) -> None:
    """Random bits into about half the chunks of STORE, of SHAPE in CHUNKS (the rest read as the fill)."""
    grid = [range(0, n, c) for n, c in zip(shape, chunks)]
    for origin in np.ndindex(*[len(g) for g in grid]):
        if rng.random() < 0.5:
            continue
        region = tuple(slice(g[i], min(g[i] + c, n)) for g, i, c, n in zip(grid, origin, chunks, shape))
        store[region] = random_bits(rng, tuple(s.stop - s.start for s in region))


def write_with_tensorstore(path, rng, shape, chunks, fill_value, codecs) -> "ts.TensorStore":
    """A bfloat16 array at PATH with about half its chunks written (the rest read as the fill)."""
    store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
                     "metadata": {"shape": list(shape), "data_type": "bfloat16", "fill_value": fill_value,
                                  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                                  "codecs": codecs}},
                    create=True).result()
    write_random_chunks(store, rng, shape, chunks)
    return store


def random_geometry(rng: np.random.Generator):
    rank = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 14)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, n + 2)) for n in shape)
    return shape, chunks


def check_selections(rng, array, expected: np.ndarray, count: int = 25) -> None:
    assert array.dtype == BF16
    whole = array[...]
    assert whole.dtype == BF16 and whole.shape == expected.shape
    np.testing.assert_array_equal(whole.view(np.uint16), expected.view(np.uint16))
    for _ in range(count):
        text, index = random_slice(rng, expected.shape)
        want = expected[index]
        got = array[index]
        assert np.asarray(got).dtype == BF16, text
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16), err_msg=text)


FILLS = [0, 1.5, -0.0078125, "NaN", "Infinity", "-Infinity", "0x7fc1", "0x0001"]


@pytest.mark.parametrize("fill", FILLS, ids=[str(f) for f in FILLS])
def test_random_arrays_and_selections(tmp_path, rng, fill):
    for k in range(3):
        shape, chunks = random_geometry(rng)
        codecs = [bytes_codec(str(rng.choice(["little", "big"])))] + ([ZSTD] if rng.random() < 0.5 else [])
        store = write_with_tensorstore(tmp_path / f"a{k}.zarr", rng, shape, chunks, fill, codecs)
        expected = store[...].read().result()
        a = tessera.open(tmp_path / f"a{k}.zarr")
        check_selections(rng, a, expected)
        fill_bits = np.asarray(store.fill_value).view(np.uint16)
        assert np.asarray(a.fill_value).view(np.uint16) == fill_bits
        assert a.fill_value.dtype == BF16


def test_sharded(tmp_path, rng):
    inner = [bytes_codec("big"), ZSTD]
    sharding = {"name": "sharding_indexed",
                "configuration": {"chunk_shape": [3, 2], "codecs": inner,
                                  "index_codecs": [bytes_codec(), {"name": "crc32c"}], "index_location": "end"}}
    store = write_with_tensorstore(tmp_path / "s.zarr", rng, (14, 9), (6, 4), -2.5, [sharding])
    # Leave some inner chunks of written shards empty too.
    store[7:9, 0:2] = np.full((2, 2), -2.5, dtype=BF16)
    expected = store[...].read().result()
    a = tessera.open(tmp_path / "s.zarr")
    assert a.shards == (6, 4) and a.chunks == (3, 2)
    check_selections(rng, a, expected, count=40)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_sharded_over_http(tmp_path, rng):
    # Over a network store a read fetches a shard's inner chunks in coalesced batches.
    sharding = {"name": "sharding_indexed",
                "configuration": {"chunk_shape": [2, 3], "codecs": [bytes_codec("big")],
                                  "index_codecs": [bytes_codec(), {"name": "crc32c"}], "index_location": "start"}}
    store = write_with_tensorstore(tmp_path / "s.zarr", rng, (11, 13), (4, 6), "-Infinity", [sharding])
    expected = store[...].read().result()
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            a = tessera.open(f"http://127.0.0.1:{httpd.server_address[1]}/s.zarr")
            check_selections(rng, a, expected, count=15)
        finally:
            httpd.shutdown()


def test_out_scalars_and_read(tmp_path, rng):
    store = write_with_tensorstore(tmp_path / "a.zarr", rng, (7, 5), (3, 2), "NaN", [bytes_codec()])
    expected = store[...].read().result()
    a = tessera.open(tmp_path / "a.zarr")
    out = np.empty((3, 5), dtype=BF16)
    assert a.read(np.s_[2:5], out=out) is out
    np.testing.assert_array_equal(out.view(np.uint16), expected[2:5].view(np.uint16))
    scalar = a[6, 4]
    assert isinstance(scalar, ml_dtypes.bfloat16)
    assert np.asarray(scalar).view(np.uint16) == expected[6, 4].view(np.uint16)
    with pytest.raises(tessera.Error, match="bfloat16"):
        a.read(np.s_[2:5], out=np.empty((3, 5), dtype=np.uint16))
    np.testing.assert_array_equal(np.asarray(a).view(np.uint16), expected.view(np.uint16))


def test_read_only_and_refused_create(tmp_path, rng):
    write_with_tensorstore(tmp_path / "a.zarr", rng, (4, 4), (2, 2), 0, [bytes_codec()])
    with pytest.raises(tessera.Error, match="bfloat16 arrays are read-only"):
        tessera.open(tmp_path / "a.zarr", mode="r+")
    with pytest.raises(tessera.UnsupportedError, match="bfloat16 arrays are read-only in tessera"):
        tessera.create(tmp_path / "b.zarr", shape=(4,), dtype=BF16)


def test_cli_info_and_read(tessera_read, run_tessera, tmp_path, rng):
    store = write_with_tensorstore(tmp_path / "a.zarr", rng, (9, 6), (4, 4), 0.25, [bytes_codec("big")])
    expected = store[...].read().result()
    info = run_tessera(["info", "--json", tmp_path / "a.zarr"])
    assert info.returncode == 0, info.stderr
    summary = json.loads(info.stdout)
    assert summary["dtype"] == "bfloat16" and summary["fill_value"] == 0.25
    # `tessera read`: the raw little-endian 2-byte patterns.
    got = tessera_read(tmp_path / "a.zarr", "1:8:2, ::-1", "uint16", (4, 6))
    np.testing.assert_array_equal(got, expected[1:8:2, ::-1].view(np.uint16))
    proc = run_tessera(["convert", tmp_path / "a.zarr", tmp_path / "b.zarr"])
    assert_cli_error(proc, "unsupported", "bfloat16")


def test_without_ml_dtypes_names_the_package(tmp_path, rng):
    write_with_tensorstore(tmp_path / "a.zarr", rng, (4,), (2,), 0, [bytes_codec()])
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import tessera\n"
            f"a = tessera.open({str(tmp_path / 'a.zarr')!r})\n"
            "try:\n    a[:]\nexcept ImportError as e:\n    print('ImportError:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "pip install ml-dtypes" in proc.stdout, proc.stdout


def write_v2_with_tensorstore(path, rng, shape, chunks, fill_value, compressor, order="C") -> "ts.TensorStore":
    """A Zarr v2 array of dtype "bfloat16" (tensorstore's name) with about half its chunks written."""
    metadata = {"dtype": "bfloat16", "shape": list(shape), "chunks": list(chunks), "fill_value": fill_value,
                "compressor": compressor, "order": order}
    store = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(path)}, "metadata": metadata},
                    create=True).result()
    write_random_chunks(store, rng, shape, chunks)
    return store


V2_COMPRESSORS = [None, {"id": "zlib", "level": 1},
                  {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0},
                  {"id": "zstd", "level": 1}]
V2_FILLS = [None, 0, 1.5, "NaN", "Infinity", "-Infinity"]


@pytest.mark.parametrize("fill", V2_FILLS, ids=[str(f) for f in V2_FILLS])
def test_zarr_v2_random_arrays_and_selections(tmp_path, rng, fill):
    """tensorstore's Zarr v2 "bfloat16" arrays read bit for bit as tensorstore reads them."""
    for k in range(3):
        shape, chunks = random_geometry(rng)
        compressor = V2_COMPRESSORS[int(rng.integers(len(V2_COMPRESSORS)))]
        order = str(rng.choice(["C", "F"])) if len(shape) > 1 else "C"  # tensorstore stores rank 1 as C
        path = tmp_path / f"v2_{k}.zarr"
        store = write_v2_with_tensorstore(path, rng, shape, chunks, fill, compressor, order)
        assert json.loads((path / ".zarray").read_text())["dtype"] == "bfloat16"
        expected = store[...].read().result()
        a = tessera.open(path)
        check_selections(rng, a, expected)
        if fill is not None:
            assert np.asarray(a.fill_value).view(np.uint16) == np.asarray(store.fill_value).view(np.uint16)


def test_zarr_v2_read_only_and_cli(tmp_path, rng, run_tessera):
    path = tmp_path / "v2.zarr"
    store = write_v2_with_tensorstore(path, rng, (6, 5), (4, 2), 0.5, None)
    expected = store[...].read().result()
    with pytest.raises(tessera.Error, match="read only|read-only"):
        tessera.open(path, mode="r+")
    info = run_tessera(["info", "--json", path])
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["dtype"] == "bfloat16"
    np.testing.assert_array_equal(tessera.open(path)[...].view(np.uint16), expected.view(np.uint16))
