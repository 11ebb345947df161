"""Regressions found by sweeping real-world HDF5 files with scripts/hdf5_corpus_check.py (issue 30),
each rebuilt here from h5py-written files (patched byte by byte where h5py cannot write the
structure) and compared with h5py's read of the same file."""

from __future__ import annotations

import struct

import h5py
import numpy as np
import pytest

import tessera


def _v1_header_messages(data: bytes, addr: int) -> list[tuple[int, int, bytes]]:
    """(type, flags, body) of each message of a version 1 object header's first chunk.

    Version 1 object header: version 1, reserved, message count (2), reference count (4), chunk
    size (4), 4 bytes of padding; then each message: type (2), body size (2), flags, 3 reserved,
    body (a multiple of 8 bytes)."""
    version, _, count, _, chunk_bytes = struct.unpack_from("<BBHII", data, addr)
    assert version == 1
    messages, at = [], addr + 16
    for _ in range(count):
        kind, size, flags = struct.unpack_from("<HHB", data, at)
        messages.append((kind, flags, data[at + 8:at + 8 + size]))
        at += 8 + size
    assert at == addr + 16 + chunk_bytes, "messages continue in another chunk"
    return messages


def _encode_v1_messages(messages: list[tuple[int, int, bytes]]) -> bytes:
    return b"".join(struct.pack("<HHB3x", kind, len(body), flags) + body for kind, flags, body in messages)


def test_committed_datatype_through_a_version_1_shared_message(tmp_path, rng):
    """HDF5 1.4 and older wrote a dataset's committed datatype as a version 1 shared message: 6
    reserved bytes, then a whole symbol table entry (the link name's heap offset, then the object
    header address). Reading the heap offset as the address failed on the library's own
    tools/testfiles/tcompound.h5 ("object header at 0x10: bad signature")."""
    dtype = np.dtype([("int_name", ">i4"), ("float_name", "<f8"), ("c", "u1")])
    values = np.zeros(11, dtype=dtype)
    values["int_name"] = rng.integers(-1000, 1000, size=11)
    values["float_name"] = rng.normal(size=11)
    values["c"] = rng.integers(0, 255, size=11)
    path = tmp_path / "old_committed.h5"
    with h5py.File(path, "w", libver="earliest") as f:
        f["shared_type"] = dtype
        f.create_dataset("d", data=values, dtype=f["shared_type"])
        header_addr = h5py.h5o.get_info(f["d"].id).addr
    data = bytearray(path.read_bytes())
    messages = _v1_header_messages(bytes(data), header_addr)
    kinds = [kind for kind, _, _ in messages]
    assert 0x0003 in kinds and kinds[-1] == 0x0000, "expected a shared datatype and trailing free space"
    _, flags, body = messages[kinds.index(0x0003)]
    assert body[0] == 2, "h5py writes a version 2 shared message"
    committed_addr = body[2:10]
    # The version 1 body: version, type, 6 reserved, link name offset (0x10, as in tcompound.h5), address.
    v1_body = bytes([1, 0]) + bytes(6) + struct.pack("<Q", 0x10) + committed_addr
    grown = len(v1_body) - len(body)
    free_kind, free_flags, free_body = messages[-1]
    messages[kinds.index(0x0003)] = (0x0003, flags, v1_body)
    messages[-1] = (free_kind, free_flags, free_body[:len(free_body) - grown])  # same chunk size
    chunk = _encode_v1_messages(messages)
    data[header_addr + 16:header_addr + 16 + len(chunk)] = chunk
    path.write_bytes(bytes(data))

    with h5py.File(path) as f:  # the HDF5 library reads the patched file: the structure is valid
        expected = f["d"][...]
    np.testing.assert_array_equal(expected, values)
    got = tessera.open(path, dataset="/d")
    assert got.dtype == dtype.newbyteorder("=")
    np.testing.assert_array_equal(got[...], expected.astype(dtype.newbyteorder("=")))
    np.testing.assert_array_equal(got[2:9:3], expected[2:9:3].astype(dtype.newbyteorder("=")))


def _write_nbit(path, name, file_type, values, memory_type, chunks, deflate=False):
    """A dataset of FILE_TYPE through the n-bit filter (and deflate after it when asked)."""
    with h5py.File(path, "a") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk(chunks)
        dcpl.set_filter(h5py.h5z.FILTER_NBIT, 0, ())  # H5Pset_nbit: set_local fills the client data
        if deflate:
            dcpl.set_deflate(4)
        space = h5py.h5s.create_simple(values.shape)
        d = h5py.h5d.create(f.id, name.encode(), file_type, space, dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values, mtype=memory_type)


