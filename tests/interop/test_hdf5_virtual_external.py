"""tessera reads HDF5 virtual datasets and external storage as h5py reads them, and follows the files
such a dataset names only into the file's own directory tree unless the caller allows more.

Virtual datasets written by h5py's VirtualLayout/VirtualSource (sources in the same file, in other
files of the same directory and of a subdirectory; whole, strided and blocked mappings; regions no
mapping covers holding the fill value; a missing source file reading as fill) and datasets whose
raw data lives in external files (`create_dataset(external=...)`, several slots, offsets, a short
file read as zeros) are compared with h5py for random selections. Paths out of the tree (absolute,
`..`, a symlink pointing out) are read by h5py, refused by tessera by default naming the path, and
read by tessera with `hdf5_allowed_paths`.
"""

from __future__ import annotations

import os

import h5py
import numpy as np
import pytest

import tessera as ts
from hdf5_virtual_support import DTYPES, compare, random_selection
from interop_support import assert_cli_error, assert_identical, stable_seed


def write_sources(directory, rng, dtype, n, length):
    """n source files src{i}.h5 in DIRECTORY, each holding dataset /d of LENGTH elements."""
    directory.mkdir(parents=True, exist_ok=True)
    arrays = []
    for i in range(n):
        data = (rng.random(length) * 100).astype(dtype)
        with h5py.File(directory / f"src{i}.h5", "w") as f:
            f.create_dataset("d", data=data)
        arrays.append(data)
    return arrays


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_vds_sources_in_other_files_same_dir_and_subdir(tmp_path, dtype, libver):
    rng = np.random.default_rng(stable_seed(dtype, libver))
    length = int(rng.integers(5, 40))
    write_sources(tmp_path, rng, dtype, 2, length)
    write_sources(tmp_path / "sub", rng, dtype, 2, length)
    with h5py.File(tmp_path / "vds.h5", "w", libver=libver) as f:
        layout = h5py.VirtualLayout(shape=(5, length), dtype=dtype)
        layout[0] = h5py.VirtualSource("src0.h5", "d", shape=(length,))
        layout[1] = h5py.VirtualSource("src1.h5", "d", shape=(length,))
        layout[2] = h5py.VirtualSource("sub/src0.h5", "d", shape=(length,))
        layout[3] = h5py.VirtualSource("sub/src1.h5", "d", shape=(length,))
        # row 4 is not mapped: the fill value
        f.create_virtual_dataset("v", layout, fillvalue=7)
    compare(tmp_path / "vds.h5", "/v", rng)


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_vds_same_file_strided_blocked_and_partial_mappings(tmp_path, libver):
    rng = np.random.default_rng(3)
    path = tmp_path / "self.h5"
    with h5py.File(path, "w", libver=libver) as f:
        a = f.create_dataset("a", data=rng.integers(0, 1000, (20, 30)).astype("int32"))
        b = f.create_dataset("b", data=rng.integers(0, 1000, (40,)).astype("int32"), chunks=(7,))
        c = f.create_dataset("c", data=rng.integers(0, 1000, (6, 8, 5)).astype("int32"), chunks=(2, 3, 5),
                             compression="gzip")
        layout = h5py.VirtualLayout(shape=(30, 50), dtype="int32")
        va = h5py.VirtualSource(a)
        layout[0:20:2, 0:30] = va[0:10, :]                     # strided rows onto a block
        layout[1:21:2, 30:45] = va[10:20, 0:30:2]              # strided both sides
        layout[25, 0:40] = h5py.VirtualSource(b)               # a rank-1 source onto a row
        layout[21:24, 45:50] = va[3:6, 25:30]                  # a small block
        vc = h5py.VirtualSource(c)
        layout[24, 0:8] = vc[2, :, 1]                          # unit dimensions on both sides
        f.create_virtual_dataset("v", layout, fillvalue=-5)
        # Blocked hyperslabs (block > 1, stride > block) as HDF5 itself selects them.
        layout2 = h5py.VirtualLayout(shape=(12, 12), dtype="int32")
        layout2[0:12, 0:10] = va[0:12, 0:10]
        f.create_virtual_dataset("v2", layout2, fillvalue=0)
    with h5py.File(path, "a") as f:
        # Re-map with a blocked selection through the low-level API: every other pair of rows.
        space = h5py.h5s.create_simple((12, 12))
        space.select_hyperslab((0, 0), (3, 1), stride=(4, 1), block=(2, 12))
        src = h5py.h5s.create_simple((20, 30))
        src.select_hyperslab((0, 0), (1, 1), block=(6, 12))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_virtual(space, b".", b"/a", src)
        dcpl.set_fill_value(np.array(9, "int32"))
        h5py.h5d.create(f.id, b"blocked", h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((12, 12)), dcpl=dcpl).close()
    for name in ("/v", "/v2", "/blocked"):
        compare(path, name, rng)


