"""Errors: each tessera.Error class, and what its message names."""

from __future__ import annotations

import numpy as np
import pytest

import tessera
from conftest import random_array, write_array
from device_support import nvidia_gpu_present


@pytest.fixture
def stream(tmp_path):
    w = tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 4, 6), chunks=(2, 4, 6))
    yield w
    w.abort()


def test_append_wrong_dtype_is_a_type_error_naming_both(stream):
    with pytest.raises(TypeError) as e:
        stream.append(np.zeros((4, 6), np.float32))
    assert "uint16" in str(e.value) and "float32" in str(e.value)
    with pytest.raises(TypeError, match="uint16.*>u2"):
        stream.append(np.zeros((4, 6), ">u2"))  # right width, wrong byte order: no conversion either
    with pytest.raises(TypeError, match="buffer format 'B'"):
        stream.append(bytes(48))
    assert stream.stats.bytes_in == 0


def test_append_non_contiguous_is_refused(stream):
    a = np.zeros((4, 12), np.uint16)[:, ::2]
    with pytest.raises(tessera.InvalidArgumentError, match="C-contiguous") as e:
        stream.append(a)
    assert isinstance(e.value, ValueError)
    with pytest.raises(tessera.InvalidArgumentError, match="C-contiguous"):
        stream.append(np.zeros((6, 4), np.uint16).T)  # Fortran order: no silent copy either


def test_append_wrong_shape(stream):
    with pytest.raises(tessera.InvalidArgumentError) as e:
        stream.append(np.zeros((4, 5), np.uint16))
    assert "(n, 4, 6) (frames), (k, 6) with k <= 4" in str(e.value) and "(4, 5)" in str(e.value)
    with pytest.raises(ValueError, match=r"\(k,\) with k <= 6; got an array of shape \(2, 6, 4\)"):
        stream.append(np.zeros((2, 6, 4), np.uint16))
    with pytest.raises(ValueError, match=r"\(k,\) with k <= 6; got an array of shape \(24,\)"):
        stream.append(np.zeros(24, np.uint16))  # more than a row of 6
    # the stream is still usable after a refused append
    stream.append(np.zeros((4, 6), np.uint16))


def test_append_objects_without_a_buffer(stream):
    with pytest.raises(TypeError, match="buffer protocol"):
        stream.append([[0] * 6] * 4)  # a list would need a conversion


def test_out_of_range_index(tmp_path):
    write_array(tmp_path / "a.zarr", np.zeros((10, 3), np.uint8), chunks=(4, 3))
    a = tessera.open(tmp_path / "a.zarr")
    with pytest.raises(tessera.OutOfRangeError, match="index 10 is out of bounds for axis 0 with size 10") as e:
        a[10]
    assert isinstance(e.value, IndexError)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 1 with size 3"):
        a[0, -4]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        a[..., 0, ...]
    with pytest.raises(IndexError, match="basic indexing"):
        a[[0, 1]]
    with pytest.raises(IndexError, match="basic indexing"):
        a[True]
    with pytest.raises(IndexError, match="basic indexing"):
        a[1.5]
    with pytest.raises(tessera.InvalidArgumentError, match="step cannot be zero"):
        a[::0]
    with pytest.raises(tessera.OutOfRangeError, match="index 12 is out of range for dimension 0 of extent 10"):
        a.read("12, :")


def test_read_out_checks(tmp_path):
    write_array(tmp_path / "a.zarr", np.zeros((10, 3), np.uint8), chunks=(4, 3))
    a = tessera.open(tmp_path / "a.zarr")
    with pytest.raises(TypeError, match="uint8.*int8"):
        a.read(out=np.empty((10, 3), np.int8))
    with pytest.raises(tessera.InvalidArgumentError, match=r"\(10, 4\).*\(10, 3\)"):
        a.read(out=np.empty((10, 4), np.uint8))
    with pytest.raises(tessera.InvalidArgumentError, match="C-contiguous"):
        a.read(out=np.empty((10, 6), np.uint8)[:, ::2])
    ro = np.empty((10, 3), np.uint8)
    ro.flags.writeable = False
    with pytest.raises(tessera.InvalidArgumentError, match="read-only"):
        a.read(out=ro)
    with pytest.raises(tessera.InvalidArgumentError, match="read-only"):
        a.read(out=bytes(30))


def test_missing_location_is_not_found(tmp_path):
    missing = tmp_path / "nothing.zarr"
    with pytest.raises(tessera.NotFoundError) as e:
        tessera.open(missing)
    assert isinstance(e.value, FileNotFoundError)
    assert "nothing.zarr" in str(e.value)


def test_missing_hdf5_dataset_is_not_found(tmp_path):
    write_array(tmp_path / "a.h5", np.zeros((2, 2), np.uint8), chunks=(1, 2), dataset="/x")
    with pytest.raises(tessera.NotFoundError, match="/nope"):
        tessera.open(tmp_path / "a.h5", dataset="/nope")


