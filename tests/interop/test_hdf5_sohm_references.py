"""tessera reads HDF5 files whose datatype, dataspace, fill value, filter pipeline and attribute
messages are kept once in the shared-object-header-message heap (SOHM; H5Pset_shared_mesg_index),
whatever the index form (a list, a v2 B-tree, a list that grew into a B-tree) and however the message
types are spread over indexes; every read is compared with h5py's, and `tessera info` lists the
datasets and their attributes.

h5py has no setters for the shared-message properties, so the tests call them through ctypes on the
HDF5 library h5py itself loads.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os

import h5py
import numpy as np
import pytest

import tessera

tessera_module = tessera  # the `tessera` fixture (the CLI) shadows the module in tests taking it

# The message type flags of H5Pset_shared_mesg_index: bit (1 << message type).
DATASPACE, DATATYPE, FILL, PIPELINE, ATTRIBUTE = 1 << 0x1, 1 << 0x3, 1 << 0x5, 1 << 0xB, 1 << 0xC
ALL = DATASPACE | DATATYPE | FILL | PIPELINE | ATTRIBUTE


def hdf5_library() -> ctypes.CDLL:
    """The libhdf5 h5py is linked with (its wheel's copy, else the system one it loaded)."""
    here = os.path.dirname(h5py.__file__)
    candidates = glob.glob(os.path.join(here, "..", "h5py.libs", "libhdf5-*.so*"))
    candidates += glob.glob(os.path.join(here, ".libs", "libhdf5-*.so*"))
    if candidates:
        return ctypes.CDLL(candidates[0])
    return ctypes.CDLL("libhdf5.so")  # h5py linked against the system library: already loaded


def sohm_file(path, indexes, max_list=50, min_btree=40, latest=False) -> h5py.File:
    """A new file sharing messages through `indexes`: [(message type flags, minimum size), ...];
    an index holds up to `max_list` messages as a list, and turns back into a list below
    `min_btree` (0 and 0: a B-tree from the first message)."""
    lib = hdf5_library()
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    pid = ctypes.c_int64(fcpl.id)
    assert lib.H5Pset_shared_mesg_nindexes(pid, ctypes.c_uint(len(indexes))) >= 0
    for i, (flags, min_size) in enumerate(indexes):
        assert lib.H5Pset_shared_mesg_index(pid, ctypes.c_uint(i), ctypes.c_uint(flags), ctypes.c_uint(min_size)) >= 0
    assert lib.H5Pset_shared_mesg_phase_change(pid, ctypes.c_uint(max_list), ctypes.c_uint(min_btree)) >= 0
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    if latest:
        fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    return h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl))


DTYPES = ["<i4", ">i2", "<f4", ">f8", "u1", np.dtype([("a", "<i2"), ("b", ">f4")])]