def _assert_reads_like_h5py(path, name, rng):
    with h5py.File(path) as f:
        plist = f[name].id.get_create_plist()
        assert h5py.h5z.FILTER_NBIT in [plist.get_filter(k)[0] for k in range(plist.get_nfilters())]
        expected = f[name][...]
    a = tessera.open(path, dataset="/" + name)
    native = expected.dtype.newbyteorder("=")
    assert a.dtype == native, name
    np.testing.assert_array_equal(a[...], expected.astype(native), err_msg=name)
    index = tuple(slice(int(rng.integers(0, n)), None, int(rng.integers(1, 3))) for n in expected.shape)
    np.testing.assert_array_equal(a[index], expected[index].astype(native), err_msg=name)


@pytest.mark.parametrize("order", ["<", ">"])
def test_nbit_integers_and_floats_read_like_h5py(tmp_path, rng, order):
    """The n-bit filter (id 5) packs each element's significant bits; the HDF5 library's test
    files (test/be_data.h5, tools/testfiles/tfilters.h5, h5repack_nbit.h5) use it and were refused."""
    path = tmp_path / "nbit.h5"
    le = order == "<"
    for size, precision, offset, signed in [(4, 17, 5, True), (2, 9, 0, False), (8, 41, 13, True), (1, 3, 4, False),
                                            (4, 32, 0, True)]:
        base = {(1, False): h5py.h5t.STD_U8LE, (2, False): h5py.h5t.STD_U16LE, (4, True): h5py.h5t.STD_I32LE,
                (8, True): h5py.h5t.STD_I64LE}[(size, signed)] if le else \
            {(1, False): h5py.h5t.STD_U8BE, (2, False): h5py.h5t.STD_U16BE, (4, True): h5py.h5t.STD_I32BE,
             (8, True): h5py.h5t.STD_I64BE}[(size, signed)]
        t = base.copy()
        t.set_precision(precision)
        t.set_offset(offset)
        lo, hi = (-(1 << (precision - 1)), 1 << (precision - 1)) if signed else (0, 1 << precision)
        shape = (int(rng.integers(4, 30)), int(rng.integers(7, 20)))
        values = rng.integers(lo, hi, size=shape, dtype=f"{'i' if signed else 'u'}{size}")
        native = h5py.h5t.py_create(values.dtype)
        _write_nbit(path, f"i{size}_{precision}_{offset}", t, values, native, (4, 7), deflate=size == 8)
    # A float with 20 significant bits at offset 7 (the layout of be_data.h5's Nbit_float_data).
    t = (h5py.h5t.IEEE_F32LE if le else h5py.h5t.IEEE_F32BE).copy()
    t.set_fields(26, 20, 6, 7, 13)
    t.set_offset(7)
    t.set_precision(20)
    t.set_size(4)
    t.set_ebias(31)
    values = (rng.normal(size=(11, 13)) * 1000).astype("float32")
    _write_nbit(path, "float", t, values, h5py.h5t.NATIVE_FLOAT, (5, 5))
    with h5py.File(path) as f:
        names = list(f)
    for name in names:
        _assert_reads_like_h5py(path, name, rng)


def test_nbit_compound_with_array_members_reads_like_h5py(tmp_path, rng):
    """n-bit over a compound: members packed in order, an array member's elements one by one, a
    full-width member whole (h5repack_nested_8bit_enum_deflated.h5's layout)."""
    small = h5py.h5t.STD_I16LE.copy()
    small.set_precision(12)
    small.set_offset(2)
    five_bits = h5py.h5t.STD_U8BE.copy()
    five_bits.set_precision(5)
    triple = h5py.h5t.array_create(five_bits, (3,))
    file_type = h5py.h5t.create(h5py.h5t.COMPOUND, 24)
    file_type.insert(b"b", 0, h5py.h5t.IEEE_F64BE)
    file_type.insert(b"a", 8, small)
    file_type.insert(b"c", 12, triple)
    memory = np.dtype([("a", "<i2"), ("b", "<f8"), ("c", "u1", (3,))])
    values = np.zeros((23,), dtype=memory)
    values["a"] = rng.integers(-2048, 2048, size=23)
    values["b"] = rng.normal(size=23)
    values["c"] = rng.integers(0, 32, size=(23, 3))
    path = tmp_path / "nbit_compound.h5"
    _write_nbit(path, "table", file_type, values, h5py.h5t.py_create(memory), (6,), deflate=True)
    _assert_reads_like_h5py(path, "table", rng)
