"""Regressions found by sweeping real-world HDF5 files with scripts/hdf5_corpus_check.py (issue 30),
each rebuilt here from h5py-written files (patched byte by byte where h5py cannot write the
structure) and compared with h5py's read of the same file."""

from __future__ import annotations

import struct

import h5py
import numpy as np

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
