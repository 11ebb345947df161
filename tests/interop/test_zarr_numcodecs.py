"""numcodecs' codecs (issue 30), written by zarr-python 3 and read by tessera exactly:
- Zarr v3 `numcodecs.*` codecs (zarr.codecs.numcodecs: zlib, gzip, zstd, blosc, bz2, lzma, crc32, adler32,
  crc32c, fletcher32, shuffle, delta, quantize, fixedscaleoffset, bitround), alone and chained, in plain and sharded arrays;
- Zarr v2 compressors bz2 and lzma and filters delta, quantize, fixedscaleoffset, bitround, shuffle and
  the checksums, with both byte orders
  and C/F order;
each over random dtypes, shapes, chunks and selections, compared with zarr-python's own reading.
Also: `tessera info` on a v2 array names its format zarr2 and shows the .zarray compressor and filters
as stored; the C++ codec tests check each codec's bytes against numcodecs' (src/tessera/codec/)."""

from __future__ import annotations

import warnings

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import numcodecs as nc

import tessera
from interop_support import random_slice

warnings.filterwarnings("ignore", message=".*Numcodecs codecs are not in the Zarr version 3 specification.*")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

DTYPES = ["<u1", "<i1", "<u2", "<i2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8", "<f2"]

# name -> (filters, compressors) for zarr-python 3's Zarr v3 arrays; a filter list may name the data
# type ("DTYPE") that numcodecs.delta is configured with.
V3_CODECS = {
    "zlib": ([], [nc.Zlib(level=3)]),
    "zlib-default": ([], [nc.Zlib()]),
    "gzip": ([], [nc.GZip(level=6)]),
    "zstd": ([], [nc.Zstd(level=2)]),
    "blosc-default": ([], [nc.Blosc()]),
    "blosc-zstd-bitshuffle": ([], [nc.Blosc(cname="zstd", clevel=3, shuffle=2)]),
    "bz2": ([], [nc.BZ2(level=9)]),
    "lzma": ([], [nc.LZMA()]),
    "lzma-alone": ([], [nc.LZMA(format=2, preset=1)]),
    "lzma-crc32": ([], [nc.LZMA(check=1, preset=0)]),
    "crc32": ([], [nc.CRC32()]),
    "adler32": ([], [nc.Adler32()]),
    "crc32c": ([], [nc.CRC32C()]),
    "fletcher32": ([], [nc.Fletcher32()]),
    "shuffle": ([], [nc.Shuffle()]),
    "shuffle-zlib-crc32": ([], [nc.Shuffle(), nc.Zlib(level=1), nc.CRC32()]),
    "delta": (["DELTA"], []),
    "quantize": (["QUANTIZE"], [nc.Zlib()]),
    "quantize-bitround": (["QUANTIZE", nc.BitRound(keepbits=7)], [nc.Shuffle(), nc.BZ2()]),
    "bitround": ([nc.BitRound(keepbits=4)], [nc.LZMA(preset=1)]),
    "fixedscaleoffset": (["FIXEDSCALEOFFSET"], [nc.Zstd()]),
    "delta-bz2-fletcher32": (["DELTA"], [nc.BZ2(), nc.Fletcher32()]),
    "delta-shuffle-lzma": (["DELTA"], [nc.Shuffle(), nc.LZMA(preset=1)]),
}

V2_FILTERS = {
    "none": [],
    "delta": ["DELTA"],
    "shuffle": ["SHUFFLE"],
    "delta-shuffle": ["DELTA", "SHUFFLE"],
    "quantize-bitround-shuffle": ["QUANTIZE", "BITROUND", "SHUFFLE"],
    "quantize": ["QUANTIZE"],
    "fixedscaleoffset-shuffle": ["FIXEDSCALEOFFSET", "SHUFFLE"],
    "checksums": [numcodecs.CRC32(), numcodecs.Adler32(), numcodecs.Fletcher32(), numcodecs.CRC32C()],
}
V2_COMPRESSORS = {
    "bz2": numcodecs.BZ2(1),
    "lzma": numcodecs.LZMA(preset=2),
    "lzma-alone": numcodecs.LZMA(format=2),
    "zlib": numcodecs.Zlib(4),
    "none": None,
}


def random_case(rng):
    dtype = str(rng.choice(DTYPES))
    shape = tuple(int(n) for n in rng.integers(1, 19, size=int(rng.integers(1, 4))))
    chunks = tuple(int(rng.integers(1, n + 2)) for n in shape)
    return dtype, shape, chunks


def random_values(rng, dtype, shape):
    """Full-range values half the time, a slowly varying ramp (what delta is for) otherwise."""
    dt = np.dtype(dtype)
    if rng.random() < 0.5:
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt.newbyteorder("=")).astype(dt)
        return (rng.standard_normal(shape) * 100).astype(dt)
    ramp = np.cumsum(rng.integers(-3, 4, size=int(np.prod(shape)))).reshape(shape)
    return (ramp + (20 if dt.kind == "u" else 0)).astype(dt)


