"""Zarr arrays of numpy data types tessera has no DataType for, written by zarr-python, read by tessera.

datetime64 / timedelta64 (v3 `numpy.datetime64` / `numpy.timedelta64` with a unit and scale factor,
v2 `<M8[ns]`, `>m8[10s]`) read read-only as numpy arrays of that dtype, NaT included; fixed-size
bytes and strings (v3 `null_terminated_bytes`, `fixed_length_utf32`, `raw_bytes`; v2 `|S5`, `<U7`,
`>U7`, `|V8`) as numpy's `S`, `U` and `V`. Every case is a random shape, chunking, codec chain
(sharded too, either `bytes` endian, v2 either byte order), fill value and selection, with about
half the chunks never written; the values are compared exactly with zarr-python's read of the same
array (times as their int64 counts, so NaT equals NaT).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tessera

from interop_support import random_slice

zarr = pytest.importorskip("zarr")

pytestmark = [
    # zarr-python warns, on every array of these data types it creates or reads, that they have no
    # Zarr v3 specification yet: these tests are about exactly those types.
    pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
    # zarr-python compares the records it writes with the fill value, and random records hold NaNs.
    pytest.mark.filterwarnings("ignore:invalid value encountered in equal:RuntimeWarning"),
]

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


def write_array(path, rng, zarr_format: int, dtype: np.dtype, shape, chunks, values=random_values, fill=random_fill,
                shards_allowed=True, endians=("little", "big")):
    """A zarr-python array at PATH with a random codec chain and about half its chunks written."""
    kwargs = {}
    if zarr_format == 3:
        endian = str(rng.choice(list(endians)))
        kwargs["serializer"] = {"name": "bytes", "configuration": {"endian": endian}}
        kwargs["compressors"] = [None, {"name": "zstd", "configuration": {"level": 1}},
                                 {"name": "gzip", "configuration": {"level": 1}}][int(rng.integers(0, 3))]
        if shards_allowed and rng.random() < 0.35:
            kwargs["shards"] = tuple(c * int(rng.integers(1, 3)) for c in chunks)
    else:
        if rng.random() < 0.5:
            dtype = dtype.newbyteorder(">")
        kwargs["compressors"] = [None, {"id": "zstd", "level": 1}, {"id": "blosc", "cname": "lz4", "shuffle": 1}][
            int(rng.integers(0, 3))]
    z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, zarr_format=zarr_format,
                          fill_value=fill(rng, np.dtype(dtype)), **kwargs)
    step = z.shards or z.chunks
    grid = [range(0, n, c) for n, c in zip(shape, step)]
    for origin in np.ndindex(*[len(g) for g in grid]):
        if rng.random() < 0.5:
            continue
        region = tuple(slice(g[i], min(g[i] + c, n)) for g, i, c, n in zip(grid, origin, step, shape))
        z[region] = values(rng, np.dtype(dtype), tuple(s.stop - s.start for s in region))
    return z


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_time_dtypes_match_zarr_python(tmp_path, zarr_format):
    rng = np.random.default_rng(3000 + zarr_format)
    for k in range(36):
        dtype = np.dtype(TIME_DTYPES[k % len(TIME_DTYPES)])
        shape, chunks = random_geometry(rng)
        path = tmp_path / f"a{k}.zarr"
        z = write_array(path, rng, zarr_format, dtype, shape, chunks)
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


def test_time_dtype_nat_fill_spelled_as_text(tmp_path):
    """zarr.json's fill_value "NaT" (the text form) reads as NaT, like the integer form."""
    zarr.create_array(str(tmp_path / "t.zarr"), shape=(4,), chunks=(2,), dtype="m8[us]", fill_value=0)
    doc_path = tmp_path / "t.zarr" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc["fill_value"] = "NaT"
    doc_path.write_text(json.dumps(doc))
    a = tessera.open(tmp_path / "t.zarr")
    assert a.dtype == np.dtype("<m8[us]")
    assert np.isnat(a.fill_value) and np.isnat(a.read()).all()


