"""tessera on a real S3 server (SeaweedFS on 127.0.0.1, started here): what tessera streams there,
tensorstore's s3 kvstore and zarr-python (obstore) read exactly; what they write there, tessera
reads exactly; precomputed volumes, pyramids and HDF5 files too; faults injected by a proxy either leave an
exact result or a clear error; a read of one chunk costs the requests it needs and no more; and
an http:// location reads what a plain web server serves.
"""

from __future__ import annotations

import functools
import gc
import http.server
import threading

import numpy as np
import pytest
import tensorstore as ts
import zarr

from interop_support import assert_cli_error, assert_identical, random_data
from s3_support import FaultProxy, prefix_for, tensorstore_s3_kvstore, zarr_s3_store

BUCKET = "interop"
# The HTTP retry budget of the tests whose server fails for good: they expect the error, and the
# default budget (120 s) would wait that long for each.
SHORT_RETRY_BUDGET_S = "3"


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def ts_read(server, path: str, driver: str = "zarr3", **extra) -> np.ndarray:
    spec = {"driver": driver, "kvstore": tensorstore_s3_kvstore(server, BUCKET, path.rstrip("/") + "/"), **extra}
    return ts.open(spec, read=True).result().read().result()


CODECS = ["none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"]


@pytest.mark.parametrize("sharded", [False, True], ids=["plain", "sharded"])
@pytest.mark.parametrize("codec", CODECS)
def test_cli_stream_to_s3_is_read_exactly_by_tensorstore_and_zarr_python(tessera, s3_env, request, rng, codec,
                                                                         sharded):
    dtype = str(rng.choice(["uint8", "int16", "uint32", "float32", "float64"]))
    shape = tuple(int(rng.integers(1, n)) for n in (23, 19, 13))
    data = random_data(rng, dtype, shape)
    prefix = prefix_for(request) + "/a.zarr"
    tessera.write(f"s3://{BUCKET}/{prefix}", data, chunk=(4, 5, 3), shard_chunks=(2, 2, 3) if sharded else None,
                  codec=codec)
    assert_identical(ts_read(s3_env, prefix), data, "tensorstore")
    z = zarr.open_array(zarr_s3_store(s3_env, BUCKET, prefix, read_only=True), mode="r")
    assert_identical(z[...], data, "zarr-python")
    assert_identical(tessera.read(f"s3://{BUCKET}/{prefix}", None, dtype, shape), data, "tessera read")


def test_python_package_creates_and_opens_s3_arrays(s3_env, request, rng):
    import tessera

    data = random_data(rng, "uint16", (37, 21, 10))
    url = f"s3://{BUCKET}/{prefix_for(request)}/p.zarr"
    w = tessera.create(url, dtype="uint16", shape=(0, 21, 10), chunks=(8, 8, 5), shard_chunks=(2, 2, 2), codec="zstd")
    for start in range(0, 37, 5):  # appends of odd sizes
        w.append(data[start:start + 5])
    w.close()
    a = tessera.open(url)
    assert a.shape == data.shape
    assert_identical(a[...], data)
    assert_identical(a[3:30:4, ::-2, 7], data[3:30:4, ::-2, 7])


