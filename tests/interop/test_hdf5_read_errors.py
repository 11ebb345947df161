"""Corrupt and truncated HDF5 files: tessera fails cleanly (exit 1, "tessera: error: <kind>:", the
file and byte range named), never crashes or hangs; a damaged file that still reads gives the undamaged
values or exactly what h5py reads from it, never other values.
"""

from __future__ import annotations

import struct
import subprocess
import sys

import h5py
import numpy as np
import pytest

from interop_support import assert_cli_error

TIMEOUT = 20


def run(tessera, *args):
    return tessera.run(list(args), timeout=TIMEOUT)


def patch(path, offset: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset:offset + len(data)] = data
    path.write_bytes(bytes(raw))


def find_all(path, needle: bytes) -> list[int]:
    raw = path.read_bytes()
    out, i = [], raw.find(needle)
    while i >= 0:
        out.append(i)
        i = raw.find(needle, i + 1)
    return out


# Damage at random may be reported as any of these; never as a crash, an I/O error or success with garbage.
DAMAGE_KINDS = ("corrupt data", "unsupported", "not found", "invalid argument", "out of range")

H5PY_READ = r"""
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    d = f[sys.argv[2]]
    x = d[tuple(slice(0, int(n)) for n in sys.argv[3].split(","))]
sys.stdout.buffer.write(np.ascontiguousarray(x.astype(x.dtype.newbyteorder("<"))).tobytes())
"""


def assert_damaged_read_is_not_garbage(got: bytes, path, dataset: str, clean: np.ndarray, what: str) -> None:
    """A damaged file that tessera still reads (the first CLEAN.shape elements of DATASET): the bytes are
    the undamaged file's values, or exactly what h5py reads from the damaged file (the damage hit an
    unchecked chunk's data, or a field both read the same way). Anything else is silent garbage."""
    want = np.ascontiguousarray(clean.astype(clean.dtype.newbyteorder("<"))).tobytes()
    if got == want:
        return
    # h5py in a child: libhdf5 may crash or hang on damage, which must not take the test process along.
    try:
        proc = subprocess.run([sys.executable, "-c", H5PY_READ, str(path), dataset, ",".join(map(str, clean.shape))],
                              capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc = None
    if proc is not None and proc.returncode == 0:
        h5py_bytes = proc.stdout
        if got == h5py_bytes:
            return
        raise AssertionError(f"{what}: tessera read {len(got)} bytes that are neither the undamaged values nor "
                             f"the {len(h5py_bytes)} bytes h5py reads from the damaged file")
    why = "h5py hung" if proc is None else f"h5py fails: {proc.stderr.decode(errors='replace')[-300:]!r}"
    raise AssertionError(f"{what}: tessera read {len(got)} bytes that are not the undamaged values, and {why}")


def make(path, libver="earliest", **kw):
    data = np.arange(4000, dtype="<i4").reshape(200, 20)
    with h5py.File(path, "w", libver=libver) as f:
        d = f.create_dataset("g/data", data=data, chunks=(2, 20), **kw)
        info = d.id.get_chunk_info(0)
    return data, info


def test_truncated_file(tessera, tmp_path):
    path = tmp_path / "t.h5"
    make(path, compression="gzip")
    raw = path.read_bytes()
    for cut in (len(raw) // 2, 100, 9):
        path.write_bytes(raw[:cut])
        for cmd in (["read", path, "--dataset", "g/data"], ["info", path]):
            err = assert_cli_error(run(tessera, *cmd), "corrupt data", "t.h5")
            assert "truncated" in err or "signature" in err


def test_bad_superblock_signature_and_checksum(tessera, tmp_path):
    path = tmp_path / "s.h5"
    make(path)
    patch(path, 1, b"X")
    assert_cli_error(run(tessera, "info", path), "invalid argument", "s.h5", "not an HDF5 file")
    path2 = tmp_path / "s3.h5"
    make(path2, libver="latest")
    patch(path2, 12, b"\x01")  # base address byte: covered by the v3 superblock checksum
    assert_cli_error(run(tessera, "info", path2), "corrupt data", "s3.h5", "superblock", "checksum")


def test_bad_object_header_signature(tessera, tmp_path):
    path = tmp_path / "o.h5"
    make(path, libver="latest")
    offsets = find_all(path, b"OHDR")
    patch(path, offsets[-1], b"OHDX")
    err = assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "o.h5", "0x")
    assert "object header" in err


def test_v2_object_header_checksum_mismatch(tessera, tmp_path):
    path = tmp_path / "c.h5"
    make(path, libver="latest")
    at = find_all(path, b"OHDR")[-1]
    raw = path.read_bytes()
    patch(path, at + 12, bytes([raw[at + 12] ^ 0x40]))
    assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "c.h5", "checksum mismatch", "0x")


