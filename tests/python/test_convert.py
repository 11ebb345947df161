"""tessera.convert and `tessera convert`: every format into every other, the defaults a tessera source
gives, array-likes read slab by slab, pyramids, errors; outputs read back with the real peers
(zarr-python 3, h5py, tensorstore) and compared exactly, and byte for byte with `tessera stream` and
tessera.create + append of the same values."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tessera
from conftest import REPO_ROOT, random_array, write_array

# The layouts arrays are converted from and into. Chunks (4, 5, 6) divide none of the shapes below.
LAYOUTS = {
    "zarr3": dict(format="zarr3", chunks=(4, 5, 6), codec="zstd"),
    "zarr3-sharded": dict(format="zarr3", chunks=(4, 5, 6), shard_chunks=(2, 2, 2), codec="blosc-zstd"),
    "hdf5": dict(format="hdf5", chunks=(4, 5, 6), codec="gzip", shuffle=True),
    "precomputed": dict(format="precomputed", chunks=(4, 5, 6)),
    "precomputed-sharded": dict(format="precomputed", chunks=(4, 5, 6), shard_chunks=(2, 2, 2)),
}
NAMES = {"zarr3": "a.zarr", "hdf5": "a.h5", "precomputed": "vol"}
# What the destination is asked for: sharded layouts their own (different) chunking, unsharded ones
# shard_chunks=None; the rest (chunks of unsharded layouts, codec, ...) comes from the source.
DESTINATION_OPTIONS = {
    "zarr3": dict(shard_chunks=None),
    "zarr3-sharded": dict(chunks=(3, 4, 5), shard_chunks=(2, 2, 2)),
    "hdf5": dict(shard_chunks=None),
    "precomputed": dict(shard_chunks=None),
    "precomputed-sharded": dict(chunks=(4, 4, 4), shard_chunks=(2, 2, 2)),
}
# A codec each destination writes, chosen where the source's is one the destination does not write
# (a conversion never drops a codec unasked: without a choice that is an error naming it).
CHOSEN_CODEC = {"zarr3": "zstd", "hdf5": "gzip", "precomputed": "none"}
PAIRS = [(s, d) for s in LAYOUTS for d in LAYOUTS
         if LAYOUTS[s]["format"] != LAYOUTS[d]["format"] or {s, d} == {"zarr3", "zarr3-sharded"}]
SHAPES = [(11, 13, 17), (9, 14, 19), (13, 7, 23), (6, 11, 13)]
DTYPES = ["uint8", "uint16", "int32", "float32", "uint64", "int16", "int8", "uint32", "int64"]


def fmt_of(layout: str) -> str:
    return LAYOUTS[layout]["format"]


def read_with_peer(path: Path, fmt: str, dataset: str = "/data", scale_index: int = 0) -> np.ndarray:
    """The array at PATH as zarr-python 3, h5py or tensorstore reads it, in tessera's C order."""
    if fmt == "zarr3":
        import zarr

        return zarr.open_array(str(path), mode="r")[...]
    if fmt == "hdf5":
        import h5py

        with h5py.File(path, "r") as f:
            return f[dataset][...]
    import tensorstore as ts

    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)},
                 "scale_index": scale_index}).result()
    xyzc = t.read().result()  # x, y, z, channel
    data = xyzc.transpose(3, 2, 1, 0)
    return data[0] if data.shape[0] == 1 else data


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ROOT (or ROOT itself, a file) by relative path."""
    if root.is_file():
        return {"": root.read_bytes()}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_same_tree(a: Path, b: Path) -> None:
    ta, tb = tree_bytes(a), tree_bytes(b)
    assert sorted(ta) == sorted(tb)
    different = [k for k in ta if ta[k] != tb[k]]
    assert not different, f"files that differ: {different}"


def cli_binary() -> Path:
    binary = Path(os.environ.get("TESSERA_BIN", REPO_ROOT / "build" / "release" / "tessera"))
    if not binary.is_file():  # the test command builds it first: a missing CLI is a failure, never a skip
        pytest.fail(f"the tessera CLI is not built ({binary}): build it with scripts/build.sh (or set TESSERA_BIN)",
                    pytrace=False)
    return binary


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli_binary()), *map(str, args)], capture_output=True, text=True, timeout=60)


# --- every format into every other ------------------------------------------------------------------


@pytest.mark.parametrize("src_layout,dst_layout", PAIRS, ids=[f"{s}-to-{d}" for s, d in PAIRS])
def test_each_direction(tmp_path, rng, src_layout, dst_layout):
    i = PAIRS.index((src_layout, dst_layout))
    shape, dtype = SHAPES[i % len(SHAPES)], DTYPES[i % len(DTYPES)]
    data = random_array(rng, dtype, shape)
    src = tmp_path / "src" / NAMES[fmt_of(src_layout)]
    src.parent.mkdir()
    write_array(src, data, **LAYOUTS[src_layout])
    dst = tmp_path / "dst" / NAMES[fmt_of(dst_layout)]
    dst.parent.mkdir()

    options = dict(DESTINATION_OPTIONS[dst_layout])
    # Zarr's zstd and blosc, HDF5's gzip with shuffle: none of them another format writes whole.
    if fmt_of(src_layout) in ("zarr3", "hdf5") and fmt_of(src_layout) != fmt_of(dst_layout):
        with pytest.raises(tessera.UnsupportedError, match=f"{fmt_of(dst_layout)} does not write the source's"):
            tessera.convert(src, dst, format=fmt_of(dst_layout), threads=2, **options)
        assert not dst.exists()
        options["codec"] = CHOSEN_CODEC[fmt_of(dst_layout)]
    stats = tessera.convert(src, dst, format=fmt_of(dst_layout), threads=2, **options)

    assert stats.bytes_in == data.nbytes and stats.rows_published == shape[0]
    got = read_with_peer(dst, fmt_of(dst_layout))
    assert got.dtype == data.dtype and got.shape == data.shape
    np.testing.assert_array_equal(got, data)
    a = tessera.open(dst)
    assert a.format == fmt_of(dst_layout) and a.shape == shape and a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a[...], data)
    # The chunk shape: the one asked for, else the source's (which every format here takes).
    assert a.chunks == DESTINATION_OPTIONS[dst_layout].get("chunks", LAYOUTS[src_layout]["chunks"])
    if dst_layout == "zarr3-sharded":
        assert a.shards == (6, 8, 10)
    elif fmt_of(dst_layout) == "zarr3":
        assert a.shards is None
    if fmt_of(dst_layout) == "precomputed":
        assert ("sharding" in a.metadata["scales"][0]) == (dst_layout == "precomputed-sharded")


@pytest.mark.parametrize("middle", ["precomputed", "precomputed-sharded"])
def test_channels_through_precomputed_and_back(tmp_path, rng, middle):
    """A (c, z, y, x) Zarr array into a precomputed volume (its chunks, one channel each, do not fit:
    chunks are given), then back into HDF5 and Zarr with the volume's chunking."""
    data = random_array(rng, "uint16", (3, 7, 9, 10))
    write_array(tmp_path / "a.zarr", data, chunks=(1, 4, 4, 4), shard_chunks=(1, 2, 2, 2))
    kw = dict(shard_chunks=(1, 2, 2, 2)) if middle.endswith("sharded") else dict(shard_chunks=None)
    tessera.convert(tmp_path / "a.zarr", tmp_path / "vol", format="precomputed", chunks=(3, 4, 4, 4), codec="none",
                    **kw)
    np.testing.assert_array_equal(read_with_peer(tmp_path / "vol", "precomputed"), data)
    assert tessera.open(tmp_path / "vol").metadata["num_channels"] == 3

    tessera.convert(tmp_path / "vol", tmp_path / "b.h5")
    tessera.convert(tmp_path / "vol", tmp_path / "b.zarr")
    for out, fmt in [(tmp_path / "b.h5", "hdf5"), (tmp_path / "b.zarr", "zarr3")]:
        np.testing.assert_array_equal(read_with_peer(out, fmt), data)
        assert tessera.open(out).chunks == (3, 4, 4, 4)


