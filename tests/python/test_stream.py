"""tessera.Stream: append patterns, flush, close/abort and the context manager."""

from __future__ import annotations

import numpy as np
import pytest

import tessera
from conftest import random_array


@pytest.mark.parametrize("pattern", ["one-by-one", "several", "odd-batches", "all-at-once"])
@pytest.mark.parametrize("sharded", [False, True])
def test_append_patterns_unbounded(tmp_path, rng, pattern, sharded):
    frames = 23  # not a multiple of the chunk depth (4) nor of the shard depth (8)
    data = random_array(rng, "uint16", (frames, 12, 10))
    kw = dict(shard_chunks=(2, 2, 2)) if sharded else {}
    with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 12, 10), chunks=(4, 4, 4), threads=2, **kw) as w:
        if pattern == "one-by-one":
            for f in data:
                w.append(f)  # one frame: shape == shape[1:]
        elif pattern == "several":
            for i in range(0, frames, 5):
                w.append(data[i:i + 5])
        elif pattern == "odd-batches":
            i = 0
            for n in [1, 3, 0, 7, 2, 9, 1]:
                w.append(data[i:i + n])
                i += n
            assert i == frames
        else:
            w.append(data)
    assert w.closed
    s = w.stats
    assert s.bytes_in == data.nbytes and s.rows_published == frames and s.shards_written > 0
    assert s.seconds > 0 and s.gbps > 0 and "bytes_in" in repr(s)
    a = tessera.open(tmp_path / "a.zarr")
    assert a.shape == data.shape
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("fmt,name", [("zarr3", "a.zarr"), ("precomputed", "vol"), ("hdf5", "a.h5")])
def test_bounded_stream_one_frame_at_a_time(tmp_path, rng, fmt, name):
    data = random_array(rng, "uint8", (9, 8, 7))
    with tessera.create(tmp_path / name, format=fmt, dtype="uint8", shape=data.shape, chunks=(4, 4, 4)) as w:
        assert w.shape == data.shape
        for f in data:
            w.append(f)
    np.testing.assert_array_equal(tessera.open(tmp_path / name)[...], data)


def test_rank1_stream(tmp_path):
    data = np.arange(100, dtype=np.int64)
    with tessera.create(tmp_path / "a.zarr", dtype="int64", shape=0, chunks=16) as w:
        w.append(data[:7])
        w.append(np.int64(7).reshape(()))  # one row of a 1-D array is a 0-d array
        w.append(data[8:])
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)


@pytest.mark.parametrize("fmt,name", [("zarr3", "a.zarr"), ("hdf5", "a.h5")])
def test_flush_mid_stream_then_read(tmp_path, rng, fmt, name):
    data = random_array(rng, "int16", (13, 6, 5))
    w = tessera.create(tmp_path / name, format=fmt, dtype="int16", shape=(0, 6, 5), chunks=(4, 3, 5))
    w.append(data[:6])
    w.flush()
    if fmt == "zarr3":  # a Zarr array is readable while its stream runs
        assert w.stats.rows_published == 6
        a = tessera.open(tmp_path / name)
        assert a.shape == (6, 6, 5)
        np.testing.assert_array_equal(a[...], data[:6])
    w.append(data[6:])
    w.flush()
    w.flush()
    w.close()
    a = tessera.open(tmp_path / name)
    np.testing.assert_array_equal(a[...], data)


def test_properties_and_plan(tmp_path):
    with tessera.create(tmp_path / "a.zarr", dtype="float32", shape=(0, 64, 64), chunks=(8, 32, 32),
                        shard_chunks=(1, 2, 2), codec="blosc-zstd", level=2) as w:
        assert w.shape == (0, 64, 64)
        assert w.dtype == np.float32 and w.format == "zarr3"
        assert w.chunks == (8, 32, 32) and w.shard_chunks == (1, 2, 2)
        assert isinstance(w.plan, str) and len(w.plan) > 0
        assert not w.closed
        assert "open" in repr(w)
    assert "closed" in repr(w)


def test_exception_in_with_block_keeps_what_was_published_zarr(tmp_path, rng):
    # 50 frames, 41 flushed: the array keeps what it published (what a kill -9 would keep).
    data = random_array(rng, "uint16", (50, 16, 16))
    with pytest.raises(RuntimeError, match="camera unplugged"):
        with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 16, 16), chunks=(4, 8, 8),
                            shard_chunks=(2, 2, 2)) as w:
            w.append(data[:41])
            w.flush()
            assert w.stats.rows_published == 41
            w.append(data[41:])
            raise RuntimeError("camera unplugged")
    assert w.closed
    published = w.stats.rows_published
    assert published in (41, 48), published  # rows 41..47 complete a shard row, maybe stored before the abort
    a = tessera.open(tmp_path / "a.zarr")
    assert a.shape == (published, 16, 16)
    np.testing.assert_array_equal(a[...], data[:published])


def test_exception_in_with_block_aborts_hdf5(tmp_path, rng):
    data = random_array(rng, "uint16", (8, 16, 16))
    with pytest.raises(KeyError, match="x"):
        with tessera.create(tmp_path / "a.h5", dtype="uint16", shape=(0, 16, 16), chunks=(2, 8, 8)) as w:
            w.append(data)
            raise KeyError("x")
    assert list(tmp_path.iterdir()) == []  # no .h5 file, no temporary left over