def test_vds_missing_source_reads_fill(tmp_path):
    rng = np.random.default_rng(4)
    write_sources(tmp_path, rng, "int16", 1, 10)
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=(2, 10), dtype="int16")
        layout[0] = h5py.VirtualSource("src0.h5", "d", shape=(10,))
        layout[1] = h5py.VirtualSource("gone.h5", "d", shape=(10,))
        f.create_virtual_dataset("v", layout, fillvalue=-1)
    compare(tmp_path / "vds.h5", "/v", rng)


def write_external(directory, names_offsets_sizes, data):
    """A file ext.h5 in DIRECTORY with dataset /e stored in external files (created by h5py,
    resolving relative names against DIRECTORY)."""
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        with h5py.File("ext.h5", "w") as f:
            f.create_dataset("e", data=data, external=names_offsets_sizes)
    finally:
        os.chdir(cwd)
    return directory / "ext.h5"


def h5py_external(path, name="e"):
    cwd = os.getcwd()
    os.chdir(path.parent)  # h5py resolves external names against the working directory
    try:
        with h5py.File(path, "r") as f:
            return f[name][()]
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("dtype", ["uint8", "int32", ">f4", "float64"])
def test_external_storage_several_slots(tmp_path, dtype):
    rng = np.random.default_rng(5)
    data = (rng.random((13, 7)) * 1000).astype(dtype)
    n = data.nbytes
    first = n // 3
    (tmp_path / "sub").mkdir()
    path = write_external(tmp_path, [("raw0.bin", 16, first), ("sub/raw1.bin", 0, n - first)], data)
    (tmp_path / "elsewhere").mkdir()
    cwd = os.getcwd()
    os.chdir(tmp_path / "elsewhere")  # tessera resolves against the file's directory, not the cwd
    try:
        a = ts.open(path, dataset="/e")
        assert_identical(a[...], data.astype(data.dtype.newbyteorder("=")), "external")
        for _ in range(6):
            s = random_selection(rng, data.shape)
            assert np.array_equal(a[s], data[s])
    finally:
        os.chdir(cwd)
    assert np.array_equal(h5py_external(path), data)


def test_external_storage_short_file_reads_zeros(tmp_path):
    data = np.arange(40, dtype="int32")
    path = write_external(tmp_path, [("raw.bin", 0, h5py.h5f.UNLIMITED)], data)
    with open(tmp_path / "raw.bin", "r+b") as f:
        f.truncate(60)  # 15 elements left
    expected = h5py_external(path)
    assert np.array_equal(expected[:15], data[:15]) and not expected[15:].any()
    assert np.array_equal(ts.open(path, dataset="/e")[...], expected)


# -- the files a dataset may pull in ------------------------------------------------------------