BYTES_DTYPES = ["S1", "S5", "S12", "U1", "U7", "U3", "V1", "V8", "V5"]
ALPHABET = np.array(list("ab\u00e9\u4e2d\U0001f600 z0"))


def random_bytes_values(rng: np.random.Generator, dtype: np.dtype, shape) -> np.ndarray:
    """Any bytes for S and V (trailing zeros, which S drops, included); any characters for U."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "U":
        lengths = rng.integers(0, dtype.itemsize // 4 + 1, size=n)
        text = ["".join(rng.choice(ALPHABET, size=k)) for k in lengths]
        return np.array(text, dtype=dtype).reshape(shape)
    raw = rng.integers(0, 256, size=n * dtype.itemsize, dtype=np.uint8)
    raw[rng.random(raw.size) < 0.2] = 0
    return raw.view(dtype).reshape(shape)


def random_bytes_fill(rng: np.random.Generator, dtype: np.dtype):
    r = rng.random()
    if r < 0.4:
        return None
    return random_bytes_values(rng, dtype, ())[()]


def uniform_fill(fill, dtype: np.dtype) -> bool:
    """Whether a fill repeats one code unit (zarr.json's empty string, zeros): sharded arrays need it."""
    raw = np.array(fill, dtype=dtype).tobytes()
    unit = 4 if dtype.kind == "U" else 1
    return raw == raw[:unit] * (len(raw) // unit)


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_bytes_and_string_dtypes_match_zarr_python(tmp_path, zarr_format):
    rng = np.random.default_rng(4000 + zarr_format)
    for k in range(36):
        dtype = np.dtype(BYTES_DTYPES[k % len(BYTES_DTYPES)])
        shape, chunks = random_geometry(rng)
        path = tmp_path / f"b{k}.zarr"
        fill = random_bytes_fill(rng, dtype)
        # zarr-python 3.1.6 cannot read a sharded raw_bytes array (its shard spec hashes a void scalar)
        shards = dtype.kind != "V" and (fill is None or uniform_fill(fill, dtype))
        z = write_array(path, rng, zarr_format, dtype, shape, chunks, values=random_bytes_values,
                        fill=lambda _rng, _dtype: fill, shards_allowed=shards)
        expected = z[...]
        expected_fill = z.fill_value
        a = tessera.open(path)
        case = f"{path.name} v{zarr_format} {z.dtype} shape {shape} chunks {chunks} fill {fill!r}"
        assert a.dtype == expected.dtype.newbyteorder("<") if dtype.kind == "U" else expected.dtype, case
        whole = a.read()
        assert whole.dtype == a.dtype and whole.shape == expected.shape, case
        assert np.array_equal(whole, expected), case
        if expected_fill is None:  # v2 fill_value null: zeros, as zarr-python fills unwritten chunks
            expected_fill = np.zeros((), dtype=a.dtype)[()]
        # numpy's S and U scalars carry their own length (np.bytes_(b"").dtype is S0): compare as the array's dtype
        assert type(a.fill_value) is type(np.zeros((), dtype=a.dtype)[()]), case
        assert np.array(a.fill_value, dtype=a.dtype).tobytes() == np.array(expected_fill, dtype=a.dtype).tobytes(), case
        for _ in range(4):
            text, index = random_slice(rng, shape)
            got, want = a[index], expected[index]
            if np.ndim(want) == 0:  # a numpy scalar, whose S/U dtype is its own length
                assert type(got) is type(want) and got == want, case + " " + text
            else:
                assert got.dtype == a.dtype and np.array_equal(got, want), case + " " + text


def test_sharded_string_with_a_fill_of_several_characters_is_refused(tmp_path):
    """An inner chunk left out of a shard reads as one repeated code unit inside the reader: a fill
    such as "ab" cannot be said that way, so tessera refuses rather than read wrong values."""
    zarr.create_array(str(tmp_path / "s.zarr"), shape=(8,), chunks=(2,), shards=(4,), dtype="U3", fill_value="ab")
    with pytest.raises(tessera.UnsupportedError, match=r"sharded UTF-32 string\[3\] array with fill_value"):
        tessera.open(tmp_path / "s.zarr")


@pytest.mark.parametrize("dtype, name", [("M8[ms]", r"datetime64\[ms\]"), ("S4", r"bytes\[4\]")],
                         ids=["datetime64", "bytes"])
def test_time_and_bytes_dtypes_refuse_writing(tmp_path, dtype, name):
    zarr.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype=dtype)
    with pytest.raises(tessera.UnsupportedError, match=name + ".*read-only"):
        tessera.open(tmp_path / "a.zarr", mode="r+")


STRUCTURED_DTYPES = [
    [("a", "<i4"), ("b", "<f8")],
    [("x", "u1"), ("name", "S5"), ("t", "<U2"), ("z", "<c8")],
    [("flag", "?"), ("v", "<i2"), ("w", "<f4")],
]
STRUCTURED_V2_ONLY = [[("a", ">i4"), ("b", "<f8"), ("c", ">u2")]]  # byte orders v3's names cannot say


def random_structured_values(rng: np.random.Generator, dtype: np.dtype, shape) -> np.ndarray:
    raw = rng.integers(0, 256, size=int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype=np.uint8)
    values = raw.view(dtype).reshape(shape).copy()
    for name in dtype.names:  # text fields hold valid characters; bool fields 0 or 1
        kind = dtype.fields[name][0].kind
        if kind == "U":
            values[name] = random_bytes_values(rng, dtype.fields[name][0], shape)
        elif kind == "b":
            values[name] = rng.random(shape) < 0.5
    return values


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_structured_dtypes_match_zarr_python(tmp_path, zarr_format):
    rng = np.random.default_rng(5000 + zarr_format)
    kinds = STRUCTURED_DTYPES + (STRUCTURED_V2_ONLY if zarr_format == 2 else [])
    for k in range(24):
        dtype = np.dtype(kinds[k % len(kinds)])
        shape, chunks = random_geometry(rng)
        path = tmp_path / f"s{k}.zarr"
        # zarr-python 3.1.6 needs an explicit structured fill, and cannot read a sharded structured
        # array (its shard spec hashes a void scalar): unsharded only
        fill = np.zeros((), dtype=dtype)[()] if rng.random() < 0.5 else random_structured_values(rng, dtype, ())[()]
        z = write_array(path, rng, zarr_format, dtype, shape, chunks, values=random_structured_values,
                        fill=lambda _rng, _dtype: fill, shards_allowed=False, endians=["little"])
        expected = z[...]
        expected_fill = z.fill_value
        a = tessera.open(path)
        case = f"{path.name} v{zarr_format} {z.dtype} shape {shape} chunks {chunks}"
        assert a.dtype == expected.dtype, case
        whole = a.read()
        assert whole.dtype == expected.dtype and whole.tobytes() == expected.tobytes(), case
        assert np.array(a.fill_value).tobytes() == np.array(expected_fill, dtype=a.dtype).tobytes(), case
        for _ in range(4):
            text, index = random_slice(rng, shape)
            got, want = np.asarray(a[index]), np.asarray(expected[index])
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), case + " " + text


def test_structured_with_a_big_endian_bytes_codec_is_refused(tmp_path):
    """v3 structured fields follow the bytes codec's endian; tessera takes the records as stored, so
    it reads only "little" and refuses "big" rather than read swapped values."""
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4],
           "data_type": {"name": "structured", "configuration": {"fields": [["a", "int32"]]}},
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "AAAAAA==",
           "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}
    (tmp_path / "s.zarr").mkdir()
    (tmp_path / "s.zarr" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(tessera.UnsupportedError, match=r"structured \{a: <i4\} array with a big-endian bytes codec"):
        tessera.open(tmp_path / "s.zarr")
