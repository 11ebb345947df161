"""Write with tessera.create + append, read back with tessera.open: every format, dtype and rank."""

from __future__ import annotations

import numpy as np
import pytest

import tessera
from conftest import ALL_DTYPES, random_array, write_array

# Each layout: the format, its options and the location's name. Shapes are chosen so no
# dimension is a multiple of its chunk (edge chunks everywhere).
LAYOUTS = {
    "zarr3": dict(format="zarr3", chunks=(4, 4, 8), codec="zstd", name="a.zarr"),
    "zarr3-sharded": dict(format="zarr3", chunks=(4, 4, 4), shard_chunks=(2, 2, 2), codec="blosc-lz4", name="a.zarr"),
    "precomputed": dict(format="precomputed", chunks=(4, 4, 8), name="vol"),
    "precomputed-sharded": dict(format="precomputed", chunks=(4, 4, 4), shard_chunks=(2, 2, 2), name="vol"),
    "hdf5": dict(format="hdf5", chunks=(4, 4, 8), codec="gzip", name="a.h5"),
}
SHAPE = (10, 9, 13)

# What each format refuses to write (UnsupportedError naming the dtype); everything else must round-trip.
UNSUPPORTED = {
    "zarr3": set(),
    "zarr3-sharded": set(),
    "precomputed": {"bool", "float16", "float64", "complex64", "complex128"},
    "precomputed-sharded": {"bool", "float16", "float64", "complex64", "complex128"},
    "hdf5": {"bool", "complex64", "complex128"},
}


def layout_kwargs(layout: str) -> tuple[dict, str]:
    kw = dict(LAYOUTS[layout])
    return kw, kw.pop("name")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_format_and_dtype(tmp_path, rng, layout, dtype):
    kw, name = layout_kwargs(layout)
    data = random_array(rng, dtype, SHAPE)
    if dtype in UNSUPPORTED[layout]:
        with pytest.raises(tessera.UnsupportedError, match=f"^dtype: .*not {dtype}$"):
            write_array(tmp_path / name, data, **kw)
        assert not any(tmp_path.rglob("zarr.json")) and not any(tmp_path.rglob("info")) and not any(tmp_path.glob("*.h5"))
        return
    write_array(tmp_path / name, data, **kw)
    a = tessera.open(tmp_path / name)
    assert a.format == kw["format"]
    assert a.shape == SHAPE and a.dtype == np.dtype(dtype)
    assert a.ndim == 3 and a.size == data.size and len(a) == SHAPE[0] and a.nbytes == data.nbytes
    assert a.chunks == kw["chunks"]
    got = a[...]
    assert got.dtype == data.dtype and got.shape == data.shape
    np.testing.assert_array_equal(got, data)
    np.testing.assert_array_equal(np.asarray(a), data)


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("sharded", [False, True])
def test_zarr_ranks(tmp_path, rng, rank, sharded):
    shape = [7, 5, 6, 3, 4, 3][:rank]
    chunks = [3, 2, 4, 2, 3, 2][:rank]
    data = random_array(rng, "uint16", shape)
    kw = dict(chunks=chunks)
    if sharded:
        kw["shard_chunks"] = [2] * rank
    write_array(tmp_path / "a.zarr", data, **kw)
    a = tessera.open(tmp_path / "a.zarr")
    assert a.shape == tuple(shape) and a.chunks == tuple(chunks)
    if sharded:
        assert a.shards == tuple(2 * c for c in chunks)
    else:
        assert a.shards is None
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5, 6])
def test_hdf5_ranks(tmp_path, rng, rank):
    shape = [7, 5, 6, 3, 4, 3][:rank]
    data = random_array(rng, "int32", shape)
    write_array(tmp_path / "a.h5", data, chunks=[3, 2, 4, 2, 3, 2][:rank], dataset="/g/d")
    a = tessera.open(tmp_path / "a.h5", dataset="/g/d")
    assert a.format == "hdf5" and a.shape == tuple(shape)
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("sharded", [False, True])
def test_precomputed_with_channels(tmp_path, rng, sharded):
    data = random_array(rng, "uint8", (2, 9, 10, 11))  # c, z, y, x
    # a precomputed chunk holds every channel
    kw = dict(format="precomputed", chunks=(2, 4, 4, 4), resolution=(4, 4, 40), voxel_offset=(0, 0, 0))
    if sharded:
        kw["shard_chunks"] = (1, 2, 2, 2)
    write_array(tmp_path / "vol", data, **kw)
    a = tessera.open(tmp_path / "vol")
    assert a.format == "precomputed" and a.shape == data.shape
    assert a.metadata["num_channels"] == 2
    assert a.metadata["scales"][0]["resolution"] == [4, 4, 40]
    np.testing.assert_array_equal(a[...], data)