def test_corrupt_shard_names_the_key(tmp_path, rng):
    data = random_array(rng, "uint16", (8, 8, 8))
    write_array(tmp_path / "a.zarr", data, chunks=(4, 4, 4), shard_chunks=(2, 2, 2))
    shard = tmp_path / "a.zarr" / "c" / "0" / "0" / "0"
    raw = bytearray(shard.read_bytes())
    raw[-10] ^= 0xFF  # inside the shard index (at the end), whose crc32c now fails
    shard.write_bytes(bytes(raw))
    a = tessera.open(tmp_path / "a.zarr")
    with pytest.raises(tessera.CorruptDataError) as e:
        a[...]
    assert "c/0/0/0" in str(e.value)
    assert "bytes [" in str(e.value)


def test_corrupt_chunk_data(tmp_path, rng):
    data = random_array(rng, "uint16", (8, 8))
    write_array(tmp_path / "a.zarr", data, chunks=(4, 8), codec="zstd")
    chunk = tmp_path / "a.zarr" / "c" / "1" / "0"
    chunk.write_bytes(b"\x00" * 7)
    a = tessera.open(tmp_path / "a.zarr")
    np.testing.assert_array_equal(a[:4], data[:4])  # the intact chunk still reads
    with pytest.raises(tessera.CorruptDataError, match="c/1/0"):
        a[4:]


def test_unsupported_option_for_the_format(tmp_path):
    with pytest.raises(tessera.UnsupportedError, match="^level") as e:
        tessera.create(tmp_path / "vol", format="precomputed", dtype="uint8", shape=(8, 8, 8), chunks=(4, 4, 4),
                       level=3)
    assert "precomputed" in str(e.value)
    with pytest.raises(tessera.UnsupportedError, match="^dataset: an option of hdf5"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), dataset="/x")
    with pytest.raises(tessera.UnsupportedError, match="^index_location"):
        tessera.create(tmp_path / "a.h5", dtype="uint8", shape=(0, 8), index_location="start")
    with pytest.raises(tessera.UnsupportedError, match="^resolution"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), resolution=(1, 1, 1))
    with pytest.raises(tessera.UnsupportedError, match="^dtype"):
        tessera.create(tmp_path / "a.zarr", dtype="U4", shape=(0, 8))
    assert not any(tmp_path.iterdir())


def test_spec_errors_name_the_python_argument(tmp_path):
    with pytest.raises(tessera.InvalidArgumentError, match="^chunks:") as e:
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8, 8), chunks=(4, 4))
    assert "chunk_shape" not in str(e.value)
    with pytest.raises(tessera.InvalidArgumentError, match="^shard_chunks:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8, 8), chunks=(4, 4, 4), shard_chunks=(2, 2))
    with pytest.raises(tessera.InvalidArgumentError, match="^dimension_names:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), dimension_names=["t"])
    with pytest.raises(tessera.InvalidArgumentError, match="^shape:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, -8))
    with pytest.raises(tessera.Error, match="^fill_value:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), fill_value=300)
    with pytest.raises(tessera.UnsupportedError, match='^codec: "lzma"'):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), codec="lzma")
    with pytest.raises(tessera.UnsupportedError, match='^format: "n5"'):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), format="n5")
    with pytest.raises(tessera.InvalidArgumentError, match="^level:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), codec="zstd", level=99)
    with pytest.raises(tessera.InvalidArgumentError, match="^backend:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), backend="tpu")
    with pytest.raises(tessera.InvalidArgumentError, match="^index_location:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), index_location="middle")
    with pytest.raises(tessera.InvalidArgumentError, match="^attributes:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), attributes={"x": float("nan")})
    with pytest.raises(TypeError, match="^shape:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape="0,8")
    with pytest.raises(TypeError, match="^attributes:"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 8), attributes=[1])
    assert not (tmp_path / "a.zarr" / "zarr.json").exists()


def test_open_options_for_the_wrong_format(tmp_path):
    write_array(tmp_path / "a.zarr", np.zeros((2, 2), np.uint8), chunks=(1, 2))
    with pytest.raises(tessera.InvalidArgumentError, match="^dataset: applies to HDF5"):
        tessera.open(tmp_path / "a.zarr", dataset="/x")
    with pytest.raises(tessera.InvalidArgumentError, match="^scale: applies to precomputed"):
        tessera.open(tmp_path / "a.zarr", scale=1)
    with pytest.raises(tessera.UnsupportedError, match='^format: "n5"'):
        tessera.open(tmp_path / "a.zarr", format="n5")


def test_cuda_backend_runs_on_the_gpu_or_is_a_clear_error_without_one(tmp_path):
    """Without a GPU (found without asking tessera): an unsupported error naming the backend and nothing
    written, never a silent fall back to the CPU. With one: the stream runs on it (its plan is the GPU
    plan) and stores the values exactly."""
    options = dict(dtype="uint16", shape=(0, 64, 64), chunks=(4, 32, 32), backend="cuda", codec="zstd")
    if not nvidia_gpu_present():
        with pytest.raises(tessera.UnsupportedError, match="^backend: cuda: "):
            tessera.create(tmp_path / "a.zarr", **options)
        assert not (tmp_path / "a.zarr" / "zarr.json").exists()
        return
    data = (np.arange(8 * 64 * 64, dtype=np.uint32) % 1021).astype(np.uint16).reshape(8, 64, 64)
    with tessera.create(tmp_path / "a.zarr", **options) as w:
        assert "GPU plan" in w.plan, f"backend='cuda' does not run on the GPU: {w.plan}"
        w.append(data)
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)
