"""tessera.dask jobs that fail: nothing is left that opens as an array (tessera, zarr-python,
tensorstore), no shard is written after the call returned, the job marker is gone; cleanup()
removes the leftovers and a mode="w" rerun is byte-identical to one process. On the threaded
scheduler, a LocalCluster of processes and a real S3 server (SeaweedFS); and the shared-storage
check (a task that does not see the client's job marker) with workers whose working directory
differs from the client's.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
import tensorstore as ts
import zarr

import tessera
import tessera.dask
from tessera import _tessera

da = pytest.importorskip("dask.array")

from s3_support import prefix_for, tensorstore_s3_kvstore, zarr_s3_store  # noqa: E402

BUCKET = "daskfail"
SHAPE = (96, 64)
LAYOUT = dict(chunks=(8, 8), shard_chunks=(2, 2), codec="zstd", pyramid=3)
BAD_BLOCK = 5  # of 12 blocks of 8 rows: its task fails while others run


def _data() -> np.ndarray:
    return (np.arange(np.prod(SHAPE), dtype=np.uint16).reshape(SHAPE) * 7) % 1009


def _failing_input(data: np.ndarray, bad_block: int = BAD_BLOCK, rows: int = 8):
    """A Dask array of `data` whose block `bad_block` (of `rows`-row blocks) raises after the
    others started; every block takes a moment, so tasks are running when it fails."""
    x = da.from_array(data, chunks=(rows,) + data.shape[1:])

    def block(b, block_info=None):
        time.sleep(0.1)
        if block_info[0]["chunk-location"][0] == bad_block:
            raise RuntimeError("injected failure of block %d" % bad_block)
        return b

    return x.map_blocks(block, dtype=data.dtype)


def _one_process(path: Path, data: np.ndarray) -> None:
    with tessera.create(path, dtype=data.dtype, shape=data.shape, **LAYOUT) as s:
        s.append(data)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root`: size and modification time (ns)."""
    out = {}
    for p in root.rglob("*") if root.exists() else []:
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def _contents(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _assert_nothing_opens_locally(path: Path) -> None:
    for where in [path] + [path / str(level) for level in range(LAYOUT["pyramid"])]:
        with pytest.raises(tessera.Error):
            tessera.open(where)
        with pytest.raises(Exception):
            zarr.open_array(str(where), mode="r")
        with pytest.raises(Exception):
            ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(where) + "/"}}, open=True).result()


def _assert_failed_job_left_no_array(path: Path) -> None:
    """After the failing call returned: nothing opens, no marker, no shard written later."""
    before = _files(path)
    _assert_nothing_opens_locally(path)
    assert ".tessera-job" not in before, "the job marker outlived the failed job"
    time.sleep(2)
    assert _files(path) == before, "shards were written after the failed call returned"


def _run_failing_then_cleanup_then_rerun(tmp_path: Path, write) -> None:
    data = _data()
    expected = tmp_path / "one" / "out.zarr"  # the same name: an OME group records it
    _one_process(expected, data)
    out = tmp_path / "out.zarr"
    with pytest.raises(Exception, match="injected failure"):
        write(_failing_input(data), out)
    _assert_failed_job_left_no_array(out)
    tessera.dask.cleanup(out)
    assert _files(out) == {}, "cleanup left objects"
    # Failed again, then rerun with mode="w" without cleanup: exact, nothing left over.
    with pytest.raises(Exception, match="injected failure"):
        write(_failing_input(data), out)
    write(da.from_array(data, chunks=(16, 32)), out, mode="w")
    assert _contents(out) == _contents(expected)


def test_a_failed_job_on_the_threaded_scheduler_leaves_no_array(tmp_path):
    import dask

    def write(x, out, **kw):
        with dask.config.set(scheduler="threads", num_workers=4):
            tessera.dask.to_store(x, out, **LAYOUT, **kw)

    _run_failing_then_cleanup_then_rerun(tmp_path, write)


