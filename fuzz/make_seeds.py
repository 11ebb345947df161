"""Writes the fuzz targets' seed corpus: small arrays written by tessera itself (the tests' own
kinds of output: every format, codec, sharding and index layout) and by the peers (zarr-python v2
and v3, h5py with every libver and chunk index), one folder per target. The same seeds every run.

    python fuzz/make_seeds.py OUT_DIR

Store targets take a folder packed as fuzz_support.h's UnpackStore reads it; the others take one
file (a zarr.json, an info, an HDF5 file, ...) or a short header plus one.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import tempfile
from pathlib import Path
from unittest import mock

import compresso
import h5py
import numpy as np
import tessera
import zarr

MAX_SEED_BYTES = 1 << 16


def pack_store(root: Path) -> bytes:
    """The files under `root` as UnpackStore reads them: u16 name length, name, u32 size, data."""
    out = bytearray()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        out += struct.pack("<H", len(name)) + name + struct.pack("<I", len(data)) + data
    return bytes(out)


class Corpus:
    def __init__(self, out: Path):
        self.out = out
        self.count = {}

    def add(self, target: str, data: bytes) -> None:
        if len(data) > MAX_SEED_BYTES:
            return
        folder = self.out / target
        folder.mkdir(parents=True, exist_ok=True)
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        self.count[target] = self.count.get(target, 0) + 1


def values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)


def write_tessera(path: Path, data: np.ndarray, **options) -> None:
    with tessera.create(str(path), dtype=str(data.dtype), shape=data.shape, **options) as w:
        w.append(data)


ZARR_CASES = [
    ("uint16", (5, 7), dict(chunks=(2, 3))),
    ("uint8", (9,), dict(chunks=(4,), codec="gzip")),
    ("float32", (4, 5, 6), dict(chunks=(2, 2, 3), shard_chunks=(1, 2, 2), codec="zstd")),
    ("int32", (6, 6), dict(chunks=(2, 2), shard_chunks=(3, 3), codec="blosc-lz4", index_location="start")),
    ("int64", (3, 4), dict(chunks=(2, 2), shard_chunks=(2, 2), codec="none", fill_value=7)),
    ("float64", (2, 3, 2, 2, 3), dict(chunks=(1, 2, 2, 1, 2), codec="blosc-zstd")),
    ("bool", (7, 3), dict(chunks=(4, 2), shard_chunks=(2, 1))),
    ("uint16", (0, 4, 4), dict(chunks=(2, 4, 4), shard_chunks=(2, 1, 1))),
]


def zarr_seeds(corpus: Corpus, tmp: Path) -> None:
    for i, (dtype, shape, options) in enumerate(ZARR_CASES):
        store = tmp / f"t{i}.zarr"
        data = values(dtype, shape if shape[0] else (5, *shape[1:]), i)
        if shape[0] == 0:
            with tessera.create(str(store), dtype=dtype, shape=shape, **options) as w:
                w.append(data)
        else:
            write_tessera(store, data, **options)
        corpus.add("zarr_store_fuzzer", pack_store(store))
        corpus.add("zarr_metadata_fuzzer", (store / "zarr.json").read_bytes())
    # zarr-python: v3 with its own codec choices, v2 with every compressor, both orders.
    import numcodecs
    for i, compressor in enumerate([None, numcodecs.Zstd(level=3), numcodecs.GZip(level=5), numcodecs.Zlib(),
                                    numcodecs.LZ4(), numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.BITSHUFFLE)]):
        store = tmp / f"v2_{i}.zarr"
        a = zarr.create_array(str(store), shape=(6, 5), chunks=(4, 2), dtype="<i2" if i % 2 else ">u4", zarr_format=2,
                              compressors=compressor, order="F" if i % 3 == 0 else "C", fill_value=3,
                              chunk_key_encoding={"name": "v2", "separator": "/" if i % 2 else "."})
        with mock.patch("time.time", return_value=1e9):  # numcodecs.GZip stamps gzip headers with the time
            a[...] = values("int16", (6, 5), 100 + i)
        corpus.add("zarr_store_fuzzer", pack_store(store))
        corpus.add("zarr_metadata_fuzzer", (store / ".zarray").read_bytes())
    store = tmp / "zp3.zarr"
    a = zarr.create_array(str(store), shape=(8, 6), chunks=(4, 3), shards=(8, 6), dtype="float32", fill_value=1.5)
    a[...] = values("float32", (8, 6), 200)
    corpus.add("zarr_store_fuzzer", pack_store(store))
    corpus.add("zarr_metadata_fuzzer", (store / "zarr.json").read_bytes())


PRECOMPUTED_CASES = [
    ("uint8", (6, 10, 12), dict(chunks=(4, 4, 8))),
    ("uint16", (5, 9, 9), dict(chunks=(2, 4, 4), shard_chunks=(1, 2, 2))),
    ("uint32", (8, 8, 8), dict(chunks=(4, 4, 4), encoding="compressed_segmentation")),
    ("uint64", (6, 8, 8), dict(chunks=(2, 4, 4), encoding="compressed_segmentation", shard_chunks=(2, 2, 2),
                               hash="murmurhash3_x86_128")),
    ("float32", (4, 6, 6), dict(chunks=(4, 3, 3), shard_chunks=(1, 2, 2), codec="gzip")),
    ("uint8", (6, 10, 12), dict(chunks=(4, 4, 8), encoding="jpeg", jpeg_quality=90)),
    ("uint16", (5, 9, 9), dict(chunks=(2, 4, 4), encoding="png", shard_chunks=(1, 2, 2))),
]


def image_chunk_seeds(corpus: Corpus, tmp: Path) -> None:
    """jpeg and png chunks as tensorstore writes them (the peer's encoder), each behind the 5-byte
    header the *_chunk_fuzzer targets read: extent x, y, z - 1, 0 (no longer chunk), channels/type."""
    import tensorstore as ts

    for i, (encoding, dtype, channels) in enumerate([("jpeg", "uint8", 1), ("jpeg", "uint8", 3), ("png", "uint8", 1),
                                                     ("png", "uint16", 2), ("png", "uint8", 4)]):
        path = tmp / f"img{i}"
        spec = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)}, "create": True,
                "multiscale_metadata": {"type": "image", "data_type": dtype, "num_channels": channels},
                "scale_metadata": {"size": [13, 9, 6], "encoding": encoding, "chunk_size": [8, 4, 4],
                                   "resolution": [1, 1, 1]}}
        volume = ts.open(spec).result()
        volume[...] = values(dtype, (13, 9, 6, channels), 600 + i)
        kind = (1 if channels == 3 else 0) if encoding == "jpeg" else (channels - 1) | (4 if dtype == "uint16" else 0)
        for f in sorted(path.glob("*/*")):
            extent = [int(b) - int(a) for a, b in (r.split("-") for r in f.name.split("_"))]
            corpus.add(f"{encoding}_chunk_fuzzer", bytes([e - 1 for e in extent] + [0, kind]) + f.read_bytes())


# (extent xyz, channels, jxl_quality): chunks as cloud-volume writes them, lossless and lossy.
JXL_CHUNK_CASES = [((8, 4, 4), 1, 100), ((13, 9, 2), 1, 85), ((6, 5, 3), 3, 100), ((9, 2, 4), 3, 70),
                   ((32, 1, 1), 1, 50)]


def jxl_chunk_seeds(corpus: Corpus) -> None:
    """jxl chunks as cloud-volume encodes them (imagecodecs: one gray frame x by y*z per channel,
    an animation for three), behind the 5-byte header jxl_chunk_fuzzer reads: extent x, y, z - 1,
    0 (no longer chunk), 1 for three channels."""
    import imagecodecs

    for i, ((x, y, z), channels, quality) in enumerate(JXL_CHUNK_CASES):
        frames = values("uint8", (channels, y * z, x), 700 + i)
        image = frames[0] if channels == 1 else frames
        stream = imagecodecs.jpegxl_encode(image, photometric="GRAY" if channels == 1 else "RGB", level=quality,
                                           lossless=quality >= 100)
        corpus.add("jxl_chunk_fuzzer", bytes([x - 1, y - 1, z - 1, 0, channels == 3]) + stream)


def precomputed_seeds(corpus: Corpus, tmp: Path) -> None:
    for i, (dtype, shape, options) in enumerate(PRECOMPUTED_CASES):
        store = tmp / f"p{i}"
        data = values(dtype, shape, 300 + i)
        if options.get("encoding") == "compressed_segmentation":
            data = (np.abs(data) % 5).astype(dtype)  # a few labels, as segmentations have
        write_tessera(store, data, format="precomputed", **options)
        corpus.add("precomputed_store_fuzzer", pack_store(store))
        info = json.loads((store / "info").read_text())
        corpus.add("precomputed_info_fuzzer", (store / "info").read_bytes())
        scale = info["scales"][0]
        sharding = scale.get("sharding")
        for f in (store / scale["key"]).iterdir():
            if sharding and f.suffix == ".shard":
                if (sharding["minishard_bits"] < 5 and sharding["shard_bits"] < 8
                        and sharding["preshift_bits"] < 4):
                    header = bytes([sharding["preshift_bits"] | (0x10 if sharding["hash"] != "identity" else 0),
                                    sharding["minishard_bits"] + 32 * sharding["shard_bits"],
                                    (sharding["minishard_index_encoding"] == "gzip")
                                    | 2 * (sharding.get("data_encoding", "raw") == "gzip")])
                    corpus.add("minishard_index_fuzzer", header + f.read_bytes())
            elif not sharding and scale["encoding"] == "compressed_segmentation":
                x0x1, y0y1, z0z1 = f.name.split("_")
                extent = [int(b) - int(a) for a, b in (r.split("-") for r in (x0x1, y0y1, z0z1))]
                block = scale["compressed_segmentation_block_size"]
                if all(1 <= e <= 32 for e in extent) and all(1 <= b <= 8 for b in block):
                    header = bytes([e - 1 for e in extent] + [b - 1 for b in block] +
                                   [info["num_channels"] - 1, 1 if info["data_type"] == "uint64" else 0])
                    corpus.add("compressed_segmentation_fuzzer", header + f.read_bytes())


def hdf5_seeds(corpus: Corpus, tmp: Path) -> None:
    for i, (dtype, shape, options) in enumerate([
            ("uint16", (6, 5), dict(chunks=(2, 5))),
            ("float32", (0, 4, 3), dict(chunks=(2, 2, 3), codec="gzip", shuffle=True, fletcher32=True)),
            ("int8", (7,), dict(chunks=(3,), dataset="/g/h/d", attributes={"a": 1, "s": "text"}))]):
        path = tmp / f"t{i}.h5"
        data = values(dtype, shape if shape[0] else (5, *shape[1:]), 400 + i)
        with tessera.create(str(path), dtype=dtype, shape=shape, **options) as w:
            w.append(data)
        corpus.add("hdf5_file_fuzzer", path.read_bytes())
    data = values("int32", (6, 8), 500)
    for libver in ("earliest", "v108", "v110", "latest"):
        for j, (maxshape, chunks, compression) in enumerate([
                (None, None, None),            # contiguous
                ((6, 8), (3, 4), "gzip"),      # fixed array (v110+), B-tree v1 before
                ((None, 8), (3, 4), None),     # extensible array
                ((None, None), (3, 4), "lzf"),  # B-tree v2
                ((6, 8), (6, 8), None)]):      # single chunk
            path = tmp / f"h5py_{libver}_{j}.h5"
            with h5py.File(path, "w", libver=libver) as f:
                f.attrs["title"] = "seed"
                f.attrs["scale"] = np.array([1.5, 2.5])
                g = f.create_group("group")
                d = g.create_dataset("data", data=data, maxshape=maxshape, chunks=chunks, compression=compression,
                                     fletcher32=bool(chunks) and j == 1, shuffle=bool(chunks) and j == 1)
                d.attrs["units"] = "um"
                if j == 0:  # a compact dataset: its data in the object header
                    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                    dcpl.set_layout(h5py.h5d.COMPACT)
                    dcpl.set_obj_track_times(False)  # the same seeds every run
                    space = h5py.h5s.create_simple((6,))
                    h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F64LE, space, dcpl=dcpl).write(
                        h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype="<f8"))
                f.create_dataset("empty", shape=(4, 4), dtype="u1", chunks=(2, 2) if chunks else None,
                                 maxshape=maxshape and (None, 4), fillvalue=9)
            corpus.add("hdf5_file_fuzzer", path.read_bytes())


def hdf5_sohm_seeds(corpus: Corpus, tmp: Path) -> None:
    """Files sharing their datatype, dataspace, fill value, filter pipeline and attribute messages
    through the shared-message heap, for hdf5_sohm_fuzzer (hdf5_sohm_fuzzer.cc): list and B-tree
    indexes, one index or one per message class, compact and dense attributes. h5py has no setters
    for these properties: they are called through ctypes on the libhdf5 h5py loads."""
    import ctypes
    import glob
    import os
    libs = glob.glob(os.path.join(os.path.dirname(h5py.__file__), "..", "h5py.libs", "libhdf5-*.so*"))
    lib = ctypes.CDLL(libs[0] if libs else "libhdf5.so")
    every = (1 << 1) | (1 << 3) | (1 << 5) | (1 << 11) | (1 << 12)
    for i, (indexes, max_list, min_btree, latest) in enumerate([
            ([every], 50, 40, False), ([every], 0, 0, True), ([(1 << 1) | (1 << 3), (1 << 5) | (1 << 11), 1 << 12], 2, 1, True)]):
        fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
        pid = ctypes.c_int64(fcpl.id)
        lib.H5Pset_shared_mesg_nindexes(pid, ctypes.c_uint(len(indexes)))
        for k, flags in enumerate(indexes):
            lib.H5Pset_shared_mesg_index(pid, ctypes.c_uint(k), ctypes.c_uint(flags), ctypes.c_uint(0))
        lib.H5Pset_shared_mesg_phase_change(pid, ctypes.c_uint(max_list), ctypes.c_uint(min_btree))
        fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        if latest:
            fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
        path = tmp / f"sohm_{i}.h5"
        with h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)) as f:
            for j in range(4):
                d = f.create_dataset(f"d{j}", data=values("int16", (6, 4), 600 + j), chunks=(3, 2),
                                     compression="gzip" if j % 2 else None, fillvalue=3)
                for a in range(10 if j == 3 else 2):
                    d.attrs[f"a{a}"] = np.arange(a + 1, dtype="<f4")
        corpus.add("hdf5_sohm_fuzzer", path.read_bytes())


def hdf5_vds_heap_seeds(corpus: Corpus, tmp: Path) -> None:
    """Virtual datasets (sources in the same file, so a file alone reads) for hdf5_file_fuzzer, and
    for hdf5_vds_heap_fuzzer (hdf5_vds_heap_fuzzer.cc): their global heap collections (byte 0 = 0),
    the mapping lists in them (1) and the selections of h5py's slicing (2)."""
    for libver in ("earliest", "latest"):
        path = tmp / f"vds_{libver}.h5"
        with h5py.File(path, "w", libver=libver) as f:
            a = f.create_dataset("a", data=np.arange(48, dtype="<i4").reshape(6, 8))
            layout = h5py.VirtualLayout(shape=(8, 10), dtype="<i4")
            layout[0:6:2, 0:8] = h5py.VirtualSource(a)[0:3, :]
            layout[7, 2:10] = h5py.VirtualSource(a)[5, :]
            f.create_virtual_dataset("v", layout, fillvalue=-1)
        data = path.read_bytes()
        corpus.add("hdf5_file_fuzzer", data)
        at = data.find(b"GCOL")
        while at >= 0:
            size = int.from_bytes(data[at + 8:at + 16], "little")
            collection = data[at:at + size]
            corpus.add("hdf5_vds_heap_fuzzer", b"\x00" + collection)
            pos = 16
            while pos + 16 <= len(collection):
                index = int.from_bytes(collection[pos:pos + 2], "little")
                n = int.from_bytes(collection[pos + 8:pos + 16], "little")
                if index == 0:
                    break
                corpus.add("hdf5_vds_heap_fuzzer", b"\x01" + collection[pos + 16:pos + 16 + n])
                pos += 16 + (n + 7) // 8 * 8
            at = data.find(b"GCOL", at + 1)
    for sel in ((slice(0, 6, 2), slice(None)), (3, slice(1, 9)), (slice(None), slice(2, 10, 4))):
        space = h5py.h5s.create_simple((8, 10))
        space.select_none()
        rows = range(8)[sel[0]] if isinstance(sel[0], slice) else [sel[0]]
        cols = range(10)[sel[1]]
        space.select_hyperslab((rows[0], cols[0]), (len(rows), len(cols)),
                               stride=(rows.step if isinstance(rows, range) else 1, cols.step))
        encoded = space.encode()
        corpus.add("hdf5_vds_heap_fuzzer", b"\x02" + encoded[encoded.find(b"\x02\x00\x00\x00"):])


def hdf5_datatype_seeds(corpus: Corpus, tmp: Path) -> None:
    """Datatype message bodies (HDF5's H5Tencode form less its 2-byte header) of every fixed-size
    class h5py makes, for hdf5_datatype_fuzzer; and a file holding them for hdf5_file_fuzzer."""
    point = np.dtype([("x", ">i4"), ("y", "<f2")])
    dtypes = [np.dtype([("a", ">i4"), ("s", "S3"), ("pts", point, (2,)), ("c", "<c8")]), np.dtype(("<i2", (2, 3))),
              h5py.enum_dtype({"RED": 0, "GREEN": 7}, basetype=">u2"), np.dtype("V5"), np.dtype("?"),
              h5py.string_dtype("utf-8", 9), h5py.vlen_dtype(np.int32), h5py.string_dtype()]
    types = [h5py.h5t.py_create(d, logical=True) for d in dtypes]
    padded = h5py.h5t.STD_I16BE.copy()
    padded.set_precision(12)
    padded.set_offset(3)
    types += [padded, h5py.h5t.STD_B32BE]
    if hasattr(h5py.h5t, "COMPLEX_IEEE_F64BE"):
        types.append(h5py.h5t.COMPLEX_IEEE_F64BE)
    for t in types:
        corpus.add("hdf5_datatype_fuzzer", t.encode()[2:])
    # Floats in other layouts (h5_float_layout.h): VAX order, and a leading one stored in fields
    # of other sizes. As version 3 messages: HDF5 reads the VAX bit from version 3 on.
    vax = h5py.h5t.IEEE_F64LE.copy()
    vax.set_order(h5py.h5t.ORDER_VAX)
    other_fields = h5py.h5t.IEEE_F32BE.copy()
    other_fields.set_fields(31, 24, 7, 8, 16)
    other_fields.set_ebias(63)
    other_fields.set_norm(h5py.h5t.NORM_NONE)
    for t in (vax, other_fields):
        body = bytearray(t.encode()[2:])
        body[0] = (body[0] & 0x0F) | 0x30
        corpus.add("hdf5_datatype_fuzzer", bytes(body))
    path = tmp / "datatypes.h5"
    with h5py.File(path, "w") as f:
        f["committed"] = dtypes[0]
        f.create_dataset("compound", shape=(3,), dtype=f["committed"], chunks=(2,))
        f.create_dataset("array", shape=(2,), dtype=dtypes[1])
        f.create_dataset("enum", data=np.array([0, 7], ">u2"), dtype=dtypes[2])
    corpus.add("hdf5_file_fuzzer", path.read_bytes())


def hdf5_filter_seeds(corpus: Corpus, tmp: Path) -> None:
    """Chunks h5py and hdf5plugin write, each behind the header hdf5_filter_fuzzer.cc reads: the
    filter, element size, chunk size and the filter's client data."""
    import hdf5plugin
    selector = {6: 0, 4: 1, 32000: 2, 32001: 3, 32004: 4, 32008: 5, 32015: 6}
    cases = [("so_int", "int16", dict(scaleoffset=0)), ("so_fill", "uint32", dict(scaleoffset=0, fillvalue=3)),
             ("so_float", "float32", dict(scaleoffset=2)), ("so_double", "float64", dict(scaleoffset=3)),
             ("lzf", "int32", dict(compression="lzf")), ("blosc", "uint16", dict(**hdf5plugin.Blosc())),
             ("lz4", "int64", dict(**hdf5plugin.LZ4(nbytes=128))), ("zstd", "float32", dict(**hdf5plugin.Zstd())),
             ("bshuf", "uint8", dict(**hdf5plugin.Bitshuffle())), ("bshuf_lz4", "int32", dict(**hdf5plugin.Bitshuffle(cname="lz4"))),
             ("bshuf_zstd", "uint16", dict(**hdf5plugin.Bitshuffle(cname="zstd")))]
    if h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP):
        cases.append(("szip", "uint16", dict(compression="szip", compression_opts=("nn", 8))))
    path = tmp / "filters.h5"
    with h5py.File(path, "w") as f:
        for name, dtype, options in cases:
            data = (np.arange(203) % 37 * 3).astype(dtype)
            f.create_dataset(name, data=data, chunks=(203,), **options)
        for name, dtype, _ in cases:
            d = f[name]
            plist = d.id.get_create_plist()
            code, _, cd, _ = plist.get_filter(0)
            _, chunk = d.id.read_direct_chunk((0,))
            itemsize = np.dtype(dtype).itemsize
            header = bytes([selector[code], itemsize]) + struct.pack("<I", 203 * itemsize) + bytes([len(cd)])
            corpus.add("hdf5_filter_fuzzer", header + b"".join(struct.pack("<I", v) for v in cd) + bytes(chunk))


