"""tessera reads HDF5 files written by h5py (libhdf5 2.0) exactly: every layout (contiguous, compact,
chunked), every chunk index h5py produces (v1 B-tree, single chunk, implicit, fixed array,
extensible array, v2 B-tree), the deflate/shuffle/fletcher32 filters, both byte orders, and
random hyperslabs compared with numpy.
"""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from interop_support import assert_cli_error, random_data, smooth_data

NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64"]
LIBVERS = ["earliest", "latest"]


def le(a: np.ndarray) -> np.ndarray:
    """The array as tessera emits it: little-endian, C order."""
    a = np.asarray(a)
    return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))


def read_all(tessera, path, dataset, expected: np.ndarray, slice_expr=None):
    args = ["read", path, "--dataset", dataset]
    if slice_expr is not None:
        args.append(f"--slice={slice_expr}")
    out = tessera.run_ok(args).stdout
    want = le(expected).tobytes()
    assert len(out) == len(want), f"{dataset} [{slice_expr}]: {len(out)} bytes, expected {len(want)}"
    if out != want:
        got = np.frombuffer(out, dtype=le(expected).dtype).reshape(expected.shape)
        bad = np.argwhere(got.view(np.uint8).reshape(*expected.shape, -1).any(-1) !=
                          le(expected).view(np.uint8).reshape(*expected.shape, -1).any(-1))
        raise AssertionError(f"{dataset} [{slice_expr}]: bytes differ (e.g. at {bad[:3].tolist()})")


def slice_text(sl) -> str:
    parts = []
    for s in sl:
        if isinstance(s, int):
            parts.append(str(s))
        else:
            parts.append(":".join("" if v is None else str(v) for v in (s.start, s.stop, s.step)))
    return ", ".join(parts)


@pytest.mark.parametrize("libver", LIBVERS)
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("order", ["<", ">"])
def test_dtypes_and_byte_orders(tessera, tmp_path, rng, libver, dtype, order):
    data = random_data(rng, dtype, (37, 21)).astype(np.dtype(dtype).newbyteorder(order))
    path = tmp_path / "t.h5"
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("contiguous", data=data)
        f.create_dataset("chunked", data=data, chunks=(8, 5))
        f.create_dataset("gzip", data=data, chunks=(16, 16), compression="gzip", shuffle=True, fletcher32=True)
    for name in ("contiguous", "chunked", "gzip"):
        read_all(tessera, path, name, data)


@pytest.mark.parametrize("libver", LIBVERS)
@pytest.mark.parametrize("filters", [
    {}, {"compression": "gzip"}, {"shuffle": True}, {"fletcher32": True},
    {"compression": "gzip", "compression_opts": 9, "shuffle": True},
    {"compression": "gzip", "fletcher32": True}, {"shuffle": True, "fletcher32": True},
    {"compression": "gzip", "shuffle": True, "fletcher32": True},
])
def test_filter_combinations(tessera, tmp_path, libver, filters):
    data = smooth_data("uint16", (50, 33, 7))
    path = tmp_path / "f.h5"
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("fixed", data=data, chunks=(16, 8, 7), **filters)
        f.create_dataset("ext", data=data, chunks=(16, 8, 7), maxshape=(None, 33, 7), **filters)
        f.create_dataset("ext2", data=data, chunks=(16, 8, 7), maxshape=(None, None, 7), **filters)
        f.create_dataset("single", data=data, chunks=data.shape, **filters)
    for name in ("fixed", "ext", "ext2", "single"):
        read_all(tessera, path, name, data)


@pytest.mark.parametrize("libver", LIBVERS)
def test_compact_and_scalar_free_layouts(tessera, tmp_path, libver):
    path = tmp_path / "c.h5"
    small = np.arange(24, dtype=">i4").reshape(2, 3, 4)
    with h5py.File(path, "w", libver=libver) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        space = h5py.h5s.create_simple(small.shape)
        dset = h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I32BE, space, dcpl=dcpl)
        dset.write(h5py.h5s.ALL, h5py.h5s.ALL, small)
        f.create_dataset("bools", data=np.array([[True, False, True], [False, False, True]]))
    info = tessera.info(path)
    layouts = {d["dataset"]: d["layout"] for d in info["datasets"]}
    assert layouts["/compact"] == "compact"
    read_all(tessera, path, "/compact", small)
    read_all(tessera, path, "/compact", small[:, ::-1, 1:3], "..., ::-1, 1:3".replace("..., ", ":, "))
    out = tessera.run_ok(["read", path, "--dataset", "/bools"]).stdout
    assert out == np.array([[1, 0, 1], [0, 0, 1]], dtype=np.uint8).tobytes()