def test_a_failed_precomputed_job_leaves_no_info_and_a_rerun_is_exact(tmp_path):
    import dask

    data = _data().reshape(24, 16, 16)
    layout = dict(format="precomputed", chunks=(4, 4, 4), shard_chunks=(2, 2, 2), pyramid=3)
    expected = tmp_path / "one" / "vol"
    with tessera.create(expected, dtype=data.dtype, shape=data.shape, **layout) as s:
        s.append(data)
    out = tmp_path / "vol"
    with dask.config.set(scheduler="threads", num_workers=4):
        with pytest.raises(Exception, match="injected failure"):
            tessera.dask.to_store(_failing_input(data, bad_block=3, rows=4), out, **layout)
        before = _files(out)
        assert "info" not in before and ".tessera-job" not in before, sorted(before)
        with pytest.raises(tessera.Error):
            tessera.open(out)
        with pytest.raises(Exception):
            ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(out) + "/"}},
                    open=True).result()
        time.sleep(2)
        assert _files(out) == before, "shards were written after the failed call returned"
        tessera.dask.cleanup(out, format="precomputed")
        assert _files(out) == {}
        tessera.dask.to_store(da.from_array(data, chunks=(8, 16, 8)), out, mode="w", **layout)
    assert _contents(out) == _contents(expected)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                  silence_logs=40) as c, distributed.Client(c) as client:
        yield client


def test_a_failed_job_on_a_local_cluster_of_processes_leaves_no_array(tmp_path, cluster):
    def write(x, out, **kw):
        tessera.dask.to_store(x, out, retries=1, **LAYOUT, **kw)

    _run_failing_then_cleanup_then_rerun(tmp_path, write)


def test_a_failed_convert_on_a_local_cluster_leaves_no_array(tmp_path, cluster):
    data = _data()
    src = tmp_path / "src.zarr"
    _one_process(src, data)
    # A source whose shard is corrupt: the task reading it fails.
    shard = sorted((src / "0" / "c").rglob("*"))[-1]
    shard.write_bytes(b"\0" * 40)
    out = tmp_path / "out.zarr"
    with pytest.raises(tessera.Error):
        tessera.dask.convert(src / "0", out, chunks=(8, 8), shard_chunks=(2, 2), pyramid=3)
    _assert_failed_job_left_no_array(out)
    tessera.dask.cleanup(out)
    assert not out.exists() or _files(out) == {}


def test_workers_that_do_not_share_the_clients_directory_fail_with_the_shared_storage_error(tmp_path, cluster):
    """The workers run in another working directory: a relative location names another directory
    there, as a path on a worker with its own file system would."""
    elsewhere = tmp_path / "worker_cwd"
    elsewhere.mkdir()
    here = tmp_path / "client_cwd"
    here.mkdir()
    old = [cwd for cwd in cluster.run(os.getcwd).values()][0]
    cluster.run(os.chdir, str(elsewhere))
    cwd = os.getcwd()
    os.chdir(here)
    try:
        with pytest.raises(tessera.FailedPreconditionError, match="not shared with the client"):
            tessera.dask.to_store(da.from_array(_data(), chunks=(32, 64)), "rel.zarr", chunks=(8, 8), retries=0)
    finally:
        os.chdir(cwd)
        cluster.run(os.chdir, old)
    assert not (here / "rel.zarr" / ".tessera-job").exists()
    with pytest.raises(tessera.Error):
        tessera.open(here / "rel.zarr")


def test_the_shared_storage_check_names_the_location_and_the_marker(tmp_path):
    kwargs = {"format": "zarr3", "dtype": np.dtype("uint8"), "shape": (4,)}
    where = str(tmp_path / "a.zarr")
    with pytest.raises(tessera.FailedPreconditionError, match="not shared with the client.*tessera-job"):
        _tessera._shared_check_job(where, kwargs, "token-1")
    (tmp_path / "a.zarr").mkdir()
    (tmp_path / "a.zarr" / ".tessera-job").write_text("token-2")
    with pytest.raises(tessera.FailedPreconditionError, match="job cancelled.*belongs to another job"):
        _tessera._shared_check_job(where, kwargs, "token-1")
    _tessera._shared_check_job(where, kwargs, "token-2")
    # A region write of a job checks it before its first shard, and writes nothing.
    with pytest.raises(tessera.FailedPreconditionError, match="job cancelled"):
        _tessera._shared_write(where, kwargs, 0, (0,), np.zeros(4, np.uint8), True, "token-1")
    assert sorted(p.name for p in (tmp_path / "a.zarr").iterdir()) == [".tessera-job"]