def test_precomputed_without_chunks_that_fit_gets_its_default(tmp_path, rng):
    data = random_array(rng, "int32", (2, 5, 6, 7))
    write_array(tmp_path / "a.zarr", data, chunks=(1, 2, 3, 4))  # a precomputed chunk holds every channel
    tessera.convert(tmp_path / "a.zarr", tmp_path / "vol", format="precomputed", codec="none")
    assert tessera.open(tmp_path / "vol").chunks[0] == 2
    np.testing.assert_array_equal(read_with_peer(tmp_path / "vol", "precomputed"), data)


# --- the defaults a tessera source gives --------------------------------------------------------------

SOURCE_ATTRIBUTES = {"exposure_ms": 2.5, "frames": 7, "detector": "sCMOS", "binning": [2, 2],
                     "nested": {"k": 1}}


@pytest.fixture
def sharded_source(tmp_path, rng):
    """A sharded blosc-lz4 (level 3) Zarr array with a fill value, dimension names and attributes."""
    data = random_array(rng, "uint16", (10, 9, 13))
    path = tmp_path / "src.zarr"
    write_array(path, data, chunks=(4, 4, 4), shard_chunks=(2, 2, 2), codec="blosc-lz4", level=3, fill_value=7,
                dimension_names=["z", "y", "x"], attributes=SOURCE_ATTRIBUTES)
    return path, data


def blosc_of(z):
    """The (cname, clevel) of a sharded zarr-python array's inner blosc codec."""
    (sharding,) = z.metadata.codecs
    (blosc,) = [c for c in sharding.codecs if type(c).__name__ == "BloscCodec"]
    return str(blosc.cname.value), blosc.clevel


