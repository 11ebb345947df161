"""tessera writes HDF5; h5py and h5dump (the HDF5 library's own tools) read it back exactly.

Streams go through `tessera stream OUT.h5 --format hdf5`; a file with many groups and datasets is
written by the C++ test Hdf5WriterFixtures.ManyGroupsAndDatasets (the library API).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from interop_support import REPO_ROOT, ZARR_DTYPES, assert_cli_error, assert_identical, join_ints, random_data, smooth_data

def h5dump_binary() -> str:
    """h5dump (Debian hdf5-tools, which scripts/setup.sh installs): missing is a failure, not a skip."""
    found = shutil.which("h5dump")
    if found is None:
        pytest.fail("h5dump is not installed (Debian hdf5-tools; scripts/setup.sh installs it)", pytrace=False)
    return found
HDF5_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64"]


def stream_h5(tessera, out: Path, array: np.ndarray, *, dataset="/data", chunk=None, codec=None,
              level=None, shuffle=False, fletcher32=False, fill_value=None, unbounded=False,
              threads=None, attributes=()) -> None:
    dtype = next(n for n in HDF5_DTYPES if ZARR_DTYPES[n].newbyteorder("=") == array.dtype.newbyteorder("="))
    shape = list(array.shape)
    if unbounded:
        shape[0] = 0
    args = ["stream", out, "--format", "hdf5", "--dataset", dataset, "--dtype", dtype, "--shape", join_ints(shape)]
    if chunk is not None:
        args += ["--chunk", join_ints(chunk)]
    if codec is not None:
        args += ["--codec", codec]
    if level is not None:
        args += ["--level", level]
    if shuffle:
        args.append("--shuffle")
    if fletcher32:
        args.append("--fletcher32")
    if fill_value is not None:
        args.append(f"--fill-value={fill_value}")
    if threads is not None:
        args += ["--threads", threads]
    for a in attributes:
        args += ["--attribute", a]
    raw = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    tessera.run_ok(args, raw)


def h5dump_raw(path: Path, dataset: str, tmp_path: Path) -> bytes:
    """The dataset's elements as h5dump writes them in binary, little-endian."""
    out = tmp_path / "h5dump.bin"
    proc = subprocess.run([h5dump_binary(), "-d", dataset, "-b", "LE", "-o", str(out), str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return out.read_bytes()


def tessera_read(tessera, path: Path, dataset: str, expected: np.ndarray, slice_expr: str | None = None) -> None:
    """`tessera read PATH --dataset DATASET [--slice EXPR]` equals EXPECTED exactly."""
    args = ["read", path, "--dataset", dataset]
    if slice_expr is not None:
        args.append(f"--slice={slice_expr}")
    out = tessera.run_ok(args).stdout
    want = np.ascontiguousarray(expected, dtype=expected.dtype.newbyteorder("<"))
    got = np.frombuffer(out, dtype=want.dtype)
    assert got.size == want.size, f"{dataset} [{slice_expr}]: {got.size} elements, expected {want.size}"
    assert_identical(got.reshape(want.shape), want, f"{dataset} [{slice_expr}]")


def random_slices(rng: np.random.Generator, shape, count: int):
    """(numpy index, tessera --slice text) pairs, negative steps included."""
    for _ in range(count):
        index, text = [], []
        for s in shape:
            step = int(rng.choice([1, 2, 3, -1, -2]))
            a, b = sorted(int(v) for v in rng.integers(-s, s + 1, size=2))
            if step < 0:
                a, b = b, a
            index.append(slice(a, b, step))
            text.append(f"{a}:{b}:{step}")
        yield tuple(index), ", ".join(text)


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 6))
    shape = [int(rng.integers(1, 13 if rank > 2 else 60)) for _ in range(rank)]
    chunk = [int(rng.integers(1, s + 1)) for s in shape]
    dtype = HDF5_DTYPES[int(rng.integers(len(HDF5_DTYPES)))]
    data = random_data(rng, dtype, shape) if rng.random() < 0.5 else smooth_data(dtype, shape)
    fill = None
    if ZARR_DTYPES[dtype].kind in "iu" and rng.random() < 0.5:
        fill = int(data.reshape(-1)[0])
        # Whole chunks of the fill value are left unwritten; they must still read as the fill value.
        data[tuple(slice(0, c) for c in chunk)] = fill
    codec = ["none", "gzip"][int(rng.integers(2))]
    return dict(shape=shape, chunk=chunk, dtype=dtype, data=data, fill=fill, codec=codec,
                level=int(rng.integers(0, 10)) if codec == "gzip" else None,
                shuffle=bool(rng.integers(2)), fletcher32=bool(rng.integers(2)),
                unbounded=bool(rng.random() < 0.3), dataset=["/data", "/g/x", "/a/b/c/volume"][int(rng.integers(3))])


