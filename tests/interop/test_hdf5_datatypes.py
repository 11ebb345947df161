"""tessera reads HDF5's fixed-size datatypes as h5py does: compound (nested, subarray members, any
member order and padding, both byte orders), h5py's r/i complex and HDF5 2.0's complex class,
fixed-length strings, enumerations, array datatypes (trailing dimensions), bitfields, opaque values,
integers with bit padding, and committed (shared) datatypes; in contiguous, chunked and compact
layouts, with fill values, through Python and the CLI. Every read is compared with h5py's: the same
values, and h5py's dtype in little-endian order.
"""

from __future__ import annotations

import h5py
import numpy as np
import pytest

import tessera

LAYOUTS = ["contiguous", "chunked", "compact"]


def little(dt: np.dtype) -> np.dtype:
    """h5py's dtype as tessera gives it: every member little-endian (numpy keeps the rest)."""
    return dt.newbyteorder("<") if dt.byteorder != "|" or dt.names else dt


def assert_same(got, want, what=""):
    """Equal values field by field (padding bytes are no value), and h5py's dtype in little-endian."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, h5py {want.shape}"
    assert got.dtype == little(want.dtype), f"{what}: dtype {got.dtype}, h5py {want.dtype}"
    if want.dtype.names:
        for name in want.dtype.names:
            assert_same(got[name], want[name], f"{what}.{name}")
    else:
        assert np.array_equal(got, want), f"{what}: values differ"


def random_selections(rng, shape, n=4):
    """Whole, and `n` random basic-indexing selections (ints, steps, negative steps) of `shape`."""
    out = [tuple(slice(None) for _ in shape)]
    for _ in range(n):
        sel = []
        for extent in shape:
            kind = rng.integers(0, 3)
            if kind == 0:
                sel.append(int(rng.integers(0, extent)))
            else:
                a, b = sorted(int(v) for v in rng.integers(0, extent + 1, size=2))
                step = int(rng.integers(1, 4))
                sel.append(slice(b, a, -step) if kind == 2 and b > a else slice(a, b, step))
        out.append(tuple(sel))
    return out


def make_dataset(f, name, data, layout, dtype=None, shape=None):
    """`data` as dataset `name` of `dtype` (data's) and `shape` (data's) in `layout`."""
    dtype = data.dtype if dtype is None else dtype
    shape = data.shape if shape is None else shape
    if layout == "chunked":
        chunks = tuple(max(1, (s + 2) // 3) for s in shape)
        ds = f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks)
        ds[...] = data
        return ds
    if layout == "compact":
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        tid = h5py.h5t.py_create(np.dtype(dtype), logical=True)
        ds = h5py.Dataset(h5py.h5d.create(f.id, name.encode(), tid, h5py.h5s.create_simple(shape), dcpl=dcpl))
        ds[...] = data
        return ds
    ds = f.create_dataset(name, shape=shape, dtype=dtype)
    ds[...] = data
    return ds


def compare_reads(rng, path, name):
    a = tessera.open(str(path), dataset=name)
    with h5py.File(path) as f:
        ds = f[name]
        full = ds[()]
        assert a.shape == np.asarray(full).shape, f"{name}: shape {a.shape}, h5py reads {np.asarray(full).shape}"
        for sel in random_selections(rng, a.shape):  # h5py takes no negative steps: numpy selects
            assert_same(a[sel], np.asarray(full)[sel], f"{name}[{sel}]")
    return a


def structured(order: str) -> np.dtype:
    """Nested compound, subarray and string members, padding, members out of offset order."""
    inner = np.dtype({"names": ["x", "flag"], "formats": [order + "f4", "?"], "offsets": [4, 0], "itemsize": 12})
    return np.dtype({"names": ["id", "pos", "label", "inner", "big"],
                     "formats": [order + "i2", (order + "f8", (3,)), "S5", inner, order + "u8"],
                     "offsets": [40, 0, 24, 28, 48], "itemsize": 64})


def random_structured(rng, dt, shape):
    a = np.zeros(shape, dt)
    a["id"] = rng.integers(-30000, 30000, size=shape)
    a["pos"] = rng.normal(size=shape + (3,))
    labels = [bytes(rng.choice(list(b"abcdefgh"), size=int(rng.integers(0, 6))).tolist()) for _ in range(a.size)]
    a["label"] = np.array(labels, dtype="S5").reshape(shape)
    a["inner"]["x"] = rng.normal(size=shape)
    a["inner"]["flag"] = rng.integers(0, 2, size=shape).astype(bool)
    a["big"] = rng.integers(0, 2**63, size=shape, dtype=np.uint64)
    return a


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_compound(tmp_path, rng, layout, order, libver):
    dt = structured(order)
    shape = (int(rng.integers(1, 9)), int(rng.integers(1, 7)))
    path = tmp_path / "c.h5"
    with h5py.File(path, "w", libver=libver) as f:
        make_dataset(f, "t", random_structured(rng, dt, shape), layout)
    a = compare_reads(rng, path, "t")
    assert a.dtype.fields["label"][0] == np.dtype("S5")


@pytest.mark.parametrize("dtype", ["<c8", ">c8", "<c16", ">c16"])
def test_h5py_complex_compound(tmp_path, rng, dtype):
    data = (rng.normal(size=(7, 3)) + 1j * rng.normal(size=(7, 3))).astype(dtype)
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("c", data=data, chunks=(3, 2))
        f.create_dataset("whole", data=data)
    compare_reads(rng, path, "c")
    compare_reads(rng, path, "whole")


@pytest.mark.parametrize("htype", ["COMPLEX_IEEE_F32LE", "COMPLEX_IEEE_F32BE", "COMPLEX_IEEE_F64BE"])
def test_hdf5_complex_class(tmp_path, rng, htype):
    if not hasattr(h5py.h5t, htype):
        pytest.skip("this h5py/HDF5 has no complex datatype class")
    values = rng.normal(size=6) + 1j * rng.normal(size=6)
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        d = h5py.h5d.create(f.id, b"c", getattr(h5py.h5t, htype), h5py.h5s.create_simple((6,)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values.astype("<c16"), mtype=h5py.h5t.NATIVE_DOUBLE_COMPLEX)
    compare_reads(rng, path, "c")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_fixed_strings(tmp_path, rng, layout):
    words = np.array([b"", b"a", b"abc", b"abcdefgh", b"xyz\x00q"][: 5], dtype="S8")
    path = tmp_path / "s.h5"
    with h5py.File(path, "w") as f:
        make_dataset(f, "ascii", rng.choice(words, size=(6, 4)), layout)
        utf8 = h5py.string_dtype("utf-8", 7)
        make_dataset(f, "utf8", np.array(["h\u00e9llo".encode(), b"w"] * 3, dtype=utf8), layout)
        tid = h5py.h5t.C_S1.copy()
        tid.set_size(6)
        tid.set_strpad(h5py.h5t.STR_SPACEPAD)
        d = h5py.h5d.create(f.id, b"spacepad", tid, h5py.h5s.create_simple((3,)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([b"ab    ", b"abcdef", b"      "], dtype="S6"), mtype=tid)
        tid = h5py.h5t.C_S1.copy()
        tid.set_size(5)
        tid.set_strpad(h5py.h5t.STR_NULLTERM)
        d = h5py.h5d.create(f.id, b"nullterm", tid, h5py.h5s.create_simple((3,)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([b"ab\0cd", b"abcd\0", b"\0xyzw"], dtype="S5"), mtype=tid)
    for name in ["ascii", "utf8", "spacepad", "nullterm"]:
        compare_reads(rng, path, name)


@pytest.mark.parametrize("base", ["u1", "<i2", ">i2", ">u8"])
def test_enumerations(tmp_path, rng, base):
    mapping = {"RED": 0, "GREEN": 1, "BLUE": 7}
    dt = h5py.enum_dtype(mapping, basetype=np.dtype(base))
    path = tmp_path / "e.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("e", data=rng.choice([0, 1, 7], size=(5, 5)).astype(base), dtype=dt, chunks=(2, 3))
        f.create_dataset("b", data=rng.integers(0, 2, size=9).astype(bool))
    compare_reads(rng, path, "e")
    compare_reads(rng, path, "b")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("element", [("<i2", (2, 3)), (">f4", (4,)), ("S3", (2,))])
def test_array_datatype_appends_dimensions(tmp_path, rng, layout, element):
    base, dims = element
    dt = np.dtype((base, dims))
    shape = (int(rng.integers(1, 8)),)
    if base == "S3":
        data = rng.choice(np.array([b"a", b"bc", b"def"], dtype="S3"), size=shape + dims)
    else:
        data = (rng.normal(size=shape + dims) * 100).astype(base)
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        make_dataset(f, "a", data, layout, dtype=dt, shape=shape)
    a = compare_reads(rng, path, "a")
    assert a.shape == shape + dims


def test_compound_with_array_of_compounds_and_array_of_compounds(tmp_path, rng):
    point = np.dtype([("x", ">i4"), ("y", "<f2")])
    dt = np.dtype([("pts", point, (2, 2)), ("n", ">i8")])
    data = np.zeros(5, dt)
    data["pts"]["x"] = rng.integers(-100, 100, size=(5, 2, 2))
    data["pts"]["y"] = rng.normal(size=(5, 2, 2))
    data["n"] = rng.integers(-(2**40), 2**40, size=5)
    path = tmp_path / "n.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("n", data=data, chunks=(2,))
        f.create_dataset("top", shape=(3,), dtype=np.dtype((point, (2,))))
        f["top"][...] = data["pts"][:3, 0]
    compare_reads(rng, path, "n")
    compare_reads(rng, path, "top")


@pytest.mark.parametrize("htype", ["STD_B8LE", "STD_B16BE", "STD_B32LE", "STD_B64BE"])
def test_bitfields(tmp_path, rng, htype):
    t = getattr(h5py.h5t, htype)
    size = t.get_size()
    order = ">" if htype.endswith("BE") else "<"
    values = rng.integers(0, 2 ** (8 * size - 1), size=11, dtype=np.uint64).astype(f"{order}u{size}")
    path = tmp_path / "b.h5"
    with h5py.File(path, "w") as f:
        d = h5py.h5d.create(f.id, b"b", t, h5py.h5s.create_simple((11,)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values, mtype=t)  # raw: HDF5 converts no integer to a bitfield
    compare_reads(rng, path, "b")


@pytest.mark.parametrize("base,precision,offset", [("STD_I16BE", 12, 2), ("STD_I32LE", 20, 5), ("STD_U16LE", 9, 7),
                                                   ("STD_I64BE", 40, 0), ("STD_U8LE", 3, 4)])
def test_padded_integers(tmp_path, rng, base, precision, offset):
    t = getattr(h5py.h5t, base).copy()
    t.set_precision(precision)
    t.set_offset(offset)
    signed = "_I" in base
    lo, hi = (-(2 ** (precision - 1)), 2 ** (precision - 1)) if signed else (0, 2**precision)
    native = h5py.h5t.py_create(np.dtype(f"<{'i' if signed else 'u'}{t.get_size()}"))
    values = rng.integers(lo, hi, size=(4, 5)).astype(native.dtype)
    path = tmp_path / "p.h5"
    with h5py.File(path, "w") as f:
        d = h5py.h5d.create(f.id, b"p", t, h5py.h5s.create_simple((4, 5)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values, mtype=native)
    a = compare_reads(rng, path, "p")
    np.testing.assert_array_equal(a[...], values)


def test_opaque(tmp_path, rng):
    data = np.frombuffer(rng.bytes(3 * 7), dtype="V3")
    path = tmp_path / "o.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("o", data=data)
        f.create_dataset("oc", data=data, chunks=(3,))
    compare_reads(rng, path, "o")
    compare_reads(rng, path, "oc")


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_committed_datatypes(tmp_path, rng, libver):
    path = tmp_path / "t.h5"
    dt = structured(">")
    with h5py.File(path, "w", libver=libver) as f:
        f["types/rec"] = dt
        f["types/int"] = np.dtype(">i4")
        f.create_dataset("rec", data=random_structured(rng, dt, (6,)), dtype=f["types/rec"], chunks=(4,))
        f.create_dataset("int", data=np.arange(10, dtype=">i4"), dtype=f["types/int"])
    compare_reads(rng, path, "rec")
    compare_reads(rng, path, "int")


def test_fill_values_of_compound_and_array_types(tmp_path):
    dt = np.dtype([("a", ">i4"), ("s", "S3"), ("f", "<f8")])
    fill = np.array((7, b"zz", 2.5), dtype=dt)
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("c", shape=(10,), dtype=dt, chunks=(3,), fillvalue=fill)
        d[4] = (1, b"abc", -1.0)
        f.create_dataset("arr", shape=(5,), dtype=np.dtype(("<i2", (3,))), chunks=(2,))
        f["arr"][1] = [4, 5, 6]
        f.create_dataset("never", shape=(4,), dtype=dt)  # contiguous, never written
    a = tessera.open(str(path), dataset="c")
    with h5py.File(path) as f:
        assert_same(a[...], f["c"][...], "c")
        assert_same(tessera.open(str(path), dataset="arr")[...], f["arr"][...], "arr")
        assert_same(tessera.open(str(path), dataset="never")[...], f["never"][...], "never")
    assert a.fill_value == fill[()]


def test_cli_read_writes_numpy_layout_and_info_shows_the_type(tessera, tmp_path, rng):
    dt = structured(">")
    data = random_structured(rng, dt, (5, 3))
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=data, chunks=(2, 2))
        f.create_dataset("e", data=np.array([0, 1, 7], "u1"), dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 7}, "u1"))
    with h5py.File(path) as f:
        want = f["t"][1:4][:, ::-1]
    out = tessera.run_ok(["read", str(path), "--dataset", "t", "--slice=1:4, ::-1"]).stdout
    got = np.frombuffer(out, dtype=little(want.dtype)).reshape(3, 3)
    assert_same(got, want, "cli")
    info = tessera.run_ok(["info", str(path), "--dataset", "t"]).stdout.decode()
    assert "compound {id: int16 (big-endian)" in info
    info = tessera.run_ok(["info", str(path), "--dataset", "e"]).stdout.decode()
    assert "enum uint8 {" in info and all(n in info for n in ["RED = 0", "GREEN = 1", "BLUE = 7"])


def test_variable_length_members_read_as_object_fields(tmp_path):
    """A compound with a variable-length member reads as h5py reads it: an object field holding
    bytes (tests/interop/test_hdf5_vlen_compound.py covers the rest)."""
    path = tmp_path / "v.h5"
    with h5py.File(path, "w") as f:
        dt = np.dtype([("a", "<i4"), ("s", h5py.string_dtype())])
        f.create_dataset("rec", data=np.array([(1, "x"), (2, "yz")], dtype=dt))
        expected = f["rec"][...]
    got = tessera.open(str(path), dataset="rec")[...]
    assert got.dtype == expected.dtype and list(got["a"]) == [1, 2] and list(got["s"]) == [b"x", b"yz"]


def test_object_array_nbytes_counts_references_as_numpy_does(tmp_path):
    """An object array's nbytes is numpy's and h5py's: 8 bytes a reference, not the values' bytes."""
    path = tmp_path / "s.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("s", data=np.array([["a", "bcd"], ["efghij", ""], ["k", "lm"]], dtype=object),
                         dtype=h5py.string_dtype())
        h5py_nbytes = f["s"][...].nbytes
    a = tessera.open(str(path), dataset="s")
    assert a.dtype == np.dtype(object)
    assert a.nbytes == np.empty((3, 2), object).nbytes == h5py_nbytes == 48
    assert a.nbytes == a[...].nbytes


def test_netcdf4_compound_and_enum(tmp_path, rng):
    netCDF4 = pytest.importorskip("netCDF4")
    path = tmp_path / "n.nc"
    rec = np.dtype([("t", "<f8"), ("q", "<i2")])
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("x", 6)
        ct = nc.createCompoundType(rec, "rec_t")
        v = nc.createVariable("rec", ct, ("x",))
        data = np.zeros(6, rec)
        data["t"] = rng.normal(size=6)
        data["q"] = rng.integers(-5, 5, size=6)
        v[:] = data
        et = nc.createEnumType(np.uint8, "cloud_t", {"clear": 0, "cumulus": 1, "stratus": 2})
        e = nc.createVariable("cloud", et, ("x",), fill_value=0)
        e[:] = np.array([0, 1, 2, 2, 1, 0], "u1")
    compare_reads(rng, path, "rec")
    compare_reads(rng, path, "cloud")


def test_pytables_tables(tmp_path, rng):
    tables = pytest.importorskip("tables")

    class Particle(tables.IsDescription):
        name = tables.StringCol(12, pos=0)
        count = tables.Int64Col(pos=1)
        energy = tables.Float32Col(pos=2)
        position = tables.Float64Col(shape=(3,), pos=3)

        class detector(tables.IsDescription):
            id = tables.UInt16Col(pos=0)
            ok = tables.BoolCol(pos=1)

    path = tmp_path / "p.h5"
    with tables.open_file(str(path), "w") as f:
        t = f.create_table("/", "particles", Particle, chunkshape=(7,))
        row = t.row
        for i in range(23):
            row["name"] = f"p{i}".encode()
            row["count"] = int(rng.integers(-(2**40), 2**40))
            row["energy"] = float(rng.normal())
            row["position"] = rng.normal(size=3)
            row["detector/id"] = i
            row["detector/ok"] = bool(i % 3)
            row.append()
        t.flush()
        f.create_earray("/", "labels", tables.StringAtom(5), shape=(0, 2)).append(
            np.array([[b"ab", b"cde"]] * 9, dtype="S5"))
    compare_reads(rng, path, "particles")
    compare_reads(rng, path, "labels")


def test_attributes_of_committed_types(tessera, tmp_path):
    import json

    path = tmp_path / "a.h5"
    with h5py.File(path, "w", libver="latest") as f:
        f["types/i"] = np.dtype(">i4")
        d = f.create_dataset("d", data=np.arange(3, dtype="u1"))
        d.attrs.create("n", 5, dtype=f["types/i"])
        d.attrs.create("v", [1, -2, 3], dtype=f["types/i"])
    info = json.loads(tessera.run_ok(["info", str(path), "--dataset", "d", "--json"]).stdout)
    attributes = info.get("attributes") or info["metadata"]["attributes"]
    assert attributes["n"] == 5
    assert attributes["v"] == [1, -2, 3]


def test_filtered_and_scalar_datasets_and_reading_into_out(tmp_path, rng):
    dt = structured(">")
    data = random_structured(rng, dt, (9, 4))
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("gz", data=data, chunks=(4, 3), compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("arr_gz", dtype=np.dtype((">i4", (2, 3))), shape=(4,), chunks=(3,), compression="gzip",
                         shuffle=True)[...] = np.arange(24, dtype=">i4").reshape(4, 2, 3)
        f.create_dataset("scalar", data=data[0, 0])
        f.create_dataset("scalar_s", data=np.bytes_(b"hello"))
    for name in ["gz", "arr_gz", "scalar", "scalar_s"]:
        compare_reads(rng, path, name)
    a = tessera.open(str(path), dataset="gz")
    out = np.empty((3, 4), dtype=a.dtype)
    assert a.read(np.s_[2:5], out=out) is out
    with h5py.File(path) as f:
        assert_same(out, f["gz"][2:5], "out")
    with pytest.raises(tessera.InvalidArgumentError, match="dtype"):
        a.read(np.s_[2:5], out=np.empty((3, 4), dtype="u1"))


def test_attributes_of_compound_array_and_enum_types(tessera, tmp_path):
    import json

    path = tmp_path / "a.h5"
    rec = np.dtype([("id", ">i2"), ("name", "S4"), ("xy", "<f4", (2,))])
    with h5py.File(path, "w") as f:
        d = f.create_dataset("d", data=np.arange(3, dtype="u1"))
        d.attrs["rec"] = np.array((7, b"ab", [1.5, -2.0]), dtype=rec)
        d.attrs["recs"] = np.array([(1, b"x", [0, 1]), (2, b"yz", [2, 3])], dtype=rec)
        grid = h5py.h5t.array_create(h5py.h5t.STD_I32BE, (2, 3))
        h5py.h5a.create(d.id, b"grid", grid, h5py.h5s.create(h5py.h5s.SCALAR)).write(
            np.arange(6, dtype=">i4").reshape(2, 3), mtype=grid)
        d.attrs.create("color", 7, dtype=h5py.enum_dtype({"RED": 0, "BLUE": 7}, "u1"))
        d.attrs["z"] = np.complex64(1 + 2j)
    info = json.loads(tessera.run_ok(["info", str(path), "--dataset", "d", "--json"]).stdout)
    attributes = info.get("attributes") or info["metadata"]["attributes"]
    assert attributes["rec"] == {"id": 7, "name": "ab", "xy": [1.5, -2.0]}
    assert attributes["recs"] == [{"id": 1, "name": "x", "xy": [0, 1]}, {"id": 2, "name": "yz", "xy": [2, 3]}]
    assert attributes["grid"] == [[0, 1, 2], [3, 4, 5]]
    assert attributes["color"] == 7
    assert attributes["z"] == [1.0, 2.0]  # complex: [re, im], as fill values are written


def test_padded_integers_agree_with_h5dump(tmp_path, rng):
    """h5dump (the HDF5 library's own tool) unpacks bit-padded integers as tessera does."""
    import re
    import shutil
    import subprocess

    if shutil.which("h5dump") is None:
        pytest.skip("h5dump is not installed")
    t = h5py.h5t.STD_I32BE.copy()
    t.set_precision(17)
    t.set_offset(9)
    values = rng.integers(-(2**16), 2**16, size=7).astype("<i4")
    path = tmp_path / "p.h5"
    with h5py.File(path, "w") as f:
        d = h5py.h5d.create(f.id, b"p", t, h5py.h5s.create_simple((7,)))
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values, mtype=h5py.h5t.NATIVE_INT32)
    dump = subprocess.run(["h5dump", "-d", "/p", "-w", "0", str(path)], capture_output=True, text=True, check=True).stdout
    data = dump[dump.index("DATA {") + 6:]
    dumped = [int(v) for v in re.sub(r"\(\d+\):", "", data[:data.index("}")]).split(",")]
    np.testing.assert_array_equal(tessera.open(str(path), dataset="p")[...], dumped)
    np.testing.assert_array_equal(dumped, values)