def test_zarr_defaults_carried_into_zarr(tmp_path, sharded_source):
    import zarr

    src, data = sharded_source
    tessera.convert(src, tmp_path / "out.zarr")
    z = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(z[...], data)
    assert z.chunks == (4, 4, 4) and z.shards == (8, 8, 8)
    assert blosc_of(z) == ("lz4", 3)
    assert z.metadata.codecs[0].index_location.value == "end"
    assert z.metadata.fill_value == 7
    assert tuple(z.metadata.dimension_names) == ("z", "y", "x")
    assert dict(z.attrs) == SOURCE_ATTRIBUTES
    # Everything but the data is what the source says: the metadata documents are equal.
    assert tessera.open(tmp_path / "out.zarr").metadata == tessera.open(src).metadata
    assert_same_tree(src, tmp_path / "out.zarr")  # and so are the bytes


def test_zarr_defaults_into_hdf5(tmp_path, sharded_source):
    import h5py

    src, data = sharded_source
    # blosc is no HDF5 filter: never dropped unasked.
    with pytest.raises(tessera.UnsupportedError, match="hdf5 does not write the source's blosc-lz4 level 3") as e:
        tessera.convert(src, tmp_path / "out.h5")
    assert "choose the codec" in str(e.value) and not (tmp_path / "out.h5").exists()
    tessera.convert(src, tmp_path / "out.h5", codec="none")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert list(f) == ["data"]
        d = f["data"]
        np.testing.assert_array_equal(d[...], data)
        assert d.chunks == (4, 4, 4)  # HDF5 has no shards: the inner chunks
        assert d.compression is None  # as chosen
        assert d.fillvalue == 7
        attrs = dict(d.attrs)
    assert set(attrs) == {"exposure_ms", "frames", "detector", "binning"}  # the nested dict does not fit
    assert attrs["exposure_ms"] == 2.5 and attrs["frames"] == 7
    assert list(attrs["binning"]) == [2, 2]
    detector = attrs["detector"]
    assert (detector.decode() if isinstance(detector, bytes) else detector) == "sCMOS"


def test_hdf5_defaults_carried_into_zarr_and_hdf5(tmp_path, rng):
    import h5py
    import zarr

    data = random_array(rng, "float32", (9, 8, 7))
    write_array(tmp_path / "src.h5", data, chunks=(2, 3, 7), codec="gzip", level=6, shuffle=True, fletcher32=True,
                fill_value=-1.5, dataset="/scan/frames", attributes={"exposure": 2.5, "name": "run 1"})
    # Zarr v3 has no shuffle filter: never dropped unasked; the codec chosen, HDF5's filters go.
    with pytest.raises(tessera.UnsupportedError, match="zarr3 does not write the source's shuffle filter"):
        tessera.convert(tmp_path / "src.h5", tmp_path / "out.zarr")
    tessera.convert(tmp_path / "src.h5", tmp_path / "out.zarr", codec="gzip", level=6)
    z = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(z[...], data)
    assert z.chunks == (2, 3, 7) and z.shards is None
    assert [c.to_dict()["name"] for c in z.metadata.codecs] == ["bytes", "gzip"]
    assert z.metadata.codecs[1].level == 6
    assert z.metadata.fill_value == np.float32(-1.5)
    assert dict(z.attrs) == {"exposure": 2.5, "name": "run 1"}

    tessera.convert(tmp_path / "src.h5", tmp_path / "out.h5")  # HDF5 to HDF5: the dataset path and filters too
    with h5py.File(tmp_path / "out.h5", "r") as f:
        d = f["/scan/frames"]
        np.testing.assert_array_equal(d[...], data)
        assert d.chunks == (2, 3, 7) and d.compression == "gzip" and d.compression_opts == 6
        assert d.shuffle and d.fletcher32 and d.fillvalue == np.float32(-1.5)


@pytest.mark.parametrize("override,expect", [
    (dict(shard_chunks=None), dict(chunks=(4, 4, 4), shards=None, codec=("blosc", "lz4", 3))),
    (dict(codec="gzip", level=6), dict(chunks=(4, 4, 4), shards=(8, 8, 8), codec=("gzip", None, 6))),
    (dict(codec="blosc-zstd"), dict(chunks=(4, 4, 4), shards=(8, 8, 8), codec=("blosc", "zstd", 5))),  # a new codec: its default level
    (dict(chunks=(5, 3, 3)), dict(chunks=(5, 3, 3), shards=(10, 6, 6), codec=("blosc", "lz4", 3))),
    (dict(shard_chunks=(1, 3, 3), codec="none", level=None), dict(chunks=(4, 4, 4), shards=(4, 12, 12), codec=None)),
], ids=["unsharded", "gzip", "blosc-zstd", "chunks", "shards-none"])
def test_options_override_the_defaults(tmp_path, sharded_source, override, expect):
    import zarr

    src, data = sharded_source
    tessera.convert(src, tmp_path / "out.zarr", fill_value=3, attributes={"only": "this"}, **override)
    z = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    np.testing.assert_array_equal(z[...], data)
    assert z.chunks == expect["chunks"] and z.shards == expect["shards"]
    codecs = z.metadata.codecs[0].codecs if expect["shards"] else z.metadata.codecs
    compressors = [c.to_dict() for c in codecs if c.to_dict()["name"] != "bytes"]
    if expect["codec"] is None:
        assert compressors == []
    else:
        name, cname, level = expect["codec"]
        (c,) = compressors
        assert c["name"] == name
        if name == "blosc":
            assert (c["configuration"]["cname"], c["configuration"]["clevel"]) == (cname, level)
        else:
            assert c["configuration"]["level"] == level
    assert z.metadata.fill_value == 3 and dict(z.attrs) == {"only": "this"}
    assert tuple(z.metadata.dimension_names) == ("z", "y", "x")  # not overridden: still the source's


