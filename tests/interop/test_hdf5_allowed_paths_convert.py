"""`hdf5_allowed_paths` reaches the HDF5 source that tessera.convert, tessera.dask.from_store and
tessera.dask.convert open: a virtual dataset whose source file lies outside its own directory tree
is refused without it and read with it (tessera.open's own checks are test_hdf5_virtual_external.py's).
"""

from __future__ import annotations

import h5py
import numpy as np
import pytest

import tessera
import tessera.dask


@pytest.fixture
def vds_out_of_tree(tmp_path):
    """(the VDS file, the directory it reaches out to, the values it reads)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    data = np.arange(40, dtype="int32").reshape(8, 5) * 3
    with h5py.File(outside / "source.h5", "w") as f:
        f["d"] = data
    inside = tmp_path / "inside"
    inside.mkdir()
    with h5py.File(inside / "vds.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=data.shape, dtype="int32")
        layout[:] = h5py.VirtualSource("../outside/source.h5", "d", shape=data.shape)
        f.create_virtual_dataset("v", layout, fillvalue=0)
    return inside / "vds.h5", outside, data


def test_convert_passes_hdf5_allowed_paths(tmp_path, vds_out_of_tree):
    path, outside, data = vds_out_of_tree
    with pytest.raises(tessera.FailedPreconditionError, match="hdf5_allowed_paths"):
        tessera.convert(path, tmp_path / "refused.zarr", dataset="/v")
    tessera.convert(path, tmp_path / "out.zarr", dataset="/v", hdf5_allowed_paths=[outside])
    assert np.array_equal(tessera.open(tmp_path / "out.zarr")[...], data)
    with pytest.raises(TypeError, match="hdf5_allowed_paths"):
        tessera.convert(data, tmp_path / "array_like.zarr", hdf5_allowed_paths=[outside])


def test_dask_passes_hdf5_allowed_paths(tmp_path, vds_out_of_tree):
    path, outside, data = vds_out_of_tree
    with pytest.raises(tessera.FailedPreconditionError, match="hdf5_allowed_paths"):
        tessera.dask.from_store(path, dataset="/v")
    darr = tessera.dask.from_store(path, dataset="/v", chunks=(3, 5), hdf5_allowed_paths=[outside])
    assert np.array_equal(darr.compute(scheduler="threads"), data)
    with pytest.raises(tessera.FailedPreconditionError, match="hdf5_allowed_paths"):
        tessera.dask.convert(path, tmp_path / "refused.zarr", dataset="/v")
    tessera.dask.convert(path, tmp_path / "out.zarr", dataset="/v", hdf5_allowed_paths=[str(outside)])
    assert np.array_equal(tessera.open(tmp_path / "out.zarr")[...], data)
    with pytest.raises(TypeError, match="expected a list"):
        tessera.dask.from_store(path, dataset="/v", hdf5_allowed_paths=str(outside))
