"""Issue 30's small HDF5 points, on files h5py writes and the test then patches:
- an object carrying the specification's "bogus" test message (type 0x0009) flagged "fail if
  unknown" is refused, as the HDF5 library refuses it, instead of reading as zeros;
- `tessera info FILE.h5` lists the datasets that open and, for the one that cannot, its reason,
  instead of failing as a whole."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

import tessera as tessera_py


def make_with_bogus_message(path):
    """Three datasets; only /g/bogus keeps a modification-time message (track_times), which is then
    rewritten into a bogus message flagged "fail if unknown". With h5py's default libver the object
    headers are version 1 (no checksum), whose messages start with an 8-byte header:

        type (u16)  size (u16)  flags (u8)  reserved (3 bytes)  | body (size bytes)

    and the modification-time message (type 0x0012, 8 bytes) has the body
        version 1 (u8)  reserved (3 bytes)  seconds since the epoch (u32).
    The patch turns type 0x0012 into 0x0009 (bogus) and sets flag bit 7 (fail if unknown always)."""
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.arange(12, dtype="<i4").reshape(3, 4), track_times=False)
        f.create_dataset("g/bogus", data=np.arange(1, 7, dtype="<u2"), track_times=True)
        f.create_dataset("z", data=np.linspace(0, 1, 5), track_times=False)
    raw = bytearray(path.read_bytes())
    marker = b"\x12\x00\x08\x00"
    hits = [i for i in range(len(raw) - 12) if raw[i:i + 4] == marker and raw[i + 8] == 1 and raw[i + 5:i + 8] == b"\0\0\0"]
    assert len(hits) == 1, f"expected one modification-time message, found {len(hits)}"
    at = hits[0]
    raw[at:at + 2] = b"\x09\x00"
    raw[at + 4] = 0x80
    path.write_bytes(bytes(raw))


def test_bogus_message_flagged_fail_if_unknown_is_refused(tmp_path):
    path = tmp_path / "bogus.h5"
    make_with_bogus_message(path)
    # The HDF5 library (through h5py) refuses the object: the patch means what the test says.
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["a"][...], np.arange(12).reshape(3, 4))
        with pytest.raises(Exception):
            f["g/bogus"][...]
    with pytest.raises(tessera_py.UnsupportedError, match=r"message type 9 is flagged 'fail if unknown'"):
        tessera_py.open(path, dataset="/g/bogus")[...]
    np.testing.assert_array_equal(tessera_py.open(path, dataset="/a")[...], np.arange(12).reshape(3, 4))


def test_bogus_message_without_the_flag_is_ignored(tmp_path):
    path = tmp_path / "bogus_ok.h5"
    make_with_bogus_message(path)
    raw = bytearray(path.read_bytes())
    at = raw.index(b"\x09\x00\x08\x00\x80")
    raw[at + 4] = 0
    path.write_bytes(bytes(raw))
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["g/bogus"][...], np.arange(1, 7))
    np.testing.assert_array_equal(tessera_py.open(path, dataset="/g/bogus")[...], np.arange(1, 7))


def test_info_lists_the_datasets_that_open_and_the_one_that_does_not(tessera, tmp_path):
    path = tmp_path / "bogus.h5"
    make_with_bogus_message(path)
    proc = tessera.run(["info", path, "--json"])
    assert proc.returncode == 0, proc.stderr
    listing = json.loads(proc.stdout)
    by_name = {d["dataset"]: d for d in listing["datasets"]}
    assert sorted(by_name) == ["/a", "/g/bogus", "/z"]
    assert by_name["/a"]["shape"] == [3, 4] and "error" not in by_name["/a"]
    assert by_name["/z"]["dtype"] == "float64"
    assert "fail if unknown" in by_name["/g/bogus"]["error"] and "message type 9" in by_name["/g/bogus"]["error"]
    text = tessera.run_ok(["info", path]).stdout.decode()
    assert "datasets:    3" in text
    assert "/a: int32 [3, 4]" in text
    assert "/g/bogus: unsupported" in text and "fail if unknown" in text