def test_index_location_carried(tmp_path, rng):
    import zarr

    data = random_array(rng, "uint16", (10, 9, 13))
    write_array(tmp_path / "src.zarr", data, chunks=(4, 4, 4), shard_chunks=(2, 2, 2), index_location="start")
    tessera.convert(tmp_path / "src.zarr", tmp_path / "out.zarr")
    z = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert z.metadata.codecs[0].index_location.value == "start"
    np.testing.assert_array_equal(z[...], data)
    assert_same_tree(tmp_path / "src.zarr", tmp_path / "out.zarr")


def test_unsharded_from_a_source_with_the_index_at_start(tmp_path, rng):
    data = random_array(rng, "uint16", (10, 9, 13))
    write_array(tmp_path / "src.zarr", data, chunks=(4, 4, 4), shard_chunks=(2, 2, 2), index_location="start")
    tessera.convert(tmp_path / "src.zarr", tmp_path / "out.zarr", shard_chunks=None)
    assert tessera.open(tmp_path / "out.zarr").shards is None
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.zarr", "zarr3"), data)


def test_cli_unsharded_from_a_source_with_the_index_at_start(tmp_path, rng):
    data = random_array(rng, "uint16", (10, 9, 13))
    write_array(tmp_path / "src.zarr", data, chunks=(4, 4, 4), shard_chunks=(2, 2, 2), index_location="start")
    proc = run_cli("convert", tmp_path / "src.zarr", tmp_path / "out.zarr", "--shard-chunks", "none")
    assert proc.returncode == 0, proc.stderr
    assert tessera.open(tmp_path / "out.zarr").shards is None
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.zarr", "zarr3"), data)


@pytest.mark.parametrize("source_codec,source_level,codec", [("zstd", 15, "gzip"), ("blosc-lz4", 3, "none")])
def test_codec_override_without_level_takes_the_codecs_default_level(tmp_path, rng, source_codec, source_level,
                                                                     codec):
    data = random_array(rng, "uint16", (6, 5, 4))
    write_array(tmp_path / "src.zarr", data, chunks=(3, 5, 4), codec=source_codec, level=source_level)
    tessera.convert(tmp_path / "src.zarr", tmp_path / "py.zarr", codec=codec)
    write_array(tmp_path / "create.zarr", data, chunks=(3, 5, 4), codec=codec)
    assert_same_tree(tmp_path / "py.zarr", tmp_path / "create.zarr")


def test_cli_codec_override_takes_the_codecs_default_level(tmp_path, rng):
    data = random_array(rng, "uint16", (6, 5, 4))
    write_array(tmp_path / "src.zarr", data, chunks=(3, 5, 4), codec="zstd", level=15)
    for codec in ["gzip", "none"]:
        proc = run_cli("convert", tmp_path / "src.zarr", tmp_path / f"cli-{codec}.zarr", "--codec", codec)
        assert proc.returncode == 0, proc.stderr
        write_array(tmp_path / f"create-{codec}.zarr", data, chunks=(3, 5, 4), codec=codec)
        assert_same_tree(tmp_path / f"cli-{codec}.zarr", tmp_path / f"create-{codec}.zarr")


def test_precomputed_options_carried(tmp_path, rng):
    data = random_array(rng, "uint8", (2, 8, 9, 10))
    write_array(tmp_path / "vol", data, format="precomputed", chunks=(2, 4, 4, 4), resolution=(4, 5, 40),
                voxel_offset=(10, 20, 30))
    tessera.convert(tmp_path / "vol", tmp_path / "vol2", format="precomputed")
    (scale,) = tessera.open(tmp_path / "vol2").metadata["scales"]
    assert scale["resolution"] == [4.0, 5.0, 40.0] and scale["voxel_offset"] == [10, 20, 30]
    assert scale["chunk_sizes"] == [[4, 4, 4]]
    np.testing.assert_array_equal(read_with_peer(tmp_path / "vol2", "precomputed"), data)
    assert_same_tree(tmp_path / "vol", tmp_path / "vol2")


def test_zarr_python_source_with_nan_fill(tmp_path):
    import h5py
    import zarr

    data = np.arange(13 * 7, dtype="float32").reshape(13, 7)
    z = zarr.create_array(str(tmp_path / "zp.zarr"), shape=data.shape, chunks=(4, 4), dtype="float32",
                          fill_value=float("nan"), dimension_names=["t", None], attributes={"k": "v"})
    z[:12] = data[:12]  # the last row is never written: it reads as the fill value
    expected = data.copy()
    expected[12] = np.nan
    tessera.convert(tmp_path / "zp.zarr", tmp_path / "out.h5", codec="gzip")  # zarr-python's zstd: not HDF5's
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert np.isnan(f["data"].fillvalue)
        np.testing.assert_array_equal(f["data"][...], expected)
    tessera.convert(tmp_path / "zp.zarr", tmp_path / "out.zarr", chunks=(5, 7))
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert np.isnan(out.metadata.fill_value) and out.metadata.dimension_names is None  # names: all or none
    np.testing.assert_array_equal(out[...], expected)