@pytest.mark.parametrize("seed", range(30))
def test_h5py_reads_random_streams_exactly(tessera, tmp_path, seed):
    c = random_case(seed)
    out = tmp_path / "r.h5"
    stream_h5(tessera, out, c["data"], dataset=c["dataset"], chunk=c["chunk"], codec=c["codec"], level=c["level"],
              shuffle=c["shuffle"], fletcher32=c["fletcher32"], fill_value=c["fill"], unbounded=c["unbounded"])
    with h5py.File(out, "r") as f:
        d = f[c["dataset"]]
        assert d.shape == tuple(c["shape"])
        assert d.chunks == tuple(c["chunk"])
        assert d.maxshape == ((None,) + tuple(c["shape"][1:]) if c["unbounded"] else tuple(c["shape"]))
        assert d.compression == ("gzip" if c["codec"] == "gzip" else None)
        if c["codec"] == "gzip":
            assert d.compression_opts == c["level"]
        assert d.shuffle == c["shuffle"]
        assert d.fletcher32 == c["fletcher32"]
        if c["fill"] is not None:
            assert d.fillvalue == c["fill"]
        assert_identical(d[...], c["data"], f"seed {seed}")
        # A few hyperslabs through the HDF5 library's own selection code.
        rng = np.random.default_rng(1000 + seed)
        for _ in range(3):
            sel = tuple(slice(int(rng.integers(0, s)), None, int(rng.integers(1, 4))) for s in c["shape"])
            assert_identical(d[sel], c["data"][sel], f"seed {seed} {sel}")
    # And tessera reads its own file back, whole and through random hyperslabs.
    tessera_read(tessera, out, c["dataset"], c["data"])
    for index, text in random_slices(np.random.default_rng(2000 + seed), c["shape"], 3):
        tessera_read(tessera, out, c["dataset"], c["data"][index], text)


@pytest.mark.parametrize("seed", [0, 3, 7, 11])
def test_h5dump_reads_random_streams_exactly(tessera, tmp_path, seed):
    c = random_case(seed)
    out = tmp_path / "d.h5"
    stream_h5(tessera, out, c["data"], dataset=c["dataset"], chunk=c["chunk"], codec=c["codec"], level=c["level"],
              shuffle=c["shuffle"], fletcher32=c["fletcher32"], fill_value=c["fill"], unbounded=c["unbounded"])
    raw = np.ascontiguousarray(c["data"], dtype=c["data"].dtype.newbyteorder("<")).tobytes()
    assert h5dump_raw(out, c["dataset"], tmp_path) == raw