def test_tessera_reads_what_tensorstore_and_zarr_python_wrote_to_s3(s3_env, request, rng):
    import tessera

    prefix = prefix_for(request)
    data = random_data(rng, "int32", (30, 17, 9))
    spec = {"driver": "zarr3", "kvstore": tensorstore_s3_kvstore(s3_env, BUCKET, f"{prefix}/ts.zarr/"),
            "metadata": {"shape": list(data.shape), "data_type": "int32",
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8, 9]}},
                         "codecs": [{"name": "sharding_indexed", "configuration": {
                             "chunk_shape": [4, 4, 3], "codecs": [{"name": "bytes"}, {"name": "zstd"}],
                             "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}]}}]},
            "create": True}
    ts.open(spec).result().write(data).result()
    assert_identical(tessera.open(f"s3://{BUCKET}/{prefix}/ts.zarr")[...], data, "tensorstore -> tessera")

    z = zarr.create_array(zarr_s3_store(s3_env, BUCKET, f"{prefix}/zp.zarr"), shape=data.shape, dtype="int32",
                          chunks=(7, 5, 4), compressors=zarr.codecs.BloscCodec(cname="lz4"))
    z[...] = data
    assert_identical(tessera.open(f"s3://{BUCKET}/{prefix}/zp.zarr")[2:29:3, 1:, ::2], data[2:29:3, 1:, ::2],
                     "zarr-python -> tessera")


def test_precomputed_and_pyramids_on_s3_read_by_tensorstore(tessera, s3_env, request, rng):
    prefix = prefix_for(request)
    data = random_data(rng, "uint16", (20, 24, 28))
    raw = np.ascontiguousarray(data).tobytes()
    # precomputed, sharded, two scales
    tessera.run_ok(["stream", f"s3://{BUCKET}/{prefix}/vol", "--format", "precomputed", "--dtype", "uint16",
                    "--shape", "20,24,28", "--chunk", "8,8,8", "--shard-chunks", "2,2,2", "--pyramid", "2"], raw)
    for scale in range(2):
        got = ts_read(s3_env, f"{prefix}/vol", driver="neuroglancer_precomputed", scale_index=scale)
        mine = tessera.run_ok(["read", f"s3://{BUCKET}/{prefix}/vol", "--level", scale]).stdout
        assert np.frombuffer(mine, "<u2").size == got.size
        # tensorstore's view is [x, y, z, channel]; tessera's [z, y, x]
        assert_identical(np.frombuffer(mine, "<u2").reshape(got.shape[2::-1]), got[..., 0].transpose(2, 1, 0))
    assert_identical(ts_read(s3_env, f"{prefix}/vol", driver="neuroglancer_precomputed")[..., 0].transpose(2, 1, 0),
                     data)
    # an OME-Zarr pyramid: every level is what tensorstore's downsample makes of the level above
    tessera.run_ok(["stream", f"s3://{BUCKET}/{prefix}/img.zarr", "--dtype", "uint16", "--shape", "20,24,28",
                    "--chunk", "8,8,8", "--pyramid", "3", "--downsample", "mean"], raw)
    previous = data
    for level in range(3):
        got = ts_read(s3_env, f"{prefix}/img.zarr/{level}")
        expected = previous if level == 0 else ts.downsample(ts.array(previous), [2, 2, 2], "mean").read().result()
        assert_identical(got, expected, f"level {level}")
        previous = got


def s3_object_keys(server, prefix: str) -> list[str]:
    import obstore

    store = zarr_s3_store(server, BUCKET, prefix).store
    return sorted(m["path"] for batch in obstore.list(store) for m in batch)


def test_hdf5_on_s3_is_read_by_h5py_and_h5py_files_on_s3_are_read_by_tessera(tessera, s3_env, request, rng, tmp_path,
                                                                              monkeypatch):
    import h5py
    import obstore

    import tessera as tsr

    prefix = prefix_for(request)
    store = zarr_s3_store(s3_env, BUCKET, prefix).store
    # tessera -> S3 -> h5py: the file is built locally and uploaded at close.
    data = random_data(rng, "int16", (33, 20, 12))
    tessera.run_ok(["stream", f"s3://{BUCKET}/{prefix}/t.h5", "--format", "hdf5", "--dtype", "int16", "--shape",
                    "33,20,12", "--chunk", "8,8,6", "--codec", "gzip"], data.astype("<i2").tobytes())
    (tmp_path / "t.h5").write_bytes(bytes(obstore.get(store, "t.h5").bytes()))
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert_identical(f["data"][...], data, "h5py reading tessera's file from S3")
    assert not list(tmp_path.parent.glob("tessera-staging-*")), "the staging directory was left behind"
    # tessera reads it back over S3 with range requests; the file's structures come in few blocks.
    with FaultProxy(s3_env.endpoint) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        a = tsr.open(f"s3://{BUCKET}/{prefix}/t.h5")
        opened = proxy.request_count
        assert_identical(a[...], data, "tessera reading its file from S3")
        assert_identical(a[5:30:3, ::-1, 7], data[5:30:3, ::-1, 7])
    assert opened <= 6, f"opening an HDF5 file on S3 took {opened} requests"
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_env.endpoint)
    # h5py -> S3 -> tessera (CLI with --dataset, and the package), in a group, with shuffle and gzip.
    other = random_data(rng, "float32", (17, 9, 31))
    with h5py.File(tmp_path / "h.h5", "w") as f:
        f.create_dataset("grp/x", data=other, chunks=(5, 4, 16), compression="gzip", shuffle=True)
        f.create_dataset("y", data=np.arange(10))
    obstore.put(store, "h.h5", (tmp_path / "h.h5").read_bytes())
    url = f"s3://{BUCKET}/{prefix}/h.h5"
    got = tessera.run_ok(["read", url, "--dataset", "/grp/x"]).stdout
    assert_identical(np.frombuffer(got, "<f4").reshape(other.shape), other, "tessera read --dataset over S3")
    assert_identical(tsr.open(url, dataset="/grp/x")[3:, 1::2, ::-3], other[3:, 1::2, ::-3])
    info = tessera.run_ok(["info", url, "--dataset", "/grp/x"]).stdout.decode()
    assert "hdf5" in info.lower(), info


def test_an_hdf5_upload_that_fails_at_close_leaves_nothing(s3_env, request, rng, monkeypatch):
    import tessera as tsr

    prefix = prefix_for(request)
    data = random_data(rng, "uint8", (20, 16, 16))
    with FaultProxy(s3_env.endpoint, seed=5) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        monkeypatch.setenv("TESSERA_RETRY_TIMEOUT_S", SHORT_RETRY_BUDGET_S)  # the failure is meant to last
        w = tsr.create(f"s3://{BUCKET}/{prefix}/f.h5", dtype="uint8", shape=data.shape, chunks=(4, 8, 8))
        w.append(data)
        proxy.configure(error_rate=1.0)
        with pytest.raises(tsr.IoError, match=rf"s3://{BUCKET}/{prefix}/f\.h5.*(SlowDown|InternalError)"):
            w.close()
    assert s3_object_keys(s3_env, prefix) == []


def test_a_stream_through_transient_faults_completes_exactly(tessera, s3_env, request, rng, monkeypatch):
    prefix = prefix_for(request)
    data = random_data(rng, "uint16", (64, 40, 24))
    with FaultProxy(s3_env.endpoint, seed=7, error_rate=0.08, throttle_rate=0.04, reset_rate=0.04,
                    reset_before_rate=0.04, delay_rate=0.04, delay_s=0.2) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        tessera.write(f"s3://{BUCKET}/{prefix}/f.zarr", data, chunk=(8, 8, 8), shard_chunks=(1, 2, 3), codec="zstd")
        assert sum(proxy.fault_counts.values()) > 0, "no fault was injected"
        assert_identical(tessera.read(f"s3://{BUCKET}/{prefix}/f.zarr", None, "uint16", data.shape), data,
                         "read through the faults")
    assert_identical(ts_read(s3_env, f"{prefix}/f.zarr"), data, "tensorstore, directly")


@pytest.mark.parametrize("fault", ["error", "reset_before", "reset"])
def test_a_long_stream_failing_at_a_random_point_leaves_only_what_reads_back_exactly(s3_env, request, rng, fault,
                                                                                     monkeypatch):
    """The server starts failing every request (503s, refused or cut connections) at a random frame of
    a long unbounded stream, uploads in flight: the stream fails with an error naming the store and
    the server's answer, and whatever array is left reads back exactly: its published rows, at
    least those of the last flush before the failure."""
    import tessera as tsr

    prefix = prefix_for(request)
    frames, rows_per_shard = 160, 8
    data = random_data(rng, "uint16", (frames, 48, 40))
    fail_at = int(rng.integers(rows_per_shard, frames - rows_per_shard))
    url = f"s3://{BUCKET}/{prefix}/long.zarr"
    with FaultProxy(s3_env.endpoint, seed=int(rng.integers(1 << 30))) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        monkeypatch.setenv("TESSERA_RETRY_TIMEOUT_S", SHORT_RETRY_BUDGET_S)  # the failure is meant to last
        w = tsr.create(url, dtype="uint16", shape=(0, 48, 40), chunks=(4, 16, 20), shard_chunks=(2, 3, 2),
                       codec="zstd")
        flushed = 0
        with pytest.raises(tsr.IoError) as failure:
            for i in range(frames):
                if i == fail_at:
                    proxy.configure(**{f"{fault}_rate": 1.0})
                w.append(data[i])
                if i % 20 == 19 and i < fail_at:
                    w.flush()  # durable: rows 0..i are published when it returns
                    flushed = i + 1
            w.close()
    message = str(failure.value)
    assert f"s3://{BUCKET}/{prefix}/long.zarr/" in message, message
    assert "gave up after" in message or "SlowDown" in message or "InternalError" in message, message
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_env.endpoint)
    keys = s3_object_keys(s3_env, f"{prefix}/long.zarr")
    assert "zarr.json" in keys, keys  # a failed stream keeps what it published (created at the start)
    published = ts_read(s3_env, f"{prefix}/long.zarr")
    assert published.shape[1:] == data.shape[1:]
    assert flushed <= published.shape[0] <= fail_at + rows_per_shard, (published.shape, flushed, fail_at)
    assert_identical(published, data[:published.shape[0]], "published rows")
    assert_identical(tsr.open(url)[...], data[:published.shape[0]], "published rows, read by tessera")


