"""Zarr arrays of numpy data types tessera has no DataType for, written by zarr-python, read by tessera.

datetime64 / timedelta64 (v3 `numpy.datetime64` / `numpy.timedelta64` with a unit and scale factor,
v2 `<M8[ns]`, `>m8[10s]`) read read-only as numpy arrays of that dtype, NaT included. Every case is
a random shape, chunking, codec chain (sharded too, either `bytes` endian, v2 either byte order),
fill value and selection, with about half the chunks never written; the values are compared
exactly with zarr-python's read of the same array (as their int64 counts, so NaT equals NaT).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import tessera

from interop_support import random_slice

zarr = pytest.importorskip("zarr")

TIME_DTYPES = ["M8[ns]", "M8[s]", "M8[D]", "M8[10ms]", "M8[us]", "m8[s]", "m8[ns]", "m8[3h]", "m8[Y]"]
NAT_COUNT = np.iinfo(np.int64).min


def exact_counts(values: np.ndarray) -> np.ndarray:
    """The int64 counts behind datetime64/timedelta64 values, native byte order (NaT: the smallest)."""
    return np.asarray(values).astype(values.dtype.newbyteorder("=")).view(np.int64)


def random_values(rng: np.random.Generator, dtype: np.dtype, shape) -> np.ndarray:
    counts = rng.integers(-(2**40), 2**40, size=shape, dtype=np.int64)
    counts[rng.random(shape) < 0.1] = NAT_COUNT
    return counts.view(dtype)


def random_geometry(rng: np.random.Generator):
    rank = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 12)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, n + 2)) for n in shape)
    return shape, chunks


def random_fill(rng: np.random.Generator, dtype: np.dtype):
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.5:
        return np.array(NAT_COUNT).view(dtype)[()]
    return np.array(int(rng.integers(-(10**6), 10**6))).view(dtype)[()]


def write_array(path, rng, zarr_format: int, dtype: np.dtype, shape, chunks):
    """A zarr-python array at PATH with a random codec chain and about half its chunks written."""
    kwargs = {}
    if zarr_format == 3:
        endian = str(rng.choice(["little", "big"]))
        kwargs["serializer"] = {"name": "bytes", "configuration": {"endian": endian}}
        kwargs["compressors"] = [None, {"name": "zstd", "configuration": {"level": 1}},
                                 {"name": "gzip", "configuration": {"level": 1}}][int(rng.integers(0, 3))]
        if rng.random() < 0.35:
            kwargs["shards"] = tuple(c * int(rng.integers(1, 3)) for c in chunks)
    else:
        if rng.random() < 0.5:
            dtype = dtype.newbyteorder(">")
        kwargs["compressors"] = [None, {"id": "zstd", "level": 1}, {"id": "blosc", "cname": "lz4", "shuffle": 1}][
            int(rng.integers(0, 3))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, zarr_format=zarr_format,
                              fill_value=random_fill(rng, np.dtype(dtype)), **kwargs)
        step = z.shards or z.chunks
        grid = [range(0, n, c) for n, c in zip(shape, step)]
        for origin in np.ndindex(*[len(g) for g in grid]):
            if rng.random() < 0.5:
                continue
            region = tuple(slice(g[i], min(g[i] + c, n)) for g, i, c, n in zip(grid, origin, step, shape))
            z[region] = random_values(rng, np.dtype(dtype), tuple(s.stop - s.start for s in region))
        return z


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_time_dtypes_match_zarr_python(tmp_path, zarr_format):
    rng = np.random.default_rng(3000 + zarr_format)
    for k in range(36):
        dtype = np.dtype(TIME_DTYPES[k % len(TIME_DTYPES)])
        shape, chunks = random_geometry(rng)
        path = tmp_path / f"a{k}.zarr"
        z = write_array(path, rng, zarr_format, dtype, shape, chunks)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = z[...]
            expected_fill = z.fill_value
        a = tessera.open(path)
        case = f"{path.name} v{zarr_format} {z.dtype} shape {shape} chunks {chunks}"
        assert a.dtype == expected.dtype.newbyteorder("<"), case
        whole = a.read()
        assert whole.dtype == a.dtype and whole.shape == expected.shape, case
        np.testing.assert_array_equal(exact_counts(whole), exact_counts(expected), err_msg=case)
        assert a.fill_value.dtype == a.dtype, case
        if expected_fill is None:  # v2 fill_value null: zarr-python fills unwritten chunks with NaT
            expected_fill = np.array(NAT_COUNT).view(a.dtype)
        assert exact_counts(np.array(a.fill_value)) == exact_counts(np.array(expected_fill, dtype=a.dtype)), case
        for _ in range(4):
            text, index = random_slice(rng, shape)
            got = np.asarray(a[index])
            assert got.dtype == a.dtype, case + " " + text
            np.testing.assert_array_equal(exact_counts(got), exact_counts(expected[index]), err_msg=case + " " + text)


def test_time_dtype_refuses_writing(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "t.zarr"), shape=(4,), chunks=(2,), dtype="M8[ms]")
    with pytest.raises(tessera.UnsupportedError, match=r"datetime64\[ms\].*read-only"):
        tessera.open(tmp_path / "t.zarr", mode="r+")


def test_time_dtype_nat_fill_spelled_as_text(tmp_path):
    """zarr.json's fill_value "NaT" (the text form) reads as NaT, like the integer form."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "t.zarr"), shape=(4,), chunks=(2,), dtype="m8[us]", fill_value=0)
    doc_path = tmp_path / "t.zarr" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc["fill_value"] = "NaT"
    doc_path.write_text(json.dumps(doc))
    a = tessera.open(tmp_path / "t.zarr")
    assert a.dtype == np.dtype("<m8[us]")
    assert np.isnat(a.fill_value) and np.isnat(a.read()).all()
