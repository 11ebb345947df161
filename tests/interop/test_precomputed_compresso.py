"""Neuroglancer precomputed segmentation volumes with compresso chunks, both directions, against
cloud-volume and the reference encoder (the PyPI `compresso` package, which cloud-volume uses).

cloud-volume writes compresso volumes (uint8 to uint64 labels, unsharded and sharded, edge chunks);
tessera reads them exactly. tessera writes them (a stream, a pyramid by mode, a region write) and
every chunk is byte for byte what compresso.compress makes of the same labels; cloud-volume reads
them exactly. tensorstore has no compresso, so it is not a peer here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tessera


def labels(rng, dtype: str, size_xyz) -> np.ndarray:
    """[x, y, z] segmentation-like labels: blocky regions with ragged borders and a few specks."""
    info = np.iinfo(dtype)
    coarse = rng.integers(1, min(info.max, 2**40), size=tuple(n // 5 + 1 for n in size_xyz), dtype=np.uint64)
    out = np.repeat(np.repeat(np.repeat(coarse, 5, 0), 5, 1), 5, 2)[: size_xyz[0], : size_xyz[1], : size_xyz[2]]
    specks = rng.random(size_xyz) < 0.02
    out = np.where(specks, rng.integers(0, 5, size=size_xyz), out)
    return out.astype(dtype)


def czyx(xyz: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(xyz, (2, 1, 0)))


def cloudvolume_write(path, data_xyz, chunk, sharded=False) -> None:
    from cloudvolume import CloudVolume

    info = CloudVolume.create_new_info(num_channels=1, layer_type="segmentation", data_type=str(data_xyz.dtype),
                                       encoding="compresso", resolution=[8, 8, 40], voxel_offset=[0, 0, 0],
                                       chunk_size=list(chunk), volume_size=list(data_xyz.shape))
    vol = CloudVolume("file://" + str(path), info=info, compress=False, progress=False)
    if sharded:
        from cloudvolume.datasource.precomputed.sharding import ShardingSpecification

        spec = ShardingSpecification("neuroglancer_uint64_sharded_v1", preshift_bits=3, hash="identity",
                                     minishard_bits=2, shard_bits=1, minishard_index_encoding="raw",
                                     data_encoding="raw")
        vol.scale["sharding"] = spec.to_dict()
    vol.commit_info()
    vol[:, :, :] = data_xyz[..., np.newaxis]


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_reads_what_cloudvolume_writes(tmp_path, dtype):
    rng = np.random.default_rng(np.iinfo(dtype).bits)
    data = labels(rng, dtype, (37, 29, 11))  # edge chunks in every dimension
    cloudvolume_write(tmp_path / "v", data, (16, 16, 8))
    got = tessera.open(tmp_path / "v")[...]
    assert got.dtype == np.dtype(dtype)
    assert np.array_equal(got, czyx(data))
    assert np.array_equal(tessera.open(tmp_path / "v")[2:9, ::3, 5:30:2], czyx(data)[2:9, ::3, 5:30:2])


def test_reads_a_sharded_cloudvolume_volume(tmp_path):
    rng = np.random.default_rng(2)
    data = labels(rng, "uint64", (32, 32, 16))
    cloudvolume_write(tmp_path / "v", data, (8, 8, 8), sharded=True)
    assert "sharding" in json.loads((tmp_path / "v" / "info").read_text())["scales"][0]
    assert np.array_equal(tessera.open(tmp_path / "v")[...], czyx(data))


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "uint64"])
def test_tessera_writes_what_compresso_and_cloudvolume_read(tmp_path, dtype):
    import compresso
    from cloudvolume import CloudVolume

    rng = np.random.default_rng(5)
    data = czyx(labels(rng, dtype, (40, 27, 13)))  # z, y, x
    path = tmp_path / "v"
    with tessera.create(path, format="precomputed", dtype=dtype, shape=data.shape, chunks=(8, 16, 16),
                        encoding="compresso") as w:
        w.append(data)
    info = json.loads((path / "info").read_text())
    assert info["type"] == "segmentation" and info["scales"][0]["encoding"] == "compresso"
    # Every chunk: the reference encoder's bytes for the same labels.
    chunks = sorted((path / info["scales"][0]["key"]).iterdir())
    assert chunks
    for f in chunks:
        (x0, x1), (y0, y1), (z0, z1) = ((int(a), int(b)) for a, b in (r.split("-") for r in f.name.split("_")))
        block = np.asfortranarray(np.transpose(data[z0:z1, y0:y1, x0:x1], (2, 1, 0)))
        assert f.read_bytes() == bytes(compresso.compress(block)), f.name
    by_cloudvolume = np.asarray(CloudVolume("file://" + str(path), progress=False)[:, :, :])[..., 0]
    assert np.array_equal(czyx(by_cloudvolume), data)
    assert np.array_equal(tessera.open(path)[...], data)


def test_compresso_pyramid_by_mode_and_region_write(tmp_path):
    from cloudvolume import CloudVolume

    rng = np.random.default_rng(8)
    data = czyx(labels(rng, "uint32", (32, 32, 16)))
    path = tmp_path / "v"
    with tessera.create(path, format="precomputed", dtype="uint32", shape=data.shape, chunks=(8, 16, 16),
                        encoding="compresso", pyramid=2) as w:
        for z in range(data.shape[0]):
            w.append(data[z])
    info = json.loads((path / "info").read_text())
    assert [s["encoding"] for s in info["scales"]] == ["compresso", "compresso"]
    level1 = tessera.open(path, scale=1)[...]
    assert level1.shape == (8, 16, 16)
    # Labels downsample by mode: every level-1 label is one of its 2x2x2 block's.
    blocks = data.reshape(8, 2, 16, 2, 16, 2).transpose(0, 2, 4, 1, 3, 5).reshape(8, 16, 16, 8)
    assert all(level1[i] in blocks[i] for i in np.ndindex(level1.shape))
    a = tessera.open(path, mode="r+")
    a[3:5, 10:20, 0:7] = 77
    data[3:5, 10:20, 0:7] = 77
    assert np.array_equal(tessera.open(path)[...], data)
    by_cloudvolume = np.asarray(CloudVolume("file://" + str(path), mip=0, progress=False)[:, :, :])[..., 0]
    assert np.array_equal(czyx(by_cloudvolume), data)


def test_a_corrupt_compresso_chunk_is_an_error_naming_it(tmp_path):
    rng = np.random.default_rng(9)
    data = czyx(labels(rng, "uint16", (16, 16, 8)))
    path = tmp_path / "v"
    with tessera.create(path, format="precomputed", dtype="uint16", shape=data.shape, chunks=(8, 16, 16),
                        encoding="compresso") as w:
        w.append(data)
    chunk = path / "s0" / "0-16_0-16_0-8"
    chunk.write_bytes(chunk.read_bytes()[:-3])
    with pytest.raises(tessera.CorruptDataError) as e:
        tessera.open(path)[...]
    assert "0-16_0-16_0-8" in str(e.value)