def test_an_aborted_stream_stores_nothing_more_and_keeps_what_it_published(s3_env, request, rng, monkeypatch):
    """abort() while uploads are slow and queued: the queue is dropped (no incomplete multipart
    upload), at most the shards already uploading are stored, and the array keeps what it published
    (what a crash would leave): its zarr.json, whose rows read back exactly."""
    import tessera as tsr

    prefix = prefix_for(request)
    data = random_data(rng, "uint16", (64, 64, 64))
    with FaultProxy(s3_env.endpoint, seed=2, delay_rate=1.0, delay_s=0.3) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        w = tsr.create(f"s3://{BUCKET}/{prefix}/a.zarr", dtype="uint16", shape=data.shape, chunks=(8, 16, 16),
                       shard_chunks=(1, 2, 2), codec="none")
        proxy.clear()
        w.append(data)  # 32 shards, queued faster than 8 upload threads can send them
        w.abort()
        del w
        gc.collect()
        puts = [r for r in proxy.requests if r.method == "PUT"]
    keys = s3_object_keys(s3_env, f"{prefix}/a.zarr")
    assert "zarr.json" in keys, keys  # written at create(), before the requests counted here
    assert len(keys) - 1 <= len(puts) <= 17, (len(keys), len(puts))  # the shards uploading, a publish
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_env.endpoint)
    kept = tsr.open(f"s3://{BUCKET}/{prefix}/a.zarr")
    assert_identical(kept[...], data[:kept.shape[0]], "published rows")


