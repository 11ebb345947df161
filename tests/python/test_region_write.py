"""Region writes (``tessera.open(..., mode="r+")``): ``a[key] = value``, transactions and resize.

Each random test keeps a numpy model of the array, applies every write to the model with numpy's
own ``model[key] = value``, and compares the whole array with it after each write; at the end
zarr-python and tensorstore read the array back exactly. The arrays are made by tessera, by
zarr-python and by tensorstore, sharded and unsharded, with several codecs.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tessera
from conftest import random_array, write_array

DTYPES = ["uint8", "int16", "uint32", "int64", "float32", "float64"]


# ---------------------------------------------------------------- random writes

def random_key(rng, shape):
    """A random numpy basic index for SHAPE: ints (some negative), slices with any step (some
    negative, some empty), Ellipsis, and fewer entries than dimensions."""
    items = []
    for n in shape:
        kind = rng.integers(4)
        if kind == 0:
            items.append(int(rng.integers(-n, n)))
        elif kind == 1:
            items.append(slice(None))
        else:
            step = int(rng.choice([1, 1, 2, 3, -1, -2]))
            a, b = sorted(int(x) for x in rng.integers(-n - 2, n + 2, size=2))
            items.append(slice(a, b, step) if step > 0 else slice(b, a, step))
    if rng.random() < 0.2 and len(items) > 1:
        k = int(rng.integers(len(items)))
        items = items[:k] + [Ellipsis] + items[k + 1:]
    elif rng.random() < 0.2:
        items = items[:int(rng.integers(1, len(items) + 1))]  # trailing dimensions whole
    return tuple(items) if len(items) != 1 or rng.random() < 0.5 else items[0]


def random_value(rng, dtype, target_shape):
    """A value numpy's setitem (and tessera's) takes for a selection of TARGET_SHAPE: a Python or
    numpy scalar, a full array, a broadcastable one (length-1 or missing leading dimensions), a
    smaller dtype of the same kind, a big-endian array, or a negatively strided view."""
    dtype = np.dtype(dtype)
    kind = rng.integers(7)
    if kind == 0:  # a Python scalar
        v = random_array(rng, dtype, ())[()]
        return int(v) if dtype.kind in "iu" else float(v)
    if kind == 1:  # a numpy scalar
        return random_array(rng, dtype, ())[()]
    shape = list(target_shape)
    if kind == 2:  # broadcast: some dimensions of length 1, some leading ones missing
        shape = [1 if rng.random() < 0.5 else n for n in shape]
        shape = shape[int(rng.integers(len(shape) + 1)):]
    values = random_array(rng, dtype, shape)
    if kind == 3 and dtype.kind in "iu" and dtype.itemsize > 1:  # a smaller integer of the same kind
        small = np.dtype(f"{dtype.kind}{dtype.itemsize // 2}")
        values = random_array(rng, small, shape)
    if kind == 4:
        values = values.astype(values.dtype.newbyteorder(">"))
    if kind == 5 and values.ndim:  # a view read backwards along every dimension
        values = np.ascontiguousarray(values)[(slice(None, None, -1),) * values.ndim]
    if kind == 6 and values.ndim >= 2:  # a transposed (Fortran-order) view
        values = np.asfortranarray(values)
    return values


def write_and_check(rng, a, model, transactions=True, steps=14):
    """Random writes (some batched in transactions, some of those aborted) into A and MODEL,
    comparing the whole array with the model after each."""
    for _ in range(steps):
        if transactions and rng.random() < 0.25:
            batch = []
            for _ in range(int(rng.integers(1, 5))):
                key = random_key(rng, model.shape)
                batch.append((key, random_value(rng, model.dtype, model[key].shape)))
            abort = rng.random() < 0.3
            try:
                with a.transaction() as t:
                    for key, value in batch:
                        t[key] = value
                    np.testing.assert_array_equal(a[...], model)  # nothing stored before commit
                    if abort:
                        raise KeyboardInterrupt
            except KeyboardInterrupt:
                pass
            if not abort:
                for key, value in batch:
                    model[key] = value
        else:
            key = random_key(rng, model.shape)
            value = random_value(rng, model.dtype, model[key].shape)
            a[key] = value
            model[key] = value
        np.testing.assert_array_equal(a[...], model)


def check_peers_read(path, model):
    import tensorstore as ts
    import zarr

    np.testing.assert_array_equal(zarr.open_array(str(path), mode="r")[...], model)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()
    np.testing.assert_array_equal(t.read().result(), model)


# ---------------------------------------------------------------- arrays made by tessera and its peers

CASES = [  # (dtype, shape, chunks, shard_chunks, codec)
    ("uint8", (13, 17), (4, 5), None, "zstd"),
    ("int16", (13, 17), (4, 5), (2, 2), "gzip"),
    ("uint32", (6, 7, 9), (2, 3, 4), (2, 1, 2), "blosc-lz4"),
    ("int64", (6, 7, 9), (3, 3, 3), None, "none"),
    ("float32", (20, 11), (4, 4), (3, 2), "zstd"),
    ("float64", (9, 10), (5, 5), (2, 2), "blosc-zstd"),
]


@pytest.mark.parametrize("dtype,shape,chunks,shard_chunks,codec", CASES)
def test_random_writes_to_tessera_array(tmp_path, rng, dtype, shape, chunks, shard_chunks, codec):
    model = random_array(rng, dtype, shape)
    write_array(tmp_path / "a.zarr", model, chunks=chunks, shard_chunks=shard_chunks, codec=codec)
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    assert a.mode == "r+" and a.writable
    write_and_check(rng, a, model)
    check_peers_read(tmp_path / "a.zarr", model)


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("dtype", ["uint16", "float64"])
def test_random_writes_to_zarr_python_array(tmp_path, rng, dtype, sharded):
    import zarr

    model = random_array(rng, dtype, (12, 15))
    # Half the chunks left unwritten: they read as the fill value until a write stores them.
    model[6:] = 0
    z = zarr.create_array(str(tmp_path / "z.zarr"), shape=model.shape, dtype=dtype, chunks=(3, 5),
                          shards=(6, 10) if sharded else None, compressors=zarr.codecs.ZstdCodec(level=3))
    z[:6] = model[:6]
    a = tessera.open(tmp_path / "z.zarr", mode="r+")
    write_and_check(rng, a, model)
    check_peers_read(tmp_path / "z.zarr", model)


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_random_writes_to_tensorstore_array(tmp_path, rng, dtype, sharded):
    import tensorstore as ts

    model = random_array(rng, dtype, (10, 14))
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 5}}]
    if sharded:
        codecs = [{"name": "sharding_indexed",
                   "configuration": {"chunk_shape": [3, 4], "codecs": inner,
                                     "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                      {"name": "crc32c"}]}}]
        chunk_shape = [6, 8]
    else:
        codecs, chunk_shape = inner, [3, 4]
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "t.zarr")},
                 "metadata": {"shape": list(model.shape), "data_type": dtype, "codecs": codecs,
                              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}}}},
                create=True).result()
    t.write(model).result()
    a = tessera.open(tmp_path / "t.zarr", mode="r+")
    write_and_check(rng, a, model)
    check_peers_read(tmp_path / "t.zarr", model)


@pytest.mark.parametrize("sharded", [False, True])
def test_random_writes_to_precomputed_volume(tmp_path, rng, sharded):
    import tensorstore as ts

    model = random_array(rng, "uint32", (12, 10, 9))  # z, y, x (one channel)
    kw = dict(shard_chunks=(2, 2, 2)) if sharded else {}
    write_array(tmp_path / "vol", model, format="precomputed", chunks=(4, 4, 4), resolution=(8, 8, 30), **kw)
    a = tessera.open(tmp_path / "vol", mode="r+")
    write_and_check(rng, a, model, steps=10)
    t = ts.open({"driver": "neuroglancer_precomputed",
                 "kvstore": {"driver": "file", "path": str(tmp_path / "vol")}}).result()
    # tensorstore's order is x, y, z, channel: the transpose of tessera's C order
    np.testing.assert_array_equal(t.read().result(), model.transpose(2, 1, 0)[..., None])


# ---------------------------------------------------------------- what is written, exactly

def test_scalars_broadcasting_and_casts_follow_numpy(tmp_path):
    model = np.zeros((4, 6), np.uint16)
    write_array(tmp_path / "a.zarr", model, chunks=(2, 3), shard_chunks=(2, 2))
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    for key, value in [((0, slice(None)), 7),                       # a Python int
                       ((slice(1, 3), slice(None, None, -2)), [1, 2, 3]),  # a list, broadcast over rows
                       ((Ellipsis, 5), np.arange(4, dtype=np.uint8)),  # a smaller dtype of the same kind
                       ((3,), np.arange(6, dtype=">u2")),            # big-endian
                       ((None, 2, slice(0, 2)), [[9, 8]]),           # a new axis, as numpy takes it
                       ((slice(None), slice(1, 2)), np.array([[5]], np.uint16))]:
        a[key] = value
        model[key] = value
        np.testing.assert_array_equal(a[...], model)


def test_reads_through_the_array_see_each_write(tmp_path, rng):
    # A read first: the array's reader caches the shard indexes, which the write changes.
    model = random_array(rng, "uint16", (8, 8))
    write_array(tmp_path / "a.zarr", model, chunks=(2, 2), shard_chunks=(2, 2))
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    for k in range(8):
        assert a[k, k] == model[k, k]
        a[k, k] = 1000 + k
        model[k, k] = 1000 + k
        assert a[k, k] == 1000 + k
    np.testing.assert_array_equal(a[...], model)
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], model)


def test_resize_shrinks_clears_and_grows(tmp_path, rng):
    model = random_array(rng, "int32", (10, 12))
    write_array(tmp_path / "a.zarr", model, chunks=(3, 4), shard_chunks=(2, 2))
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    a.resize((5, 7))
    assert a.shape == (5, 7) and a.metadata["shape"] == [5, 7]
    np.testing.assert_array_equal(a[...], model[:5, :7])
    a.resize((11, 12))
    grown = np.zeros((11, 12), np.int32)
    grown[:5, :7] = model[:5, :7]  # what was cut off reads as the fill value, not the old data
    np.testing.assert_array_equal(a[...], grown)
    a[9:, ::3] = -1
    grown[9:, ::3] = -1
    np.testing.assert_array_equal(a[...], grown)
    check_peers_read(tmp_path / "a.zarr", grown)
    with pytest.raises(tessera.InvalidArgumentError, match="rank"):
        a.resize((4,))


def test_transaction_commits_on_clean_exit_and_aborts_on_exception(tmp_path):
    model = np.zeros((6, 6), np.float32)
    write_array(tmp_path / "a.zarr", model, chunks=(3, 3), shard_chunks=(2, 2))
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    with pytest.raises(RuntimeError, match="boom"):
        with a.transaction() as t:
            t[0] = 1.5
            raise RuntimeError("boom")
    np.testing.assert_array_equal(a[...], model)  # aborted: nothing stored
    with pytest.raises(tessera.FailedPreconditionError, match="aborted"):
        t[1] = 2

    values = np.arange(6, dtype=np.float32)
    with a.transaction() as t:
        t[1] = values
        t[1:3, 0] = -1  # a later write wins where two overlap
        values[:] = 99  # the transaction copied the values
        assert t.pending == 2
        np.testing.assert_array_equal(a[...], model)  # reads see committed data only
    model[1] = np.arange(6)
    model[1:3, 0] = -1
    np.testing.assert_array_equal(a[...], model)
    with pytest.raises(tessera.FailedPreconditionError, match="committed"):
        t.commit()

    t = a.transaction()
    t[5, 5] = 3
    t.commit()
    model[5, 5] = 3
    t.abort()  # closed already: nothing happens
    np.testing.assert_array_equal(a[...], model)


# ---------------------------------------------------------------- errors

@pytest.fixture
def small(tmp_path):
    write_array(tmp_path / "a.zarr", np.arange(20, dtype=np.uint16).reshape(4, 5), chunks=(2, 2))
    return tmp_path / "a.zarr"


def test_writing_a_read_only_array_is_an_error(small):
    a = tessera.open(small)
    assert a.mode == "r" and not a.writable
    for call in (lambda: a.__setitem__(0, 1), lambda: a.resize((2, 2)), a.transaction):
        with pytest.raises(tessera.FailedPreconditionError, match=r"read-only \(mode r\).*mode r\+"):
            call()
    np.testing.assert_array_equal(a[...], np.arange(20).reshape(4, 5))


def test_value_that_does_not_broadcast_names_both_shapes(small):
    a = tessera.open(small, mode="r+")
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(3,\) into shape \(2, 5\)"):
        a[0:2] = np.ones(3, np.uint16)
    with pytest.raises(ValueError, match=r"from shape \(2, 2, 5\) into shape \(2, 5\)"):
        a[0:2] = np.ones((2, 2, 5), np.uint16)


def test_index_out_of_range_is_an_index_error(small):
    a = tessera.open(small, mode="r+")
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        a[4] = 1
    with pytest.raises(IndexError, match="axis 1"):
        a[0, -6] = 1
    with pytest.raises(IndexError):
        a[[0, 1]] = 1  # advanced indexing is not basic indexing


def test_unsafe_cast_is_a_type_error_naming_both_dtypes(small):
    a = tessera.open(small, mode="r+")
    with pytest.raises(TypeError, match=r"float64.*uint16"):
        a[0] = np.ones(5)
    with pytest.raises(TypeError, match=r"int64.*uint16"):
        a[0] = np.arange(5)  # signed into unsigned: not the same kind
    with pytest.raises(TypeError, match=r"float.*uint16"):
        a[0] = 1.5
    with pytest.raises(OverflowError):
        a[0] = 70000  # a Python int out of the dtype's range, as numpy refuses it
    np.testing.assert_array_equal(a[...], np.arange(20).reshape(4, 5))


def test_hdf5_cannot_be_opened_for_writing(tmp_path):
    import h5py

    with h5py.File(tmp_path / "h.h5", "w") as f:
        f.create_dataset("d", data=np.arange(10))
    with pytest.raises(tessera.UnsupportedError, match="hdf5"):
        tessera.open(tmp_path / "h.h5", mode="r+")


def test_create_modes_and_unknown_modes_are_refused(small):
    for mode in ("a", "w", "w-"):
        with pytest.raises(tessera.InvalidArgumentError, match="r\\+"):
            tessera.open(small, mode=mode)
    with pytest.raises(tessera.InvalidArgumentError, match="expected one of"):
        tessera.open(small, mode="rw")


# ---------------------------------------------------------------- threads

def test_threads_writing_disjoint_elements_of_the_same_shards_keep_every_update(tmp_path):
    shape = (8, 12)
    write_array(tmp_path / "a.zarr", np.zeros(shape, np.int32), chunks=(2, 3), shard_chunks=(4, 4))
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    n_threads = 6
    errors = []

    def writer(k):
        try:
            # Thread k writes the elements whose flat index is k mod n_threads: every shard is
            # written by every thread, element by element.
            for flat in range(k, shape[0] * shape[1], n_threads):
                a[divmod(flat, shape[1])] = flat + 1
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = np.arange(1, shape[0] * shape[1] + 1, dtype=np.int32).reshape(shape)
    np.testing.assert_array_equal(a[...], expected)
    check_peers_read(tmp_path / "a.zarr", expected)


def test_threads_committing_transactions_while_another_reads(tmp_path):
    shape = (6, 10)
    write_array(tmp_path / "a.zarr", np.zeros(shape, np.uint16), chunks=(3, 5), shard_chunks=(2, 2))
    a = tessera.open(tmp_path / "a.zarr", mode="r+")
    n_threads, done, errors = 4, threading.Event(), []

    def writer(k):
        try:
            # Thread k owns columns k, k + 4, ...: one transaction per row, all in the one shard.
            for r in range(shape[0]):
                with a.transaction() as t:
                    for c in range(k, shape[1], n_threads):
                        t[r, c] = 100 * r + c + 1
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    def reader():
        try:
            while not done.is_set():
                v = a[...]
                # A transaction commits a row's elements of one thread together (one shard).
                for r in range(shape[0]):
                    for k in range(n_threads):
                        row = v[r, k::n_threads]
                        assert (row == 0).all() or (row == 100 * r + np.arange(k, shape[1], n_threads) + 1).all()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(n_threads)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watcher.join()
    assert not errors
    expected = 100 * np.arange(shape[0])[:, None] + np.arange(shape[1])[None, :] + 1
    np.testing.assert_array_equal(a[...], expected.astype(np.uint16))


def test_precomputed_resize_and_its_limit(tmp_path):
    import tensorstore as ts

    model = np.arange(12 * 10 * 9, dtype=np.uint16).reshape(12, 10, 9)
    write_array(tmp_path / "vol", model, format="precomputed", chunks=(4, 4, 4), resolution=(8, 8, 30))
    a = tessera.open(tmp_path / "vol", mode="r+")
    a.resize((7, 10, 5))
    assert a.shape == (7, 10, 5)
    np.testing.assert_array_equal(a[...], model[:7, :, :5])
    a.resize((12, 10, 9))
    grown = np.zeros_like(model)
    grown[:7, :, :5] = model[:7, :, :5]
    np.testing.assert_array_equal(a[...], grown)
    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(tmp_path / "vol")}})
    np.testing.assert_array_equal(t.result().read().result(), grown.transpose(2, 1, 0)[..., None])

    # A sharded volume's shard layout depends on its size: only resizes that keep it are possible.
    write_array(tmp_path / "sharded", model, format="precomputed", chunks=(4, 4, 4), shard_chunks=(2, 2, 2),
                resolution=(8, 8, 30))
    b = tessera.open(tmp_path / "sharded", mode="r+")
    with pytest.raises(tessera.UnsupportedError, match="shard"):
        b.resize((3, 3, 3))
    np.testing.assert_array_equal(b[...], model)


@pytest.mark.parametrize("compress", [None, "gzip"])
def test_random_writes_to_cloud_volume_precomputed(tmp_path, rng, compress):
    from cloudvolume import CloudVolume

    info = CloudVolume.create_new_info(num_channels=1, layer_type="image", data_type="uint16", encoding="raw",
                                       resolution=[8, 8, 30], voxel_offset=[0, 0, 0], chunk_size=[4, 4, 4],
                                       volume_size=[9, 10, 12])
    url = f"file://{tmp_path / 'vol'}"
    cv = CloudVolume(url, info=info, progress=False, compress=compress)
    cv.commit_info()
    xyzc = random_array(rng, "uint16", (9, 10, 12, 1))
    cv[:, :, :] = xyzc
    model = np.ascontiguousarray(xyzc[..., 0].transpose(2, 1, 0))  # tessera's order: z, y, x
    a = tessera.open(tmp_path / "vol", mode="r+")
    np.testing.assert_array_equal(a[...], model)
    write_and_check(rng, a, model, steps=10)
    back = CloudVolume(url, progress=False, fill_missing=True)[:, :, :]
    np.testing.assert_array_equal(back[..., 0], model.transpose(2, 1, 0))


def test_levels_of_an_array_opened_for_writing_are_writable(tmp_path, rng):
    data = random_array(rng, "uint8", (8, 16, 16))
    write_array(tmp_path / "img.zarr", data, chunks=(2, 8, 8), pyramid=2)
    assert not any(level.writable for level in tessera.open(tmp_path / "img.zarr").levels)
    levels = tessera.open(tmp_path / "img.zarr", mode="r+").levels
    assert [level.mode for level in levels] == ["r+", "r+"]
    low = np.asarray(levels[1])
    levels[1][0, ::2] = 200
    low[0, ::2] = 200
    np.testing.assert_array_equal(tessera.open(tmp_path / "img.zarr", level=1)[...], low)
    np.testing.assert_array_equal(tessera.open(tmp_path / "img.zarr")[...], data)  # level 0 unchanged


@pytest.mark.parametrize("fmt", ["zarr3", "precomputed"])
def test_create_array_gives_an_empty_writable_array(tmp_path, rng, fmt):
    import zarr

    path = tmp_path / ("a.zarr" if fmt == "zarr3" else "vol")
    a = tessera.create_array(path, dtype="uint16", shape=(9, 14, 11), chunks=(4, 4, 4), format=fmt,
                             **({"shard_chunks": (2, 2, 2), "fill_value": 3} if fmt == "zarr3" else {}))
    assert a.mode == "r+" and a.writable and a.shape == (9, 14, 11)
    model = np.full(a.shape, 3 if fmt == "zarr3" else 0, dtype=np.uint16)
    np.testing.assert_array_equal(a[...], model)
    block = rng.integers(0, 60000, size=(5, 7, 6), dtype=np.uint16)
    a[2:7, 1:14:2, ::-2] = block
    model[2:7, 1:14:2, ::-2] = block
    np.testing.assert_array_equal(a[...], model)
    np.testing.assert_array_equal(tessera.open(path)[...], model)
    if fmt == "zarr3":
        np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], model)
    # An existing array is refused (and left as it is) unless mode="w" replaces it.
    with pytest.raises(FileExistsError, match="exists"):
        tessera.create_array(path, dtype="uint16", shape=(2, 2, 2), chunks=(2, 2, 2), format=fmt)
    np.testing.assert_array_equal(tessera.open(path)[...], model)
    b = tessera.create_array(path, dtype="uint8", shape=(2, 3, 4), chunks=(2, 2, 2), format=fmt, mode="w")
    np.testing.assert_array_equal(b[...], np.zeros((2, 3, 4), np.uint8))


def test_create_array_refuses_hdf5(tmp_path):
    with pytest.raises(tessera.UnsupportedError, match="hdf5"):
        tessera.create_array(tmp_path / "a.h5", dtype="uint16", shape=(4, 4))
    assert not (tmp_path / "a.h5").exists()
