"""Multiscale pyramids written while streaming: every level against tensorstore's downsample driver.

The oracle: level k+1 must equal ts.downsample(level k, factors, method) element for element,
level k read back as stored. Zarr v3 levels form an OME-Zarr 0.5 image that ome-zarr-models
validates and ome-zarr reads; precomputed levels are scales of one info that tensorstore and
cloud-volume read.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorstore as ts
import zarr

import tessera

# Axes per rank (OME-Zarr images have 2..5 axes, 2 or 3 of them space).
AXES = {
    2: "y:space:micrometer,x:space:micrometer",
    3: "z:space:micrometer,y:space:micrometer,x:space:micrometer",
    4: "c:channel,z:space,y:space,x:space",
    5: "t:time:second,c:channel,z:space,y:space,x:space",
}
ORDERED_DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "int64", "uint64", "float32", "float64"]


def oracle(level: np.ndarray, factors, method: str) -> np.ndarray:
    return ts.downsample(ts.array(level), list(factors), method).read().result()


def random_data(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.integers(-1000, 1000, size=shape) / 7).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dt)
    # Mostly small values (ties in mode and median), some near the extremes (overflowing sums).
    small = rng.integers(max(info.min, -3), min(info.max, 4), size=shape, endpoint=True)
    big = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
    return np.where(rng.random(shape) < 0.2, big, small.astype(dt)).astype(dt)


def stream(path, data, chunks, append_rng, flush_at=None, **kwargs):
    """Streams `data` (unbounded along dimension 0) in appends of a random number of frames
    (sometimes a single frame without its leading axis), with an optional flush part-way."""
    w = tessera.create(path, dtype=data.dtype, shape=(0, *data.shape[1:]), chunks=chunks, **kwargs)
    pos, flushed = 0, False
    while pos < len(data):
        n = int(append_rng.integers(1, max(2, len(data) // 2 + 1)))
        w.append(data[pos] if n == 1 and append_rng.random() < 0.5 else data[pos:pos + n])
        pos += n
        if flush_at is not None and not flushed and pos >= flush_at * len(data):
            w.flush()
            flushed = True
    w.close()
    return w


@pytest.mark.parametrize("case", range(24))
def test_random_pyramids_equal_tensorstore_downsample(tmp_path, rng, case):
    rank = int(rng.integers(2, 6))
    dtype = ORDERED_DTYPES[int(rng.integers(len(ORDERED_DTYPES)))]
    methods = ["mean", "min", "max", "stride"] + ([] if np.dtype(dtype).kind == "f" else ["median", "mode"])
    method = methods[int(rng.integers(len(methods)))]
    shape = [int(rng.integers(1, 14 if rank <= 3 else 7)) for _ in range(rank)]
    chunks = [int(rng.integers(1, 6)) for _ in range(rank)]
    axes = AXES[rank].split(",")
    factors = [int(rng.integers(1, 3)) if a.split(":")[1] == "space" or rng.random() < 0.3 else 1 for a in axes]
    if all(f == 1 for f in factors):
        factors[-1] = 2
    levels = int(rng.integers(2, 5))
    data = random_data(rng, dtype, shape)
    path = tmp_path / "img.zarr"
    shard = [int(rng.integers(1, 3)) for _ in range(rank)] if rng.random() < 0.5 else None
    stream(path, data, chunks, rng, flush_at=0.5 if rng.random() < 0.4 else None, pyramid=levels,
           downsample=method, downsample_factors=factors, axes=AXES[rank], shard_chunks=shard, codec="zstd")

    group = zarr.open_group(str(path), mode="r")
    ms = group.attrs["ome"]["multiscales"][0]
    assert [d["path"] for d in ms["datasets"]] == [str(k) for k in range(levels)]
    assert ms["type"] == method
    previous = data
    for k in range(levels):
        got = group[str(k)][...]
        if k == 0:
            np.testing.assert_array_equal(got, data)
        else:
            want = oracle(previous, factors, method)
            assert got.shape == want.shape, (k, got.shape, want.shape)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"level {k} ({method}, {dtype}, factors {factors})")
        # tessera reads the level too, and the arrays name their dimensions as the axes.
        np.testing.assert_array_equal(tessera.open(path, level=k)[...], got)
        assert list(group[str(k)].metadata.dimension_names) == [a.split(":")[0] for a in axes]
        previous = got


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int32", "float32", "float64"])
def test_camera_stream_time_axis_not_downsampled(tmp_path, rng, dtype):
    """A (t, y, x) stream: the default factors keep t and halve y and x, through odd sizes."""
    data = random_data(rng, dtype, (7, 37, 29))
    path = tmp_path / "cam.zarr"
    stream(path, data, (4, 16, 16), rng, pyramid="auto", dimension_names=["t", "y", "x"], codec="blosc-lz4",
           shard_chunks=(1, 2, 2))
    group = zarr.open_group(str(path), mode="r")
    ms = group.attrs["ome"]["multiscales"][0]
    assert [a["type"] for a in ms["axes"]] == ["time", "space", "space"]
    # auto: until every dimension (but the unbounded t) fits one 16x16 chunk: 37 -> 19 -> 10.
    assert len(ms["datasets"]) == 3
    previous = data
    for k in range(1, 3):
        got = group[str(k)][...]
        np.testing.assert_array_equal(got, oracle(previous, [1, 2, 2], "mean"))
        previous = got
    scale = ms["datasets"][2]["coordinateTransformations"][0]["scale"]
    assert scale == [1.0, 4.0, 4.0]


def test_stream_ending_inside_a_block_along_dimension_0(tmp_path, rng):
    """A z-stack of 9 planes with factor 2 along z: the last level-1 plane reduces one plane."""
    data = random_data(rng, "uint16", (9, 10, 12))
    path = tmp_path / "z.zarr"
    stream(path, data, (2, 5, 5), rng, pyramid=3, downsample="median", flush_at=0.3)
    group = zarr.open_group(str(path), mode="r")
    l1, l2 = group["1"][...], group["2"][...]
    assert l1.shape == (5, 5, 6) and l2.shape == (3, 3, 3)
    np.testing.assert_array_equal(l1, oracle(data, [2, 2, 2], "median"))
    np.testing.assert_array_equal(l2, oracle(l1, [2, 2, 2], "median"))


def test_flush_publishes_every_level_as_far_as_complete(tmp_path, rng):
    data = random_data(rng, "uint8", (8, 16, 16))
    path = tmp_path / "f.zarr"
    w = tessera.create(path, dtype="uint8", shape=(0, 16, 16), chunks=(2, 8, 8), pyramid=3,
                       dimension_names=["z", "y", "x"])
    w.append(data[:5])
    w.flush()
    group = zarr.open_group(str(path), mode="r")
    # 5 planes: level 1 has the 2 complete pairs, level 2 the 1 complete pair of those.
    assert group["0"].shape == (5, 16, 16)
    assert group["1"].shape == (2, 8, 8)
    assert group["2"].shape == (1, 4, 4)
    np.testing.assert_array_equal(group["1"][...], oracle(data[:4], [2, 2, 2], "mean"))
    w.append(data[5:])
    w.close()
    group = zarr.open_group(str(path), mode="r")
    np.testing.assert_array_equal(group["1"][...], oracle(data, [2, 2, 2], "mean"))
    np.testing.assert_array_equal(group["2"][...], oracle(group["1"][...], [2, 2, 2], "mean"))


def test_ome_zarr_models_and_ome_zarr_read_the_image(tmp_path, rng):
    from ome_zarr_models.v05.image import Image

    data = random_data(rng, "uint16", (3, 2, 12, 20, 18))
    path = tmp_path / "image.ome.zarr"
    stream(path, data, (1, 1, 4, 8, 8), rng, pyramid=3, axes=AXES[5], voxel_size=[2.0, 1.0, 0.5, 0.25, 0.25])
    image = Image.from_zarr(zarr.open_group(str(path), mode="r"))
    assert len(image.attributes.ome.multiscales[0].datasets) == 3

    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader

    nodes = list(Reader(parse_url(str(path)))())
    pyramid = nodes[0].data
    assert len(pyramid) == 3
    group = zarr.open_group(str(path), mode="r")
    for k in range(3):
        np.testing.assert_array_equal(np.asarray(pyramid[k]), group[str(k)][...])
    meta = json.loads((path / "zarr.json").read_text())["attributes"]["ome"]["multiscales"][0]
    t1 = meta["datasets"][1]["coordinateTransformations"]
    assert t1[0]["scale"] == [2.0, 1.0, 1.0, 0.5, 0.5]
    assert t1[1]["translation"] == [0.0, 0.0, 0.25, 0.125, 0.125]


def test_single_level_ome_image(tmp_path, rng):
    data = random_data(rng, "int16", (4, 6, 5))
    path = tmp_path / "one.zarr"
    stream(path, data, (2, 3, 3), rng, ome=True)
    group = zarr.open_group(str(path), mode="r")
    assert [d["path"] for d in group.attrs["ome"]["multiscales"][0]["datasets"]] == ["0"]
    a = tessera.open(path)
    assert a.level == 0 and len(a.levels) == 1
    np.testing.assert_array_equal(a[...], data)


def test_levels_property_and_level_errors(tmp_path, rng):
    data = random_data(rng, "uint8", (4, 8, 8))
    path = tmp_path / "l.zarr"
    stream(path, data, (2, 4, 4), rng, pyramid=3)
    a = tessera.open(path)
    assert [lv.shape for lv in a.levels] == [(4, 8, 8), (2, 4, 4), (1, 2, 2)]
    assert [lv.level for lv in a.levels] == [0, 1, 2]
    with pytest.raises(tessera.OutOfRangeError, match="level: 3 is not a level"):
        tessera.open(path, level=3)
    with pytest.raises(tessera.InvalidArgumentError, match="level"):
        tessera.open(path / "0", level=1)


@pytest.mark.parametrize("method", ["mean", "mode", "max"])
def test_precomputed_scales_equal_tensorstore_downsample(tmp_path, rng, method):
    data = random_data(rng, "uint32" if method == "mode" else "uint8", (21, 18, 33))
    path = tmp_path / "vol"
    w = tessera.create(path, format="precomputed", dtype=data.dtype, shape=data.shape, chunks=(8, 8, 8),
                       pyramid=3, downsample=method, resolution=(4, 4, 40), voxel_offset=(3, -5, 7))
    w.append(data)
    w.close()
    info = json.loads((path / "info").read_text())
    assert [s["key"] for s in info["scales"]] == ["s0", "s1", "s2"]
    assert info["scales"][1]["resolution"] == [8, 8, 80]
    assert info["scales"][1]["voxel_offset"] == [1, -3, 3]
    assert info["scales"][2]["size"] == [9, 5, 6]
    previous = data
    for k, scale in enumerate(info["scales"]):
        store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": f"file://{path}",
                         "scale_index": k}).result()
        got = store.read().result()[..., 0].transpose(2, 1, 0)  # x, y, z, c -> z, y, x
        if k > 0:
            np.testing.assert_array_equal(got, oracle(previous, [2, 2, 2], method))
        else:
            np.testing.assert_array_equal(got, data)
        np.testing.assert_array_equal(tessera.open(path, level=k)[...], got)
        # cloud-volume reads the same scale (x, y, z, c; its bounds start at the voxel offset).
        from cloudvolume import CloudVolume

        cv = CloudVolume(f"file://{path}", mip=k, progress=False, fill_missing=False)
        np.testing.assert_array_equal(np.asarray(cv[:, :, :])[..., 0].transpose(2, 1, 0), got)
        previous = got


def test_pyramid_errors(tmp_path):
    with pytest.raises(tessera.UnsupportedError, match="pyramid"):
        tessera.create(tmp_path / "a.h5", dtype="uint8", shape=(0, 8, 8), pyramid=2)
    with pytest.raises(tessera.UnsupportedError, match="downsample"):
        tessera.create(tmp_path / "c.zarr", dtype="complex64", shape=(0, 8, 8), chunks=(1, 4, 4), pyramid=2,
                       downsample="median")
    with pytest.raises(ValueError, match="axes"):
        tessera.create(tmp_path / "d.zarr", dtype="uint8", shape=(0, 8, 8), chunks=(1, 4, 4), pyramid=2,
                       axes="y:space,x:space,t:time")
    with pytest.raises(ValueError, match="downsample_factors"):
        tessera.create(tmp_path / "e.zarr", dtype="uint8", shape=(0, 8, 8), chunks=(1, 4, 4), pyramid=2,
                       downsample_factors=[1, 1, 1])
    with pytest.raises(ValueError, match="downsample"):
        tessera.create(tmp_path / "f.zarr", dtype="uint8", shape=(0, 8, 8), chunks=(1, 4, 4), downsample="mean")
    assert not (tmp_path / "d.zarr").exists() and not (tmp_path / "e.zarr").exists()


@pytest.mark.parametrize("dtype,methods", [
    ("bool", ["mean", "min", "max", "median", "mode", "stride"]),
    ("float16", ["mean", "min", "max", "median", "mode", "stride"]),
    ("complex64", ["mean", "mode", "stride"]),
    ("complex128", ["mean", "mode", "stride"]),
])
def test_other_dtypes_equal_tensorstore_downsample(tmp_path, rng, dtype, methods):
    for i, method in enumerate(methods):
        shape = [int(rng.integers(1, 9)), int(rng.integers(1, 12)), int(rng.integers(1, 12))]
        if dtype == "bool":
            data = rng.integers(0, 2, size=shape).astype(bool)
        elif dtype == "float16":
            data = (rng.integers(-300, 300, size=shape) / 7).astype(np.float16)
        else:
            data = (rng.integers(-5, 5, size=shape) + 1j * rng.integers(-5, 5, size=shape)).astype(dtype)
        path = tmp_path / f"{method}.zarr"
        stream(path, data, (2, 4, 4), rng, pyramid=3, downsample=method, axes=AXES[3], codec="zstd")
        group = zarr.open_group(str(path), mode="r")
        previous = data
        for k in range(1, 3):
            got = group[str(k)][...]
            np.testing.assert_array_equal(got, oracle(previous, [2, 2, 2], method), err_msg=f"{dtype} {method} level {k}")
            previous = got