def delta_astype(rng, dtype):
    """numcodecs.delta's astype: the type itself, or for integers a wider one of the same signedness
    or, for unsigned types, a wider signed one. Not the others: numpy refuses to narrow a first value
    that does not fit, and numcodecs' own cumsum over mixed-signedness 64-bit types goes through
    float64 and loses bits (the C++ tests cover those)."""
    dt = np.dtype(dtype)
    if dt.kind not in "iu" or rng.random() < 0.4:
        return dtype
    kinds = "iu" if dt.kind == "u" else "i"
    wider = [t for t in ["<i2", "<u2", "<i4", "<u4", "<i8", "<u8"]
             if np.dtype(t).itemsize > dt.itemsize and np.dtype(t).kind in kinds]
    return str(rng.choice(wider)) if wider else dtype


def float_only(filters):
    """quantize and bitround take float arrays only."""
    return any(f in ("QUANTIZE", "BITROUND", "FIXEDSCALEOFFSET") or isinstance(f, nc.BitRound) for f in filters)


def v3_filters(filters, dtype, rng):
    out = []
    for f in filters:
        if f == "DELTA":
            out.append(nc.Delta(dtype=dtype, astype=delta_astype(rng, dtype)))
        elif f == "QUANTIZE":
            out.append(nc.Quantize(digits=int(rng.integers(0, 5)), dtype=dtype))
        elif f == "FIXEDSCALEOFFSET":
            out.append(nc.FixedScaleOffset(offset=float(rng.normal()), scale=10, dtype=dtype,
                                           astype=str(rng.choice(["<i4", "<i2", dtype]))))
        else:
            out.append(f)
    return out


def assert_reads_like_zarr(path, rng, selections=4):
    z = zarr.open_array(str(path), mode="r")
    expected = z[...]
    a = tessera.open(path)
    assert a.shape == expected.shape
    assert a.dtype == expected.dtype.newbyteorder("=")
    np.testing.assert_array_equal(a[...], expected)
    for _ in range(selections):
        _, index = random_slice(rng, expected.shape)
        np.testing.assert_array_equal(a[index], expected[index], err_msg=f"selection {index}")