@pytest.mark.parametrize("libver", LIBVERS)
def test_rank_1_and_rank_5_with_ragged_edges(tessera, tmp_path, rng, libver):
    one = random_data(rng, "float32", (1001,))
    five = random_data(rng, "int16", (5, 4, 7, 3, 9))
    path = tmp_path / "r.h5"
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("one", data=one, chunks=(64,), compression="gzip")
        f.create_dataset("five", data=five, chunks=(2, 3, 4, 2, 5))
        f.create_dataset("five_ext", data=five, chunks=(2, 3, 4, 2, 5), maxshape=(None, 4, 7, 3, 9))
    read_all(tessera, path, "one", one)
    read_all(tessera, path, "one", one[999:3:-7], "999:3:-7")
    read_all(tessera, path, "five", five)
    read_all(tessera, path, "five_ext", five[1:4, ::-1, 2, :, 3:8:2], "1:4, ::-1, 2, :, 3:8:2")


@pytest.mark.parametrize("libver", LIBVERS)
def test_nested_groups_and_dataset_listing(tessera, tmp_path, libver):
    path = tmp_path / "g.h5"
    a = np.arange(60, dtype="<u4").reshape(6, 10)
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("top", data=a)
        f.create_dataset("grp/sub/deep/data", data=a * 2, chunks=(3, 3))
        f.create_dataset("grp/sub/other", data=a * 3, chunks=(6, 10), compression="gzip")
        f.create_group("grp/empty")
        f["grp/alias"] = h5py.SoftLink("/top")
    info = tessera.info(path)
    assert info["format"] == "hdf5"
    assert [d["dataset"] for d in info["datasets"]] == ["/grp/sub/deep/data", "/grp/sub/other", "/top"]
    assert all(d["shape"] == [6, 10] for d in info["datasets"])
    read_all(tessera, path, "/grp/sub/deep/data", a * 2)
    read_all(tessera, path, "grp/sub/other", a * 3)
    text = tessera.run_ok(["info", path]).stdout.decode()
    assert "/grp/sub/deep/data" in text and "uint32" in text
    one = tessera.run_ok(["info", path, "--dataset", "/grp/sub/other", "--json"]).stdout
    assert b'"deflate"' in one
    # Several datasets and no --dataset: an error naming them.
    assert_cli_error(tessera.run(["read", path]), "invalid argument", "--dataset", "/grp/sub/other")


def test_single_dataset_needs_no_dataset_option(tessera, tmp_path):
    path = tmp_path / "only.h5"
    a = np.arange(12, dtype="f8").reshape(3, 4)
    with h5py.File(path, "w") as f:
        f.create_dataset("g/only", data=a, chunks=(2, 2))
    assert tessera.run_ok(["read", path]).stdout == a.tobytes()


@pytest.mark.parametrize("libver", LIBVERS)
def test_unallocated_chunks_read_as_fill_value(tessera, tmp_path, libver):
    path = tmp_path / "p.h5"
    with h5py.File(path, "w", libver=libver) as f:
        for name, kw in [("fixed", {}), ("ext", {"maxshape": (None, 40)}), ("bt2", {"maxshape": (None, None)}),
                         ("gz", {"compression": "gzip", "maxshape": (None, 40)})]:
            d = f.create_dataset(name, shape=(45, 40), dtype=">i2", chunks=(10, 8), fillvalue=-7, **kw)
            d[3:12, 9:17] = 5
            d[44, 39] = 9
        d = f.create_dataset("contig_unwritten", shape=(5, 6), dtype="f4", fillvalue=2.5)
        d = f.create_dataset("zero_fill", shape=(20,), dtype="u1", chunks=(4,))
        d[5] = 1
    expected = np.full((45, 40), -7, dtype=">i2")
    expected[3:12, 9:17] = 5
    expected[44, 39] = 9
    for name in ("fixed", "ext", "bt2", "gz"):
        read_all(tessera, path, name, expected)
        read_all(tessera, path, name, expected[::-3, 5:30], "::-3, 5:30")
    read_all(tessera, path, "contig_unwritten", np.full((5, 6), 2.5, dtype="f4"))
    z = np.zeros(20, dtype="u1")
    z[5] = 1
    read_all(tessera, path, "zero_fill", z)
    info = {d["dataset"]: d for d in tessera.info(path)["datasets"]}
    assert info["/fixed"]["fill_value"] == -7


