"""Zarr v2 arrays and groups (issue 15, class 8) read exactly as zarr-python reads them: every
compressor zarr-python writes by default or on request (blosc with each shuffle, zstd, gzip, zlib,
lz4, none; bz2, lzma and the filters in test_zarr_numcodecs.py), C and F order, '.' and '/' separators, both byte orders, fill values null/NaN/Infinity,
chunks never written, OME-Zarr 0.4 multiscales; codecs tessera does not read are named."""

from __future__ import annotations


import numcodecs
import numpy as np
import pytest
import zarr

import tessera

COMPRESSORS = {
    "none": None,
    "blosc-lz4-shuffle": numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
    "blosc-zstd-bitshuffle": numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE),
    "blosc-noshuffle": numcodecs.Blosc("blosclz", 1, numcodecs.Blosc.NOSHUFFLE),
    "zstd": numcodecs.Zstd(3),
    "gzip": numcodecs.GZip(4),
    "zlib": numcodecs.Zlib(2),
    "lz4": numcodecs.LZ4(1),
}


def v2_array(path, data, chunks, compressor, order="C", separator=".", fill_value=0, write=slice(None)):
    z = zarr.create_array(store=str(path), shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=2,
                          compressors=compressor, order=order, fill_value=fill_value,
                          chunk_key_encoding={"name": "v2", "separator": separator})
    z[write] = data[write]
    return zarr.open_array(str(path), mode="r")


@pytest.mark.parametrize("order,separator", [("C", "."), ("F", "/"), ("F", "."), ("C", "/")])
@pytest.mark.parametrize("compressor", list(COMPRESSORS))
def test_every_compressor_order_and_separator(tmp_path, rng, compressor, order, separator):
    dtype = rng.choice(["<u2", ">i4", "<f4", ">f8", "|u1", "|i1", "<i8"])
    shape = tuple(int(n) for n in rng.integers(1, 23, size=int(rng.integers(1, 4))))
    chunks = tuple(int(rng.integers(1, n + 2)) for n in shape)
    data = (rng.integers(0, 100, size=shape) * (rng.random(shape) > 0.3)).astype(dtype)
    # Only part is written: the rest reads as the fill value.
    z = v2_array(tmp_path / "a.zarr", data, chunks, COMPRESSORS[compressor], order, separator, fill_value=7,
                 write=slice(0, max(1, shape[0] // 2)))
    a = tessera.open(tmp_path / "a.zarr")
    assert a.shape == shape and a.dtype == np.dtype(dtype).newbyteorder("=")
    np.testing.assert_array_equal(a[...], z[...])
    sel = tuple(slice(None, None, -2) if i % 2 else slice(1, None) for i in range(len(shape)))
    np.testing.assert_array_equal(a[sel], z[...][sel])  # zarr-python takes no negative steps


@pytest.mark.parametrize("fill", [None, "nan", "inf", "-inf"])
def test_float_fill_values(tmp_path, fill):
    value = None if fill is None else float(fill)
    data = np.arange(30, dtype="float32").reshape(5, 6)
    z = v2_array(tmp_path / "f.zarr", data, (2, 4), numcodecs.Zstd(1), fill_value=value, write=slice(0, 2))
    np.testing.assert_array_equal(tessera.open(tmp_path / "f.zarr")[...], z[...])


def test_bool_and_attributes(tmp_path, rng):
    data = rng.random((9, 7)) > 0.5
    z = v2_array(tmp_path / "b.zarr", data, (4, 4), numcodecs.Blosc("zstd", 1))
    z = zarr.open_array(str(tmp_path / "b.zarr"), mode="r+")
    z.attrs["units"] = "counts"
    a = tessera.open(tmp_path / "b.zarr")
    np.testing.assert_array_equal(a[...], data)
    assert a.metadata["attributes"] == {"units": "counts"}


def test_ome_zarr_04_multiscales(tmp_path, rng):
    g = zarr.open_group(str(tmp_path / "img.zarr"), mode="w", zarr_format=2)
    level0 = rng.integers(0, 1000, size=(3, 32, 40), dtype="uint16")
    level1 = level0[:, ::2, ::2].copy()
    for name, data in (("0", level0), ("1", level1)):
        g.create_array(name, shape=data.shape, chunks=(1, 16, 16), dtype=data.dtype,
                       compressors=numcodecs.Blosc("lz4"), chunk_key_encoding={"name": "v2", "separator": "/"})[...] = data
    axes = [{"name": "c", "type": "channel"}, {"name": "y", "type": "space"}, {"name": "x", "type": "space"}]
    g.attrs["multiscales"] = [{"version": "0.4", "name": "img", "axes": axes, "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1, 1]}]},
        {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1, 2, 2]}]}]}]
    a = tessera.open(tmp_path / "img.zarr")
    assert a.levels and len(a.levels) == 2
    np.testing.assert_array_equal(a[...], level0)
    np.testing.assert_array_equal(tessera.open(tmp_path / "img.zarr", level=1)[1:, 3:], level1[1:, 3:])
    # And a v2 level converts into an OME-Zarr 0.5 image of one level, value for value, its axes
    # and scale kept.
    tessera.convert(tmp_path / "img.zarr", tmp_path / "v3.zarr", source_level=1)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "v3.zarr" / "0"), mode="r")[...], level1)
    ms = zarr.open_group(str(tmp_path / "v3.zarr"), mode="r").attrs["ome"]["multiscales"][0]
    assert ms["axes"] == axes
    assert ms["datasets"][0]["coordinateTransformations"] == [{"type": "scale", "scale": [1, 2, 2]}]