def test_exception_in_with_block_keeps_what_was_published_precomputed(tmp_path, rng):
    # A precomputed volume has a fixed shape: its info stays, and the published rows read back.
    data = random_array(rng, "uint8", (13, 16, 16))
    with pytest.raises(ValueError, match="stop"):
        with tessera.create(tmp_path / "vol", format="precomputed", dtype="uint8", shape=(13, 16, 16),
                            chunks=(4, 8, 8)) as w:
            w.append(data[:9])
            w.flush()
            w.append(data[9:11])
            raise ValueError("stop")
    published = w.stats.rows_published
    assert published >= 9, published
    a = tessera.open(tmp_path / "vol")
    assert a.shape == (13, 16, 16)
    np.testing.assert_array_equal(a[:published], data[:published])


def test_explicit_abort_and_close_semantics(tmp_path, rng):
    data = random_array(rng, "uint8", (4, 8))
    w = tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), chunks=(2, 8))
    w.append(data)
    w.abort()
    w.abort()  # idempotent
    assert w.closed
    published = w.stats.rows_published  # whole chunk rows are published as they are stored
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data[:published])
    with pytest.raises(tessera.FailedPreconditionError, match="aborted"):
        w.append(data)
    with pytest.raises(tessera.FailedPreconditionError, match="aborted"):
        w.close()

    w = tessera.create(tmp_path / "b.zarr", dtype="uint8", shape=(0, 8), chunks=(2, 8))
    w.append(data)
    w.close()
    w.close()  # idempotent
    w.abort()  # a closed stream is never undone
    np.testing.assert_array_equal(tessera.open(tmp_path / "b.zarr")[...], data)
    with pytest.raises(tessera.FailedPreconditionError, match="closed"):
        w.append(data)
    with pytest.raises(tessera.FailedPreconditionError, match="closed"):
        w.flush()


def test_exception_after_close_inside_with_keeps_the_array(tmp_path, rng):
    data = random_array(rng, "uint8", (4, 8))
    with pytest.raises(RuntimeError, match="after close"):
        with tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), chunks=(2, 8)) as w:
            w.append(data)
            w.close()
            raise RuntimeError("after close")
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)


def test_garbage_collected_stream_is_aborted(tmp_path, rng):
    import gc

    w = tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), chunks=(2, 8))
    data = random_array(rng, "uint8", (7, 8))
    w.append(data[:6])
    w.flush()
    w.append(data[6:])
    del w
    gc.collect()
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data[:6])  # what was published


def test_bounded_stream_short_of_rows_fails_on_close(tmp_path, rng):
    w = tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(10, 8), chunks=(2, 8))
    w.append(random_array(rng, "uint8", (7, 8)))
    with pytest.raises(tessera.InvalidArgumentError, match="stream ended after 56 bytes") as e:
        w.close()
    assert "56 bytes" in str(e.value) and "80" in str(e.value)  # 7 rows of 8 bytes, 10 declared
    assert w.closed
    assert tessera.open(tmp_path / "a.zarr").shape[0] == w.stats.rows_published  # what it published


def test_append_accepts_buffer_protocol_objects(tmp_path):
    raw = bytes(range(256)) * 4  # a bytes object is a 1-D uint8 buffer
    with tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0,), chunks=(100,)) as w:
        w.append(raw)
        w.append(memoryview(bytearray(b"\x01\x02")))
    got = tessera.open(tmp_path / "a.zarr")[...]
    np.testing.assert_array_equal(got, np.frombuffer(raw + b"\x01\x02", np.uint8))


def test_append_accepts_array_interface_objects(tmp_path):
    class Frames:
        def __init__(self, a):
            self.__array_interface__ = a.__array_interface__
            self._a = a

    data = np.arange(24, dtype=np.uint16).reshape(2, 3, 4)
    with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 3, 4), chunks=(1, 3, 4)) as w:
        w.append(Frames(data))
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)


def test_an_error_from_the_library_aborts_the_stream(tmp_path, rng):
    w = tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(4, 8), chunks=(2, 8))
    with pytest.raises(tessera.InvalidArgumentError, match="exceeds the declared shape"):
        w.append(random_array(rng, "uint8", (5, 8)))  # one row too many for a bounded array
    assert w.closed
    with pytest.raises(tessera.FailedPreconditionError, match="aborted"):
        w.close()
    assert tessera.open(tmp_path / "a.zarr").shape == (0, 8)  # published nothing: a valid empty array


def test_a_refused_argument_does_not_fail_the_stream(tmp_path, rng):
    data = random_array(rng, "uint8", (4, 8))
    with tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(4, 8), chunks=(2, 8)) as w:
        with pytest.raises(TypeError, match="dtype is uint8, got int8"):
            w.append(data.astype(np.int8))
        with pytest.raises(ValueError, match="C-contiguous"):
            w.append(data[:, :4])
        assert not w.closed
        w.append(data)
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)