@pytest.mark.parametrize("signature", [b"TREE", b"HEAP", b"SNOD"])
def test_bad_group_structure_signatures(tessera, tmp_path, signature):
    path = tmp_path / "g.h5"
    make(path)
    patch(path, find_all(path, signature)[0], b"XXXX")
    err = assert_cli_error(run(tessera, "info", path), "corrupt data", "g.h5", "bad signature", "0x")
    assert signature.decode() in err


def chunk_btree_root(path) -> int:
    """The level-1 root of the dataset's chunk B-tree (200 chunks > 64 per leaf)."""
    raw = path.read_bytes()
    for at in find_all(path, b"TREE"):
        if raw[at + 4] == 1 and raw[at + 5] == 1:
            return at
    raise AssertionError("no level-1 chunk B-tree node")


def test_btree_child_pointing_to_itself(tessera, tmp_path):
    path = tmp_path / "loop.h5"
    make(path)
    root = chunk_btree_root(path)
    key_size = 8 + 8 * 3  # chunk size, filter mask, (rank + 1) offsets
    patch(path, root + 24 + key_size, struct.pack("<Q", root))
    err = assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "loop.h5", "0x")
    assert "loop" in err or "level" in err


def test_btree_child_past_end_of_file(tessera, tmp_path):
    path = tmp_path / "eof.h5"
    make(path)
    root = chunk_btree_root(path)
    patch(path, root + 24 + 32, struct.pack("<Q", 0x7FFF_FFFF_0000))
    assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "eof.h5", "outside the file")


def leaf_key_offset(path, chunk_index: int) -> int:
    """Where the chunk B-tree key of chunk CHUNK_INDEX (of make()'s dataset, unfiltered) starts."""
    with h5py.File(path, "r") as f:
        info = f["g/data"].id.get_chunk_info(chunk_index)
    key = struct.pack("<IIQQQ", info.size, 0, *info.chunk_offset, 0) + struct.pack("<Q", info.byte_offset)
    at = find_all(path, key)
    assert len(at) == 1, f"test setup: key of chunk {chunk_index} found {len(at)} times"
    return at[0]


def test_btree_key_past_the_maximum_extent(tessera, tmp_path):
    """A key whose offset is a multiple of the chunk size but past a fixed maximum extent (20): damage,
    not a chunk to skip; reading on would return the fill value where data is stored."""
    path = tmp_path / "k.h5"
    make(path)
    at = leaf_key_offset(path, 5)
    patch(path, at + 16, struct.pack("<Q", 20 * 7))
    assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "k.h5",
                     "chunk offset 140 in dimension 1 is past the maximum extent 20")


def test_btree_keys_out_of_order(tessera, tmp_path):
    """Chunk 5's key (offset 10) moved past chunk 6's (offset 12): HDF5's binary search would miss
    chunks, so it is damage, not a read that silently returns the fill value."""
    path = tmp_path / "o.h5"
    make(path)
    at = leaf_key_offset(path, 5)
    patch(path, at + 8, struct.pack("<Q", 2 * 50))
    assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "o.h5",
                     "chunk B-tree keys out of order")


def test_corrupt_deflate_data(tessera, tmp_path):
    path = tmp_path / "z.h5"
    _, info = make(path, compression="gzip")
    patch(path, info.byte_offset, b"\xff" * min(16, info.size))
    err = assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "z.h5")
    assert "chunk" in err
    # A read that avoids the corrupt chunk still works.
    ok = run(tessera, "read", path, "--dataset", "/g/data", "--slice=10:20")
    assert ok.returncode == 0


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_fletcher32_mismatch(tessera, tmp_path, libver):
    path = tmp_path / "f.h5"
    _, info = make(path, libver=libver, fletcher32=True)
    raw = path.read_bytes()
    patch(path, info.byte_offset + 5, bytes([raw[info.byte_offset + 5] ^ 0x01]))
    err = assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "f.h5")
    assert "fletcher" in err.lower() or "checksum" in err.lower()


def test_fixed_array_index_checksum(tessera, tmp_path):
    path = tmp_path / "fa.h5"
    make(path, libver="latest")
    at = find_all(path, b"FADB")[0]
    raw = path.read_bytes()
    patch(path, at + 20, bytes([raw[at + 20] ^ 0x10]))
    assert_cli_error(run(tessera, "read", path, "--dataset", "/g/data"), "corrupt data", "fa.h5", "fixed array", "checksum")


