"""tessera reads the HDF5 filters h5py and hdf5plugin users meet, compared with h5py exactly:
scale-offset (integers with automatic and fixed bit counts, floats with D-scaling, with and without
fill values, both byte orders), szip (h5py's HDF5 has libaec's encoder), lzf, and hdf5plugin's
bitshuffle (plain, LZ4, zstd), lz4, zstd and blosc; random shapes, chunkings and dtypes. Damaged
chunks fail cleanly, naming the chunk and its byte range.
"""

from __future__ import annotations

import h5py
import hdf5plugin
import numpy as np
import pytest

from interop_support import assert_cli_error, assert_identical

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]


def read_tessera(tessera, path, name: str, like: np.ndarray) -> np.ndarray:
    out = tessera.run_ok(["read", path, "--dataset", name]).stdout
    dtype = like.dtype.newbyteorder("<")
    assert len(out) == like.size * dtype.itemsize, f"{name}: {len(out)} bytes for {like.shape} {like.dtype}"
    return np.frombuffer(out, dtype=dtype).reshape(like.shape)


def check_all(tessera, path) -> int:
    """Every dataset of PATH read by tessera equals h5py's read; returns how many were compared."""
    with h5py.File(path, "r") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        expected = {n: f[n][()] for n in names}
    for n in names:
        assert_identical(read_tessera(tessera, path, "/" + n, expected[n]), expected[n], f"{path.name}:{n}")
    return len(names)


def random_shape_and_chunks(rng, rank_max=3):
    rank = int(rng.integers(1, rank_max + 1))
    shape = tuple(int(rng.integers(1, 40)) for _ in range(rank))
    # h5py refuses a chunk larger than a fixed dimension; edge chunks still come out partial.
    return shape, tuple(int(rng.integers(1, s + 1)) for s in shape)


def int_values(rng, dtype, shape, span):
    info = np.iinfo(dtype)
    lo = int(rng.integers(info.min, max(int(info.min), int(info.max) - span), endpoint=True, dtype=np.dtype(dtype)))
    hi = min(info.max, lo + span)
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.dtype(dtype))