def test_a_server_that_keeps_failing_is_a_clear_error_and_leaves_no_partial_value(tessera, s3_env, request, rng,
                                                                                   monkeypatch):
    prefix = prefix_for(request)
    data = random_data(rng, "uint8", (16, 16, 16))
    with FaultProxy(s3_env.endpoint, seed=3) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        monkeypatch.setenv("TESSERA_RETRY_TIMEOUT_S", SHORT_RETRY_BUDGET_S)  # the failure is meant to last
        proxy.configure(error_rate=1.0)
        proc = tessera.run(["stream", f"s3://{BUCKET}/{prefix}/x.zarr", "--dtype", "uint8", "--shape", "16,16,16",
                            "--chunk", "8,8,8"], data.tobytes(), timeout=300)
    err = assert_cli_error(proc, "I/O error", f"s3://{BUCKET}/{prefix}/x.zarr/")
    # The first request is the look at what exists there (a HEAD: a status without a body).
    assert "HTTP 503" in err or "HTTP 500" in err, err
    assert "gave up after" in err, err
    # Every request failed, so nothing was stored: no array, no stray object, no pending upload.
    import obstore

    store = zarr_s3_store(s3_env, BUCKET, f"{prefix}/x.zarr").store
    assert [m["path"] for batch in obstore.list(store) for m in batch] == []
    with pytest.raises(ValueError):
        ts_read(s3_env, f"{prefix}/x.zarr")