def vds_naming(directory, source_name, length=6):
    directory.mkdir(parents=True, exist_ok=True)
    with h5py.File(directory / "vds.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=(length,), dtype="int32")
        layout[:] = h5py.VirtualSource(source_name, "d", shape=(length,))
        f.create_virtual_dataset("v", layout, fillvalue=0)
    return directory / "vds.h5"


@pytest.fixture
def outside(tmp_path):
    """A source file outside the directory tree of the files that name it."""
    d = tmp_path / "outside"
    d.mkdir()
    data = np.arange(6, dtype="int32") * 11
    with h5py.File(d / "secret.h5", "w") as f:
        f["d"] = data
    (d / "secret.bin").write_bytes(data.tobytes())
    return d, data


def check_refused_then_allowed(path, dataset, named, allowed, expected, h5py_reads):
    assert np.array_equal(h5py_reads(), expected)  # the HDF5 library follows the name
    with pytest.raises(ts.FailedPreconditionError) as e:
        ts.open(path, dataset=dataset)
    message = str(e.value)
    assert named in message and str(path) in message and "hdf5_allowed_paths" in message, message
    assert np.array_equal(ts.open(path, dataset=dataset, hdf5_allowed_paths=[allowed])[...], expected)


def test_vds_absolute_path_out_is_refused(tmp_path, outside):
    d, data = outside
    path = vds_naming(tmp_path / "inside", str(d / "secret.h5"))

    def h5py_reads():
        with h5py.File(path, "r") as f:
            return f["v"][()]
    check_refused_then_allowed(path, "/v", str(d / "secret.h5"), d, data, h5py_reads)


def test_vds_dotdot_escape_is_refused(tmp_path, outside):
    d, data = outside
    path = vds_naming(tmp_path / "inside", "../outside/secret.h5")

    def h5py_reads():
        with h5py.File(path, "r") as f:
            return f["v"][()]
    check_refused_then_allowed(path, "/v", "../outside/secret.h5", str(d), data, h5py_reads)


def test_vds_symlink_out_is_refused(tmp_path, outside):
    d, data = outside
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "link.h5").symlink_to(d / "secret.h5")
    path = vds_naming(inside, "link.h5")

    def h5py_reads():
        with h5py.File(path, "r") as f:
            return f["v"][()]
    check_refused_then_allowed(path, "/v", "link.h5", d / "secret.h5", data, h5py_reads)
    # A symlink that stays inside the tree is followed.
    (inside / "real.h5").write_bytes((d / "secret.h5").read_bytes())
    (inside / "inner.h5").symlink_to(inside / "real.h5")
    ok = vds_naming(inside / "again", "../inner.h5")
    with pytest.raises(ts.FailedPreconditionError):
        ts.open(ok, dataset="/v")  # ../ leaves "again"'s own tree
    assert np.array_equal(ts.open(ok, dataset="/v", hdf5_allowed_paths=[inside])[...], data)


def test_external_paths_out_are_refused(tmp_path, outside):
    d, data = outside
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "link.bin").symlink_to(d / "secret.bin")
    for named in (str(d / "secret.bin"), "../outside/secret.bin", "link.bin"):
        sub = inside / f"case{stable_seed(named) % 1000}"
        sub.mkdir()
        if named == "link.bin":
            (sub / "link.bin").symlink_to(d / "secret.bin")
        path = write_external(sub, [(named if named != "../outside/secret.bin" else "../../outside/secret.bin", 0,
                                     data.nbytes)], np.zeros_like(data))
        (d / "secret.bin").write_bytes(data.tobytes())  # h5py's write went through the name too
        shown = named if named != "../outside/secret.bin" else "../../outside/secret.bin"
        check_refused_then_allowed(path, "/e", shown, d, data, lambda: h5py_external(path))


def test_allowed_paths_is_a_list(tmp_path, outside):
    d, _ = outside
    path = vds_naming(tmp_path / "inside", "../outside/secret.h5")
    with pytest.raises(TypeError, match="hdf5_allowed_paths: expected a list"):
        ts.open(path, dataset="/v", hdf5_allowed_paths=str(d))


def test_cli_refuses_a_vds_source_out_of_the_tree(tessera, tmp_path, outside):
    d, _ = outside
    path = vds_naming(tmp_path / "inside", "../outside/secret.h5")
    proc = tessera.run(["read", str(path), "--dataset", "/v"])
    assert_cli_error(proc, "failed precondition", "../outside/secret.h5", str(d / "secret.h5"))


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_vds_unlimited_mappings_follow_their_sources(tmp_path, libver):
    """Unlimited mappings: the virtual extent follows the sources as they grow after the virtual
    dataset was made (h5py shows the "last available" extent); interleaved sources leave the rows
    the shorter one has not reached yet as fill."""
    rng = np.random.default_rng(6)
    for i in range(2):
        with h5py.File(tmp_path / f"grow{i}.h5", "w") as f:
            f.create_dataset("d", data=rng.integers(0, 100, (5, 4)).astype("int16"), maxshape=(None, 4), chunks=(2, 4))
    with h5py.File(tmp_path / "vds.h5", "w", libver=libver) as f:
        layout = h5py.VirtualLayout(shape=(5, 4), maxshape=(None, 4), dtype="int16")
        layout[0:h5py.h5s.UNLIMITED, :] = h5py.VirtualSource("grow0.h5", "d", shape=(5, 4), maxshape=(None, 4))[
            0:h5py.h5s.UNLIMITED, :]
        f.create_virtual_dataset("cat", layout, fillvalue=-1)
        inter = h5py.VirtualLayout(shape=(10, 4), maxshape=(None, 4), dtype="int16")
        for i in range(2):
            source = h5py.VirtualSource(f"grow{i}.h5", "d", shape=(5, 4), maxshape=(None, 4))
            inter[i:h5py.h5s.UNLIMITED:2, :] = source[0:h5py.h5s.UNLIMITED, :]
        f.create_virtual_dataset("inter", inter, fillvalue=-1)
    for i, rows in ((0, 9), (1, 7)):
        with h5py.File(tmp_path / f"grow{i}.h5", "a") as f:
            f["d"].resize((rows, 4))
            f["d"][5:] = rng.integers(0, 100, (rows - 5, 4))
    for name in ("/cat", "/inter"):
        compare(tmp_path / "vds.h5", name, rng)