# ---- scale-offset ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("order", ["<", ">"])
def test_scaleoffset_integers(tessera, tmp_path, rng, dtype, order):
    path = tmp_path / "so.h5"
    info = np.iinfo(dtype)
    with h5py.File(path, "w") as f:
        for i, span in enumerate([0, 1, 5, 300, 70000, int(info.max) - int(info.min)]):
            shape, chunks = random_shape_and_chunks(rng)
            data = int_values(rng, dtype, shape, span).astype(np.dtype(dtype).newbyteorder(order))
            f.create_dataset(f"auto{i}", data=data, chunks=chunks, scaleoffset=0)
            # A fixed bit count below what the values need is lossy: h5py's read is the reference.
            f.create_dataset(f"bits{i}", data=data, chunks=chunks, scaleoffset=int(rng.integers(1, 8)))
            # With a fill value: elements equal to it are stored as all ones.
            fill = data.flat[0]
            masked = data.copy()
            masked.flat[:: 3] = fill
            f.create_dataset(f"fill{i}", data=masked, chunks=chunks, scaleoffset=0, fillvalue=fill)
            # Partly written: unwritten chunks are the fill value.
            d = f.create_dataset(f"sparse{i}", shape=shape, dtype=data.dtype, chunks=chunks, scaleoffset=0,
                                 fillvalue=data.flat[-1])
            d[tuple(slice(0, max(1, s // 2)) for s in shape)] = data[tuple(slice(0, max(1, s // 2)) for s in shape)]
    assert check_all(tessera, path) == 24


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("order", ["<", ">"])
def test_scaleoffset_floats(tessera, tmp_path, rng, dtype, order):
    path = tmp_path / "sof.h5"
    count = 0
    with h5py.File(path, "w") as f:
        for factor in [0, 1, 2, 3, 5]:
            for scale in [1.0, 1000.0]:
                shape, chunks = random_shape_and_chunks(rng)
                data = ((rng.standard_normal(shape) * scale) + rng.standard_normal() * 100).astype(
                    np.dtype(dtype).newbyteorder(order))
                name = f"d{factor}_{int(scale)}"
                f.create_dataset(name, data=data, chunks=chunks, scaleoffset=factor)
                fill = np.float64(-9999.5).astype(data.dtype)
                masked = data.copy()
                masked.flat[:: 4] = fill
                f.create_dataset(name + "_fill", data=masked, chunks=chunks, scaleoffset=factor, fillvalue=fill)
                count += 2
        # A span too wide for the bits: stored at full precision.
        wide = np.array([-1e30, 1e30, 0.5, 3.25] * 10, dtype=np.dtype(dtype).newbyteorder(order))
        f.create_dataset("wide", data=wide, chunks=(7,), scaleoffset=2)
        f.create_dataset("constant", data=np.full((9, 4), 2.5, dtype=dtype), chunks=(4, 4), scaleoffset=3)
        count += 2
    assert check_all(tessera, path) == count


def test_scaleoffset_edge_values(tessera, tmp_path):
    """Constant chunks (minbits 0), chunks all fill value, the full range of a type, with and
    without a fill value."""
    cases = {"const_fill": (np.full(20, 5, "i4"), 5), "const_other": (np.full(20, 7, "i4"), 5),
             "all_fill_f4": (np.full(20, 2.5, "f4"), 2.5), "const_f8": (np.full(20, 3.25, "f8"), 2.5),
             "two_values": (np.array([5, 6] * 10, "u1"), 5), "full_u1": (np.array([0, 255] * 10, "u1"), 7),
             "full_i1": (np.array([-128, 127, 0] * 7, "i1"), 0),
             "full_u8": (np.array([0, 2**64 - 1, 3] * 7, "u8"), 3)}
    path = tmp_path / "edge.h5"
    with h5py.File(path, "w") as f:
        for name, (data, fill) in cases.items():
            factor = 2 if data.dtype.kind == "f" else 0
            f.create_dataset(name, data=data, chunks=(8,), scaleoffset=factor, fillvalue=fill)
            f.create_dataset(name + "_nofill", data=data, chunks=(8,), scaleoffset=factor)
    assert check_all(tessera, path) == 2 * len(cases)


def test_scaleoffset_after_other_filters(tessera, tmp_path, rng):
    """Scale-offset then shuffle and deflate, as h5py orders them (h5py refuses fletcher32 with it)."""
    path = tmp_path / "sop.h5"
    with h5py.File(path, "w") as f:
        count = 0
        for dtype in ["int16", "uint32", "float32", "float64"]:
            for compression in [dict(compression="gzip"), dict(compression="lzf"), hdf5plugin.Zstd(),
                                hdf5plugin.LZ4(), hdf5plugin.Blosc(), hdf5plugin.Bitshuffle(cname="lz4")]:
                data = (rng.standard_normal((50, 30)) * 100).astype(dtype)
                full = rng.integers(0, 2**31, size=(50, 30)).astype(dtype)  # full precision: stream > chunk
                for name, values in [("small", data), ("full", full)]:
                    f.create_dataset(f"{dtype}_{count}_{name}", data=values, chunks=(16, 8),
                                     scaleoffset=2 if dtype[0] == "f" else 0, shuffle=True, **compression)
                count += 1
    assert check_all(tessera, path) == 2 * count


# ---- szip, lzf -----------------------------------------------------------------------------------

@pytest.mark.skipif(not h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP), reason="h5py's HDF5 lacks szip")
@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_szip(tessera, tmp_path, rng, dtype):
    path = tmp_path / "sz.h5"
    with h5py.File(path, "w") as f:
        for i, opts in enumerate([("nn", 8), ("ec", 16), ("nn", 32), ("ec", 4)]):
            # szip needs at least pixels-per-block elements in a chunk.
            shape = (int(rng.integers(8, 60)), int(rng.integers(8, 40)))
            chunks = (int(rng.integers(6, shape[0] + 1)), int(rng.integers(6, shape[1] + 1)))
            data = (rng.standard_normal(shape) * 50).astype(dtype)
            f.create_dataset(f"s{i}", data=data, chunks=chunks, compression="szip", compression_opts=opts)
            be = data.astype(np.dtype(dtype).newbyteorder(">"))
            f.create_dataset(f"be{i}", data=be, chunks=chunks, compression="szip", compression_opts=opts)
    assert check_all(tessera, path) == 8


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_lzf(tessera, tmp_path, rng, dtype):
    path = tmp_path / "lzf.h5"
    with h5py.File(path, "w") as f:
        for i in range(3):
            shape, chunks = random_shape_and_chunks(rng)
            smooth = (np.arange(np.prod(shape)) // 3 % 100).astype(dtype).reshape(shape)
            noisy = (rng.standard_normal(shape) * 1e6).astype(dtype)  # may not shrink: stored raw
            f.create_dataset(f"smooth{i}", data=smooth, chunks=chunks, compression="lzf", shuffle=i % 2 == 0)
            f.create_dataset(f"noisy{i}", data=noisy, chunks=chunks, compression="lzf")
    assert check_all(tessera, path) == 6


# ---- hdf5plugin ------------------------------------------------------------------------------------

PLUGINS = {
    "bitshuffle": lambda: hdf5plugin.Bitshuffle(),
    "bitshuffle_256": lambda: hdf5plugin.Bitshuffle(nelems=256),
    "bitshuffle_lz4": lambda: hdf5plugin.Bitshuffle(cname="lz4"),
    "bitshuffle_lz4_64": lambda: hdf5plugin.Bitshuffle(nelems=64, cname="lz4"),
    "bitshuffle_zstd": lambda: hdf5plugin.Bitshuffle(cname="zstd", clevel=5),
    "lz4": lambda: hdf5plugin.LZ4(),
    "lz4_small_blocks": lambda: hdf5plugin.LZ4(nbytes=100),
    "zstd": lambda: hdf5plugin.Zstd(),
    "zstd_19": lambda: hdf5plugin.Zstd(clevel=19),
    "blosc_lz4": lambda: hdf5plugin.Blosc(cname="lz4", shuffle=hdf5plugin.Blosc.SHUFFLE),
    "blosc_blosclz": lambda: hdf5plugin.Blosc(cname="blosclz", shuffle=hdf5plugin.Blosc.NOSHUFFLE),
    "blosc_zstd_bit": lambda: hdf5plugin.Blosc(cname="zstd", shuffle=hdf5plugin.Blosc.BITSHUFFLE),
    "blosc_zlib": lambda: hdf5plugin.Blosc(cname="zlib", clevel=9),
}


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_hdf5plugin_filters(tessera, tmp_path, rng, plugin):
    path = tmp_path / "p.h5"
    count = 0
    with h5py.File(path, "w") as f:
        for dtype in INTS + FLOATS:
            shape, chunks = random_shape_and_chunks(rng)
            smooth = (np.arange(np.prod(shape)) // 5 % 200).astype(dtype).reshape(shape)
            noisy = (rng.standard_normal(shape) * 1e4).astype(dtype)
            f.create_dataset(f"{dtype}_smooth", data=smooth, chunks=chunks, **PLUGINS[plugin]())
            f.create_dataset(f"{dtype}_noisy", data=noisy, chunks=chunks, **PLUGINS[plugin]())
            count += 2
        big = (np.arange(300 * 257) % 251).astype("uint16").reshape(300, 257)  # chunks of many blocks
        f.create_dataset("big", data=big, chunks=(300, 200), **PLUGINS[plugin]())
        count += 1
    assert check_all(tessera, path) == count


# ---- damaged chunks ------------------------------------------------------------------------------

DAMAGED = {
    "scaleoffset": dict(scaleoffset=0),
    "szip": dict(compression="szip", compression_opts=("nn", 8)),
    "lzf": dict(compression="lzf"),
    "bitshuffle_lz4": dict(**hdf5plugin.Bitshuffle(cname="lz4")),
    "lz4": dict(**hdf5plugin.LZ4()),
    "zstd": dict(**hdf5plugin.Zstd()),
    "blosc": dict(**hdf5plugin.Blosc()),
}


@pytest.mark.parametrize("kind", sorted(DAMAGED))
def test_damaged_chunks_fail_cleanly(tessera, tmp_path, rng, kind):
    """A chunk's bytes truncated or garbled: a corrupt-data error naming the chunk and the filter,
    never a crash or a wrong read."""
    if kind == "szip" and not h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP):
        pytest.skip("h5py's HDF5 lacks szip")
    data = (np.arange(4000) % 97).astype("int32").reshape(40, 100)
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("d", data=data, chunks=(40, 100), **DAMAGED[kind])
        info = d.id.get_chunk_info(0)
    offset, size = info.byte_offset, info.size
    raw = bytearray(path.read_bytes())
    filter_name = {"bitshuffle_lz4": "bitshuffle", "blosc": "blosc"}.get(kind, kind)
    failures = 0
    for trial in range(12):
        damaged = bytearray(raw)
        if trial % 3 == 0:  # the header
            for i in range(min(size, 12)):
                damaged[offset + i] = int(rng.integers(0, 256))
        else:  # anywhere
            for _ in range(1 + trial):
                damaged[offset + int(rng.integers(0, size))] = int(rng.integers(0, 256))
        bad = tmp_path / f"bad{trial}.h5"
        bad.write_bytes(bytes(damaged))
        proc = tessera.run(["read", bad, "--dataset", "/d"])
        if proc.returncode == 0:
            # Garbage that still decodes (e.g. scale-offset's packed bits): the length is right.
            assert len(proc.stdout) == data.nbytes
            continue
        assert_cli_error(proc, "corrupt data", "chunk (0,0)", filter_name, f"0x{offset:x}")
        failures += 1
    assert failures > 0


# ---- the Python package -------------------------------------------------------------------------

def test_python_reads_filtered_datasets_and_slices(tmp_path, rng):
    """tessera.open reads the same as h5py, whole and by slices that cross chunks."""
    import tessera as tessera_py
    data = (rng.standard_normal((45, 38)) * 300).astype("float32")
    ints = rng.integers(-5000, 5000, size=(45, 38), dtype="int32")
    path = tmp_path / "py.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("so", data=data, chunks=(10, 9), scaleoffset=2)
        f.create_dataset("so_int", data=ints, chunks=(10, 9), scaleoffset=0, fillvalue=-1)
        f.create_dataset("lzf", data=ints, chunks=(10, 9), compression="lzf", shuffle=True)
        f.create_dataset("bshuf", data=data, chunks=(10, 9), **hdf5plugin.Bitshuffle(cname="zstd"))
        f.create_dataset("blosc", data=ints, chunks=(10, 9), **hdf5plugin.Blosc(cname="zstd"))
        expected = {n: f[n][()] for n in f}
    for name, want in expected.items():
        a = tessera_py.open(path, dataset=name)
        assert_identical(a[...], want, name)
        assert_identical(a[3:41:4, ::-3], want[3:41:4, ::-3], name)
