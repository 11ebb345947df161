"""Region writes into existing Neuroglancer precomputed volumes read back exactly by cloud-volume and
tensorstore.

Volumes made by tessera's stream (unsharded, sharded with the identity and murmurhash3 hashes, raw
and gzip, compressed_segmentation), by cloud-volume (unsharded; its chunks plain, or gzipped as "<name>.gz", which tensorstore does not
read: there cloud-volume and tessera check)
and by tensorstore (sharded) are opened with ``tessera.open(path, mode="r+")`` and written with
``a[key] = value`` (random slices, steps, negative steps, single indices, broadcast scalars and
zeros, which remove chunks); after each round cloud-volume (``fill_missing``: a chunk written all 0
is removed, as tessera's stream leaves it unstored), tensorstore and tessera read the whole volume
and must equal a numpy model. Unsharded volumes are also resized (shrunk, then grown past their old
size) and read back by both peers.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorstore as ts

from interop_support import ZARR_DTYPES, random_key, stable_seed
from test_precomputed_read_peers import case_data, sharding, to_tessera_order, write_with_tensorstore
from test_precomputed_write_peers import read_with_cloudvolume, read_with_tensorstore

tessera_py = pytest.importorskip("tessera")

# name: (maker, dtype, shape C-order [C,]Z,Y,X, chunk Z,Y,X, options)
CASES = {
    "tessera-unsharded-uint16": ("tessera", "uint16", (19, 23, 30), (4, 8, 8), {}),
    "tessera-unsharded-channels": ("tessera", "uint8", (3, 9, 13, 21), (4, 4, 8), {}),
    "tessera-identity": ("tessera", "uint16", (18, 33, 40), (4, 8, 8), {"shard_chunks": (2, 2, 2)}),
    "tessera-identity-gzip-float32": ("tessera", "float32", (18, 20, 26), (4, 8, 8),
                                      {"shard_chunks": (2, 2, 2), "codec": "gzip"}),
    "tessera-murmur-gzip": ("tessera", "uint64", (9, 33, 33), (4, 8, 16),
                            {"shard_chunks": (2, 2, 2), "hash": "murmurhash3_x86_128", "codec": "gzip"}),
    "tessera-cseg-uint32": ("tessera", "uint32", (11, 18, 29), (8, 8, 16), {"encoding": "compressed_segmentation"}),
    "tessera-cseg-uint64-murmur": ("tessera", "uint64", (10, 24, 40), (8, 8, 8),
                                   {"encoding": "compressed_segmentation", "shard_chunks": (1, 2, 2),
                                    "hash": "murmurhash3_x86_128"}),
    "cloudvolume-raw": ("cloudvolume", "uint16", (20, 24, 28), (4, 8, 8), {"encoding": "raw", "gzip": False}),
    # "<name>.gz" chunk files, which tensorstore does not read (cloud-volume and tessera do).
    "cloudvolume-raw-gz": ("cloudvolume", "int16", (20, 24, 28), (4, 8, 8), {"encoding": "raw", "gzip": True}),
    "cloudvolume-cseg": ("cloudvolume", "uint32", (12, 20, 18), (4, 8, 8),
                         {"encoding": "compressed_segmentation", "gzip": False}),
    "tensorstore-identity": ("tensorstore", "uint16", (18, 33, 40), (8, 8, 8),
                             {"sharding": sharding("identity", 0, 2, 3, "raw", "raw")}),
    "tensorstore-murmur-gzip": ("tensorstore", "uint32", (13, 21, 50), (4, 4, 8),
                                {"sharding": sharding("murmurhash3_x86_128", 0, 3, 2, "gzip", "gzip")}),
}


def make_volume(path, maker, dtype, shape, chunk, options, rng) -> np.ndarray:
    """Writes a volume of random values (labels for segmentation) and returns it in C order."""
    channels = shape[0] if len(shape) == 4 else 1
    encoding = options.get("encoding", "raw")
    xyzc = case_data(rng, dtype, channels, tuple(reversed(shape[-3:])), encoding)
    data = np.ascontiguousarray(to_tessera_order(xyzc))
    if maker == "tessera":
        with tessera_py.create(str(path), format="precomputed", dtype=dtype, shape=shape, chunks=chunk,
                               **options) as s:
            s.append(data)
    elif maker == "cloudvolume":
        from cloudvolume import CloudVolume

        info = CloudVolume.create_new_info(
            num_channels=channels, layer_type="segmentation" if encoding != "raw" else "image", data_type=dtype,
            encoding=encoding, resolution=[4, 4, 40], voxel_offset=[3, -2, 5], chunk_size=list(reversed(chunk)),
            volume_size=list(reversed(shape[-3:])),
            **({"compressed_segmentation_block_size": [8, 8, 4]} if encoding != "raw" else {}))
        cv = CloudVolume(f"file://{path}", info=info, progress=False, compress=options["gzip"])
        cv.commit_info()
        cv[:, :, :] = xyzc
    else:
        write_with_tensorstore(path, dtype, channels, tuple(reversed(shape[-3:])), tuple(reversed(chunk)), (0, 0, 0),
                               encoding, options["sharding"], xyzc)
    return data


def random_values(rng, dtype, shape, segmentation):
    dt = ZARR_DTYPES[dtype]
    kind = rng.integers(0, 5)
    if kind == 0:
        return dt.type(0)  # zeros everywhere it writes: chunks left all 0 are removed
    if kind == 1:
        return dt.type(3)  # a broadcast scalar
    if segmentation:
        return rng.integers(1, 9, size=shape).astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def assert_peers_read(path, expected, tensorstore=True):
    if tensorstore:
        assert np.array_equal(read_with_tensorstore(path), expected)
    assert np.array_equal(read_with_cloudvolume(path), expected)
    assert np.array_equal(tessera_py.open(str(path))[...], expected)


@pytest.mark.parametrize("name", list(CASES))
def test_region_writes_read_back_by_peers(tmp_path, name):
    maker, dtype, shape, chunk, options = CASES[name]
    rng = np.random.default_rng(stable_seed(name))
    path = tmp_path / "vol"
    model = make_volume(path, maker, dtype, shape, chunk, options, rng)
    segmentation = options.get("encoding") == "compressed_segmentation"
    gz = options.get("gzip", False)
    a = tessera_py.open(str(path), mode="r+")
    for _ in range(3):
        for _ in range(4):
            key = random_key(rng, shape)
            values = random_values(rng, dtype, model[key].shape, segmentation)
            a[key] = values
            model[key] = values
        assert_peers_read(path, model, tensorstore=not gz)
    # The whole volume at once: every object written without being read (a .gz chunk is replaced).
    whole = random_values(rng, dtype, shape, segmentation)
    a[...] = whole
    model[...] = whole
    assert_peers_read(path, model)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if "shard" not in str(c[4])])
def test_resize_unsharded_read_back_by_peers(tmp_path, name):
    maker, dtype, shape, chunk, options = CASES[name]
    rng = np.random.default_rng(stable_seed(name) + 1)
    path = tmp_path / "vol"
    model = make_volume(path, maker, dtype, shape, chunk, options, rng)
    a = tessera_py.open(str(path), mode="r+")
    spatial = len(shape) - 3
    smaller = tuple(n if d < spatial else n - 3 for d, n in enumerate(shape))
    larger = tuple(n if d < spatial else n + 6 for d, n in enumerate(shape))
    for new_shape in (smaller, larger):
        a.resize(new_shape)
        grown = np.zeros(new_shape, dtype=model.dtype)
        overlap = tuple(slice(0, min(o, n)) for o, n in zip(model.shape, new_shape))
        grown[overlap] = model[overlap]
        model = grown
        assert a.shape == new_shape
        assert_peers_read(path, model, tensorstore=not options.get("gzip", False))
    # A write across the old edge after growing.
    key = tuple(slice(None) if d < spatial else slice(n - 8, n) for d, n in enumerate(model.shape))
    values = random_values(rng, dtype, model[key].shape, options.get("encoding") == "compressed_segmentation")
    a[key] = values
    model[key] = values
    assert_peers_read(path, model, tensorstore=not options.get("gzip", False))


def test_sharded_resize_that_moves_chunks_is_refused(tmp_path):
    maker, dtype, shape, chunk, options = CASES["tessera-identity"]
    path = tmp_path / "vol"
    model = make_volume(path, maker, dtype, shape, chunk, options, np.random.default_rng(5))
    a = tessera_py.open(str(path), mode="r+")
    with pytest.raises(tessera_py.UnsupportedError, match="Morton"):
        a.resize((shape[0], shape[1], shape[2] * 2))
    assert_peers_read(path, model)


# ---- on S3 (SeaweedFS on 127.0.0.1): conditional PUTs (If-Match / If-None-Match) on ETags

BUCKET = "precomputedregion"
S3_SHAPE = (8, 16, 32)  # z, y, x
S3_CHUNK = (4, 4, 8)    # a grid of 4 x 4 x 2 chunks
S3_ROUNDS = 3


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def s3_volume(url, options) -> None:
    with tessera_py.create(url, format="precomputed", dtype="uint16", shape=S3_SHAPE, chunks=S3_CHUNK,
                           **options) as s:
        s.append(np.ones(S3_SHAPE, dtype=np.uint16))


@pytest.mark.parametrize("options", [{}, {"shard_chunks": (2, 2, 2)}, {"shard_chunks": (2, 2, 2), "codec": "gzip",
                                                                        "hash": "murmurhash3_x86_128"}],
                         ids=["unsharded", "identity", "murmur-gzip"])
def test_concurrent_writers_on_s3_lose_nothing(s3_env, request, options):
    """Writers (each its own Array, like processes) write interleaved x columns of every chunk and
    shard at once; the union must survive, read by tessera and by tensorstore over S3."""
    from s3_support import prefix_for, tensorstore_s3_kvstore
    import threading

    prefix = prefix_for(request) + "/vol"
    url = f"s3://{BUCKET}/{prefix}"
    s3_volume(url, options)
    writers = 3
    errors = []
    barrier = threading.Barrier(writers)

    def work(w):
        try:
            a = tessera_py.open(url, mode="r+")
            barrier.wait()
            for rnd in range(S3_ROUNDS):
                a[2 * rnd: 2 * rnd + 3, :, w::writers] = np.uint16(10 + 10 * w + rnd)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    want = np.ones(S3_SHAPE, dtype=np.uint16)
    for rnd in range(S3_ROUNDS):
        for w in range(writers):
            want[2 * rnd: 2 * rnd + 3, :, w::writers] = 10 + 10 * w + rnd
    assert np.array_equal(tessera_py.open(url)[...], want)
    spec = {"driver": "neuroglancer_precomputed", "kvstore": tensorstore_s3_kvstore(s3_env, BUCKET, prefix + "/")}
    xyzc = ts.open(spec, read=True).result().read().result()
    assert np.array_equal(to_tessera_order(np.asarray(xyzc)), want)


def test_s3_requests_of_sharded_region_writes(s3_env, request, monkeypatch):
    """A write covering every chunk of a shard reads nothing; a partial write reads each touched
    shard once (one GET of the whole shard) and writes it once."""
    from s3_support import FaultProxy, prefix_for

    prefix = prefix_for(request) + "/vol"
    url = f"s3://{BUCKET}/{prefix}"
    # A grid of 2 x 4 x 4 chunks: a shard is 2 x 2 x 2 chunks, 8 x 8 x 16 voxels (every z), 4 shards.
    s3_volume(url, {"shard_chunks": (2, 2, 2)})
    with FaultProxy(s3_env.endpoint) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        a = tessera_py.open(url, mode="r+")
        proxy.clear()
        a[:, 0:16, 0:16] = np.uint16(7)  # the two shards of x < 16 (y < 8 and y >= 8), whole
        gets = [r for r in proxy.requests if r.method in ("GET", "HEAD")]
        puts = [r for r in proxy.requests if r.method == "PUT"]
        assert not gets, [(r.method, r.target) for r in proxy.requests]
        assert len(puts) == 2, [(r.method, r.target) for r in proxy.requests]
        proxy.clear()
        a[1:3, 5:12, 3:9] = np.uint16(9)  # partial: the same two shards
        # (The store's first conditional write probes whether the server honours If-Match.)
        shard_requests = [r for r in proxy.requests if "conditional-write-probe" not in r.target]
        gets = [r for r in shard_requests if r.method == "GET"]
        puts = [r for r in shard_requests if r.method == "PUT"]
        assert len({r.target for r in gets}) == len(gets) == 2, [(r.method, r.target) for r in proxy.requests]
        assert len(puts) == 2, [(r.method, r.target) for r in proxy.requests]
        want = np.ones(S3_SHAPE, dtype=np.uint16)
        want[:, 0:16, 0:16] = 7
        want[1:3, 5:12, 3:9] = 9
        assert np.array_equal(tessera_py.open(url)[...], want)
