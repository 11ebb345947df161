"""a[key] and a.read(...) against numpy's own basic indexing of the same data."""

from __future__ import annotations

import numpy as np
import pytest

import tessera
from conftest import random_array, write_array


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """The same 4-D data as a sharded Zarr array, an unsharded one and an HDF5 dataset."""
    rng = np.random.default_rng(1234)
    data = random_array(rng, "int32", (11, 9, 14, 5))
    root = tmp_path_factory.mktemp("indexing")
    write_array(root / "sharded.zarr", data, chunks=(3, 4, 4, 2), shard_chunks=(2, 2, 2, 3))
    write_array(root / "plain.zarr", data, chunks=(4, 3, 5, 5), codec="none")
    write_array(root / "a.h5", data, chunks=(2, 3, 4, 5))
    return data, {name: tessera.open(root / name) for name in ("sharded.zarr", "plain.zarr", "a.h5")}


def random_entry(rng, n):
    kind = rng.integers(0, 4)
    if kind == 0:
        if rng.random() < 0.03:  # out of range: numpy and tessera both raise IndexError
            return int(rng.choice([n, n + 5, -n - 1]))
        return int(rng.integers(-n, n))

    def bound():
        return None if rng.random() < 0.3 else int(rng.integers(-2 * n - 2, 2 * n + 3))
    step = None if rng.random() < 0.3 else int(rng.choice([-7, -3, -2, -1, 1, 2, 3, 5, 100]))
    return slice(bound(), bound(), step)


def random_key(rng, shape):
    rank = len(shape)
    k = int(rng.integers(0, rank + 1))  # entries that consume a dimension
    if rng.random() < 0.4:  # an Ellipsis standing for the dimensions not named
        pos = int(rng.integers(0, k + 1))
        head = [random_entry(rng, shape[d]) for d in range(pos)]
        tail = [random_entry(rng, shape[d]) for d in range(rank - (k - pos), rank)]
        entries = head + [Ellipsis] + tail
    else:
        entries = [random_entry(rng, shape[d]) for d in range(k)]
    for _ in range(int(rng.integers(0, 3))):  # numpy.newaxis anywhere
        entries.insert(int(rng.integers(0, len(entries) + 1)), None)
    if rng.random() < 0.2:
        entries = [np.int64(e) if isinstance(e, int) else e for e in entries]
    return tuple(entries) if (len(entries) != 1 or rng.random() < 0.5) else entries[0]


def check_same(got, expected):
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, np.ndarray):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        assert got.flags.c_contiguous and got.flags.writeable
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["sharded.zarr", "plain.zarr", "a.h5"])
def test_random_selections_match_numpy(stored, name):
    data, arrays = stored
    a = arrays[name]
    rng = np.random.default_rng(len(name))
    for _ in range(300):
        key = random_key(rng, data.shape)
        try:
            expected = data[key]
        except IndexError:
            with pytest.raises(IndexError, match=r"index -?\d+ is out of bounds for axis \d+ with size \d+"):
                a[key]
            continue
        check_same(a[key], expected)


@pytest.mark.parametrize("key", [
    (5, slice(1, -1, 3), slice(None, None, -1)),
    (Ellipsis,), (), 3, -1, (1, 2, 3, 4), (1, 2, 3, 4, Ellipsis), (Ellipsis, 4), (None,), (1, None, 2),
    (slice(None, None, -1), Ellipsis, slice(None, None, -2)), (slice(20, 30),), (slice(5, 2),),
    (slice(-100, 100, 7), None, -3), (np.int32(2), np.uint8(3)), (None, Ellipsis, None),
    (1, 2, 3, 4, None), (slice(None, None, -(2**62)),), (slice(2**70, -(2**70), -1),),
])
def test_selected_cases(stored, key):
    data, arrays = stored
    for a in arrays.values():
        check_same(a[key], data[key])


def test_scalar_results_are_numpy_scalars(stored):
    data, arrays = stored
    a = arrays["sharded.zarr"]
    v = a[1, 2, 3, 4]
    assert isinstance(v, np.int32) and v == data[1, 2, 3, 4]
    v0 = a[1, 2, 3, 4, ...]
    assert isinstance(v0, np.ndarray) and v0.shape == () and v0 == data[1, 2, 3, 4]


def test_read_selection_forms(stored):
    data, arrays = stored
    a = arrays["plain.zarr"]
    np.testing.assert_array_equal(a.read(), data)
    np.testing.assert_array_equal(a.read("5, 1:-1:3, ::-1"), data[5, 1:-1:3, ::-1])
    np.testing.assert_array_equal(a.read((slice(None), 2)), data[:, 2])
    # read() always returns an array, a 0-d one for ints only
    r = a.read((1, 2, 3, 4))
    assert isinstance(r, np.ndarray) and r.shape == () and r == data[1, 2, 3, 4]


def test_read_into_out(stored):
    data, arrays = stored
    a = arrays["sharded.zarr"]
    out = np.empty((11, 3, 14), np.int32)
    assert a.read((slice(None), slice(1, 7, 2), slice(None), -1), out=out) is out
    np.testing.assert_array_equal(out, data[:, 1:7:2, :, -1])
    out0 = np.empty((), np.int32)
    assert a.read((0, 0, 0, 0), out=out0) is out0 and out0 == data[0, 0, 0, 0]
    # any writable C-contiguous buffer of the right type works, e.g. a bytearray viewed as int32
    buf = bytearray(4 * 14 * 5)
    a.read((2, 3), out=memoryview(buf).cast("i", (14, 5)))
    np.testing.assert_array_equal(np.frombuffer(buf, np.int32).reshape(14, 5), data[2, 3])


def test_iteration_and_len(stored):
    data, arrays = stored
    a = arrays["a.h5"]
    assert len(a) == 11
    rows = list(a)
    assert len(rows) == 11
    np.testing.assert_array_equal(np.stack(rows), data)


def test_array_protocol(stored):
    data, arrays = stored
    a = arrays["plain.zarr"]
    np.testing.assert_array_equal(np.asarray(a), data)
    f = np.asarray(a, dtype=np.float64)
    assert f.dtype == np.float64
    np.testing.assert_array_equal(f, data.astype(np.float64))
    assert np.array(a).shape == data.shape
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(a, copy=False)


def test_empty_selections(stored):
    data, arrays = stored
    for a in arrays.values():
        for key in [(slice(3, 3),), (slice(None), slice(5, 1)), (Ellipsis, slice(10, 20)), (slice(0, 0, -1),)]:
            check_same(a[key], data[key])


def test_close_and_context_manager(stored, tmp_path):
    data = np.arange(12, dtype=np.uint8).reshape(3, 4)
    write_array(tmp_path / "a.zarr", data, chunks=(1, 4))
    with tessera.open(tmp_path / "a.zarr") as a:
        np.testing.assert_array_equal(a[...], data)
    with pytest.raises(tessera.FailedPreconditionError, match="closed"):
        a[0]
    a.close()  # idempotent
    assert "closed" in repr(a)