@pytest.mark.parametrize("libver", LIBVERS)
def test_resized_extensible_dataset(tessera, tmp_path, rng, libver):
    path = tmp_path / "e.h5"
    rows = []
    with h5py.File(path, "w", libver=libver) as f:
        d = f.create_dataset("log", shape=(0, 64), maxshape=(None, 64), chunks=(4, 64), dtype="<f4",
                             compression="gzip", shuffle=True)
        for _ in range(150):  # 600 rows: past the index block and into super blocks
            block = random_data(rng, "float32", (4, 64))
            d.resize(d.shape[0] + 4, axis=0)
            d[-4:] = block
            rows.append(block)
        d.resize(597, axis=0)  # shrink into a partial last chunk
        g = f.create_dataset("grow2", shape=(10, 10), maxshape=(None, None), chunks=(3, 3), dtype="i8")
        g[...] = np.arange(100).reshape(10, 10)
        g.resize((17, 13))
        g[15, 12] = -1
    expected = np.concatenate(rows)[:597]
    read_all(tessera, path, "log", expected)
    read_all(tessera, path, "log", expected[500:50:-9, ::5], "500:50:-9, ::5")
    grow = np.zeros((17, 13), dtype="i8")
    grow[:10, :10] = np.arange(100).reshape(10, 10)
    grow[15, 12] = -1
    read_all(tessera, path, "grow2", grow)


def test_many_chunks_paged_fixed_array_and_deep_btree(tessera, tmp_path):
    """Over 1024 chunks: a paged fixed-array data block (latest) and a multi-level v1 B-tree."""
    data = np.arange(3000, dtype="<i4") * 3
    for libver in LIBVERS:
        path = tmp_path / f"m_{libver}.h5"
        with h5py.File(path, "w", libver=libver) as f:
            f.create_dataset("d", data=data, chunks=(2,))
            d = f.create_dataset("sparse", shape=(3000,), dtype="<i4", chunks=(2,), fillvalue=11)
            d[1500:1510] = 4
        read_all(tessera, path, "d", data)
        read_all(tessera, path, "d", data[2999:0:-13], "2999:0:-13")
        sparse = np.full(3000, 11, dtype="<i4")
        sparse[1500:1510] = 4
        read_all(tessera, path, "sparse", sparse)


def test_userblock_and_implicit_index(tessera, tmp_path):
    path = tmp_path / "u.h5"
    a = np.arange(30 * 20, dtype="<u8").reshape(30, 20)
    with h5py.File(path, "w", libver="latest", userblock_size=1024) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((7, 6))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        space = h5py.h5s.create_simple(a.shape)
        dset = h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_U64LE, space, dcpl=dcpl)
        dset.write(h5py.h5s.ALL, h5py.h5s.ALL, a)
    desc = {d["dataset"]: d for d in tessera.info(path)["datasets"]}
    assert desc["/implicit"]["chunk_index"] == "implicit"
    read_all(tessera, path, "implicit", a)


@pytest.mark.parametrize("case", range(32))
def test_random_hyperslabs(tessera, tmp_path, case):
    rng = np.random.default_rng(1000 + case)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(rng.integers(1, 30)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, s + 1)) for s in shape)
    dtype = NUMERIC[int(rng.integers(len(NUMERIC)))]
    order = "<>"[int(rng.integers(2))]
    data = random_data(rng, dtype, shape).astype(np.dtype(dtype).newbyteorder(order))
    libver = LIBVERS[case % 2]
    kind = ["chunked", "contiguous", "ext", "bt2", "gzip"][case % 5]
    path = tmp_path / "r.h5"
    with h5py.File(path, "w", libver=libver) as f:
        kw = {}
        if kind != "contiguous":
            kw["chunks"] = chunks
        if kind == "ext":
            kw["maxshape"] = (None,) + shape[1:]
        if kind == "bt2":
            kw["maxshape"] = (None,) * rank
        if kind == "gzip":
            kw.update(compression="gzip", shuffle=bool(case % 3), fletcher32=bool(case % 2))
        f.create_dataset("d", data=data, **kw)
    for _ in range(4):
        sl = []
        for s in shape:
            if rng.random() < 0.15:
                sl.append(int(rng.integers(-s, s)))
                continue
            step = int(rng.choice([1, 1, 2, 3, -1, -2, -5]))
            start = None if rng.random() < 0.3 else int(rng.integers(-s - 2, s + 2))
            stop = None if rng.random() < 0.3 else int(rng.integers(-s - 2, s + 2))
            sl.append(slice(start, stop, step))
        expected = data[tuple(sl)]
        read_all(tessera, path, "d", np.asarray(expected), slice_text(sl))