def test_vds_and_external_of_compound_and_string_elements(tmp_path):
    dt = np.dtype([("a", "<i4"), ("b", ">f8")])
    data = np.zeros(10, dt)
    data["a"] = np.arange(10)
    data["b"] = np.arange(10) * 0.5
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f["c"] = data
        f["s"] = np.array([b"ab", b"cde", b"f"] * 3, "S3")
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        for name, shape, dtype in (("c", (10,), dt), ("s", (9,), "S3")):
            layout = h5py.VirtualLayout(shape=(2,) + shape, dtype=dtype)
            layout[1] = h5py.VirtualSource("src.h5", name, shape=shape)
            f.create_virtual_dataset(name, layout)
    for name in ("c", "s"):
        with h5py.File(tmp_path / "vds.h5", "r") as f:
            expected = f[name][()]
        got = ts.open(tmp_path / "vds.h5", dataset=name)[...]
        # tessera gives numbers in native byte order; the fields and values are h5py's
        assert got.dtype.names == expected.dtype.names and np.array_equal(got, expected), name
    path = write_external(tmp_path, [("c.bin", 8, data.nbytes)], data)
    assert np.array_equal(ts.open(path, dataset="/e")[...], h5py_external(path))


def test_info_lists_virtual_sources_and_external_files(tessera, tmp_path):
    write_sources(tmp_path, np.random.default_rng(7), "int32", 1, 4)
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=(4,), dtype="int32")
        layout[:] = h5py.VirtualSource("src0.h5", "d", shape=(4,))
        f.create_virtual_dataset("v", layout)
    info = tessera.run_ok(["info", str(tmp_path / "vds.h5"), "--json"]).stdout.decode()
    assert '"virtual_sources"' in info and '"src0.h5"' in info, info
    path = write_external(tmp_path, [("raw.bin", 0, h5py.h5f.UNLIMITED)], np.arange(5, dtype="int8"))
    info = tessera.run_ok(["info", str(path), "--json"]).stdout.decode()
    assert '"external_files"' in info and '"raw.bin"' in info, info


def test_cli_allowed_path_widens_the_tree(tessera, tmp_path, outside):
    d, data = outside
    path = vds_naming(tmp_path / "inside", "../outside/secret.h5")
    out = tessera.run_ok(["read", str(path), "--dataset", "/v", "--hdf5-allowed-path", str(d)]).stdout
    assert np.array_equal(np.frombuffer(out, "<i4"), data)
    listing = tessera.run_ok(["info", str(path), "--hdf5-allowed-path", str(d), "--json"]).stdout.decode()
    assert '"virtual_sources"' in listing and "failed precondition" not in listing, listing
    refused = tessera.run_ok(["info", str(path), "--json"]).stdout.decode()
    assert "failed precondition" in refused and "secret.h5" in refused, refused


# -- on an object store: only the file's own prefix ----------------------------------------------

S3_BUCKET = "hdf5-linked"


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(S3_BUCKET)
    return s3_server