COMPRESSO_CASES = [  # shape (x, y, z), dtype, label count, compress() options
    ((1, 1, 1), "uint8", 1, {}),
    ((7, 5, 3), "uint16", 4, {}),
    ((9, 8, 4), "uint32", 3, dict(random_access_z_index=False)),
    ((6, 6, 5), "uint64", 3, dict(connectivity=6)),
    ((10, 9, 2), "uint8", 2, dict(steps=(8, 8, 1))),
    ((5, 7, 6), "uint16", 5, dict(steps=(2, 2, 2))),
    ((0, 3, 2), "uint32", 1, {}),
]


def compresso_seeds(corpus: Corpus) -> None:
    """compresso streams after a byte picking the volume's label width (compresso_fuzzer.cc)."""
    for i, (shape, dtype, k, options) in enumerate(COMPRESSO_CASES):
        rng = np.random.default_rng(600 + i)
        top = np.iinfo(dtype).max
        palette = np.array([0, 7, top, top - 3, 12345 % (top + 1)][:max(k, 1)], dtype=dtype)
        labels = palette[rng.integers(0, k, size=shape)]
        labels[: shape[0] // 2] = palette[0]  # runs of one label, as segmentations have
        width_byte = bytes([{1: 0, 2: 1, 4: 2, 8: 3}[np.dtype(dtype).itemsize]])
        corpus.add("compresso_fuzzer", width_byte + compresso.compress(labels, **options))


def numcodecs_seeds(corpus: Corpus) -> None:
    """numcodecs' encodings after the byte numcodecs_codec_fuzzer.cc picks its codec with."""
    import numcodecs
    data = np.arange(300, dtype="<u2").tobytes() + bytes(range(7))
    even = data[:600]
    cases = [(0x10, numcodecs.BZ2(2)), (0x01, numcodecs.LZMA(preset=1)), (0x11, numcodecs.LZMA(format=2, preset=1)),
             (0x22, numcodecs.Zlib(2)), (0x03, numcodecs.CRC32()), (0x13, numcodecs.Adler32()),
             (0xA3, numcodecs.CRC32C()), (0xB3, numcodecs.Fletcher32())]
    for choice, codec in cases:
        corpus.add("numcodecs_codec_fuzzer", bytes([choice]) + bytes(codec.encode(data)))
    corpus.add("numcodecs_codec_fuzzer", bytes([0x24]) + bytes(numcodecs.Shuffle(2).encode(even)))
    corpus.add("numcodecs_codec_fuzzer", bytes([0x07 | (1 << 3)]) + bytes(numcodecs.Delta("<i2").encode(np.frombuffer(even, "<i2"))))
    floats = np.linspace(-3, 3, 50)
    corpus.add("numcodecs_codec_fuzzer", bytes([0x86 | (2 << 3)]) +
               bytes(numcodecs.FixedScaleOffset(offset=-1.5, scale=10, dtype="<f8", astype="<i4").encode(floats)))
    corpus.add("numcodecs_codec_fuzzer", bytes([0x06 | (1 << 3)]) + floats.astype("<f4").tobytes())


class GlobalHeap:
    """A global heap collection of the objects added (indices 1, 2, ...), placed at address 0, and
    the 16-byte variable-length references to them (u32 count, collection address, u32 index)."""

    def __init__(self):
        self.objects: list[bytes] = []

    def ref(self, count: int, data: bytes) -> bytes:
        self.objects.append(data)
        return struct.pack("<IQI", count, 0, len(self.objects))

    def collection(self) -> bytes:
        body = b""
        for index, data in enumerate(self.objects, 1):
            body += struct.pack("<HHIQ", index, 1, 0, len(data)) + data
            body += bytes(-len(body) % 8)
        # The header, the objects, then the free space (index 0) of 16 bytes.
        return b"GCOL\x01\x00\x00\x00" + struct.pack("<Q", 16 + len(body) + 16) + body + struct.pack("<QQ", 0, 16)


def vlen_seeds(corpus: Corpus) -> None:
    """vlen_fuzzer.cc's inputs: a Zarr vlen-utf8 chunk (byte 0 even, then its element count), and
    elements of each HDF5 datatype it reads (byte 0 odd; the next byte: the type in its high bits,
    the element count - 1 in its low bits), stored as HDF5 stores them, followed by the heap
    collection their references point into."""
    texts = ["abc", "h\u00e9llo", "", "tessera " * 5]
    chunk = struct.pack("<I", len(texts)) + b"".join(struct.pack("<I", len(t.encode())) + t.encode() for t in texts)
    corpus.add("vlen_fuzzer", bytes([0, len(texts)]) + chunk)

    def add_hdf5(which: int, elements: list[bytes], heap: GlobalHeap) -> None:
        corpus.add("vlen_fuzzer", bytes([1, (which << 4) | (len(elements) - 1)]) + b"".join(elements) + heap.collection())

    def vlen_string(heap: GlobalHeap, text: str) -> bytes:
        return heap.ref(len(text.encode()), text.encode())

    # 0: vlen strings.
    heap = GlobalHeap()
    add_hdf5(0, [vlen_string(heap, t) for t in texts if t], heap)
    # 1: compound {n: int16 BE at 0, s: vlen string at 2, a: int32[2] at 18, v: vlen int32[2] at 26}.
    heap = GlobalHeap()
    records = []
    for i in range(3):
        vlens = [heap.ref(k, struct.pack(f"<{k}i", *range(i, i + k))) for k in (i + 1, 2)]
        records.append(struct.pack(">h", -i) + vlen_string(heap, f"record {i}") + struct.pack("<2i", i, -i) + b"".join(vlens))
    add_hdf5(1, records, heap)
    # 2: vlen of vlen int16: each element's object holds the references of its inner sequences.
    heap = GlobalHeap()
    elements = []
    for lengths in [(1, 3), (0, 2, 4), (5,)]:
        inner = [heap.ref(k, struct.pack(f"<{k}h", *range(-k, 0))) for k in lengths]
        elements.append(heap.ref(len(inner), b"".join(inner)))
    add_hdf5(2, elements, heap)
    # 3: vlen of compound {k: int8 at 0, t: vlen string at 1} (17 bytes a record).
    heap = GlobalHeap()
    elements = []
    for count in (1, 3):
        records = b"".join(bytes([k]) + vlen_string(heap, f"t{k}" * (k + 1)) for k in range(count))
        elements.append(heap.ref(count, records))
    add_hdf5(3, elements, heap)


SLICES = ["10|3", "10,20|3, -1", "5,6,7|..., ::-1", "100|None, 1:90:7", "4,4|::2, 1", "3,0,5|:, :, -5:",
          "9223372036854775807|::-9223372036854775807", "2,3,4,5,6|1, ..., 2", "7|-8:8:3"]


def main() -> None:
    out = Path(sys.argv[1])
    corpus = Corpus(out)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        zarr_seeds(corpus, tmp_path)
        precomputed_seeds(corpus, tmp_path)
        image_chunk_seeds(corpus, tmp_path)
        hdf5_seeds(corpus, tmp_path)
        hdf5_filter_seeds(corpus, tmp_path)
        hdf5_datatype_seeds(corpus, tmp_path)
        hdf5_vds_heap_seeds(corpus, tmp_path)
        hdf5_sohm_seeds(corpus, tmp_path)
    compresso_seeds(corpus)
    numcodecs_seeds(corpus)
    jxl_chunk_seeds(corpus)
    vlen_seeds(corpus)
    for s in SLICES:
        corpus.add("slice_fuzzer", s.encode())
    for target, n in sorted(corpus.count.items()):
        print(f"{target}: {n} seeds")


if __name__ == "__main__":
    main()