# --- byte identity ------------------------------------------------------------------------------------


def test_cli_convert_is_byte_identical_to_stream_and_create(tmp_path, rng):
    data = random_array(rng, "int16", (21, 19, 23))
    write_array(tmp_path / "src.h5", data, chunks=(5, 7, 7), codec="gzip")
    data.astype("<i2").tofile(tmp_path / "raw.bin")
    opts = ["--chunk", "4,8,8", "--shard-chunks", "2,2,2", "--codec", "zstd", "--level", "5"]

    proc = run_cli("convert", tmp_path / "src.h5", tmp_path / "convert.zarr", *opts)
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("stream", tmp_path / "stream.zarr", "--dtype", "int16", "--shape", "21,19,23", *opts,
                   "--input", tmp_path / "raw.bin")
    assert proc.returncode == 0, proc.stderr
    kw = dict(chunks=(4, 8, 8), shard_chunks=(2, 2, 2), codec="zstd", level=5)
    write_array(tmp_path / "create.zarr", data, **kw)
    tessera.convert(tmp_path / "src.h5", tmp_path / "py.zarr", **kw)

    np.testing.assert_array_equal(read_with_peer(tmp_path / "convert.zarr", "zarr3"), data)
    assert len(list((tmp_path / "convert.zarr").rglob("*"))) > 5
    for other in ["stream.zarr", "create.zarr", "py.zarr"]:
        assert_same_tree(tmp_path / "convert.zarr", tmp_path / other)


# --- selecting within a source ------------------------------------------------------------------------


@pytest.fixture
def two_datasets(tmp_path, rng):
    import h5py

    a = random_array(rng, "int32", (7, 6))
    b = random_array(rng, "uint16", (5, 9, 11))
    with h5py.File(tmp_path / "two.h5", "w") as f:
        f["a"] = a  # contiguous
        f.create_dataset("g/b", data=b, chunks=(2, 3, 4), compression="gzip")
    return tmp_path / "two.h5", a, b


def test_hdf5_source_dataset(tmp_path, two_datasets):
    path, a, b = two_datasets
    tessera.convert(path, tmp_path / "b.zarr", dataset="/g/b")
    np.testing.assert_array_equal(read_with_peer(tmp_path / "b.zarr", "zarr3"), b)
    assert tessera.open(tmp_path / "b.zarr").chunks == (2, 3, 4)
    tessera.convert(path, tmp_path / "a.zarr", dataset="a")
    np.testing.assert_array_equal(read_with_peer(tmp_path / "a.zarr", "zarr3"), a)
    tessera.convert(tessera.open(path, dataset="/g/b"), tmp_path / "b.h5")  # an open Array
    np.testing.assert_array_equal(read_with_peer(tmp_path / "b.h5", "hdf5", dataset="/g/b"), b)

    with pytest.raises(tessera.InvalidArgumentError, match="/a.*/g/b") as e:
        tessera.convert(path, tmp_path / "none.zarr")
    assert isinstance(e.value, ValueError)
    assert not (tmp_path / "none.zarr").exists()


@pytest.mark.parametrize("fmt", ["zarr3", "precomputed"])
def test_source_level(tmp_path, rng, fmt):
    data = random_array(rng, "uint8", (21, 18, 23))
    name = "img.zarr" if fmt == "zarr3" else "vol"
    write_array(tmp_path / name, data, format=fmt, chunks=(4, 8, 8), pyramid=2)
    level1 = tessera.open(tmp_path / name, level=1)[...]
    assert level1.shape == (11, 9, 12)
    if fmt == "zarr3":
        import zarr

        np.testing.assert_array_equal(zarr.open_group(str(tmp_path / name), mode="r")["1"][...], level1)
    else:
        np.testing.assert_array_equal(read_with_peer(tmp_path / name, fmt, scale_index=1), level1)

    codec = dict(codec="gzip") if fmt == "zarr3" else {}  # tessera's Zarr default, zstd, is not HDF5's
    tessera.convert(tmp_path / name, tmp_path / "l1.h5", source_level=1, **codec)
    np.testing.assert_array_equal(read_with_peer(tmp_path / "l1.h5", "hdf5"), level1)
    tessera.convert(tmp_path / name, tmp_path / "l0.h5", **codec)
    np.testing.assert_array_equal(read_with_peer(tmp_path / "l0.h5", "hdf5"), data)
    with pytest.raises(tessera.OutOfRangeError, match="2"):
        tessera.convert(tmp_path / name, tmp_path / "l2.h5", source_level=2, **codec)
    assert not (tmp_path / "l2.h5").exists()


# --- array-likes --------------------------------------------------------------------------------------

ARRAY_LIKES = ["numpy", "memmap", "h5py", "zarr", "tifffile"]