def test_vds_and_external_on_s3_follow_only_their_prefix(s3_env, request, tmp_path):
    import obstore
    from s3_support import prefix_for, zarr_s3_store

    prefix = prefix_for(request)
    store = zarr_s3_store(s3_env, S3_BUCKET, prefix).store
    rng = np.random.default_rng(8)
    write_sources(tmp_path / "sub", rng, "float32", 2, 12)
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=(3, 12), dtype="float32")
        layout[0] = h5py.VirtualSource("sub/src0.h5", "d", shape=(12,))
        layout[2] = h5py.VirtualSource("sub/src1.h5", "d", shape=(12,))
        f.create_virtual_dataset("v", layout, fillvalue=1.5)
    data = np.arange(20, dtype="<u2")
    write_external(tmp_path, [("sub/raw.bin", 4, data.nbytes)], data)
    for name in ("vds.h5", "ext.h5", "sub/src0.h5", "sub/src1.h5", "sub/raw.bin"):
        obstore.put(store, f"run/{name}", (tmp_path / name).read_bytes())
    with h5py.File(tmp_path / "vds.h5", "r") as f:
        expected = f["v"][()]
    url = f"s3://{S3_BUCKET}/{prefix}/run"
    assert np.array_equal(ts.open(f"{url}/vds.h5", dataset="/v")[...], expected)
    assert np.array_equal(ts.open(f"{url}/ext.h5", dataset="/e")[...], data)
    # A name that climbs out of the file's prefix is refused, allowed paths or not.
    escaping = vds_naming(tmp_path / "esc", "../other/src0.h5")
    obstore.put(store, "run/esc.h5", escaping.read_bytes())
    with pytest.raises(ts.FailedPreconditionError, match=r"\.\./other/src0\.h5.*outside the prefix"):
        ts.open(f"{url}/esc.h5", dataset="/v")


def test_vds_cycles_are_refused_and_shared_sources_open_once(tmp_path):
    path = tmp_path / "cycle.h5"
    with h5py.File(path, "w") as f:
        layout = h5py.VirtualLayout(shape=(4,), dtype="int32")
        layout[:] = h5py.VirtualSource(".", "/w", shape=(4,))
        f.create_virtual_dataset("v", layout)
        layout = h5py.VirtualLayout(shape=(4,), dtype="int32")
        layout[:] = h5py.VirtualSource(".", "/v", shape=(4,))
        f.create_virtual_dataset("w", layout)
    with pytest.raises(ts.UnsupportedError, match="lead back to itself"):
        ts.open(path, dataset="/v")[...]
    # 200 mappings of one source dataset: read as h5py reads them.
    with h5py.File(tmp_path / "many.h5", "w") as f:
        f["s"] = np.arange(1000, dtype="int16")
        layout = h5py.VirtualLayout(shape=(200, 5), dtype="int16")
        for i in range(200):
            layout[i] = h5py.VirtualSource(".", "/s", shape=(1000,))[i * 5:(i + 1) * 5]
        f.create_virtual_dataset("v", layout)
    compare(tmp_path / "many.h5", "/v", np.random.default_rng(9))


def test_vds_source_names_escape_percent_and_printf_names_expand(tmp_path):
    data = np.arange(6, dtype="int32")
    with h5py.File(tmp_path / "a%b.h5", "w") as f:  # HDF5 stores it as "a%%b.h5"
        f["d%x"] = data
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        layout = h5py.VirtualLayout(shape=(6,), dtype="int32")
        layout[:] = h5py.VirtualSource("a%%b.h5", "d%%x", shape=(6,))
        f.create_virtual_dataset("v", layout)
    compare(tmp_path / "vds.h5", "/v", np.random.default_rng(10))
    # One source file per block of three rows along the unlimited dimension: part0.h5, part1.h5, ...
    rng = np.random.default_rng(11)
    for b in range(4):
        with h5py.File(tmp_path / f"part{b}.h5", "w") as f:
            f["d"] = rng.integers(0, 100, (3, 5)).astype("int32")
    with h5py.File(tmp_path / "printf.h5", "w") as f:
        space = h5py.h5s.create_simple((3, 5), (h5py.h5s.UNLIMITED, 5))
        space.select_hyperslab((0, 0), (h5py.h5s.UNLIMITED, 1), stride=(3, 1), block=(3, 5))
        source = h5py.h5s.create_simple((3, 5))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_virtual(space, b"part%b.h5", b"d", source)
        dcpl.set_fill_value(np.array(-2, "int32"))
        h5py.h5d.create(f.id, b"v", h5py.h5t.NATIVE_INT32, space, dcpl=dcpl).close()
    compare(tmp_path / "printf.h5", "/v", rng)
    assert ts.open(tmp_path / "printf.h5", dataset="/v").shape == (12, 5)