@pytest.mark.parametrize("trial", range(3))
@pytest.mark.parametrize("codecs", list(V3_CODECS))
def test_v3_numcodecs(tmp_path, rng, codecs, trial):
    dtype, shape, chunks = random_case(rng)
    filters, compressors = V3_CODECS[codecs]
    if float_only(filters):
        dtype = str(rng.choice(["<f4", "<f8"]))
    filters = v3_filters(filters, dtype, rng)
    data = random_values(rng, dtype, shape)
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=shape, chunks=chunks, dtype=dtype, filters=filters,
                          compressors=compressors, fill_value=3)
    z[: max(1, shape[0] // 2 + 1)] = data[: max(1, shape[0] // 2 + 1)]  # the rest stays fill
    assert_reads_like_zarr(tmp_path / "a.zarr", rng)


@pytest.mark.parametrize("codecs", ["bz2", "lzma", "delta-shuffle-lzma", "shuffle-zlib-crc32", "fletcher32"])
def test_v3_numcodecs_inside_shards(tmp_path, rng, codecs):
    dtype, _, _ = random_case(rng)
    filters, compressors = V3_CODECS[codecs]
    filters = [nc.Delta(dtype=dtype) if f == "DELTA" else f for f in filters]
    data = random_values(rng, dtype, (12, 10))
    z = zarr.create_array(str(tmp_path / "s.zarr"), shape=data.shape, chunks=(3, 5), shards=(6, 10), dtype=dtype,
                          filters=filters, compressors=compressors)
    z[...] = data
    assert_reads_like_zarr(tmp_path / "s.zarr", rng)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("compressor", list(V2_COMPRESSORS))
@pytest.mark.parametrize("filters", list(V2_FILTERS))
def test_v2_compressors_and_filters(tmp_path, rng, filters, compressor, order):
    dtype, shape, chunks = random_case(rng)
    if float_only(V2_FILTERS[filters]):
        dtype = str(rng.choice(["<f4", "<f8"]))
    # Big-endian arrays too (numcodecs' BitRound knows only little-endian types).
    if rng.random() < 0.5 and np.dtype(dtype).itemsize > 1 and "BITROUND" not in V2_FILTERS[filters]:
        dtype = ">" + dtype[1:]
    astype = delta_astype(rng, dtype) if "DELTA" in V2_FILTERS[filters] else dtype
    if astype != dtype and np.dtype(astype).itemsize > 1:
        astype = dtype[0] + astype[1:]  # the stored differences in the array's byte order
    chain = []
    for f in V2_FILTERS[filters]:
        if f == "DELTA":
            chain.append(numcodecs.Delta(dtype=dtype, astype=astype))
        elif f == "QUANTIZE":
            chain.append(numcodecs.Quantize(digits=int(rng.integers(0, 5)), dtype=dtype))
        elif f == "BITROUND":
            chain.append(numcodecs.BitRound(keepbits=int(rng.integers(0, 10))))
        elif f == "FIXEDSCALEOFFSET":
            astype = dtype[0] + str(rng.choice(["i4", "i2"]))
            chain.append(numcodecs.FixedScaleOffset(offset=-1.5, scale=10, dtype=dtype, astype=astype))
        elif f == "SHUFFLE":
            chain.append(numcodecs.Shuffle(elementsize=np.dtype(astype).itemsize))
        else:
            chain.append(f)
    data = random_values(rng, dtype, shape)
    z = zarr.create_array(str(tmp_path / "v2.zarr"), shape=shape, chunks=chunks, dtype=dtype, zarr_format=2,
                          filters=chain or None, compressors=V2_COMPRESSORS[compressor], order=order, fill_value=0)
    z[...] = data
    assert_reads_like_zarr(tmp_path / "v2.zarr", rng)


def test_v2_codecs_still_refused_are_named(tmp_path):
    data = np.linspace(0, 1, 20)
    z = zarr.create_array(str(tmp_path / "q.zarr"), shape=(20,), chunks=(5,), dtype="<f8", zarr_format=2,
                          filters=[numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], compressors=None)
    z[...] = data
    with pytest.raises(tessera.UnsupportedError, match=r'filter "astype"'):
        tessera.open(tmp_path / "q.zarr")
    # An array filter after a bytes filter has no Zarr v3 equivalent.
    z = zarr.create_array(str(tmp_path / "sd.zarr"), shape=(20,), chunks=(5,), dtype="<i4", zarr_format=2,
                          filters=[numcodecs.Shuffle(elementsize=4), numcodecs.Delta(dtype="<i4")], compressors=None)
    z[...] = np.arange(20)
    with pytest.raises(tessera.UnsupportedError, match=r"delta after numcodecs.shuffle"):
        tessera.open(tmp_path / "sd.zarr")


def test_info_on_v2_shows_what_is_stored(tessera, tmp_path):
    z = zarr.create_array(str(tmp_path / "v2.zarr"), shape=(10, 4), chunks=(4, 4), dtype=">i4", zarr_format=2,
                          filters=[numcodecs.Delta(dtype=">i4")], compressors=numcodecs.BZ2(3))
    z[...] = np.arange(40).reshape(10, 4)
    info = tessera.info(tmp_path / "v2.zarr")
    assert info["format"] == "zarr2"
    assert info["zarray"]["compressor"] == {"id": "bz2", "level": 3}
    assert info["zarray"]["filters"] == [{"id": "delta", "dtype": ">i4", "astype": ">i4"}]
    assert info["zarray"]["dtype"] == ">i4"
    text = tessera.run_ok(["info", tmp_path / "v2.zarr"]).stdout.decode()
    assert "format:      zarr2" in text
    assert '"id":"bz2"' in text.replace(" ", "") and '"id":"delta"' in text.replace(" ", "")
    # A Zarr v3 array still says zarr3 and lists its codecs.
    zarr.create_array(str(tmp_path / "v3.zarr"), shape=(4,), chunks=(4,), dtype="<i4", compressors=[nc.BZ2()])
    assert tessera.info(tmp_path / "v3.zarr")["format"] == "zarr3"


@pytest.mark.parametrize("codecs", ["bz2", "lzma", "lzma-alone", "shuffle-zlib-crc32", "blosc-zstd-bitshuffle", "delta-bz2-fletcher32",
                                    "delta-shuffle-lzma", "adler32", "crc32c", "quantize", "bitround", "fixedscaleoffset"])
def test_tessera_writes_numcodecs_codecs_zarr_python_reads(tessera, tmp_path, rng, codecs):
    """Writing: `tessera convert` keeps a Zarr v3 source's codecs, so the chunks it writes go through
    tessera's numcodecs encoders; zarr-python reads them back exactly."""
    filters, compressors = V3_CODECS[codecs]
    dtype = str(rng.choice(["<f4", "<f8"] if float_only(filters) else ["<i2", "<u4", "<i8", "<f4", "<f8"]))
    filters = v3_filters(filters, dtype, rng)
    data = random_values(rng, dtype, (13, 9))
    zarr.create_array(str(tmp_path / "src.zarr"), shape=data.shape, chunks=(5, 4), dtype=dtype, filters=filters,
                      compressors=compressors)[...] = data
    tessera.run_ok(["convert", tmp_path / "src.zarr", tmp_path / "dst.zarr"])
    dst = zarr.open_array(str(tmp_path / "dst.zarr"), mode="r")
    assert [c["name"] for c in dst.metadata.to_dict()["codecs"]] == \
        [c["name"] for c in zarr.open_array(str(tmp_path / "src.zarr"), mode="r").metadata.to_dict()["codecs"]]
    np.testing.assert_array_equal(dst[...], zarr.open_array(str(tmp_path / "src.zarr"), mode="r")[...])
