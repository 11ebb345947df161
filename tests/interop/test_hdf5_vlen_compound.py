"""tessera reads HDF5 variable-length data inside other types the way h5py reads it back:
compounds with vlen string and sequence members (numeric members in any byte order around them,
padding, nested compounds, arrays of vlen members), sequences of compounds, sequences of
sequences and sequences of fixed array types, and arrays of vlen strings; chunked (gzip too),
contiguous and compact, random shapes and selections, chunks never written.

What h5py gives, and tessera matches: a structured array whose vlen members are object fields
(bytes for strings, h5py's plain read; numpy arrays for sequences), laid out as HDF5 lays the
compound out in memory (a vlen string takes 8 bytes, a sequence 16, the members after one move
up); a sequence of compounds is an array of their structured dtype; a sequence of sequences an
object array of arrays; a sequence of a fixed array type an array of shape (n, *dims). tessera
converts numbers to little-endian (h5py keeps a member's big-endian order), so dtypes are
compared with the byte order normalized. Where h5py itself cannot read a case (a sequence of
compounds with a vlen member), the values written are the reference, and h5dump agrees.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import tessera

tessera_api = tessera  # the CLI test's fixture is named tessera too

from interop_support import assert_cli_error

h5py = pytest.importorskip("h5py")

UTF8 = h5py.string_dtype()
ASCII = h5py.string_dtype("ascii")
TEXT = ["", "a", "é", "中文", "😀", "long" * 10, "x y"]
LAYOUTS = ["chunked", "gzip", "contiguous", "compact"]


def little_endian(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("<")


def assert_same(got, expected, what: str) -> None:
    """Equal dtype (byte order normalized), shape, every field; objects by value and type."""
    if isinstance(expected, np.void):
        assert isinstance(got, np.void), f"{what}: {type(got)}"
        assert got.dtype == little_endian(expected.dtype), f"{what}: {got.dtype} != {expected.dtype}"
        for name in expected.dtype.names:
            assert_same(got[name], expected[name], f"{what}.{name}")
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{what}: {type(got)}"
        assert got.dtype == little_endian(expected.dtype), f"{what}: {got.dtype} != {expected.dtype}"
        assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
        if expected.dtype.names:
            for name in expected.dtype.names:
                assert_same(got[name], expected[name], f"{what}.{name}")
        elif expected.dtype == object:
            for index in np.ndindex(expected.shape):
                assert_same(got[index], expected[index], f"{what}{index}")
        else:
            assert np.array_equal(got, expected), f"{what}: {got!r} != {expected!r}"
        return
    assert type(got) is type(expected) and got == expected, f"{what}: {got!r} != {expected!r}"


def random_shape_and_chunks(rng):
    rank = int(rng.integers(1, 3))
    shape = tuple(int(rng.integers(1, 8)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, s + 1)) for s in shape)
    return shape, chunks


def random_key(rng, shape):
    key = []
    for extent in shape:
        if rng.random() < 0.2:
            key.append(int(rng.integers(-extent, extent)))
            continue
        start = int(rng.integers(-extent - 1, extent + 1)) if rng.random() < 0.7 else None
        stop = int(rng.integers(-extent - 1, extent + 2)) if rng.random() < 0.7 else None
        key.append(slice(start, stop, int(rng.choice([1, 2, 3, -1, -2]))))
    return tuple(key)


def create(f, name, layout, shape, dtype, chunks):
    if layout == "compact":
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        tid = h5py.h5t.py_create(dtype, logical=True)
        return h5py.Dataset(h5py.h5d.create(f.id, name.encode(), tid, h5py.h5s.create_simple(shape), dcpl=dcpl))
    if layout in ("chunked", "gzip"):
        return f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks,
                                compression="gzip" if layout == "gzip" else None)
    return f.create_dataset(name, shape=shape, dtype=dtype)


def text(rng, ascii=False):
    s = "".join(TEXT[i] for i in rng.integers(0, len(TEXT), size=int(rng.integers(0, 3))))
    return s.encode("ascii", "replace") if ascii else s


def sequence(rng, dtype):
    return rng.integers(-100, 100, size=int(rng.integers(0, 5))).astype(dtype)


def write_partly(ds, values, rng, one_by_one=False):
    """Writes a random box of VALUES, leaving the rest (whole chunks too) never written; ONE_BY_ONE
    for the types h5py writes an element at a time only (sequences of compounds and sequences)."""
    start = [int(rng.integers(0, s)) for s in values.shape]
    if not one_by_one:
        box = tuple(slice(b, None) for b in start)
        ds[box] = values[box]
        return
    for index in np.ndindex(values.shape):
        if all(i >= b for i, b in zip(index, start)) and len(values[index]):
            ds[index] = values[index]


def check(rng, path, name, shape, selections=6):
    with h5py.File(path, "r") as f:
        full = f[name][...]
    keys = [random_key(rng, shape) for _ in range(selections)]  # negative steps too, which h5py does not take
    expected = [full[k] for k in keys]
    a = tessera.open(str(path), dataset=name)
    assert a.shape == tuple(shape)
    assert a.dtype == little_endian(full.dtype) or (full.dtype == object and a.dtype == object), f"{a.dtype} {full.dtype}"
    assert_same(a[...], full, f"{path.name}:{name}[...]")
    for key, want in zip(keys, expected):
        assert_same(a[key], want, f"{path.name}:{name}{key}")
    index = tuple(int(rng.integers(0, s)) for s in shape)
    assert_same(a[index], full[index], f"{path.name}:{name}{index}")


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_compound_with_vlen_members_random_shapes_and_selections(tmp_path, rng, order, layout):
    # Members in an order of their own (numpy's names order is not the offsets'), with padding;
    # h5py writes the members sorted by offset, and so reads them back.
    dtype = np.dtype({"names": ["n", "s", "f", "v", "a"],
                      "formats": [order + "i2", UTF8, order + "f8", h5py.vlen_dtype(np.dtype("<i4")), ASCII],
                      "offsets": [40, 0, 16, 24, 8], "itemsize": 48})
    path = tmp_path / f"c_{layout}.h5"
    for case in range(3):
        shape, chunks = random_shape_and_chunks(rng)
        values = np.zeros(shape, dtype=dtype)
        for index in np.ndindex(shape):
            values[index] = (rng.integers(-999, 999), text(rng), rng.random(),
                             sequence(rng, "<i4"), text(rng, ascii=True))
        with h5py.File(path, "a") as f:
            write_partly(create(f, f"d{case}", layout, shape, dtype, chunks), values, rng)
        check(rng, path, f"d{case}", shape)


def test_compound_inside_compound_and_arrays_of_vlen_members(tmp_path, rng):
    # (h5py reads a big-endian sequence inside a compound with its bytes unswapped: that case is
    # checked against h5dump below, and the sequences here are little-endian.)
    inner = np.dtype([("label", UTF8), ("k", "u1"), ("seq", h5py.vlen_dtype(np.dtype("<u2")))])
    dtype = np.dtype([("x", ">f4"), ("inner", inner), ("names", UTF8, (3,)), ("pairs", inner, (2,)),
                      ("fixed", "S3"), ("runs", h5py.vlen_dtype(np.dtype("f8")), (2,))])
    path = tmp_path / "nested.h5"
    shape, chunks = (7, 3), (3, 2)
    values = np.zeros(shape, dtype=dtype)
    for index in np.ndindex(shape):
        one = lambda: (text(rng), rng.integers(0, 255), sequence(rng, "<u2"))  # noqa: E731
        values[index] = (rng.random(), one(), [text(rng) for _ in range(3)], [one(), one()], b"ab",
                         [rng.random(int(rng.integers(0, 4))) for _ in range(2)])
    with h5py.File(path, "w") as f:
        write_partly(f.create_dataset("c", shape=shape, dtype=dtype, chunks=chunks), values, rng)
        f.create_dataset("contiguous", data=values)
    check(rng, path, "c", shape)
    check(rng, path, "contiguous", shape)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sequences_of_compounds_sequences_and_arrays(tmp_path, rng, layout):
    record = np.dtype([("p", "<i4"), ("q", ">f8"), ("tag", "S2")])
    kinds = {
        "of_compound": (h5py.vlen_dtype(record),
                        lambda: np.array([(rng.integers(9), rng.random(), b"t") for _ in range(rng.integers(0, 4))], record)),
        "of_vlen": (h5py.vlen_dtype(h5py.vlen_dtype(np.dtype("<i2"))),
                    lambda: np.array([None] + [sequence(rng, "<i2") for _ in range(rng.integers(0, 3))], object)[1:]),
        "strings_array": (np.dtype((UTF8, (2,))), None),
        # an array datatype of vlen sequences: numpy's subarray holds 8-byte object fields where
        # HDF5's memory layout gives each value 16 bytes
        "sequences_array": (np.dtype((h5py.vlen_dtype(np.dtype("<i2")), (3,))), None),
    }
    path = tmp_path / f"s_{layout}.h5"
    for name, (dtype, make) in kinds.items():
        shape, chunks = random_shape_and_chunks(rng)
        with h5py.File(path, "a") as f:
            ds = create(f, name, layout, shape, dtype, chunks)
            if make is None:  # an array datatype of vlen values: h5py appends its dimension
                n = dtype.shape[0]
                value = (lambda: text(rng)) if name == "strings_array" else (lambda: sequence(rng, "<i2"))
                values = np.empty((int(np.prod(shape)), n), dtype=object)
                for index in np.ndindex(values.shape):
                    values[index] = value()
                ds[...] = values.reshape(shape + (n,))
            else:
                values = np.empty(shape, dtype=object)
                for index in np.ndindex(shape):
                    values[index] = make()
                write_partly(ds, values, rng, one_by_one=True)
        if make is None:
            with h5py.File(path, "r") as f:
                full = f[name][...]
            a = tessera.open(str(path), dataset=name)
            assert_same(a[...], full, name)
            assert_same(a[::-1], full[::-1], name + "[::-1]")
        else:
            check(rng, path, name, shape)


def write_vlen_of_array(path, values):
    """A sequence of a fixed array type (int32[3]), which h5py reads but cannot write: written
    through HDF5's own vlen memory layout (hvl_t {len, pointer}) with h5py's low-level API."""
    base = h5py.h5t.array_create(h5py.h5t.STD_I32LE, (3,))
    tid = h5py.h5t.vlen_create(base)
    with h5py.File(path, "w") as f:
        space = h5py.h5s.create_simple((len(values),))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((2,))
        ds = h5py.h5d.create(f.id, b"va", tid, space, dcpl=dcpl)
        hvl = np.zeros(len(values), dtype=[("len", "<u8"), ("p", "<u8")])
        for i, v in enumerate(values):
            hvl[i] = (len(v), v.ctypes.data)
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, hvl, mtype=tid)


def test_sequence_of_fixed_array_type(tmp_path, rng):
    values = [np.ascontiguousarray(rng.integers(-50, 50, size=(int(rng.integers(0, 4)), 3)).astype("<i4")) for _ in range(5)]
    path = tmp_path / "va.h5"
    write_vlen_of_array(path, values)
    check(rng, path, "va", (5,))
    got = tessera.open(str(path), dataset="va")[...]
    for g, v in zip(got, values):
        assert g.dtype == np.dtype("<i4") and g.shape == v.shape and np.array_equal(g, v)


def test_sequence_of_compound_with_vlen_member_matches_what_was_written_and_h5dump(tmp_path, rng):
    # h5py writes this type but cannot read it back ("invalid background buffer pointer").
    record = np.dtype([("p", "<i4"), ("t", UTF8)])
    path = tmp_path / "vcs.h5"
    written = [np.array([(i, f"w{i}{j}é") for j in range(i)], dtype=record) for i in range(4)]
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("vcs", shape=(4,), dtype=h5py.vlen_dtype(record))
        for i, v in enumerate(written):
            if len(v):  # (an empty one h5py fails to write; it stays null)
                ds[i] = v
    got = tessera.open(str(path), dataset="vcs")[...]
    assert got.dtype == object and got.shape == (4,)
    for g, w in zip(got, written):
        assert g.dtype == np.dtype([("p", "<i4"), ("t", "O")]) and g.shape == w.shape
        assert list(g["p"]) == list(w["p"]) and list(g["t"]) == [t.encode() for t in w["t"]]
    if shutil.which("h5dump"):
        dump = subprocess.run(["h5dump", "-d", "vcs", str(path)], capture_output=True, text=True, check=True).stdout
        assert "w32" in dump and "w21" in dump, dump  # (h5dump writes the é as octal escapes)


def test_null_elements_read_empty_and_fill_value(tmp_path):
    dtype = np.dtype([("s", UTF8), ("v", h5py.vlen_dtype(np.dtype("<i8"))), ("n", "<i4")])
    path = tmp_path / "null.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("c", shape=(6,), chunks=(2,), dtype=dtype)
        ds[1] = ("x", np.arange(3), 7)
    a = tessera.open(str(path), dataset="c")
    with h5py.File(path, "r") as f:
        assert_same(a[...], f["c"][...], "null.h5")
        assert_same(a[5], f["c"][5], "null.h5[5]")  # a chunk never written
    fill = a.fill_value
    assert isinstance(fill, np.void) and fill["s"] == b"" and fill["v"].dtype == np.dtype("<i8") and fill["v"].size == 0


def test_read_into_out_and_cli_refuses(tmp_path, tessera):
    dtype = np.dtype([("s", UTF8), ("n", "<i4")])
    path = tmp_path / "o.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("c", data=np.array([("a", 1), ("bc", 2), ("", 3)], dtype=dtype))
    a = tessera_api.open(str(path), dataset="c")
    out = np.empty((2,), dtype=a.dtype)
    assert a.read("1:3", out=out) is out
    assert list(out["s"]) == [b"bc", b""] and list(out["n"]) == [2, 3]
    with pytest.raises(TypeError):
        a.read(out=np.empty((3,), dtype=object))
    assert_cli_error(tessera.run(["read", str(path), "--dataset", "/c"]), "unsupported", "variable-length",
                     "compound {s: vlen string (UTF-8), n: int32")
    assert_cli_error(tessera.run(["convert", str(path), str(tmp_path / "out.zarr"), "--dataset", "/c"]), "unsupported",
                     "variable-length")
    info = tessera.run_ok(["info", str(path)]).stdout.decode()
    assert "compound {s: vlen string (UTF-8), n: int32" in info, info


def test_big_endian_sequences_inside_a_compound_agree_with_h5dump(tmp_path):
    # h5py hands these back with their bytes unswapped (a '>i4' sequence as int32 of the stored
    # bytes); the HDF5 library's own h5dump, and the values written, are the reference.
    dtype = np.dtype([("id", ">u2"), ("v", h5py.vlen_dtype(np.dtype(">i4")))])
    written = [(1, np.array([1, -2, 300000], ">i4")), (2, np.array([], ">i4")), (3, np.array([7], ">i4"))]
    path = tmp_path / "be.h5"
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("c", shape=(3,), dtype=dtype)
        for i, w in enumerate(written):
            ds[i] = w
    got = tessera.open(str(path), dataset="c")[...]
    assert list(got["id"]) == [1, 2, 3]
    for g, (_, w) in zip(got["v"], written):
        assert g.dtype == np.dtype("<i4") and g.tolist() == w.tolist()
    if shutil.which("h5dump"):
        dump = subprocess.run(["h5dump", "-d", "c", str(path)], capture_output=True, text=True, check=True).stdout
        assert "(1, -2, 300000)" in dump and "(7)" in dump, dump


def test_array_of_sequences_of_arrays_as_the_hdf5_tools_tarray7(tmp_path):
    # The HDF5 library's tools/testfiles/tarray6.h5 and tarray7.h5: a top-level array datatype
    # ([4]) of vlen sequences of uint32 (tarray6) or of uint32[4] (tarray7), which h5py reads as
    # shape (n, 4) objects. h5py cannot write a sequence of an array type: written through HDF5's
    # memory layout (4 hvl_t {len, pointer} per element) with h5py's low-level API.
    rng = np.random.default_rng(7)
    for name, leaf in (("tarray6", h5py.h5t.STD_U32LE), ("tarray7", h5py.h5t.array_create(h5py.h5t.STD_U32LE, (4,)))):
        tid = h5py.h5t.array_create(h5py.h5t.vlen_create(leaf), (4,))
        per_value = (4,) if name == "tarray7" else ()
        values = [[np.ascontiguousarray(rng.integers(0, 1000, size=(int(rng.integers(0, 4)),) + per_value).astype("<u4"))
                   for _ in range(4)] for _ in range(5)]
        hvl = np.zeros((5, 4), dtype=[("len", "<u8"), ("p", "<u8")])
        for i, row in enumerate(values):
            for j, v in enumerate(row):
                hvl[i, j] = (len(v), v.ctypes.data)
        path = tmp_path / f"{name}.h5"
        with h5py.File(path, "w") as f:
            ds = h5py.h5d.create(f.id, b"Dataset1", tid, h5py.h5s.create_simple((5,)))
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, hvl, mtype=tid)
        with h5py.File(path, "r") as f:
            full = f["Dataset1"][...]
        assert full.shape == (5, 4) and full.dtype == object
        a = tessera.open(str(path), dataset="Dataset1")
        assert_same(a[...], full, name)
        assert a.shape == (5,) and a.dtype == np.dtype(("O", (4,)))  # h5py's dataset dtype too
        assert_same(a[::-2], full[::-2], name + "[::-2]")
        for i, row in enumerate(values):
            got = a[i]
            for j, v in enumerate(row):
                assert np.array_equal(got[j], v) and got[j].dtype == np.dtype("<u4"), (name, i, j)