def open_array_like(kind: str, data: np.ndarray, where: Path, stack):
    """DATA behind KIND's array-like (files under WHERE, handles closed by STACK)."""
    if kind == "numpy":
        return data
    if kind == "memmap":
        mm = np.lib.format.open_memmap(where / "x.npy", mode="w+", dtype=data.dtype, shape=data.shape)
        mm[...] = data
        mm.flush()
        del mm
        return np.load(where / "x.npy", mmap_mode="r")
    if kind == "h5py":
        import h5py

        with h5py.File(where / "x.h5", "w") as f:
            f.create_dataset("x", data=data, chunks=(7, 4, 5))
        return stack.enter_context(h5py.File(where / "x.h5", "r"))["x"]
    if kind == "zarr":
        import zarr

        z = zarr.create_array(str(where / "x.zarr"), shape=data.shape, chunks=(6, 9, 4), dtype=data.dtype)
        z[...] = data
        return zarr.open_array(str(where / "x.zarr"), mode="r")
    if kind == "tifffile":
        import tifffile
        import zarr

        tifffile.imwrite(where / "x.tif", data)
        store = stack.enter_context(tifffile.imread(where / "x.tif", aszarr=True))
        return zarr.open(store, mode="r")
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ARRAY_LIKES)
def test_array_like(tmp_path, rng, monkeypatch, kind):
    from contextlib import ExitStack

    data = random_array(rng, "uint16", (203, 9, 10))
    row_bytes = 9 * 10 * 2
    # Slabs of 20 rows' bytes: 16 rows (two shard rows of 8), so 203 rows are 12 slabs and 11 rows.
    monkeypatch.setattr(tessera, "_SLAB_BYTES", 20 * row_bytes)
    kw = dict(chunks=(4, 5, 6), shard_chunks=(2, 1, 1), codec="zstd")
    calls = []
    with ExitStack() as stack:
        src = open_array_like(kind, data, tmp_path, stack)
        stats = tessera.convert(src, tmp_path / "out.zarr", progress=lambda *a: calls.append(a), threads=2, **kw)
    assert stats.bytes_in == data.nbytes and stats.rows_published == 203
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.zarr", "zarr3"), data)
    write_array(tmp_path / "create.zarr", data, **kw)
    assert_same_tree(tmp_path / "out.zarr", tmp_path / "create.zarr")

    done = [c[0] for c in calls]
    assert len(calls) == math.ceil(203 / 16)
    assert all(b > a for a, b in zip(done, done[1:]))
    assert done[0] == 16 * row_bytes and done[-1] == data.nbytes
    assert all(c[1] == data.nbytes for c in calls)
    seconds = [c[2] for c in calls]
    assert all(s >= 0 for s in seconds) and seconds == sorted(seconds)


@pytest.mark.parametrize("kind", ["h5py", "zarr"])
def test_array_like_into_hdf5(tmp_path, rng, monkeypatch, kind):
    from contextlib import ExitStack

    data = random_array(rng, "float32", (203, 9, 10))
    monkeypatch.setattr(tessera, "_SLAB_BYTES", 30 * data[0].nbytes)
    with ExitStack() as stack:
        tessera.convert(open_array_like(kind, data, tmp_path, stack), tmp_path / "out.h5", chunks=(7, 9, 4),
                        codec="gzip")
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.h5", "hdf5"), data)
    write_array(tmp_path / "create.h5", data, chunks=(7, 9, 4), codec="gzip")
    assert_same_tree(tmp_path / "out.h5", tmp_path / "create.h5")


def test_tessera_source_progress(tmp_path, rng):
    data = random_array(rng, "int32", (203, 6, 5))
    write_array(tmp_path / "src.h5", data, chunks=(3, 6, 5))
    calls = []
    tessera.convert(tmp_path / "src.h5", tmp_path / "out.zarr", chunks=(4, 6, 5), progress=lambda *a: calls.append(a))
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.zarr", "zarr3"), data)
    done = [c[0] for c in calls]
    assert len(done) > 1 and all(b > a for a, b in zip(done, done[1:]))
    assert done[-1] == data.nbytes and all(c[1] == data.nbytes for c in calls)


def test_progress_true_prints_a_line(tmp_path, rng, capfd):
    data = random_array(rng, "uint8", (30, 8, 8))
    tessera.convert(data, tmp_path / "out.zarr", progress=True)
    err = capfd.readouterr().err
    assert "GB/s" in err and err.endswith("\n")


def test_big_endian_array_like(tmp_path, rng):
    data = random_array(rng, "uint16", (9, 6, 5)).astype(">u2")
    tessera.convert(data, tmp_path / "out.zarr")
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.zarr", "zarr3"), data)


def test_big_endian_hdf5_dataset_as_a_tessera_source(tmp_path, rng):
    import h5py

    data = random_array(rng, "uint16", (9, 6, 5)).astype(">u2")
    with h5py.File(tmp_path / "be.h5", "w") as f:
        f.create_dataset("x", data=data, chunks=(2, 3, 5))
    tessera.convert(tmp_path / "be.h5", tmp_path / "out.zarr")
    np.testing.assert_array_equal(read_with_peer(tmp_path / "out.zarr", "zarr3"), data)


