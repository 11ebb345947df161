"""tessera reads a 12-byte x87 long double (C's long double on 32-bit x86 hosts, as the HDF5
library's tools/testfiles/h5diff_basic1.h5 holds) the way h5py does: as numpy's float128, the 80
bits widened to 16 bytes. Files are written with h5py's low-level API (NATIVE_LDOUBLE resized to
12 bytes, either byte order), the values converted by the HDF5 library from float128; contiguous,
chunked (gzip too), compact, a fill value, unwritten chunks and an attribute.
"""

from __future__ import annotations

import numpy as np
import pytest

import tessera

tessera_api = tessera  # the CLI test's fixture is named tessera too

h5py = pytest.importorskip("h5py")

if np.dtype(np.longdouble).itemsize != 16 or np.finfo(np.longdouble).nmant != 63:
    pytest.skip("numpy's longdouble is not x87 80-bit extended here", allow_module_level=True)

LAYOUTS = ["contiguous", "chunked", "gzip", "compact"]


def long_double_12(order):
    t = h5py.h5t.NATIVE_LDOUBLE.copy()
    t.set_size(12)
    t.set_order(order)
    return t


def values(shape):
    rng = np.random.default_rng(12)
    v = (rng.standard_normal(shape) * 10.0 ** rng.integers(-300, 300, shape)).astype(np.longdouble)
    v.flat[0] = np.longdouble(1) / 3  # more precision than float64 holds
    if v.size > 2:
        # (no subnormals: the HDF5 library's 12-to-16-byte conversion halves them, where tessera
        # keeps the value the x87 bits hold)
        v.flat[1], v.flat[2] = np.inf, -0.0
    return v


def write(path, name, layout, data, order, fill=None):
    tid = long_double_12(order)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    if layout == "compact":
        dcpl.set_layout(h5py.h5d.COMPACT)
    elif layout != "contiguous":
        dcpl.set_chunk(tuple(max(1, s // 2) for s in data.shape))
        if layout == "gzip":
            dcpl.set_deflate(4)
    if fill is not None:
        dcpl.set_fill_value(np.array(fill, dtype=np.longdouble))
    with h5py.File(path, "a") as f:
        ds = h5py.h5d.create(f.id, name.encode(), tid, h5py.h5s.create_simple(data.shape), dcpl=dcpl)
        if layout in ("chunked", "gzip") and fill is not None:
            # only the first chunk written: the rest read as the fill value
            mem = h5py.h5s.create_simple(data.shape)
            box = tuple(max(1, s // 2) for s in data.shape)
            fspace = ds.get_space()
            fspace.select_hyperslab((0,) * data.ndim, box)
            mem = h5py.h5s.create_simple(box)
            ds.write(mem, fspace, np.ascontiguousarray(data[tuple(slice(0, b) for b in box)]),
                     mtype=h5py.h5t.NATIVE_LDOUBLE)
        else:
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=h5py.h5t.NATIVE_LDOUBLE)


@pytest.mark.parametrize("order", [h5py.h5t.ORDER_LE, h5py.h5t.ORDER_BE], ids=["le", "be"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_twelve_byte_long_double_reads_as_h5py_reads_it(tmp_path, layout, order):
    path = tmp_path / "ld12.h5"
    shape = (5, 7)
    write(path, "d", layout, values(shape), order)
    write(path, "filled", layout, values(shape), order, fill=2.5)
    for name in ("d", "filled"):
        with h5py.File(path, "r") as f:
            assert f[name].id.get_type().get_size() == 12
            expected = f[name][...]
            a = tessera_api.open(str(path), dataset=name)
        assert a.dtype == np.dtype("<f16") and a.shape == shape
        got = a[...]
        assert got.dtype == np.longdouble and expected.dtype.newbyteorder("<") == np.longdouble  # h5py keeps '>f16'
        np.testing.assert_array_equal(got, expected)
        assert np.signbit(got.flat[2]) and got.flat[0] != np.float64(got.flat[0])  # -0.0 and 80-bit precision kept
        np.testing.assert_array_equal(a[1:4, ::-2], expected[1:4, ::-2][...])
        assert a[4, 6] == expected[4, 6]
        if name == "filled":
            assert a.fill_value == 2.5
            if layout in ("chunked", "gzip"):
                assert got[-1, -1] == 2.5  # a chunk never written


def test_twelve_byte_long_double_attribute(tessera, tmp_path):
    import json

    # `tessera info` shows an x87 attribute value as its little-endian bytes (as for 16-byte ones);
    # a 12-byte value, in either byte order, shows its 80 bits and 2 bytes of padding.
    path = tmp_path / "attr.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(3))
        for name, order in (("le", h5py.h5t.ORDER_LE), ("be", h5py.h5t.ORDER_BE)):
            attr = h5py.h5a.create(f["x"].id, name.encode(), long_double_12(order), h5py.h5s.create_simple((2,)))
            attr.write(np.array([1.5, -0.25], dtype=np.longdouble), mtype=h5py.h5t.NATIVE_LDOUBLE)
        assert list(f["x"].attrs["be"]) == [1.5, -0.25]
    info = json.loads(tessera.run_ok(["info", str(path), "--dataset", "x", "--json"]).stdout)
    attributes = info.get("attributes") or info["metadata"]["attributes"]
    x87 = ["0x" + np.array(v, np.longdouble).tobytes()[:10].hex() + "0000" for v in (1.5, -0.25)]
    assert attributes["le"] == x87 and attributes["be"] == x87, attributes
