"""Region writes that run at the same time lose nothing, and cost the requests they need.

Several processes (and several threads of one process) open one sharded Zarr array with mode r+ and
write interleaved, disjoint elements of the same shards, round after round, on local files and on a
real S3 server (SeaweedFS on 127.0.0.1): the array must end equal to the union of their writes, which
only holds if every shard rewrite is conditional on what its writer read (a lock and generation check
on files, If-Match / If-None-Match on S3) and a conflict re-reads and re-applies. tensorstore reads
the result. A proxy between tessera and the S3 server counts the requests of one write: whole chunks
(shards) are written without reading anything, a partial write reads each touched shard once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorstore as ts

from interop_support import assert_identical
from s3_support import FaultProxy, prefix_for, tensorstore_s3_kvstore

BUCKET = "regionwrite"
SHAPE = (8, 24, 40)
CHUNKS = (4, 6, 8)
SHARD_CHUNKS = (2, 2, 5)  # shards of 8 x 12 x 40: 2 along dim 1, so every writer touches both
ROUNDS = 4
PROBE = ".tessera-conditional-write-probe"


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def writer_value(writer: int, rnd: int) -> int:
    return 1 + writer * 100 + rnd


def expected_union(writers: int) -> np.ndarray:
    """Writer w owns the columns x % writers == w; round r writes row r % SHAPE[0] (all of y) with
    writer_value(w, r); later rounds of the same row win."""
    out = np.zeros(SHAPE, dtype=np.uint16)
    for rnd in range(ROUNDS):
        for w in range(writers):
            out[rnd % SHAPE[0], :, w::writers] = writer_value(w, rnd)
    return out


CHILD = r"""
import sys, json
import numpy as np
import tessera
cfg = json.loads(sys.argv[1])
a = tessera.open(cfg["url"], mode="r+")
w, n = cfg["writer"], cfg["writers"]
for rnd in range(cfg["rounds"]):
    a[rnd % a.shape[0], :, w::n] = np.uint16(cfg["values"][rnd])
"""


def create_empty(url: str) -> None:
    import tessera

    tessera.create_array(url, dtype="uint16", shape=SHAPE, chunks=CHUNKS, shard_chunks=SHARD_CHUNKS, codec="zstd")


def run_writer_processes(url: str, writers: int, env=None) -> None:
    procs = []
    for w in range(writers):
        cfg = {"url": url, "writer": w, "writers": writers, "rounds": ROUNDS,
               "values": [writer_value(w, r) for r in range(ROUNDS)]}
        procs.append(subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(cfg)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-3000:]


def run_writer_threads(url: str, writers: int) -> None:
    import tessera

    a = tessera.open(url, mode="r+")
    errors = []
    barrier = threading.Barrier(writers)

    def work(w):
        try:
            barrier.wait()
            for rnd in range(ROUNDS):
                a[rnd % SHAPE[0], :, w::writers] = np.uint16(writer_value(w, rnd))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def ts_read_local(path) -> np.ndarray:
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}, read=True).result().read().result()


@pytest.mark.parametrize("how", ["processes", "threads"])
def test_concurrent_writers_of_one_shard_lose_nothing_on_files(tmp_path, how):
    import tessera

    writers = 4
    path = tmp_path / "a.zarr"
    create_empty(str(path))
    if how == "processes":
        run_writer_processes(str(path), writers)
    else:
        run_writer_threads(str(path), writers)
    want = expected_union(writers)
    assert_identical(tessera.open(str(path))[...], want, f"tessera after {writers} {how}")
    assert_identical(ts_read_local(path), want, f"tensorstore after {writers} {how}")
    assert not [p.name for p in path.rglob("*") if ".tmp." in p.name], "a temporary file was left behind"


@pytest.mark.parametrize("how", ["processes", "threads"])
def test_concurrent_writers_of_one_shard_lose_nothing_on_s3(s3_env, request, how):
    import tessera

    writers = 3
    prefix = prefix_for(request) + "/a.zarr"
    url = f"s3://{BUCKET}/{prefix}"
    create_empty(url)
    if how == "processes":
        run_writer_processes(url, writers, env=dict(os.environ))
    else:
        run_writer_threads(url, writers)
    want = expected_union(writers)
    assert_identical(tessera.open(url)[...], want, f"tessera after {writers} {how} on S3")
    spec = {"driver": "zarr3", "kvstore": tensorstore_s3_kvstore(s3_env, BUCKET, prefix + "/")}
    assert_identical(ts.open(spec, read=True).result().read().result(), want, "tensorstore on S3")


def test_s3_requests_of_region_writes(s3_env, request, monkeypatch):
    """Whole shards are written without a read; a partial write reads each touched shard once (one
    GET of the shard, index and chunks together) and writes it once."""
    import tessera

    prefix = prefix_for(request) + "/a.zarr"
    url = f"s3://{BUCKET}/{prefix}"
    create_empty(url)
    shard = tuple(c * s for c, s in zip(CHUNKS, SHARD_CHUNKS))  # (8, 12, 40)
    with FaultProxy(s3_env.endpoint) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        a = tessera.open(url, mode="r+")
        proxy.clear()
        # Two whole shards (all of dim 0 and 2, y in [0, 24)): nothing is read.
        a[:, 0:24, :] = np.uint16(7)
        gets = [r for r in proxy.requests if r.method in ("GET", "HEAD")]
        puts = [r for r in proxy.requests if r.method == "PUT"]
        assert not gets, f"a write of whole shards read {[(r.method, r.target) for r in gets]}"
        assert len(puts) == 2, f"expected one PUT per shard, got {[(r.method, r.target) for r in proxy.requests]}"
        proxy.clear()
        # A partial write touching both shards: each read once and written once.
        a[1:3, 5:20, 3:9] = np.uint16(9)
        # The store's first conditional write also probes once whether the server honours the
        # conditions, on a key of its own that it deletes again: not part of this write's cost.
        mine = [r for r in proxy.requests if PROBE not in r.target]
        gets = [r for r in mine if r.method == "GET"]
        puts = [r for r in mine if r.method == "PUT"]
        assert len({r.target for r in gets}) == len(gets) == 2, [(r.method, r.target) for r in mine]
        assert len(puts) == 2, [(r.method, r.target) for r in mine]
        assert len(mine) == 4, [(r.method, r.target) for r in mine]
        proxy.clear()
        a[2:4, 13:14, 0:2] = np.uint16(5)  # one shard; the probe is not repeated
        assert [r.method for r in proxy.requests] == ["GET", "PUT"], [(r.method, r.target) for r in proxy.requests]
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_env.endpoint)
    want = np.full(SHAPE, 7, dtype=np.uint16)
    want[1:3, 5:20, 3:9] = 9
    want[2:4, 13:14, 0:2] = 5
    assert shard == (8, 12, 40)
    assert_identical(tessera.open(url)[...], want, "after the counted writes")
    listing = ts.KvStore.open(tensorstore_s3_kvstore(s3_env, BUCKET, prefix + "/")).result().list().result()
    assert not [k for k in listing if PROBE.encode() in k], f"the probe object was left behind: {listing}"