def test_reading_one_chunk_of_a_sharded_array_costs_the_index_and_the_chunk(tessera, s3_env, request, rng,
                                                                           monkeypatch):
    import tessera as tsr

    prefix = prefix_for(request)
    data = random_data(rng, "uint16", (32, 32, 32))
    tessera.write(f"s3://{BUCKET}/{prefix}/r.zarr", data, chunk=(8, 8, 8), shard_chunks=(2, 2, 2), codec="zstd")
    with FaultProxy(s3_env.endpoint) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        a = tsr.open(f"s3://{BUCKET}/{prefix}/r.zarr")
        proxy.clear()
        assert_identical(a[0:8, 0:8, 0:8], data[0:8, 0:8, 0:8])
        first = proxy.request_count
        proxy.clear()
        assert_identical(a[8:16, 0:8, 0:8], data[8:16, 0:8, 0:8])  # same shard, another chunk
        second = proxy.request_count
    # A cold shard: its index, then the chunk's byte range. A shard already read: its index is cached,
    # so only the chunk's range.
    assert first == 2, f"one chunk of a cold shard took {first} requests, not 2 (the index and the chunk)"
    assert second == 1, f"one chunk of a shard already read took {second} requests, not 1 (the index is cached)"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_http_location_reads_what_a_web_server_serves(tessera, tmp_path, rng):
    import tessera as tsr

    data = random_data(rng, "float32", (19, 22, 7))
    tessera.write(tmp_path / "w.zarr", data, chunk=(5, 8, 7), shard_chunks=(2, 2, 1), codec="blosc-zstd")
    raw = np.ascontiguousarray(data.astype("<f4")).tobytes()
    tessera.run_ok(["stream", tmp_path / "vol", "--format", "precomputed", "--dtype", "float32", "--shape", "19,22,7",
                    "--chunk", "8,8,8", "--input", "-"], raw)
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        try:
            assert_identical(tsr.open(f"{base}/w.zarr")[...], data, "zarr over http")
            assert_identical(tsr.open(f"{base}/w.zarr")[3:17:2, ::-1, 2], data[3:17:2, ::-1, 2])
            assert_identical(tsr.open(f"{base}/vol")[...], data, "precomputed over http")
            with pytest.raises(tsr.UnsupportedError, match="read only"):
                tsr.create(f"{base}/new.zarr", dtype="uint8", shape=(4,), chunks=(2,))
            with pytest.raises(tsr.NotFoundError, match="Zarr array"):
                tsr.open(f"{base}/missing.zarr")
        finally:
            httpd.shutdown()


def test_dask_local_cluster_writes_and_reads_s3_and_converts_from_it(s3_env, request, rng, tmp_path):
    """tessera.dask on a 2-process LocalCluster (workers inherit the S3 settings) writes a pyramid
    to S3 byte-identical to one stream to S3; tensorstore reads it; tessera.convert pulls it back."""
    import distributed
    import dask.array as da

    import tessera
    import tessera.dask

    prefix = prefix_for(request)
    data = random_data(rng, "uint16", (40, 36, 28))
    options = dict(chunks=(8, 8, 8), shard_chunks=(2, 2, 2), codec="zstd", pyramid=2, ome=True)
    with tessera.create(f"s3://{BUCKET}/{prefix}/one.zarr", dtype=data.dtype, shape=data.shape, **options) as w:
        w.append(data)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster):
        tessera.dask.to_store(da.from_array(data, chunks=(10, 36, 14)), f"s3://{BUCKET}/{prefix}/many.zarr", **options)
        back = tessera.dask.from_store(f"s3://{BUCKET}/{prefix}/many.zarr").compute()
    assert_identical(back, data, "from_store")
    assert_identical(ts_read(s3_env, f"{prefix}/many.zarr/0"), data, "tensorstore level 0")
    assert_identical(ts_read(s3_env, f"{prefix}/many.zarr/1"), ts_read(s3_env, f"{prefix}/one.zarr/1"),
                     "tensorstore level 1")
    tessera.convert(f"s3://{BUCKET}/{prefix}/many.zarr", tmp_path / "local.h5", source_level=1, codec="gzip")
    import h5py
    with h5py.File(tmp_path / "local.h5") as f:
        assert_identical(f["data"][...], ts_read(s3_env, f"{prefix}/one.zarr/1"), "convert s3 -> hdf5")
