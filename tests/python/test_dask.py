"""tessera.dask on a real distributed.LocalCluster with 2 worker processes: the array written
region by region equals, file for file and byte for byte, one stream of the same values; zarr-python
and tensorstore read it; a task killed and rerun leaves it exact; from_store reads any array."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import tessera
import tessera.dask

import dask.array as da
import distributed


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        assert len(c.scheduler_info()["workers"]) == 2
        yield c


@pytest.fixture
def fault_dir(client, tmp_path_factory):
    """A directory that arms the test's fault plugin (dask_faults.py) in every worker, present and
    restarted ones alike; the plugin is removed afterwards."""
    import cloudpickle

    import dask_faults

    cloudpickle.register_pickle_by_value(dask_faults)
    d = tmp_path_factory.mktemp("dask_faults")
    plugin = dask_faults.DieOnceAfterWritingGarbage(str(d))
    client.register_plugin(plugin)
    yield d
    client.unregister_worker_plugin(plugin.name)


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def values(rng, shape, dtype):
    base = np.indices(shape).sum(axis=0) * 3
    return (base % 200 + rng.integers(0, 40, shape)).astype(dtype)


def streamed(path, x, **options):
    with tessera.create(path, dtype=x.dtype, shape=x.shape, **options) as w:
        w.append(x)


CASES = [
    # shape, dask chunks, options
    ((45, 70, 33), (10, 30, 33), dict(chunks=(4, 8, 8), shard_chunks=(2, 2, 2), codec="zstd", pyramid=3)),
    ((37, 29), (37, 5), dict(chunks=(5, 4), shard_chunks=(3, 2), codec="blosc-lz4", level=3)),
    ((20, 37, 50), (7, 7, 7), dict(chunks=(3, 5, 7), codec="gzip", pyramid=4, downsample="max")),
    ((9, 5, 6, 7, 4), (9, 5, 6, 7, 4), dict(chunks=(2, 2, 3, 4, 2), shard_chunks=(2, 1, 1, 1, 2), codec="none",
                                            pyramid=2)),
    ((64, 40, 48), (13, 40, 20), dict(chunks=(8, 8, 8), shard_chunks=(2, 2, 2), codec="zstd", pyramid="auto",
                                     ome=True, axes="z:space,y:space,x:space")),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_regions_give_the_stream_bytes(client, tmp_path, case, dtype):
    shape, dask_chunks, options = CASES[case]
    rng = np.random.default_rng(case)
    x = values(rng, shape, dtype)
    if "pyramid" in options or options.get("ome"):
        options = dict(options, attributes={"run": case})
    # The same name in two folders: an OME-Zarr image is named after its directory, in its zarr.json.
    one_path, many_path = tmp_path / "one" / "a.zarr", tmp_path / "many" / "a.zarr"
    streamed(one_path, x, **options)
    tessera.dask.to_store(da.from_array(x, chunks=dask_chunks), many_path, **options)
    one, many = tree(one_path), tree(many_path)
    assert sorted(one) == sorted(many)
    assert [k for k in one if one[k] != many[k]] == [], "files that differ"
    got = tessera.dask.from_store(many_path).compute()
    np.testing.assert_array_equal(got, x)


def test_random_shapes_against_zarr_python_and_tensorstore(client, tmp_path):
    import tensorstore as ts
    import zarr

    rng = np.random.default_rng(2026)
    for i in range(4):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(n) for n in rng.integers(1, 40, rank))
        chunks = tuple(int(rng.integers(1, n + 3)) for n in shape)
        shards = tuple(int(rng.integers(1, 4)) for _ in shape)
        dask_chunks = tuple(int(rng.integers(1, n + 1)) for n in shape)
        codec = ["none", "zstd", "gzip", "blosc-zstd"][i]
        dtype = ["uint8", "int32", "float64", "uint16"][i]
        x = values(rng, shape, dtype)
        where = tmp_path / f"r{i}.zarr"
        tessera.dask.to_store(da.from_array(x, chunks=dask_chunks), where, chunks=chunks, shard_chunks=shards,
                              codec=codec)
        streamed(tmp_path / f"s{i}.zarr", x, chunks=chunks, shard_chunks=shards, codec=codec)
        assert tree(where) == tree(tmp_path / f"s{i}.zarr"), (shape, chunks, shards, dask_chunks, codec)
        np.testing.assert_array_equal(zarr.open_array(str(where), mode="r")[...], x)
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(where)}}).result()
        np.testing.assert_array_equal(t.read().result(), x)


def test_precomputed_pyramid_against_tensorstore(client, tmp_path):
    import tensorstore as ts

    x = values(np.random.default_rng(5), (2, 40, 48, 56), "uint8")
    options = dict(format="precomputed", chunks=(2, 8, 8, 8), shard_chunks=(1, 2, 2, 2), pyramid=3,
                   resolution=(4, 4, 40))
    streamed(tmp_path / "one", x, **options)
    tessera.dask.to_store(da.from_array(x, chunks=(2, 20, 48, 30)), tmp_path / "many", **options)
    assert tree(tmp_path / "one") == tree(tmp_path / "many")
    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(tmp_path / "many")},
                 "scale_index": 0}).result()
    np.testing.assert_array_equal(np.transpose(t.read().result(), (3, 2, 1, 0)), x)
    level2 = tessera.dask.from_store(tmp_path / "many", level=2).compute()
    np.testing.assert_array_equal(level2, tessera.open(tmp_path / "one", level=2)[...])


def test_a_killed_task_rerun_leaves_the_array_exact(client, fault_dir, tmp_path):
    x = values(np.random.default_rng(9), (48, 40, 40), "uint16")
    options = dict(chunks=(8, 8, 8), shard_chunks=(2, 1, 1), codec="zstd", pyramid=2, ome=True)
    one_path, many_path = tmp_path / "one" / "a.zarr", tmp_path / "many" / "a.zarr"
    streamed(one_path, x, **options)
    (fault_dir / "arm").touch()
    try:
        tessera.dask.to_store(da.from_array(x, chunks=(16, 40, 40)), many_path, **options)
    finally:
        (fault_dir / "arm").unlink()
    assert (fault_dir / "fired").is_dir(), "the fault plugin never ran: nothing was killed"
    # Every file, the group's zarr.json included, and no file more (a stray temporary, a shard the
    # killed task left under another name).
    one, many = tree(one_path), tree(many_path)
    assert sorted(many) == sorted(one), f"keys differ: extra {sorted(set(many) - set(one))}, missing {sorted(set(one) - set(many))}"
    assert [k for k in one if one[k] != many[k]] == [], "files that differ"
    np.testing.assert_array_equal(tessera.open(many_path)[...], x)


def test_failure_leaves_nothing_that_looks_valid(client, tmp_path):
    x = np.zeros((8, 8), dtype="uint8")

    def boom(block):
        raise RuntimeError("input failed")

    bad = da.from_array(x, chunks=(4, 8)).map_blocks(boom, dtype=x.dtype)
    with pytest.raises(RuntimeError, match="input failed"):
        tessera.dask.to_store(bad, tmp_path / "a.zarr", chunks=(2, 2), shard_chunks=(2, 2), pyramid=2)
    assert not list((tmp_path / "a.zarr").rglob("zarr.json"))


def test_refusals(client, tmp_path):
    x = da.zeros((8, 8), dtype="uint8", chunks=4)
    with pytest.raises(tessera.UnsupportedError, match="HDF5 dataset is one file"):
        tessera.dask.to_store(x, tmp_path / "a.h5", chunks=(2, 2))
    with pytest.raises(tessera.UnsupportedError, match="murmurhash3"):
        tessera.dask.to_store(da.zeros((8, 8, 8), dtype="uint8", chunks=4), tmp_path / "p", format="precomputed",
                              chunks=(2, 2, 2), shard_chunks=(2, 2, 2), hash="murmurhash3_x86_128")
    assert not (tmp_path / "p" / "info").exists()


def test_from_store_reads_hdf5_and_s3_style_locations_by_shards(client, tmp_path):
    import h5py

    x = values(np.random.default_rng(3), (30, 20), "int16")
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("d", data=x, chunks=(7, 5))
    y = tessera.dask.from_store(tmp_path / "a.h5")
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(y.compute(), x)
    np.testing.assert_array_equal(y[3:17:2, ::-3].compute(), x[3:17:2, ::-3])
    streamed(tmp_path / "s.zarr", x, chunks=(4, 4), shard_chunks=(2, 5))
    z = tessera.dask.from_store(tmp_path / "s.zarr", chunks=(8, 20))
    assert z.chunks[1] == (20,)
    np.testing.assert_array_equal((z * 2).sum().compute(), (x.astype(np.int64) * 2).sum())
