"""tessera reads Neuroglancer precomputed volumes that tensorstore writes, exactly.

tensorstore's neuroglancer_precomputed driver writes each volume (unsharded and sharded, identity
and murmurhash3 hashes, raw and gzip shard encodings, raw and compressed_segmentation chunks,
several channels, voxel offsets, partially written volumes); `tessera read` returns every
selection as C-order [c, z, y, x] (c dropped for one channel), compared with numpy.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorstore as ts

from interop_support import ZARR_DTYPES, stable_seed


def sharding(hash_name: str, preshift: int, minishard: int, shard: int, index_enc: str, data_enc: str) -> dict:
    return {"@type": "neuroglancer_uint64_sharded_v1", "hash": hash_name, "preshift_bits": preshift,
            "minishard_bits": minishard, "shard_bits": shard, "minishard_index_encoding": index_enc,
            "data_encoding": data_enc}


# name: (dtype, channels, size xyz, chunk xyz, voxel offset xyz, encoding, sharding or None)
CASES = {
    "raw-uint8": ("uint8", 1, (37, 20, 11), (16, 8, 4), (0, 0, 0), "raw", None),
    "raw-uint16-offset": ("uint16", 1, (30, 17, 9), (8, 8, 8), (5, -3, 100), "raw", None),
    "raw-3-channels": ("uint16", 3, (21, 13, 7), (8, 4, 4), (0, 0, 0), "raw", None),
    "raw-float32": ("float32", 1, (19, 19, 5), (8, 8, 2), (0, 0, 0), "raw", None),
    "raw-int16": ("int16", 2, (9, 10, 11), (4, 4, 4), (1, 2, 3), "raw", None),
    "raw-int32": ("int32", 1, (12, 5, 3), (5, 5, 5), (0, 0, 0), "raw", None),
    "sharded-identity-raw": ("uint16", 1, (40, 33, 18), (8, 8, 8), (0, 0, 0), "raw",
                             sharding("identity", 0, 2, 3, "raw", "raw")),
    "sharded-identity-gzip": ("uint8", 2, (40, 33, 18), (8, 8, 4), (3, 0, 0), "raw",
                              sharding("identity", 1, 1, 2, "gzip", "gzip")),
    "sharded-murmur-raw": ("uint32", 1, (50, 21, 13), (8, 4, 4), (0, 0, 0), "raw",
                           sharding("murmurhash3_x86_128", 0, 3, 2, "raw", "raw")),
    "sharded-murmur-gzip": ("float32", 1, (33, 33, 9), (16, 8, 4), (0, 7, 0), "raw",
                            sharding("murmurhash3_x86_128", 2, 2, 1, "gzip", "gzip")),
    "sharded-one-shard": ("uint16", 1, (20, 20, 20), (8, 8, 8), (0, 0, 0), "raw",
                          sharding("identity", 0, 0, 0, "raw", "raw")),
    "cseg-uint32": ("uint32", 1, (29, 18, 11), (16, 8, 8), (0, 0, 0), "compressed_segmentation", None),
    "cseg-uint64": ("uint64", 1, (29, 18, 11), (16, 16, 4), (2, 2, 2), "compressed_segmentation", None),
    "cseg-uint64-sharded": ("uint64", 1, (40, 24, 10), (8, 8, 8), (0, 0, 0), "compressed_segmentation",
                            sharding("murmurhash3_x86_128", 0, 2, 2, "gzip", "gzip")),
}


def case_data(rng, dtype: str, channels: int, size: tuple, encoding: str) -> np.ndarray:
    """[x, y, z, c] data; segmentation-like (few distinct labels per region) for compressed_segmentation."""
    shape = (*size, channels)
    dt = ZARR_DTYPES[dtype]
    if encoding == "compressed_segmentation":
        coarse = rng.integers(0, 2**40 if dt.itemsize == 8 else 2**31, size=(shape[0] // 5 + 1, shape[1] // 5 + 1,
                                                                               shape[2] // 3 + 1, channels))
        labels = np.repeat(np.repeat(np.repeat(coarse, 5, 0), 5, 1), 3, 2)[: shape[0], : shape[1], : shape[2]]
        noise = rng.random(shape) < 0.05
        labels = np.where(noise, rng.integers(0, 7, size=shape), labels)
        return labels.astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def write_with_tensorstore(path, dtype, channels, size, chunk, offset, encoding, shard_spec, data,
                           region=None) -> None:
    scale = {"size": list(size), "voxel_offset": list(offset), "chunk_size": list(chunk),
             "resolution": [4, 4, 40], "encoding": encoding}
    if encoding == "compressed_segmentation":
        scale["compressed_segmentation_block_size"] = [8, 4, 2]
    if shard_spec:
        scale["sharding"] = shard_spec
    spec = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)},
            "multiscale_metadata": {"type": "segmentation" if encoding == "compressed_segmentation" else "image",
                                    "data_type": dtype, "num_channels": channels},
            "scale_metadata": scale, "create": True}
    arr = ts.open(spec).result().translate_to[0, 0, 0, 0]
    if region is None:
        arr.write(data).result()
    else:
        arr[region].write(data[region]).result()


def to_tessera_order(xyzc: np.ndarray) -> np.ndarray:
    czyx = np.transpose(xyzc, (3, 2, 1, 0))
    return czyx[0] if czyx.shape[0] == 1 else czyx


def random_expr(rng, shape) -> str:
    parts = []
    for n in shape:
        kind = rng.integers(0, 4)
        if kind == 0:
            parts.append(str(int(rng.integers(-n, n))))
        elif kind == 1:
            parts.append(":")
        else:
            start, stop = (int(v) for v in rng.integers(-n - 2, n + 2, size=2))
            step = int(rng.integers(1, 5)) * (1 if rng.random() < 0.7 else -1)
            parts.append(f"{start}:{stop}:{step}")
    return ",".join(parts)


@pytest.fixture(scope="module")
def volumes(tmp_path_factory):
    """Each case written once by tensorstore; returns name -> (path, expected C-order array)."""
    out = {}
    for i, (name, (dtype, channels, size, chunk, offset, encoding, shard_spec)) in enumerate(CASES.items()):
        rng = np.random.default_rng(1000 + i)
        data = case_data(rng, dtype, channels, size, encoding)
        path = tmp_path_factory.mktemp("precomputed") / name
        write_with_tensorstore(path, dtype, channels, size, chunk, offset, encoding, shard_spec, data)
        out[name] = (path, to_tessera_order(data))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_reads_whole_volume(tessera, volumes, name):
    path, expected = volumes[name]
    got = tessera.read(path, None, expected.dtype, expected.shape)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("name", list(CASES))
def test_reads_random_slices(tessera, volumes, name):
    path, expected = volumes[name]
    rng = np.random.default_rng(stable_seed(name))
    for _ in range(6):
        expr = random_expr(rng, expected.shape)
        want = expected[eval(f"np.s_[{expr}]")]
        got = tessera.read(path, expr, expected.dtype, want.shape)
        assert np.array_equal(got, want), expr


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
def test_partially_written_volume_reads_zeros_elsewhere(tessera, tmp_path, sharded):
    size, chunk = (40, 24, 12), (8, 8, 4)
    rng = np.random.default_rng(7)
    data = case_data(rng, "uint16", 1, size, "raw")
    region = np.s_[8:24, 0:16, 4:8, :]  # whole chunks only, so the rest is never written
    shard_spec = sharding("identity", 0, 1, 2, "raw", "raw") if sharded else None
    write_with_tensorstore(tmp_path / "v", "uint16", 1, size, chunk, (0, 0, 0), "raw", shard_spec, data, region)
    expected = np.zeros_like(data)
    expected[region] = data[region]
    expected = to_tessera_order(expected)
    assert np.array_equal(tessera.read(tmp_path / "v", None, "uint16", expected.shape), expected)


def test_info_describes_a_precomputed_volume(tessera, volumes):
    path, expected = volumes["sharded-murmur-gzip"]
    info = json.loads(tessera.run_ok(["info", path, "--json"]).stdout)
    assert info["format"] == "precomputed"
    assert info["dtype"] == "float32"
    assert info["shape"] == list(expected.shape)
    assert info["chunk_shape"] == [4, 8, 16]
    assert info["sharding"]["hash"] == "murmurhash3_x86_128"
    text = tessera.run_ok(["info", path]).stdout.decode()
    assert "precomputed" in text and "murmurhash3_x86_128" in text


def test_second_scale(tessera, tmp_path):
    """A volume with two scales: --scale selects one; a scale that does not exist is an error."""
    rng = np.random.default_rng(3)
    base = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(tmp_path / "v")}}
    full = case_data(rng, "uint8", 1, (16, 16, 8), "raw")
    half = case_data(rng, "uint8", 1, (8, 8, 4), "raw")
    for key, data, res in (("s0", full, [1, 1, 1]), ("s1", half, [2, 2, 2])):
        spec = {**base, "multiscale_metadata": {"type": "image", "data_type": "uint8", "num_channels": 1},
                "scale_metadata": {"key": key, "size": list(data.shape[:3]), "chunk_size": [8, 8, 4],
                                   "resolution": res, "encoding": "raw"}, "create": True}
        ts.open(spec).result().translate_to[0, 0, 0, 0].write(data).result()
    got = np.frombuffer(tessera.run_ok(["read", tmp_path / "v", "--scale", "1"]).stdout, dtype="u1").reshape(4, 8, 8)
    assert np.array_equal(got, to_tessera_order(half))
    proc = tessera.run(["read", tmp_path / "v", "--scale", "2"])
    assert proc.returncode == 1 and b"scale 2" in proc.stderr