def test_cleanup_refuses_a_published_array_and_foreign_objects(tmp_path):
    data = _data()
    _one_process(tmp_path / "one.zarr", data)
    with pytest.raises(tessera.FailedPreconditionError, match="published array"):
        tessera.dask.cleanup(tmp_path / "one.zarr")
    assert tessera.open(tmp_path / "one.zarr").shape == data.shape
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(tessera.FailedPreconditionError, match="notes.txt"):
        tessera.dask.cleanup(tmp_path / "mine", format="zarr3")
    assert (tmp_path / "mine" / "notes.txt").exists()
    tessera.dask.cleanup(tmp_path / "nothing.zarr")  # nothing there: fine


# --- S3 -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def _storage_options(server) -> dict:
    return {"endpoint_url": server.endpoint, "region": server.region, "access_key_id": server.access_key,
            "secret_access_key": server.secret_key, "addressing_style": "path"}


def _s3_keys(server, prefix: str) -> list[str]:
    import obstore

    store = zarr_s3_store(server, BUCKET, prefix).store
    return sorted(m["path"] for batch in obstore.list(store) for m in batch)


def _drop_aws_environment() -> list[str]:
    dropped = [name for name in os.environ if name.startswith("AWS_")]
    for name in dropped:
        del os.environ[name]
    return dropped


def test_a_failed_job_on_s3_leaves_no_array_and_a_rerun_is_exact(server, request, cluster, monkeypatch):
    """Store settings only through storage_options: no AWS variables in the client or the workers."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    cluster.run(_drop_aws_environment)
    assert not any(cluster.run(_drop_aws_environment).values())
    options = _storage_options(server)
    prefix = prefix_for(request)
    url = f"s3://{BUCKET}/{prefix}/out.zarr"
    data = _data()
    with pytest.raises(Exception, match="injected failure"):
        tessera.dask.to_store(_failing_input(data), url, retries=1, storage_options=options, **LAYOUT)
    keys = _s3_keys(server, f"{prefix}/out.zarr")
    assert ".tessera-job" not in keys and not any(k.endswith("zarr.json") for k in keys), keys
    for level in ["", "/0", "/1", "/2"]:
        with pytest.raises(tessera.Error):
            tessera.open(url + level, storage_options=options)
        with pytest.raises(Exception):
            ts.open({"driver": "zarr3", "kvstore": tensorstore_s3_kvstore(server, BUCKET, f"{prefix}/out.zarr{level}/")},
                    open=True).result()
    with pytest.raises(Exception):
        zarr.open_array(zarr_s3_store(server, BUCKET, f"{prefix}/out.zarr/0", read_only=True), mode="r")
    time.sleep(2)
    assert _s3_keys(server, f"{prefix}/out.zarr") == keys, "shards were written after the failed call returned"
    tessera.dask.cleanup(url, storage_options=options)
    assert _s3_keys(server, f"{prefix}/out.zarr") == []

    tessera.dask.to_store(da.from_array(data, chunks=(16, 32)), url, storage_options=options, **LAYOUT)
    one = f"s3://{BUCKET}/{prefix}/one/out.zarr"  # the same name: an OME group records it
    with tessera.create(one, dtype=data.dtype, shape=data.shape, storage_options=options, **LAYOUT) as s:
        s.append(data)
    store_out = zarr_s3_store(server, BUCKET, f"{prefix}/out.zarr").store
    store_one = zarr_s3_store(server, BUCKET, f"{prefix}/one/out.zarr").store
    import obstore

    out_keys = _s3_keys(server, f"{prefix}/out.zarr")
    assert out_keys == _s3_keys(server, f"{prefix}/one/out.zarr")
    for key in out_keys:
        assert bytes(obstore.get(store_out, key).bytes()) == bytes(obstore.get(store_one, key).bytes()), key
    converted = f"s3://{BUCKET}/{prefix}/conv.zarr"
    tessera.dask.convert(one + "/0", converted, storage_options=options, chunks=(8, 8), shard_chunks=(2, 2))
    np.testing.assert_array_equal(tessera.open(converted, storage_options=options)[:], data)
    back = tessera.dask.from_store(converted, storage_options=options).compute()
    np.testing.assert_array_equal(back, data)