def test_codecs_tessera_does_not_read_are_named(tmp_path):
    data = np.arange(20, dtype="int32")
    v2_array(tmp_path / "c.zarr", data, (5,), numcodecs.Zlib(1))
    zarray = tmp_path / "c.zarr" / ".zarray"
    zarray.write_text(zarray.read_text().replace('"zlib"', '"zfpy"'))
    with pytest.raises(tessera.UnsupportedError, match=r'compressor "zfpy"'):
        tessera.open(tmp_path / "c.zarr")
    z = zarr.create_array(store=str(tmp_path / "q.zarr"), shape=(20,), chunks=(5,), dtype="float64", zarr_format=2,
                          filters=[numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], compressors=None)
    z[...] = data
    with pytest.raises(tessera.UnsupportedError, match=r'filter "astype"'):
        tessera.open(tmp_path / "q.zarr")
    (tmp_path / "nothing.zarr").mkdir()
    with pytest.raises(tessera.NotFoundError, match=r"neither zarr.json nor .zarray"):
        tessera.open(tmp_path / "nothing.zarr", format="zarr3")


def test_cli_reads_v2(tessera_read, tmp_path, rng):
    data = rng.integers(0, 255, size=(6, 10), dtype="uint8")
    v2_array(tmp_path / "c.zarr", data, (4, 4), numcodecs.Zstd(1), order="F")
    got = tessera_read(str(tmp_path / "c.zarr"), "::2, 3:", "uint8", data[::2, 3:].shape)
    np.testing.assert_array_equal(got, data[::2, 3:])


def test_v2_arrays_open_read_only_and_refuse_r_plus(tmp_path, rng):
    """tessera writes Zarr v3 codecs only: opening a v2 array for writing is refused, clearly, and
    changes nothing."""
    data = rng.integers(0, 1000, size=(6, 9), dtype=np.int32)
    z = zarr.create_array(store=str(tmp_path / "v2.zarr"), shape=data.shape, chunks=(4, 4), dtype=data.dtype,
                          zarr_format=2)
    z[...] = data
    before = {p: p.read_bytes() for p in (tmp_path / "v2.zarr").rglob("*") if p.is_file()}
    with pytest.raises(tessera.UnsupportedError, match=r"\.zarray: Zarr v2 arrays are read only"):
        tessera.open(tmp_path / "v2.zarr", mode="r+")
    np.testing.assert_array_equal(tessera.open(tmp_path / "v2.zarr")[...], data)
    assert {p: p.read_bytes() for p in (tmp_path / "v2.zarr").rglob("*") if p.is_file()} == before
