"""Classes of valid HDF5 files other writers produce that tessera must read (issue 15): netCDF-4
variables (filters fletcher32, shuffle, deflate in that order), every order of those filters,
chunked datasets never written to under every layout-4 chunk index (h5py libver='latest'), and
third-party filters named by what the file stores. Values compared exactly with h5py / netCDF4."""

from __future__ import annotations

import itertools

import h5py
import numpy as np
import pytest

import tessera


def test_netcdf4_variables_with_checksums_read_exactly(tmp_path, rng):
    import netCDF4

    path = tmp_path / "run.nc"
    data = (rng.normal(size=(7, 33, 41)) * 100).astype("float32")
    counts = rng.integers(0, 60000, size=(7, 33, 41)).astype("uint16")
    with netCDF4.Dataset(path, "w") as nc:
        for name, n in zip(("t", "y", "x"), data.shape):
            nc.createDimension(name, n if name != "t" else None)
        v = nc.createVariable("temperature", "f4", ("t", "y", "x"), zlib=True, shuffle=True, fletcher32=True,
                              complevel=4, chunksizes=(2, 16, 16))
        v[:] = data
        w = nc.createVariable("counts", "u2", ("t", "y", "x"), zlib=True, shuffle=False, fletcher32=True,
                              chunksizes=(3, 33, 41), fill_value=65535)
        w[:] = counts
    with h5py.File(path) as f:  # the order netCDF-C writes: fletcher32, shuffle, deflate
        assert f["temperature"]._filters is not None
    np.testing.assert_array_equal(tessera.open(path, dataset="/temperature")[...], data)
    np.testing.assert_array_equal(tessera.open(path, dataset="counts")[2:, ::3, 5], counts[2:, ::3, 5])


@pytest.mark.parametrize("order", list(itertools.permutations(["fletcher32", "shuffle", "deflate"])),
                         ids=lambda o: "-".join(o))
def test_every_filter_order_reads_exactly(tmp_path, rng, order):
    data = rng.integers(0, 1000, size=(19, 23), dtype="int32")
    path = tmp_path / "order.h5"
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((5, 7))
        for name in order:
            {"fletcher32": dcpl.set_fletcher32, "shuffle": dcpl.set_shuffle,
             "deflate": lambda: dcpl.set_deflate(5)}[name]()
        space = h5py.h5s.create_simple(data.shape)
        ds = h5py.h5d.create(f.id, b"x", h5py.h5t.STD_I32LE, space, dcpl=dcpl)
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
    np.testing.assert_array_equal(tessera.open(path)[...], data)


@pytest.mark.parametrize("maxshape,index", [((40, 30), "fixed array"), ((None, 30), "extensible array"),
                                            ((None, None), "v2 B-tree"), ((40, 30), "single chunk")])
def test_never_written_datasets_read_as_their_fill_value(tmp_path, maxshape, index):
    path = tmp_path / "empty.h5"
    chunks = (40, 30) if index == "single chunk" else (8, 7)
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("e", shape=(40, 30), dtype="int16", chunks=chunks, maxshape=maxshape, fillvalue=-7)
    expected = h5py.File(path)["e"][...]
    assert (expected == -7).all()
    a = tessera.open(path)
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[3:9, ::4], expected[3:9, ::4])


def test_third_party_filters_are_named(tmp_path):
    """A filter tessera does not read (bzip2; lzf and the other hdf5plugin filters it reads:
    test_hdf5_filters.py) is refused by name and id."""
    import hdf5plugin
    path = tmp_path / "bzip2.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("z", data=np.zeros((10, 100), dtype="int32") + 3, chunks=(5, 50), **hdf5plugin.BZip2())
    with pytest.raises(tessera.UnsupportedError, match=r'bzip2.*\(id 307\)'):
        tessera.open(path)[...]


def test_huge_never_written_datasets_read_small_slices_or_name_the_limit(tmp_path):
    path = tmp_path / "huge.h5"
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("big", shape=(2**40, 2**20), dtype="float64", chunks=(64, 1024), fillvalue=1.5,
                         maxshape=(None, 2**20))  # 2^63 bytes, never written
        f.create_dataset("beyond", shape=(2**40, 2**30), dtype="uint8", chunks=(64, 1024), fillvalue=3)
    with h5py.File(path) as f:
        expected = f["big"][5:7, 10:13]
    a = tessera.open(path, dataset="big")
    assert a.shape == (2**40, 2**20) and a.nbytes == 2**63
    np.testing.assert_array_equal(a[5:7, 10:13], expected)
    np.testing.assert_array_equal(a[-2:, -1], h5py.File(path)["big"][-2:, -1])
    with pytest.raises(tessera.UnsupportedError, match=r"more than 2\^62 elements, tessera's limit"):
        tessera.open(path, dataset="beyond")
