"""tessera reads variable-length elements the way the peers that wrote them read them back:
Zarr v3 `string` (vlen-utf8) and `variable_length_bytes` (vlen-bytes) arrays and Zarr v2 object
arrays with the vlen-utf8 / vlen-bytes filter, written by zarr-python 3 (random shapes, chunks,
selections, chunks left unwritten, unicode); HDF5 variable-length strings (ASCII and UTF-8) and
sequences written by h5py, chunked, contiguous and compact.

What tessera returns: a numpy object array of str (bytes for vlen-bytes; numpy arrays for HDF5
sequences). zarr-python 3 returns numpy's StringDType for `string` arrays; the two compare equal
elementwise (`==`), which is what these tests check. HDF5 variable-length strings read as str
(h5py's `.asstr()`; h5py's plain read gives their UTF-8 bytes).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tessera

from interop_support import assert_cli_error

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
from zarr.core.dtype import VariableLengthBytes  # noqa: E402

# Text with what a UTF-8 decoder can get wrong: empty strings, 2-, 3- and 4-byte characters, NUL.
ALPHABET = ["", "a", "Z", "é", "ß", "Ω", "中", "文", "😀", "\x00", " ", "\n", "long" * 20]


def random_strings(rng: np.random.Generator, shape) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        parts = rng.integers(0, len(ALPHABET), size=int(rng.integers(0, 5)))
        flat[i] = "".join(ALPHABET[p] for p in parts)
    return out


def random_shape_and_chunks(rng: np.random.Generator):
    rank = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 9)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, s + 2)) for s in shape)
    return shape, chunks


def random_key(rng: np.random.Generator, shape):
    key = []
    for extent in shape:
        if rng.random() < 0.2:
            key.append(int(rng.integers(-extent, extent)))
            continue
        start = int(rng.integers(-extent - 1, extent + 1)) if rng.random() < 0.7 else None
        stop = int(rng.integers(-extent - 1, extent + 2)) if rng.random() < 0.7 else None
        step = int(rng.choice([1, 1, 2, 3, -1, -2]))
        key.append(slice(start, stop, step))
    return tuple(key)


def assert_elementwise_equal(got, expected, what: str) -> None:
    if isinstance(expected, np.ndarray) and expected.dtype != object and expected.dtype.kind not in "UT":
        # one element that is a sequence
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype and np.array_equal(got, expected), what
        return
    if not isinstance(expected, np.ndarray):  # a scalar (np.asarray would strip a str's trailing NULs)
        assert type(got) is type(expected) and got == expected, f"{what}: {got!r} != {expected!r}"
        return
    assert isinstance(got, np.ndarray) and got.dtype == object, f"{what}: {type(got)} {getattr(got, 'dtype', None)}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    for index in np.ndindex(got.shape):
        g, e = got[index], expected[index]
        if isinstance(e, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == e.dtype and np.array_equal(g, e), f"{what}{index}: {g!r} != {e!r}"
        else:
            assert type(g) is type(e) and g == e, f"{what}{index}: {g!r} != {e!r}"


def write_partly(array, values: np.ndarray, rng: np.random.Generator) -> None:
    """Writes a random box of VALUES into ARRAY, so chunks outside it stay unwritten (fill)."""
    box = tuple(slice(int(rng.integers(0, s)), None) for s in values.shape)
    array[box] = values[box]


# ---------------------------------------------------------------------------------------------
# Zarr


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_zarr_strings_random_shapes_chunks_and_selections(tmp_path, rng, zarr_format):
    for case in range(12):
        shape, chunks = random_shape_and_chunks(rng)
        path = tmp_path / f"s{case}.zarr"
        compressors = [None, "auto", numcodecs.GZip(level=3) if zarr_format == 2 else zarr.codecs.GzipCodec()][case % 3]
        kwargs = {"compressors": compressors} if compressors != "auto" else {}
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=str, zarr_format=zarr_format, **kwargs)
        write_partly(z, random_strings(rng, shape), rng)
        a = tessera.open(str(path))
        assert a.dtype == np.dtype(object) and a.shape == shape and a.fill_value == ""
        full = z[...]
        assert_elementwise_equal(a[...], full, f"{path.name}[...]")
        assert_elementwise_equal(np.asarray(a), full, f"np.asarray({path.name})")
        for _ in range(6):
            key = random_key(rng, shape)  # negative steps too, which zarr-python does not take
            assert_elementwise_equal(a[key], full[key], f"{path.name}{key}")


def test_zarr_v2_object_array_with_vlen_utf8_filter_and_fill(tmp_path, rng):
    path = tmp_path / "o.zarr"
    z = zarr.create_array(str(path), shape=(7, 5), chunks=(3, 2), dtype=str, zarr_format=2, fill_value="n/a")
    z[2:4, 1:3] = random_strings(rng, (2, 2))
    a = tessera.open(str(path))
    assert a.fill_value == "n/a"
    assert_elementwise_equal(a[:], z[:], "o.zarr")
    assert_elementwise_equal(a[::-2, 3], z[:][::-2, 3], "o.zarr[::-2, 3]")


def test_zarr_v2_object_array_in_fortran_order(tmp_path, rng):
    path = tmp_path / "f.zarr"
    z = zarr.create_array(str(path), shape=(5, 4, 3), chunks=(2, 3, 2), dtype=str, zarr_format=2, order="F")
    z[...] = random_strings(rng, (5, 4, 3))
    full = z[...]
    a = tessera.open(str(path))
    assert_elementwise_equal(a[...], full, "f.zarr")
    assert_elementwise_equal(a[::-1, 1, 1:], full[::-1, 1, 1:], "f.zarr[::-1, 1, 1:]")


def test_zarr_v3_bytes_arrays_read_as_bytes(tmp_path, rng):
    path = tmp_path / "b.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python: variable_length_bytes has no v3 specification yet
        z = zarr.create_array(str(path), shape=(6, 4), chunks=(4, 3), dtype=VariableLengthBytes(), fill_value=b"\x01fill")
        values = np.empty((6, 4), dtype=object)
        for index in np.ndindex(values.shape):
            values[index] = rng.bytes(int(rng.integers(0, 9)))
        z[:4] = values[:4]
        expected = z[:]
    a = tessera.open(str(path))
    assert a.fill_value == b"\x01fill"
    assert_elementwise_equal(a[:], expected, "b.zarr")
    assert_elementwise_equal(a[5:0:-2, ::-1], expected[5:0:-2, ::-1], "b.zarr[5:0:-2, ::-1]")


def test_zarr_string_scalars_zero_size_and_out(tmp_path):
    path = tmp_path / "s.zarr"
    z = zarr.create_array(str(path), shape=(3, 4), chunks=(2, 2), dtype=str)
    z[:] = np.array([["a", "b", "c", "d"], ["é", "", "中", "😀"], ["x", "y", "z", "w"]])
    a = tessera.open(str(path))
    assert a[1, 3] == "😀" and type(a[1, 3]) is str
    assert a[1:1].shape == (0, 4)
    out = np.empty((2, 4), dtype=object)
    assert a.read("1:3", out=out) is out
    assert_elementwise_equal(out, z[1:3], "read(out=)")
    with pytest.raises(TypeError):
        a.read(out=np.empty((3, 4), dtype="U4"))


def test_zarr_string_arrays_are_read_only(tmp_path):
    path = tmp_path / "s.zarr"
    zarr.create_array(str(path), shape=(3,), chunks=(2,), dtype=str)
    with pytest.raises(tessera.UnsupportedError, match="read-only in tessera"):
        tessera.open(str(path), mode="r+")
    for dtype in (str, "U4", object, np.dtypes.StringDType()):
        with pytest.raises(tessera.UnsupportedError, match="string arrays are read-only in tessera"):
            tessera.create(str(tmp_path / "new.zarr"), dtype=dtype, shape=(3,), chunks=(2,))


def test_zarr_corrupt_vlen_chunk_is_a_clean_error_naming_the_chunk(tmp_path):
    path = tmp_path / "s.zarr"
    z = zarr.create_array(str(path), shape=(4,), chunks=(2,), dtype=str, compressors=None)
    z[:] = ["ab", "c", "d", "e"]
    chunk = path / "c" / "1"
    data = bytearray(chunk.read_bytes())
    data[4] = 99  # element 0 of chunk 1 now claims 99 bytes
    chunk.write_bytes(bytes(data))
    a = tessera.open(str(path))
    assert_elementwise_equal(a[:2], np.array(["ab", "c"], dtype=object), "chunk 0 still reads")
    with pytest.raises(tessera.CorruptDataError, match=r"c/1.*element 0 \(bytes 8\.\.107\) runs past the end"):
        a[:]
    (path / "c" / "0").write_bytes(b"\x05\x00\x00\x00")  # five elements in a chunk of two
    with pytest.raises(tessera.CorruptDataError, match=r"c/0.*holds 5 elements, the chunk has 2"):
        a[0]


def test_cli_refuses_raw_reads_of_strings_and_info_shows_the_type(tmp_path, tessera):
    path = tmp_path / "s.zarr"
    z = zarr.create_array(str(path), shape=(3,), chunks=(2,), dtype=str)
    z[:] = ["a", "b", "c"]
    assert_cli_error(tessera.run(["read", str(path)]), "unsupported", "variable-length", "string")
    assert_cli_error(tessera.run(["convert", str(path), str(tmp_path / "out.zarr")]), "unsupported",
                     "variable-length (string (vlen-utf8))", "read-only")
    info = tessera.run_ok(["info", str(path)]).stdout.decode()
    assert "dtype:       string (vlen-utf8)" in info and 'fill value:  ""' in info, info


# ---------------------------------------------------------------------------------------------
# HDF5

h5py = pytest.importorskip("h5py")

LAYOUTS = ["chunked", "contiguous", "compact"]


def create_dataset(f, name: str, layout: str, shape, dtype, chunks=None):
    if layout == "compact":
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        tid = h5py.h5t.py_create(dtype, logical=True)
        return h5py.Dataset(h5py.h5d.create(f.id, name.encode(), tid, h5py.h5s.create_simple(shape), dcpl=dcpl))
    if layout == "chunked":
        chunks = tuple(min(c, s) for c, s in zip(chunks, shape)) if chunks else True
        return f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks)
    return f.create_dataset(name, shape=shape, dtype=dtype)


def random_sequences(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        out[index] = (rng.integers(-1000, 1000, size=int(rng.integers(0, 6)))).astype(dtype)
    return out


def check_hdf5_selections(rng, path, name: str, expected: np.ndarray, shape) -> None:
    a = tessera.open(str(path), dataset=name)
    assert a.dtype == np.dtype(object) and a.shape == tuple(shape)
    assert_elementwise_equal(a[...], expected, f"{name}[...]")
    for _ in range(5):
        key = random_key(rng, shape)
        assert_elementwise_equal(a[key], expected[key], f"{name}{key}")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_hdf5_vlen_strings_match_h5py(tmp_path, rng, layout, encoding):
    path = tmp_path / "s.h5"
    cases = []
    with h5py.File(path, "w") as f:
        for case in range(4):
            shape, chunks = random_shape_and_chunks(rng)
            values = random_strings(rng, shape)
            if encoding == "ascii":
                values = np.vectorize(lambda s: s.encode("ascii", "replace").decode("ascii").replace("\x00", ""),
                                      otypes=[object])(values)
            else:
                values = np.vectorize(lambda s: s.replace("\x00", ""), otypes=[object])(values)  # HDF5 strings end at NUL
            ds = create_dataset(f, f"d{case}", layout, shape, h5py.string_dtype(encoding), chunks)
            if layout == "chunked" and rng.random() < 0.5:
                write_partly(ds, values, rng)  # chunks never written read as empty strings
            else:
                ds[...] = values
            cases.append((f"d{case}", shape))
    with h5py.File(path, "r") as f:
        expected = {name: f[name].asstr()[...] for name, _ in cases}
    for name, shape in cases:
        check_hdf5_selections(rng, path, name, np.asarray(expected[name], dtype=object), shape)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_hdf5_vlen_sequences_match_h5py(tmp_path, rng, layout):
    path = tmp_path / "q.h5"
    cases = []
    with h5py.File(path, "w") as f:
        for case, base in enumerate(["int32", "uint8", "int64", "float32"]):
            shape, chunks = random_shape_and_chunks(rng)
            values = random_sequences(rng, shape, base)
            ds = create_dataset(f, f"q{case}", layout, shape, h5py.vlen_dtype(np.dtype(base)), chunks)
            for index in np.ndindex(shape):  # one by one: h5py's compact datasets take no object array at once
                ds[index] = values[index]
            cases.append((f"q{case}", shape))
    with h5py.File(path, "r") as f:
        expected = {name: f[name][...] for name, _ in cases}
    for name, shape in cases:
        check_hdf5_selections(rng, path, name, expected[name], shape)


def test_hdf5_vlen_sequences_of_big_endian_values(tmp_path):
    # h5py reads these without swapping (its result is wrong); tessera gives the values written.
    path = tmp_path / "be.h5"
    written = [np.array([1.5, -2.25], dtype=">f8"), np.array([], dtype=">f8"), np.array([3e10], dtype=">f8")]
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("be", shape=(3,), dtype=h5py.vlen_dtype(np.dtype(">f8")))
        for i, v in enumerate(written):
            ds[i] = v
    got = tessera.open(str(path), dataset="be")[:]
    for g, w in zip(got, written):
        assert g.dtype == np.dtype("<f8") and np.array_equal(g, w.astype("<f8"))


def test_hdf5_vlen_scalar_dataset_and_attributes_untouched(tmp_path):
    path = tmp_path / "scalar.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("title", data="héllo wörld", dtype=h5py.string_dtype())
    a = tessera.open(str(path), dataset="title")
    assert a.shape == () and a[()] == "héllo wörld"


def test_hdf5_corrupt_heap_reference_is_a_clean_error(tmp_path):
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("s", shape=(2,), dtype=h5py.string_dtype(), chunks=(1,))
        ds[...] = np.array(["abc", "defgh"], dtype=object)
        offsets = [ds.id.get_chunk_info(i).byte_offset for i in range(2)]
    data = bytearray(path.read_bytes())
    assert int.from_bytes(data[offsets[0]:offsets[0] + 4], "little") == 3
    data[offsets[0]:offsets[0] + 4] = (1000).to_bytes(4, "little")  # element 0 now claims 1000 characters
    data[offsets[1] + 12:offsets[1] + 16] = (77).to_bytes(4, "little")  # element 1 points at a missing object
    path.write_bytes(bytes(data))
    a = tessera.open(str(path), dataset="s")
    with pytest.raises(tessera.CorruptDataError,
                       match=r"bad.h5: dataset /s: element 0 of chunk \(0\): 1000 x 1 bytes \(1000\) past the end of its global heap object"):
        a[0]
    with pytest.raises(tessera.CorruptDataError, match=r"dataset /s: element 0 of chunk \(1\).*global heap collection.*77"):
        a[1]


def test_cli_refuses_raw_reads_of_hdf5_vlen_and_info_shows_the_type(tmp_path, tessera):
    path = tmp_path / "s.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=np.array(["a", "b"], dtype=object), dtype=h5py.string_dtype())
    assert_cli_error(tessera.run(["read", str(path), "--dataset", "/s"]), "unsupported", "variable-length", "vlen string")
    info = tessera.run_ok(["info", str(path)]).stdout.decode()
    assert "vlen string (UTF-8)" in info, info


def test_hdf5_vlen_fill_value_reads_where_nothing_was_written(tmp_path):
    # h5py cannot read these back itself ("no write intent on file"); it reports the fill value.
    path = tmp_path / "fill.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("s", shape=(6,), chunks=(2,), dtype=h5py.string_dtype(), fillvalue="xyz")
        ds[0] = "a"
    with h5py.File(path, "r") as f:
        assert f["s"].fillvalue == b"xyz"
    a = tessera.open(str(path), dataset="s")
    assert a.fill_value == "xyz"
    assert_elementwise_equal(a[:], np.array(["a"] + ["xyz"] * 5, dtype=object), "fill.h5")


def test_zarr_sharded_string_arrays(tmp_path, rng):
    for case in range(4):
        shape = tuple(int(rng.integers(3, 10)) for _ in range(2))
        chunks = tuple(int(rng.integers(1, 4)) for _ in shape)
        shards = tuple(c * int(rng.integers(1, 3)) for c in chunks)
        path = tmp_path / f"sh{case}.zarr"
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, shards=shards, dtype=str, fill_value="-")
        write_partly(z, random_strings(rng, shape), rng)
        a = tessera.open(str(path))
        assert a.shards == shards and a.chunks == chunks
        full = z[...]
        assert_elementwise_equal(a[...], full, f"{path.name}[...]")
        for _ in range(5):
            key = random_key(rng, shape)
            assert_elementwise_equal(a[key], full[key], f"{path.name}{key}")


def test_hdf5_vlen_strings_through_filters(tmp_path, rng):
    # The references are what the filters compress; the heap holds the text. (HDF5 refuses fletcher32 here.)
    path = tmp_path / "z.h5"
    values = random_strings(rng, (40, 3))
    values = np.vectorize(lambda s: s.replace("\x00", ""), otypes=[object])(values)
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=values, dtype=h5py.string_dtype(), chunks=(7, 2), compression="gzip", shuffle=True)
    with h5py.File(path, "r") as f:
        expected = np.asarray(f["s"].asstr()[...], dtype=object)
    check_hdf5_selections(rng, path, "s", expected, (40, 3))


def test_netcdf4_string_and_vlen_variables(tmp_path):
    netCDF4 = pytest.importorskip("netCDF4")
    path = tmp_path / "n.nc"
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("x", 5)
        names = nc.createVariable("names", str, ("x",))
        names[:] = np.array(["alpha", "béta", "", "中文", "x" * 300], dtype=object)
        ragged = nc.createVariable("ragged", nc.createVLType(np.int16, "vl_t"), ("x",))
        for i in range(5):
            ragged[i] = np.arange(i, dtype=np.int16) - 2
    with netCDF4.Dataset(path) as nc:
        expected_names = np.asarray(nc["names"][:], dtype=object)
        expected_ragged = nc["ragged"][:]
    assert_elementwise_equal(tessera.open(str(path), dataset="names")[:], expected_names, "names")
    assert_elementwise_equal(tessera.open(str(path), dataset="ragged")[::-1], expected_ragged[::-1], "ragged")