def test_two_hundred_thousand_chunks(tessera, tmp_path):
    """A chunk B-tree three levels deep (3125 leaves under 49 internal nodes under the root)."""
    data = (np.arange(200 * 1000, dtype=np.uint32) * 2654435761 % 65521 + 1).astype(np.uint16).reshape(200, 1000)
    out = tmp_path / "big.h5"
    stream_h5(tessera, out, data, chunk=[1, 1], unbounded=True)
    with h5py.File(out, "r") as f:
        d = f["data"]
        assert d.id.get_num_chunks() == 200_000
        assert d.maxshape == (None, 1000)
        assert_identical(d[...], data)
        info = d.id.get_chunk_info_by_coord((123, 456))
        assert info.size == 2
        assert_identical(d[5::7, 1::3], data[5::7, 1::3])
    assert h5dump_raw(out, "/data", tmp_path) == data.tobytes()
    tessera_read(tessera, out, "/data", data)
    tessera_read(tessera, out, "/data", data[-3:2:-7, 990:3:-11], "-3:2:-7, 990:3:-11")
    # Filtered chunks: the B-tree keys carry each chunk's compressed size.
    out.unlink()
    stream_h5(tessera, out, data, chunk=[1, 1], codec="gzip", level=1, shuffle=True, fletcher32=True)
    with h5py.File(out, "r") as f:
        assert f["data"].id.get_num_chunks() == 200_000
        assert_identical(f["data"][...], data)
    tessera_read(tessera, out, "/data", data[::5, 1::2], "::5, 1::2")