def fill_datasets(f: h5py.File, rng, count: int) -> None:
    """`count` datasets of random types, shapes, layouts, filters and fill values, each with
    attributes; many repeat their messages (what the heap shares), some do not."""
    for i in range(count):
        dt = np.dtype(DTYPES[int(rng.integers(len(DTYPES)))])
        shape = tuple(int(n) for n in rng.integers(1, 24, size=int(rng.integers(1, 4))))
        if dt.names:
            data = np.zeros(shape, dt)
            for name in dt.names:
                data[name] = rng.integers(-100, 100, shape)
        else:
            data = rng.integers(0, 100, shape).astype(dt)
        layout = ["contiguous", "chunked", "chunked-gzip", "compact"][i % 4]
        kwargs = {}
        if layout.startswith("chunked"):
            kwargs["chunks"] = tuple(max(1, n // 2) for n in shape)
            kwargs["fillvalue"] = None if dt.names else dt.type(7)
        if layout == "chunked-gzip":
            kwargs.update(compression="gzip", shuffle=True)
        d = f.create_dataset(f"g{i % 3}/d{i}", data=data, **kwargs) if layout != "compact" else None
        if d is None:
            space = h5py.h5s.create_simple(shape)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            f.require_group(f"g{i % 3}")
            dsid = h5py.h5d.create(f.id, f"g{i % 3}/d{i}".encode(), h5py.h5t.py_create(dt), space, dcpl=dcpl)
            d = h5py.Dataset(dsid)
            d[...] = data
        d.attrs["units"] = "m"
        d.attrs["scale"] = np.arange(3.0)
        d.attrs["index"] = np.int64(i % 2)


def compare_file(path, rng) -> None:
    with h5py.File(path) as f:
        names = []
        f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        assert names
        for name in names:
            want = f[name][()]
            got = tessera.open(str(path), dataset=name)[...]
            assert got.dtype == want.dtype.newbyteorder("<") or got.dtype == want.dtype, name
            assert np.array_equal(got, want), name
            for _ in range(2):
                sel = tuple(slice(int(rng.integers(0, n)), None) for n in want.shape)
                assert np.array_equal(tessera.open(str(path), dataset=name)[sel], want[sel]), (name, sel)


def compare_attributes(tessera_cli, path) -> None:
    with h5py.File(path) as f:
        names = []
        f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        for name in names[:2]:
            info = json.loads(tessera_cli.run_ok(["info", str(path), "--dataset", name, "--json"]).stdout)
            attributes = info.get("attributes") or info["metadata"]["attributes"]
            for key, value in f[name].attrs.items():
                expected = value.tolist() if isinstance(value, np.ndarray) or isinstance(value, np.generic) else value
                assert attributes[key] == expected, (name, key, attributes[key])


CONFIGS = {
    # One index for everything, a list throughout.
    "one-list": dict(indexes=[(ALL, 0)], max_list=50, min_btree=40),
    # One index for everything, a B-tree from the first message.
    "one-btree": dict(indexes=[(ALL, 0)], max_list=0, min_btree=0),
    # A list that grows into a B-tree after a few messages.
    "list-to-btree": dict(indexes=[(ALL, 0)], max_list=3, min_btree=2),
    # Types spread over three indexes: the busy ones grow into B-trees, fill/pipeline stays a list.
    "three-indexes": dict(indexes=[(DATATYPE | DATASPACE, 0), (FILL | PIPELINE, 0), (ATTRIBUTE, 0)],
                          max_list=10, min_btree=5),
    # Messages under 40 bytes stay in their object headers.
    "min-size": dict(indexes=[(ALL, 40)], max_list=4, min_btree=2),
}


# The index forms each configuration ends with (0 list, 1 B-tree), as the "SMTB" table records them.
INDEX_FORMS = {"one-list": [0], "one-btree": [1], "list-to-btree": [1], "three-indexes": [1, 0, 1], "min-size": [1]}


def index_forms(path) -> list:
    """The index type of each entry of the file's shared message table (30-byte entries after "SMTB")."""
    data = open(path, "rb").read()
    at = data.find(b"SMTB") + 4
    forms = []
    while data[at] == 0 and len(forms) < 8 and data[at + 1] in (0, 1):  # version 0, type 0/1
        forms.append(data[at + 1])
        at += 30
    return forms


@pytest.mark.parametrize("latest", [False, True], ids=["earliest", "latest"])
@pytest.mark.parametrize("config", CONFIGS)
def test_sohm_datasets_read_as_h5py(tessera, tmp_path, rng, config, latest):
    path = tmp_path / "sohm.h5"
    with sohm_file(path, latest=latest, **CONFIGS[config]) as f:
        fill_datasets(f, rng, 10)
    assert index_forms(path)[:len(INDEX_FORMS[config])] == INDEX_FORMS[config]
    compare_file(path, rng)
    compare_attributes(tessera, path)
    out = tessera.run_ok(["info", str(path)]).stdout.decode()
    assert "datasets:    10" in out and "unsupported" not in out, out


def test_sohm_dense_attributes_and_group_attributes(tessera, tmp_path):
    """More attributes than fit compactly: dense storage, whose name index points into the
    shared-message heap for the shared ones."""
    path = tmp_path / "dense.h5"
    with sohm_file(path, [(ALL, 0)], max_list=3, min_btree=2, latest=True) as f:
        for name in ("a", "b"):
            d = f.create_dataset(name, data=np.arange(6, dtype="<i8").reshape(2, 3))
            for k in range(20):
                d.attrs[f"attr{k:02d}"] = np.arange(k % 4 + 1, dtype="<f8") * (1 if k % 2 else -1)
            d.attrs["label"] = "same text"
        f.attrs["root"] = np.arange(4, dtype="<i2")
    compare_attributes(tessera, path)
    with h5py.File(path) as f:
        np.testing.assert_array_equal(tessera_module.open(str(path), dataset="b")[...], f["b"][()])


def test_sohm_with_a_committed_datatype(tmp_path, rng):
    path = tmp_path / "committed.h5"
    with sohm_file(path, [(ALL, 0)], max_list=0, min_btree=0) as f:
        f["types/rec"] = np.dtype([("x", ">i4"), ("y", "<f8")])
        for i in range(3):
            data = np.zeros((5,), f["types/rec"].dtype)
            data["x"] = rng.integers(0, 9, 5)
            f.create_dataset(f"r{i}", data=data, dtype=f["types/rec"], chunks=(2,))
    compare_file(path, rng)


# References -------------------------------------------------------------------------------------
# tessera has no reference objects: an object reference reads as the path of the object it points
# to (h5py's f[ref].name), "" for a null reference; region references are refused naming them.


def h5py_paths(f: h5py.File, refs) -> list:
    return [f[r].name if r else "" for r in np.asarray(refs).ravel()]


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_object_references_read_as_paths(tmp_path, rng, libver):
    path = tmp_path / "refs.h5"
    with h5py.File(path, "w", libver=libver) as f:
        targets = [f.create_group("g"), f.create_group("g/h"), f["/"]]
        for i in range(12):  # enough links that a libver=latest group goes dense
            targets.append(f.create_dataset(f"g/h/d{i:02d}" if i % 2 else f"d{i:02d}", data=np.arange(i + 1)))
        f["g/alias"] = f["d00"]  # a second hard link: the first path in name order is kept
        choice = rng.integers(0, len(targets) + 1, size=(5, 7))
        refs = np.empty((5, 7), dtype=h5py.ref_dtype)
        for index, k in np.ndenumerate(choice):
            refs[index] = targets[k].ref if k < len(targets) else h5py.Reference()
        f.create_dataset("refs", data=refs)
        f.create_dataset("refs_chunked", data=refs, chunks=(2, 3), compression="gzip")
        f.create_dataset("refs_unwritten", shape=(4,), dtype=h5py.ref_dtype, chunks=(2,))
        f["refs_unwritten"][0] = f["d00"].ref
    with h5py.File(path) as f:
        for name in ("refs", "refs_chunked", "refs_unwritten"):
            a = tessera.open(str(path), dataset=name)
            got = a[...]
            assert got.dtype == object and got.shape == f[name].shape
            assert list(got.ravel()) == h5py_paths(f, f[name][()]), name
            part = (slice(1, None), slice(None, None, 2))[: got.ndim]  # refs_unwritten is 1-D
            assert list(np.asarray(a[part]).ravel()) == h5py_paths(f, f[name][()][part]), name


def test_object_references_in_a_sohm_file_and_info(tessera, tmp_path):
    path = tmp_path / "refs_sohm.h5"
    with sohm_file(path, [(ALL, 0)], max_list=0, min_btree=0) as f:
        d = f.create_dataset("data", data=np.arange(4))
        f.create_dataset("refs", data=np.array([d.ref, f["/"].ref, h5py.Reference()], dtype=h5py.ref_dtype))
    assert list(tessera_module.open(str(path), dataset="refs")[...]) == ["/data", "/", ""]
    out = tessera.run_ok(["info", str(path)]).stdout.decode()
    assert "/refs: object reference" in out, out


def test_object_references_past_an_object_tessera_cannot_open(tmp_path):
    """One object of the file is refused (a bogus message flagged "fail if unknown", as in
    test_hdf5_unknown_messages_and_info.py): references to the others still read as their paths;
    one the walk did not find (an anonymous dataset, which might have been below the refused
    object) is an error naming why, not "". HDF5 itself gives None for /z here: its name search
    trips over the refused object too."""
    path = tmp_path / "refs_bogus.h5"
    with h5py.File(path, "w") as f:
        a = f.create_dataset("a", data=np.arange(3), track_times=False)
        f.create_dataset("g/bogus", data=np.arange(1, 7, dtype="<u2"), track_times=True)
        z = f.create_dataset("z", data=np.arange(2), track_times=False)
        anonymous = f.create_dataset(None, data=np.arange(4), track_times=False)
        refs = np.array([a.ref, z.ref, h5py.Reference(), anonymous.ref], dtype=h5py.ref_dtype)
        f.create_dataset("refs", data=refs, chunks=(1,), track_times=False)
    # The one modification-time message (type 0x0012, body version 1) becomes type 9, flag bit 7.
    raw = bytearray(path.read_bytes())
    hits = [i for i in range(len(raw) - 12)
            if raw[i:i + 4] == b"\x12\x00\x08\x00" and raw[i + 8] == 1 and raw[i + 5:i + 8] == b"\0\0\0"]
    assert len(hits) == 1, hits
    raw[hits[0]:hits[0] + 2] = b"\x09\x00"
    raw[hits[0] + 4] = 0x80
    path.write_bytes(bytes(raw))
    with h5py.File(path) as f:
        assert f[f["refs"][0]].name == "/a"
    refs = tessera.open(str(path), dataset="refs")
    assert list(refs[:3]) == ["/a", "/z", ""]
    with pytest.raises(tessera.UnsupportedError, match=r"no path found for the object at 0x[0-9a-f]+, and part of "
                                                       r"the file's groups could not be walked: .*fail if unknown"):
        refs[3:]


def test_region_references_are_refused_by_name(tmp_path):
    path = tmp_path / "regions.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("data", data=np.arange(10))
        rr = f.create_dataset("regions", (2,), dtype=h5py.regionref_dtype)
        rr[0] = d.regionref[2:5]
    with pytest.raises(tessera.UnsupportedError, match="region references"):
        tessera.open(str(path), dataset="regions")[...]


def test_time_class_is_refused_by_name(tmp_path):
    """HDF5's time class (2): h5py has no numpy type for it and refuses to read it; so does tessera,
    naming the class."""
    path = tmp_path / "time.h5"
    with h5py.File(path, "w") as f:
        space = h5py.h5s.create_simple((3,))
        h5py.h5d.create(f.id, b"t", getattr(h5py.h5t, "UNIX_D32LE", h5py.h5t.STD_I32LE), space)
    with h5py.File(path) as f:
        if f["t"].id.get_type().get_class() != h5py.h5t.TIME:
            pytest.skip("this h5py cannot make a time datatype")
        with pytest.raises(TypeError, match="No NumPy equivalent"):
            f["t"][()]
    with pytest.raises(tessera.UnsupportedError, match="time datatypes"):
        tessera.open(str(path), dataset="t")[...]


def test_new_style_references_are_refused_by_name(tmp_path):
    """HDF5 1.12's references (H5T_STD_REF): h5py does not write them; made here through the
    library h5py loads. tessera refuses them naming the kind."""
    lib = hdf5_library()
    try:
        std_ref = ctypes.c_int64.in_dll(lib, "H5T_STD_REF_g").value
    except ValueError:
        pytest.skip("this HDF5 library has no H5T_STD_REF (older than 1.12)")
    path = tmp_path / "new_refs.h5"
    with h5py.File(path, "w") as f:
        space = h5py.h5s.create_simple((3,))
        lib.H5Dcreate2.restype = ctypes.c_int64
        dataset = lib.H5Dcreate2(ctypes.c_int64(f.id.id), b"refs", ctypes.c_int64(std_ref), ctypes.c_int64(space.id),
                                 ctypes.c_int64(0), ctypes.c_int64(0), ctypes.c_int64(0))
        assert dataset >= 0
        lib.H5Dclose(ctypes.c_int64(dataset))
    with pytest.raises(tessera.UnsupportedError, match="HDF5 1.12 object references"):
        tessera.open(str(path), dataset="refs")[...]
