"""Arrays written from Python read exactly in zarr-python, tensorstore and h5py."""

from __future__ import annotations

import numpy as np
import pytest

import tessera
from conftest import random_array, write_array


@pytest.mark.parametrize("kw", [
    dict(chunks=(4, 8, 8), shard_chunks=(2, 2, 1), codec="zstd", level=1),
    dict(chunks=(4, 8, 8), shard_chunks=(1, 2, 2), codec="blosc-lz4", index_location="start"),
    dict(chunks=(3, 5, 8), codec="gzip"),
    dict(chunks=(3, 5, 8), codec="none", fill_value=17),
], ids=["sharded-zstd", "sharded-blosc-start", "gzip", "none"])
def test_zarr_python_and_tensorstore_read_python_written_zarr(tmp_path, rng, kw):
    import tensorstore as ts
    import zarr

    data = random_array(rng, "uint16", (13, 17, 16))
    write_array(tmp_path / "a.zarr", data, shape=(0, 17, 16), dimension_names=["t", "y", "x"],
                attributes={"note": "from python"}, **kw)
    z = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")
    assert z.shape == data.shape
    np.testing.assert_array_equal(z[...], data)
    assert dict(z.attrs) == {"note": "from python"}
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "a.zarr")}}).result()
    np.testing.assert_array_equal(t.read().result(), data)


def test_h5py_reads_python_written_hdf5(tmp_path, rng):
    import h5py

    data = random_array(rng, "float32", (9, 10, 11))
    write_array(tmp_path / "a.h5", data, shape=(0, 10, 11), chunks=(2, 5, 11), codec="gzip", level=4, shuffle=True,
                fletcher32=True, dataset="/scan/frames", attributes={"exposure": 2.5, "name": "run 1", "n": 3})
    with h5py.File(tmp_path / "a.h5", "r") as f:
        d = f["/scan/frames"]
        assert d.shape == data.shape and d.chunks == (2, 5, 11) and d.maxshape[0] is None
        assert d.compression == "gzip" and d.shuffle and d.fletcher32
        np.testing.assert_array_equal(d[...], data)
        assert d.attrs["exposure"] == 2.5 and d.attrs["n"] == 3
        name = d.attrs["name"]
        assert (name.decode() if isinstance(name, bytes) else name) == "run 1"


@pytest.mark.parametrize("sharded", [False, True])
def test_tensorstore_reads_python_written_precomputed(tmp_path, rng, sharded):
    import tensorstore as ts

    data = random_array(rng, "uint32", (2, 12, 10, 9))  # c, z, y, x
    kw = dict(shard_chunks=(1, 2, 2, 2)) if sharded else {}
    write_array(tmp_path / "vol", data, format="precomputed", chunks=(2, 4, 4, 4), resolution=(8, 8, 30), **kw)
    t = ts.open({"driver": "neuroglancer_precomputed",
                 "kvstore": {"driver": "file", "path": str(tmp_path / "vol")}}).result()
    # tensorstore's order is x, y, z, channel: the transpose of tessera's C order
    np.testing.assert_array_equal(t.read().result(), data.transpose(3, 2, 1, 0))


def test_tessera_reads_peer_written_arrays(tmp_path, rng):
    import h5py
    import zarr

    data = random_array(rng, "int16", (10, 12, 14))
    z = zarr.create_array(str(tmp_path / "z.zarr"), shape=data.shape, chunks=(5, 6, 7), shards=(10, 12, 14),
                          dtype="int16")
    z[...] = data
    with h5py.File(tmp_path / "h.h5", "w") as f:
        f.create_dataset("d", data=data, chunks=(3, 4, 5), compression="gzip")
    for loc in (tmp_path / "z.zarr", tmp_path / "h.h5"):
        a = tessera.open(loc)
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[3, ::-2, 1:9:3], data[3, ::-2, 1:9:3])