@pytest.mark.parametrize("count", [9, 60, 1200])
def test_dense_groups(tessera, tmp_path, count):
    """libver='latest' groups of more than 8 links are dense: fractal heap + v2 B-tree name index
    (a direct root block for few links, an indirect one for many)."""
    path = tmp_path / "dense.h5"
    with h5py.File(path, "w", libver="latest") as f:
        g = f.create_group("many")
        for i in range(count):
            g.create_dataset(f"d{i:05d}", data=np.full((2, 3), i, dtype="<i4"))
        g.create_dataset("sub/inner", data=np.arange(5, dtype="u1"))
    info = tessera.info(path)
    names = [d["dataset"] for d in info["datasets"]]
    assert names == sorted([f"/many/d{i:05d}" for i in range(count)] + ["/many/sub/inner"])
    for i in (0, count // 2, count - 1):
        read_all(tessera, path, f"/many/d{i:05d}", np.full((2, 3), i, dtype="<i4"))
    read_all(tessera, path, "/many/sub/inner", np.arange(5, dtype="u1"))


@pytest.mark.parametrize("libver,superblock", [("earliest", 0), (("v108", "v108"), 2), (("v110", "v110"), 3),
                                               ("latest", 3)])
def test_every_superblock_version_h5py_writes(tessera, tmp_path, libver, superblock):
    """Superblock 0 (default), 2 (HDF5 1.8 format) and 3 (1.10 and later), each with its chunk indexes."""
    path = tmp_path / "sb.h5"
    rng = np.random.default_rng(superblock)
    fixed = rng.integers(-1000, 1000, size=(33, 17), dtype="<i4")
    grown = rng.standard_normal((21, 6)).astype("<f8")
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("fixed", data=fixed, chunks=(5, 4), compression="gzip")
        g = f.create_group("g")
        d = g.create_dataset("grown", shape=(0, 6), maxshape=(None, 6), chunks=(4, 6), dtype="<f8")
        d.resize(21, axis=0)
        d[...] = grown
    assert path.read_bytes()[8] == superblock
    info = json.loads(tessera.run_ok(["info", path, "--json"]).stdout)
    assert info["superblock_version"] == superblock
    assert sorted(d["dataset"] for d in info["datasets"]) == ["/fixed", "/g/grown"]
    read_all(tessera, path, "/fixed", fixed)
    read_all(tessera, path, "/g/grown", grown)
    read_all(tessera, path, "/g/grown", grown[::-3, 1::2], "::-3, 1::2")


@pytest.mark.parametrize("libver", LIBVERS)
def test_attributes_in_info(tessera, tmp_path, libver):
    """`tessera info` shows the attributes h5py writes: numbers of every kind and byte order, bools,
    fixed and variable-length strings, short arrays; with libver='latest', more than 8 attributes
    go to dense storage (fractal heap + v2 B-tree), which is read too."""
    path = tmp_path / "attrs.h5"
    with h5py.File(path, "w", libver=libver) as f:
        f.attrs["title"] = "a scan"
        f.attrs["version"] = np.int16(-3)
        d = f.create_dataset("g/d", data=np.arange(6, dtype="<u2"), chunks=(4,))
        d.attrs["units"] = "µm"
        d.attrs["spacing"] = np.array([0.5, 0.25, 4.0], dtype=">f8")
        d.attrs["gain"] = np.float32(1.5)
        d.attrs["half"] = np.float16(0.75)
        d.attrs["count"] = np.uint64(2**63 + 5)
        d.attrs["ok"] = True
        d.attrs["fixed"] = np.bytes_(b"fixed-len")
        d.attrs["names"] = ["x", "yy", ""]
        d.attrs["many"] = np.arange(1000, dtype="<i4")
        for i in range(6):
            d.attrs[f"extra{i}"] = i
    info = json.loads(tessera.run_ok(["info", path, "--json"]).stdout)
    assert info["root_attributes"] == {"title": "a scan", "version": -3}
    attrs = info["datasets"][0]["attributes"]
    expected = {"units": "µm", "spacing": [0.5, 0.25, 4.0], "gain": 1.5, "half": 0.75, "count": 2**63 + 5,
                "ok": True, "fixed": "fixed-len", "names": ["x", "yy", ""], "many": "<1000 elements of int32>",
                **{f"extra{i}": i for i in range(6)}}
    assert attrs == expected
    text = tessera.run_ok(["info", path, "--dataset", "/g/d"]).stdout.decode()
    assert '"units":"µm"' in text


def test_attributes_tessera_writes_read_back(tessera, tmp_path):
    path = tmp_path / "t.h5"
    tessera.run_ok(["stream", path, "--format", "hdf5", "--dtype", "uint8", "--shape", "4", "--chunk", "2",
                    "--attribute", "units=counts", "--attribute", "exposure=0.25", "--attribute", "frames=-7"],
                   bytes(range(4)))
    info = json.loads(tessera.run_ok(["info", path, "--json"]).stdout)
    assert info["datasets"][0]["attributes"] == {"units": "counts", "exposure": 0.25, "frames": -7}