# --- pyramids -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["array-like", "hdf5"])
def test_pyramid_while_converting(tmp_path, rng, monkeypatch, source):
    import zarr

    data = random_array(rng, "uint16", (47, 18, 21))
    # chunks[0] = 3: slabs of an odd number of rows (9), so level 1 straddles slab boundaries.
    monkeypatch.setattr(tessera, "_SLAB_BYTES", 10 * data[0].nbytes)
    kw = dict(chunks=(3, 8, 8), codec="zstd", pyramid=2)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    if source == "hdf5":
        write_array(tmp_path / "src.h5", data, chunks=(5, 18, 21))
        tessera.convert(tmp_path / "src.h5", tmp_path / "a" / "img.zarr", **kw)
    else:
        tessera.convert(data, tmp_path / "a" / "img.zarr", **kw)
    write_array(tmp_path / "b" / "img.zarr", data, **kw)

    got = zarr.open_group(str(tmp_path / "a" / "img.zarr"), mode="r")
    want = zarr.open_group(str(tmp_path / "b" / "img.zarr"), mode="r")
    assert sorted(got.array_keys()) == ["0", "1"]
    np.testing.assert_array_equal(got["0"][...], data)
    assert got["1"].shape == (24, 9, 11)
    np.testing.assert_array_equal(got["1"][...], want["1"][...])
    assert_same_tree(tmp_path / "a" / "img.zarr", tmp_path / "b" / "img.zarr")


# --- errors -------------------------------------------------------------------------------------------


def test_missing_source(tmp_path):
    with pytest.raises(tessera.NotFoundError, match="missing.zarr") as e:
        tessera.convert(tmp_path / "missing.zarr", tmp_path / "out.zarr")
    assert isinstance(e.value, FileNotFoundError)
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize("source", ["tessera", "array-like"])
def test_refused_option_leaves_nothing(tmp_path, rng, source):
    data = random_array(rng, "uint16", (6, 5, 4))
    src = data
    if source == "tessera":
        write_array(tmp_path / "src.zarr", data, chunks=(2, 5, 4))
        src = tmp_path / "src.zarr"
    with pytest.raises((tessera.UnsupportedError, ValueError), match="codec"):
        tessera.convert(src, tmp_path / "out.h5", codec="zstd")
    assert not (tmp_path / "out.h5").exists()
    with pytest.raises((tessera.UnsupportedError, ValueError), match="index_location"):
        tessera.convert(src, tmp_path / "out2.h5", index_location="start", codec="gzip")
    with pytest.raises((tessera.UnsupportedError, ValueError), match="chunks"):
        tessera.convert(src, tmp_path / "out.zarr", chunks=(2, 2))
    assert sorted(p.name for p in tmp_path.iterdir()) == (["src.zarr"] if source == "tessera" else [])


class WrongRows:
    """An array-like whose slices lose a column from row 8 on."""

    def __init__(self, data):
        self.data, self.shape, self.dtype = data, data.shape, data.dtype

    def __getitem__(self, key):
        part = self.data[key]
        return part[:, :-1] if key.start >= 8 else part


def test_array_like_with_wrong_slices(tmp_path, rng, monkeypatch):
    data = random_array(rng, "uint16", (30, 5, 4))
    monkeypatch.setattr(tessera, "_SLAB_BYTES", 8 * data[0].nbytes)
    with pytest.raises(ValueError, match="shape"):
        tessera.convert(WrongRows(data), tmp_path / "out.zarr", chunks=(4, 5, 4))
    kept = tessera.open(tmp_path / "out.zarr")  # what the stream published before the bad slab, exactly
    assert kept.shape[0] <= 8
    np.testing.assert_array_equal(kept[...], data[:kept.shape[0]])
    with pytest.raises(ValueError, match="shape"):
        tessera.convert(WrongRows(data), tmp_path / "out.h5", chunks=(4, 5, 4))
    assert not (tmp_path / "out.h5").exists()


def test_corrupt_source_chunk(tmp_path, rng):
    data = random_array(rng, "int32", (20, 6, 7))
    write_array(tmp_path / "src.zarr", data, chunks=(2, 6, 7), codec="zstd")
    (tmp_path / "src.zarr" / "c" / "7" / "0" / "0").write_bytes(b"garbage")
    # Copied region by region: the error names the region and the chunk.
    with pytest.raises(tessera.CorruptDataError, match=r"region at 14,0,0 of shape 2,6,7\): chunk .*c/7/0/0"):
        tessera.convert(tmp_path / "src.zarr", tmp_path / "out.zarr")
    kept = tessera.open(tmp_path / "out.zarr")  # what the copy published before the corrupt chunk, exactly
    assert kept.shape[0] <= 14
    np.testing.assert_array_equal(kept[...], data[:kept.shape[0]])
    with pytest.raises(tessera.CorruptDataError, match="c/7/0/0"):
        tessera.convert(tmp_path / "src.zarr", tmp_path / "out.h5", codec="gzip")
    assert not (tmp_path / "out.h5").exists()