def test_random_garbage_and_missing_dataset(tessera, tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "junk.h5"
    base = tmp_path / "base.h5"
    make(base, libver="latest", compression="gzip")
    raw = base.read_bytes()
    clean = np.arange(4000, dtype="<i4").reshape(200, 20)
    for trial in range(12):
        # Keep the signature, scramble a random span of the rest.
        buf = bytearray(raw)
        start = int(rng.integers(8, len(buf) - 64))
        buf[start:start + 64] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
        path.write_bytes(bytes(buf))
        proc = run(tessera, "read", path, "--dataset", "g/data", "--slice=:200, :20")
        if proc.returncode != 0:
            assert_cli_error(proc, DAMAGE_KINDS, "junk.h5")
        else:
            assert_damaged_read_is_not_garbage(proc.stdout, path, "g/data", clean,
                                               f"trial {trial}: bytes [{start}, {start + 64}) scrambled")
    path.write_bytes(b"\x89HDF\r\n\x1a\n" + rng.integers(0, 256, 4000, dtype=np.uint8).tobytes())
    assert_cli_error(run(tessera, "info", path), DAMAGE_KINDS, "junk.h5")
    assert_cli_error(run(tessera, "read", base, "--dataset", "/nope"), "not found", "base.h5", "/nope")
    assert_cli_error(run(tessera, "read", base, "--dataset", "/g"), "invalid argument", "base.h5", "group")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    assert_cli_error(run(tessera, "read", notes), "invalid argument", "notes.txt", "not an HDF5 file")


def _sources(tmp_path):
    """Small real files: one h5py writes (both libver settings) and one tessera writes."""
    data = np.arange(600, dtype="<u2").reshape(20, 30)
    for libver in ("earliest", "latest"):
        path = tmp_path / f"h5py-{libver}.h5"
        with h5py.File(path, "w", libver=libver) as f:
            d = f.create_dataset("g/d", data=data, chunks=(4, 7), compression="gzip", shuffle=True, fletcher32=True)
            f.attrs["title"] = "variable-length string"  # attributes are decoded by `info` too
            d.attrs["spacing"] = np.array([0.5, 2.0])
            for i in range(10):  # dense attribute storage with libver='latest'
                d.attrs[f"a{i}"] = i
            f.create_dataset("g/e", data=data, chunks=(20, 30), maxshape=(None, 30))
            f.create_dataset("c", data=data)
        yield path, ["/g/d", "/g/e", "/c"]


@pytest.mark.parametrize("writer", ["h5py-earliest", "h5py-latest", "tessera"])
def test_random_byte_damage_never_crashes_or_hangs(tessera, tmp_path, writer):
    """Every single-byte corruption of a small file either still reads or fails cleanly."""
    if writer == "tessera":
        path = tmp_path / "tessera.h5"
        data = np.arange(600, dtype="<u2").reshape(20, 30).tobytes()
        tessera.run_ok(["stream", path, "--format", "hdf5", "--dataset", "/g/d", "--dtype", "uint16",
                        "--shape", "0,30", "--chunk", "4,7", "--codec", "gzip", "--shuffle", "--fletcher32",
                        "--attribute", "units=um", "--attribute", "gain=2.5"], data)
        datasets = ["/g/d"]
    else:
        path, datasets = next((p, d) for p, d in _sources(tmp_path) if p.name.startswith(writer))
    clean = path.read_bytes()
    values = np.arange(600, dtype="<u2").reshape(20, 30)  # every dataset of every source
    rng = np.random.default_rng(sum(map(ord, writer)))
    damaged = tmp_path / "damaged.h5"
    for trial in range(200):
        raw = bytearray(clean)
        flips = []
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(raw)))
            raw[at] ^= int(rng.integers(1, 256))
            flips.append(at)
        damaged.write_bytes(bytes(raw))
        dataset = datasets[trial % len(datasets)]
        # The read is bounded: a corrupted extent may legitimately claim terabytes.
        for cmd in (["info", damaged], ["read", damaged, "--dataset", dataset, "--slice=:20, :30"]):
            proc = run(tessera, *cmd)
            if proc.returncode != 0:
                assert_cli_error(proc, DAMAGE_KINDS, "damaged.h5")
            elif cmd[0] == "read":
                assert_damaged_read_is_not_garbage(proc.stdout, damaged, dataset, values,
                                                   f"{writer} trial {trial}: bytes {flips} flipped, {dataset}")