def test_many_groups_and_datasets_from_the_library(tessera, tmp_path):
    tests_bin = Path(os.environ.get("TESSERA_TESTS_BIN", REPO_ROOT / "build" / "release" / "tessera_tests"))
    proc = subprocess.run([str(tests_bin), "--gtest_filter=Hdf5WriterFixtures.ManyGroupsAndDatasets"],
                          env={**os.environ, "TESSERA_HDF5_FIXTURE_DIR": str(tmp_path)},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    assert proc.returncode == 0, proc.stdout.decode(errors="replace")
    path = tmp_path / "many.h5"
    with h5py.File(path, "r") as f:
        assert sorted(f) == ["a", "empty", "empty_group", "many", "partial"]
        assert sorted(f["many"]) == [f"d{i:03d}" for i in range(300)]
        for i in range(300):
            d = f[f"many/d{i:03d}"]
            assert_identical(d[...], np.array([i, i + 1, i + 2], dtype="<i4"))
            assert d.attrs["index"] == i
        assert f["a"].attrs["note"] == b"nested groups"
        assert_identical(f["a/b/c/deep"][...], np.arange(20, dtype="<f8").reshape(4, 5) * 0.5)
        assert f["a/b/c/deep"].compression == "gzip"
        assert_identical(f["empty"][...], np.full((5, 5), 7, dtype="<i2"))
        partial = np.zeros((6, 6), dtype="u1")
        partial[3:, 3:] = 9
        assert_identical(f["partial"][...], partial)
        assert f["partial"].id.get_num_chunks() == 1
        assert len(f["empty_group"]) == 0
    listing = subprocess.run([h5dump_binary(), "-n", str(path)], stdout=subprocess.PIPE, check=True).stdout.decode()
    assert listing.count(" dataset ") == 303
    assert h5dump_raw(path, "/many/d200", tmp_path) == np.array([200, 201, 202], "<i4").tobytes()
    # tessera lists and reads the library's file too.
    info = json.loads(tessera.run_ok(["info", path, "--json"]).stdout)
    assert len(info["datasets"]) == 303
    tessera_read(tessera, path, "/a/b/c/deep", np.arange(20, dtype="<f8").reshape(4, 5)[::-1] * 0.5, "::-1")
    tessera_read(tessera, path, "/partial", partial)
    tessera_read(tessera, path, "/empty", np.full((5, 5), 7, dtype="<i2"))
    # h5py can keep working on the file: add to a group, overwrite part of a dataset.
    with h5py.File(path, "r+") as f:
        f["many"].create_dataset("zzz", data=np.arange(4))
        f["partial"][0, 0] = 5
    with h5py.File(path, "r") as f:
        assert len(f["many"]) == 301
        assert f["partial"][0, 0] == 5


def test_the_format_follows_the_output_name_without_format(tessera, tmp_path, rng):
    data = random_data(rng, "int32", (9, 7, 5))
    for name in ["a.h5", "b.HDF5"]:
        tessera.run_ok(["stream", tmp_path / name, "--dtype", "int32", "--shape", "9,7,5", "--chunk", "4,4,5"],
                       data.astype("<i4").tobytes())
        with h5py.File(tmp_path / name, "r") as f:
            assert_identical(f["data"][...], data, name)
    tessera.run_ok(["stream", tmp_path / "c.zarr", "--dtype", "int32", "--shape", "9,7,5", "--chunk", "4,4,5"],
                   data.astype("<i4").tobytes())
    assert (tmp_path / "c.zarr" / "zarr.json").is_file()


def test_output_is_deterministic_across_thread_counts(tessera, tmp_path):
    data = smooth_data("uint16", [37, 50, 41])
    outs = []
    for threads in (1, 2, 2):
        out = tmp_path / f"t{len(outs)}.h5"
        stream_h5(tessera, out, data, chunk=[4, 16, 8], codec="gzip", level=1, shuffle=True, threads=threads,
                  unbounded=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]


def test_attributes_and_automatic_chunks(tessera, tmp_path):
    data = smooth_data("float32", [40, 300, 500])
    out = tmp_path / "a.h5"
    stream_h5(tessera, out, data, attributes=["units=photons", "exposure_ms=12.5", "frames=40", "empty="])
    with h5py.File(out, "r") as f:
        d = f["data"]
        assert dict(d.attrs) == {"units": b"photons", "exposure_ms": 12.5, "frames": 40, "empty": b""}
        chunk_bytes = np.prod(d.chunks) * 4
        assert 512 * 1024 <= chunk_bytes <= 2 * 1024 * 1024, d.chunks
        assert all(c <= s for c, s in zip(d.chunks, d.shape))
        assert_identical(d[...], data)


def test_h5py_extends_an_unlimited_stream(tessera, tmp_path):
    data = smooth_data("int32", [10, 7])
    out = tmp_path / "u.h5"
    stream_h5(tessera, out, data, chunk=[4, 3], unbounded=True)
    with h5py.File(out, "r+") as f:
        d = f["data"]
        d.resize(15, axis=0)
        d[10:] = -1
    with h5py.File(out, "r") as f:
        expected = np.concatenate([data, np.full((5, 7), -1, "<i4")])
        assert_identical(f["data"][...], expected)


@pytest.mark.parametrize("args,needle,kind", [
    (["--dtype", "uint8", "--shape", "4,4", "--chunk", "8,2"], "exceeds the fixed extent", "unsupported"),
    (["--dtype", "bool", "--shape", "4", "--chunk", "2"], "bool", "unsupported"),
    (["--dtype", "uint8", "--shape", "4", "--chunk", "2", "--shard-chunks", "2"], "not sharded", "unsupported"),
    (["--dtype", "uint8", "--shape", "4", "--chunk", "2", "--codec", "zstd"], "none or gzip", "unsupported"),
    (["--dtype", "uint8", "--shape", "4", "--chunk", "2", "--attribute", "novalue"], "NAME=VALUE", "invalid argument"),
    (["--dtype", "uint8", "--shape", "4", "--chunk", "2", "--dataset", "/"], "root group", "invalid argument"),
    (["--dtype", "uint8", "--shape", "4", "--chunk", "2", "--codec", "gzip", "--level", "12"], "level", "invalid argument"),
])
def test_bad_options_are_refused_and_write_nothing(tessera, tmp_path, args, needle, kind):
    out = tmp_path / "bad.h5"
    proc = tessera.run(["stream", out, "--format", "hdf5", *args], b"\0" * 16)
    assert_cli_error(proc, kind, needle)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_stream_leaves_an_existing_file_untouched(tessera, tmp_path):
    out = tmp_path / "keep.h5"
    good = smooth_data("uint16", [8, 8])
    stream_h5(tessera, out, good, chunk=[4, 4])
    before = out.read_bytes()
    proc = tessera.run(["stream", out, "--format", "hdf5", "--dtype", "uint16", "--shape", "8,8", "--chunk", "4,4",
                        "--overwrite"], b"\1" * 100)  # 100 bytes where 128 are needed; replaced only when complete
    assert_cli_error(proc, "invalid argument", "100")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.h5"]