def test_virtual_dataset_of_compounds(tmp_path):
    """A virtual dataset of a compound type reads its sources (converted) and its fill elsewhere."""
    dt = np.dtype([("a", ">i4"), ("s", "S3")])
    source = np.zeros(6, dt)
    source["a"] = np.arange(6)
    source["s"] = b"xy"
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f["src"] = source
    with h5py.File(tmp_path / "v.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=(10,), dtype=dt)
        layout[2:8] = h5py.VirtualSource("src.h5", "src", shape=(6,))
        f.create_virtual_dataset("v", layout, fillvalue=np.array((-1, b"no"), dt))
    with h5py.File(tmp_path / "v.h5") as f:
        assert_same(tessera.open(str(tmp_path / "v.h5"), dataset="v")[::-1], f["v"][...][::-1], "v")


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize != 16 or np.finfo(np.longdouble).nmant != 63,
                    reason="numpy's long double here is not x87 extended precision")
def test_long_double(tmp_path, rng):
    """HDF5's NATIVE_LDOUBLE on x86-64 (80 bits of precision in 16 bytes) reads as numpy's float128."""
    path = tmp_path / "l.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("ld", data=(rng.normal(size=(5, 3)) * 1e30).astype(np.longdouble), chunks=(2, 2))
        f.create_dataset("tiny", data=np.array([np.finfo(np.longdouble).tiny, 1.0], dtype=np.longdouble))
    compare_reads(rng, path, "ld")
    compare_reads(rng, path, "tiny")