def test_selection_arguments_with_array_likes(tmp_path):
    data = np.zeros((4, 3), np.uint8)
    with pytest.raises(TypeError, match="dataset and source_level select within a tessera source"):
        tessera.convert(data, tmp_path / "a.zarr", dataset="/data")
    with pytest.raises(TypeError, match="dataset and source_level select within a tessera source"):
        tessera.convert(data, tmp_path / "b.zarr", source_level=1)
    write_array(tmp_path / "src.zarr", data)
    with pytest.raises(tessera.InvalidArgumentError, match="dataset"):
        tessera.convert(tmp_path / "src.zarr", tmp_path / "c.zarr", dataset="/data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.zarr"]


# --- the CLI ------------------------------------------------------------------------------------------


def test_cli_plan_writes_nothing(tmp_path, rng):
    data = random_array(rng, "uint16", (12, 10, 9))
    write_array(tmp_path / "src.zarr", data, chunks=(4, 5, 9), shard_chunks=(1, 2, 1), codec="blosc-lz4")
    proc = run_cli("convert", tmp_path / "src.zarr", tmp_path / "out.h5", "--plan")
    assert proc.returncode == 1 and "hdf5 does not write the source's blosc-lz4" in proc.stderr  # never dropped unasked
    proc = run_cli("convert", tmp_path / "src.zarr", tmp_path / "out.h5", "--plan", "--codec", "none")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    source = next(line for line in lines if line.startswith("source:"))
    destination = next(line for line in lines if line.startswith("destination:"))
    assert "zarr3" in source and "12,10,9" in source
    assert "hdf5" in destination and "chunks 4,5,9" in destination and "codec none" in destination
    assert not (tmp_path / "out.h5").exists()
    proc = run_cli("convert", tmp_path / "src.zarr", tmp_path / "out.zarr", "--plan")
    assert proc.returncode == 0, proc.stderr
    assert "chunks per shard 1,2,1" in proc.stdout and "blosc-lz4" in proc.stdout
    assert not (tmp_path / "out.zarr").exists()


def test_cli_progress_and_options(tmp_path, two_datasets):
    path, a, b = two_datasets
    proc = run_cli("convert", path, tmp_path / "b.zarr", "--dataset", "/g/b", "--shard-chunks", "none", "--progress")
    assert proc.returncode == 0, proc.stderr
    assert "GB/s" in proc.stderr
    np.testing.assert_array_equal(read_with_peer(tmp_path / "b.zarr", "zarr3"), b)

    proc = run_cli("convert", path, tmp_path / "a.h5", "--dataset", "a", "--out-dataset", "/x/a", "--chunk", "3,6",
                   "--codec", "gzip")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(read_with_peer(tmp_path / "a.h5", "hdf5", dataset="/x/a"), a)

    proc = run_cli("convert", path, tmp_path / "none.zarr")
    assert proc.returncode == 1
    assert proc.stderr.startswith("tessera: error:") and "/a" in proc.stderr and "/g/b" in proc.stderr
    assert not (tmp_path / "none.zarr").exists()


def test_cli_source_level_and_unsharded(tmp_path, rng):
    data = random_array(rng, "uint8", (21, 18, 23))
    write_array(tmp_path / "img.zarr", data, chunks=(4, 8, 8), shard_chunks=(2, 2, 2), pyramid=2)
    proc = run_cli("convert", tmp_path / "img.zarr", tmp_path / "l1.zarr", "--source-level", "1", "--shard-chunks",
                   "none")
    assert proc.returncode == 0, proc.stderr
    # A level of an OME-Zarr image converts into an image of one level (its "0").
    np.testing.assert_array_equal(read_with_peer(tmp_path / "l1.zarr" / "0", "zarr3"),
                                  tessera.open(tmp_path / "img.zarr", level=1)[...])
    assert tessera.open(tmp_path / "l1.zarr").shards is None


def test_cli_bad_source(tmp_path):
    proc = run_cli("convert", tmp_path / "missing.zarr", tmp_path / "out.zarr")
    assert proc.returncode == 1
    assert proc.stderr.startswith("tessera: error:") and "missing.zarr" in proc.stderr
    assert not (tmp_path / "out.zarr").exists()
    proc = run_cli("convert", tmp_path / "missing.zarr", tmp_path / "out.h5", "--codec", "zstd")
    assert proc.returncode == 1 and "tessera: error:" in proc.stderr


def test_an_open_array_refuses_the_options_that_open_a_source(tmp_path):
    src = tmp_path / "src.zarr"
    with tessera.create(src, dtype="uint8", shape=(4, 4), chunks=(2, 2)) as w:
        w.append(np.zeros((4, 4), np.uint8))
    array = tessera.open(src)
    for option in ({"dataset": "/d"}, {"source_level": 1}, {"hdf5_allowed_paths": [str(tmp_path)]}):
        with pytest.raises(TypeError, match="an open Array was opened with its own"):
            tessera.convert(array, tmp_path / "dst.zarr", **option)
    assert not (tmp_path / "dst.zarr").exists()