def test_metadata_fill_value_and_attributes(tmp_path, rng):
    data = random_array(rng, "float32", (5, 6))
    with tessera.create(tmp_path / "a.zarr", dtype="float32", shape=(0, 6), chunks=(2, 4), fill_value=float("nan"),
                        dimension_names=["t", "x"], attributes={"units": "nm", "scale": [1.5, 2], "n": np.int64(3)},
                        level=3) as w:
        assert w.format == "zarr3" and w.shape == (0, 6) and w.dtype == np.float32 and w.chunks == (2, 4)
        w.append(data)
    a = tessera.open(tmp_path / "a.zarr")
    md = a.metadata
    assert md["fill_value"] == "NaN"
    assert md["dimension_names"] == ["t", "x"]
    assert md["attributes"] == {"units": "nm", "scale": [1.5, 2], "n": 3}
    assert np.isnan(a.fill_value) and isinstance(a.fill_value, np.float32)
    assert a.shape == (5, 6)
    np.testing.assert_array_equal(a[...], data)
    assert "zarr3" in repr(a) and "(5, 6)" in repr(a) and "float32" in repr(a)


def test_hdf5_options_and_attributes(tmp_path, rng):
    data = random_array(rng, "uint16", (6, 7, 8))
    with tessera.create(tmp_path / "scan.h5", dtype="uint16", shape=(0, 7, 8), chunks=(2, 7, 8), codec="gzip",
                        level=6, shuffle=True, fletcher32=True, dataset="/scan/frames",
                        attributes={"exposure_ms": 2.5, "camera": "sCMOS", "binning": 2}, fill_value=7) as w:
        assert w.format == "hdf5"
        w.append(data)
    a = tessera.open(tmp_path / "scan.h5")  # the file's only dataset
    assert a.shape == data.shape and a.fill_value == 7
    np.testing.assert_array_equal(a[...], data)


def test_default_format_from_the_name(tmp_path, rng):
    data = random_array(rng, "uint8", (3, 4))
    write_array(tmp_path / "x.h5", data, chunks=(1, 4))
    write_array(tmp_path / "x.zarr", data, chunks=(1, 4))
    assert tessera.open(tmp_path / "x.h5").format == "hdf5"
    assert tessera.open(str(tmp_path / "x.zarr")).format == "zarr3"
    assert tessera.open(f"file://{tmp_path / 'x.zarr'}").format == "zarr3"


def test_default_chunks_are_filled_in(tmp_path):
    with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 512, 512)) as w:
        chunks = w.chunks
        assert len(chunks) == 3 and all(c > 0 for c in chunks)
        assert w.shard_chunks is None
        w.append(np.zeros((3, 512, 512), np.uint16))
    assert tessera.open(tmp_path / "a.zarr").chunks == chunks


def test_index_location_start(tmp_path, rng):
    data = random_array(rng, "int16", (8, 8))
    write_array(tmp_path / "a.zarr", data, chunks=(2, 2), shard_chunks=(2, 2), index_location="start")
    a = tessera.open(tmp_path / "a.zarr")
    assert a.metadata["codecs"][0]["configuration"]["index_location"] == "start"
    np.testing.assert_array_equal(a[...], data)


def test_precomputed_scales(tmp_path, rng):
    s0 = random_array(rng, "uint16", (8, 8, 8))
    s1 = s0[::2, ::2, ::2].copy()
    write_array(tmp_path / "vol", s0, format="precomputed", chunks=(4, 4, 4), scale_key="s0")
    with pytest.raises(tessera.AlreadyExistsError, match="precomputed image volume of 1 scale"):
        write_array(tmp_path / "vol", s1, format="precomputed", chunks=(4, 4, 4), scale_key="s1", resolution=(2, 2, 2))
    # mode a adds the scale the volume lacks; its other scales stay.
    write_array(tmp_path / "vol", s1, format="precomputed", chunks=(4, 4, 4), scale_key="s1", resolution=(2, 2, 2),
                mode="a")
    np.testing.assert_array_equal(tessera.open(tmp_path / "vol")[...], s0)
    np.testing.assert_array_equal(tessera.open(tmp_path / "vol", scale=1)[...], s1)


def test_compressed_segmentation(tmp_path, rng):
    data = rng.integers(0, 5, size=(8, 16, 16), dtype=np.uint32)
    write_array(tmp_path / "seg", data, format="precomputed", chunks=(8, 8, 8), encoding="compressed_segmentation",
                cseg_block=(4, 4, 4))
    a = tessera.open(tmp_path / "seg")
    assert a.metadata["scales"][0]["encoding"] == "compressed_segmentation"
    np.testing.assert_array_equal(a[...], data)


def test_discard_stores_nothing(tmp_path):
    with tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 64, 64), chunks=(4, 32, 32),
                        discard=True) as w:
        w.append(np.ones((10, 64, 64), np.uint8))
    assert w.stats.bytes_in == 10 * 64 * 64 and w.stats.shards_written > 0
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
