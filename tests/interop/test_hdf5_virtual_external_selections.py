"""tessera reads the virtual dataset mappings h5py's VirtualLayout cannot write, as h5py reads them.

Written with the low-level API (h5py.h5s / h5py.h5p.set_virtual): irregular hyperslabs (unions of
blocks made with SELECT_OR) on either side, selections of one element count but different shapes
(HDF5 pairs them in row-major order of the selected elements), sources of another integer or float
type or byte order (HDF5 converts, clamping out-of-range integers), and unlimited mappings beside
irregular ones. Each file is compared with h5py for the whole dataset and random selections.
Point selections: the HDF5 library refuses to write them into a mapping, and to open a dataset
whose mapping holds one ("point selections not currently supported with virtual datasets"). A
file holding one is made by rewriting a mapping's selection bytes; tessera reads it, and the
values expected come from HDF5's own pairing of the same two selections in an H5Dread.
"""

from __future__ import annotations

import struct

import h5py
import numpy as np
import pytest
from h5py import h5d, h5p, h5s, h5t

import tessera as ts
from hdf5_virtual_support import DTYPES, compare
from interop_support import assert_identical


def random_blocks(rng, shape, n):
    """N random (start, count) blocks inside SHAPE (they may overlap)."""
    out = []
    for _ in range(n):
        start = tuple(int(rng.integers(0, d)) for d in shape)
        count = tuple(int(rng.integers(1, d - s + 1)) for s, d in zip(start, shape))
        out.append((start, count))
    return out


def select_union(space, blocks):
    space.select_none()
    for start, count in blocks:
        space.select_hyperslab(start, count, op=h5s.SELECT_OR)


def select_intervals_1d(space, rng, length, total):
    """Disjoint random intervals of a 1-D SPACE of LENGTH holding TOTAL elements."""
    assert total <= length
    gaps = length - total
    cut = sorted(int(x) for x in rng.integers(0, total + 1, size=int(rng.integers(1, 5))))
    pieces = [b - a for a, b in zip([0] + cut, cut + [total]) if b > a]
    space.select_none()
    pos = 0
    for p in pieces:
        gap = int(rng.integers(0, gaps + 1))
        gaps -= gap
        pos += gap
        space.select_hyperslab((pos,), (p,), op=h5s.SELECT_OR)
        pos += p


def create_vds(f, name, vshape, dtype, mappings, maxshape=None, fill=None):
    """MAPPINGS: (virtual space, source file, source dataset, source space)."""
    dcpl = h5p.create(h5p.DATASET_CREATE)
    if fill is not None:
        dcpl.set_fill_value(np.array(fill, dtype=dtype))
    for vspace, src_file, src_name, sspace in mappings:
        dcpl.set_virtual(vspace, src_file.encode(), src_name.encode(), sspace)
    space = h5s.create_simple(vshape, maxshape)
    h5d.create(f.id, name.encode(), h5t.py_create(np.dtype(dtype)), space, dcpl=dcpl)


@pytest.mark.parametrize("seed", range(6))
def test_irregular_hyperslabs_on_both_sides(tmp_path, seed):
    rng = np.random.default_rng(seed)
    dtype = DTYPES[seed % len(DTYPES)]
    vshape = tuple(int(x) for x in rng.integers(4, 12, size=int(rng.integers(1, 4))))
    sshape = tuple(int(x) for x in rng.integers(4, 12, size=int(rng.integers(1, 4))))
    chunks = tuple(int(rng.integers(1, d + 1)) for d in sshape) if seed % 2 else None
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f.create_dataset("s", data=(rng.random(sshape) * 100).astype(dtype), chunks=chunks)
        f.create_dataset("line", data=(rng.random(4000) * 100).astype(dtype))
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        # Virtual side: a union of random blocks, fed by a 1-D source's random intervals.
        vspace = h5s.create_simple(vshape)
        select_union(vspace, random_blocks(rng, vshape, int(rng.integers(2, 6))))
        n = vspace.get_select_npoints()
        sspace = h5s.create_simple((4000,))
        select_intervals_1d(sspace, rng, 4000, n)
        # Source side: a union of random blocks of an N-d source, onto a 1-D VDS's intervals.
        sspace2 = h5s.create_simple(sshape)
        select_union(sspace2, random_blocks(rng, sshape, int(rng.integers(2, 6))))
        m = sspace2.get_select_npoints()
        vspace2 = h5s.create_simple((m + 50,))
        select_intervals_1d(vspace2, rng, m + 50, m)
        create_vds(f, "v", vshape, dtype, [(vspace, "src.h5", "line", sspace)], fill=7)
        create_vds(f, "w", (m + 50,), dtype, [(vspace2, "src.h5", "s", sspace2)])
    compare(tmp_path / "vds.h5", "v", rng)
    compare(tmp_path / "vds.h5", "w", rng)


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_same_count_different_shapes_map_in_row_major_order(tmp_path, libver):
    rng = np.random.default_rng(3)
    with h5py.File(tmp_path / "vds.h5", "w", libver=libver) as f:
        f.create_dataset("a", data=np.arange(48, dtype="i4").reshape(6, 8), chunks=(4, 3))
        f.create_dataset("b", data=np.arange(100, 130, dtype="i4").reshape(5, 6))
        f.create_dataset("c", data=np.arange(200, 224, dtype="i4"))
        mappings = []
        # all of a (6x8) onto 48 elements of row 0..5 of a (7, 9) region as 4 x 12: a reshape
        v1 = h5s.create_simple((10, 20))
        v1.select_hyperslab((0, 0), (4, 12))
        s1 = h5s.create_simple((6, 8))
        s1.select_all()
        mappings.append((v1, ".", "a", s1))
        # a strided box of b (3 x 4 of rows 0,2,4 and columns 1..4) onto a 2 x 6 box
        v2 = h5s.create_simple((10, 20))
        v2.select_hyperslab((5, 2), (2, 6))
        s2 = h5s.create_simple((5, 6))
        s2.select_hyperslab((0, 1), (3, 4), stride=(2, 1))
        mappings.append((v2, ".", "b", s2))
        # a 1-D source onto a strided 2-D block pattern (4 x 6 in 2 x 2 blocks)
        v3 = h5s.create_simple((10, 20))
        v3.select_hyperslab((2, 13), (2, 3), stride=(3, 2), block=(2, 2))
        s3 = h5s.create_simple((24,))
        s3.select_all()
        mappings.append((v3, ".", "c", s3))
        create_vds(f, "v", (10, 20), "i4", mappings, fill=-1)
    expected = compare(tmp_path / "vds.h5", "v", rng, selections=12)
    assert (expected[:4, :12].ravel() == np.arange(48)).all()  # HDF5's row-major pairing


def test_reshaping_mapping_over_unwritten_source_chunks_reads_their_fill(tmp_path):
    """A source chunk never written reads as the source's fill value, also when it is the first
    chunk a read touches (no earlier chunk's bytes to overwrite) and between written ones."""
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        s = f.create_dataset("s", shape=(12,), chunks=(2,), dtype="i4", fillvalue=9)
        s[4:6] = [4, 5]  # chunks 0, 1, 3, 4 and 5 never written
        s[8:10] = [8, 10]
        v = h5s.create_simple((3, 4))
        v.select_all()
        src = h5s.create_simple((12,))
        src.select_all()
        create_vds(f, "v", (3, 4), "i4", [(v, ".", "s", src)], fill=-1)
    expected = compare(tmp_path / "vds.h5", "v", np.random.default_rng(0))
    assert expected.ravel().tolist() == [9, 9, 9, 9, 4, 5, 9, 9, 8, 10, 9, 9]


CONVERSIONS = [
    ("<i2", "<f8"), (">i2", "<f4"), ("<f8", "<i4"), ("<f8", "<u1"), ("<f8", "<i8"), ("<f8", "<u8"),
    ("<f4", "<i4"), ("<f4", "<u4"), ("<i8", "<i1"), ("<u8", "<i2"), ("<i8", "<u2"), ("<u4", ">i8"),
    ("<f8", "<f4"), (">f4", "<f8"), ("<i8", "<f4"), ("<u1", "<i1"), ("<f8", "<f2"), (">i4", "<u8"),
    ("<f2", "<i1"), ("<f2", "<u1"), ("<f2", "<f4"), ("<f2", ">f8"), ("<i2", "<f2"),
]


def conversion_values(src):
    src = np.dtype(src)
    if src.kind == "f":
        special = [np.nan, np.inf, -np.inf, 2.0**31, -2.0**31, 2.0**63, 2.0**64, -2.0**63 - 4096, 255.5, -0.9,
                   1e300, 65504.0, 70000.0, -129.0, 3.7, -3.7, 0.0, -0.0, 2.0**53 + 1]
        with np.errstate(over="ignore"):
            return np.array(special, dtype="f8").astype(src)
    info = np.iinfo(src)
    vals = [info.min, info.max, 0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 2**31, 2**53 + 1]
    return np.array([v for v in vals if info.min <= v <= info.max], dtype=src)


@pytest.mark.parametrize("src,dst", CONVERSIONS)
def test_sources_of_another_type_convert_as_hdf5_does(tmp_path, src, dst):
    values = conversion_values(src)
    rng = np.random.default_rng(len(values))
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f.create_dataset("s", data=values, chunks=(3,))
        f.create_dataset("r", data=(rng.random((4, 5)) * 200 - 100).astype(src))
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        n = len(values)
        v = h5s.create_simple((n + 20,))
        v.select_hyperslab((0,), (n,))
        s = h5s.create_simple((n,))
        s.select_all()
        # and an irregular mapping of a 2-D source (element order path) with the same conversion
        v2 = h5s.create_simple((n + 20,))
        v2.select_hyperslab((n,), (4,))
        v2.select_hyperslab((n + 8,), (8,), op=h5s.SELECT_OR)
        s2 = h5s.create_simple((4, 5))
        s2.select_hyperslab((0, 0), (2, 2))
        s2.select_hyperslab((2, 1), (2, 4), op=h5s.SELECT_OR)
        create_vds(f, "v", (n + 20,), dst, [(v, "src.h5", "s", s), (v2, "src.h5", "r", s2)])
    compare(tmp_path / "vds.h5", "v", rng)


def test_unlimited_mapping_beside_an_all_mapping_of_no_elements(tmp_path):
    """A fixed "all" mapping over a virtual extent of 0 rows selects nothing; beside an unlimited
    mapping it must not count toward the extent (asking it for its last element divided by its
    block of 0: the process died of SIGFPE). h5py shows the extent the unlimited source gives; at
    that extent the "all" mapping holds 12 elements against its source's 0, which HDF5's read
    refuses too."""
    path = tmp_path / "vds.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("empty", shape=(0, 4), maxshape=(None, 4), dtype="i4", chunks=(2, 4))
        f.create_dataset("grow", data=np.arange(12, dtype="i4").reshape(3, 4), maxshape=(None, 4), chunks=(2, 4))
        v = h5s.create_simple((0, 4), (h5s.UNLIMITED, 4))
        v.select_all()
        s = h5s.create_simple((0, 4), (h5s.UNLIMITED, 4))
        s.select_all()
        v2 = h5s.create_simple((0, 4), (h5s.UNLIMITED, 4))
        v2.select_hyperslab((0, 0), (h5s.UNLIMITED, 1), block=(1, 4))
        s2 = h5s.create_simple((3, 4), (h5s.UNLIMITED, 4))
        s2.select_hyperslab((0, 0), (h5s.UNLIMITED, 1), block=(1, 4))
        create_vds(f, "v", (0, 4), "i4", [(v, ".", "empty", s), (v2, ".", "grow", s2)], maxshape=(h5s.UNLIMITED, 4))
    with h5py.File(path) as f:
        shape = f["v"].shape
        with pytest.raises(OSError, match="different number of elements"):
            f["v"][()]
    a = ts.open(str(path), dataset="v")
    assert a.shape == shape == (3, 4)
    with pytest.raises(ts.CorruptDataError, match="the source selection all holds 0 elements and the virtual selection all 12"):
        a[...]


def test_unlimited_mappings_beside_irregular_ones(tmp_path):
    rng = np.random.default_rng(11)
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f.create_dataset("grow", data=np.arange(30, dtype="f4").reshape(3, 10), maxshape=(3, None), chunks=(3, 4))
        f.create_dataset("small", data=np.arange(100, 112, dtype="i2").reshape(3, 4))
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        v = h5s.create_simple((6, 10), (6, h5s.UNLIMITED))
        v.select_hyperslab((0, 0), (3, h5s.UNLIMITED))
        s = h5s.create_simple((3, 10), (3, h5s.UNLIMITED))
        s.select_hyperslab((0, 0), (3, h5s.UNLIMITED))
        v2 = h5s.create_simple((6, 10), (6, h5s.UNLIMITED))
        v2.select_hyperslab((3, 0), (1, 5))
        v2.select_hyperslab((4, 2), (2, 3), op=h5s.SELECT_OR)
        v2.select_hyperslab((5, 7), (1, 1), op=h5s.SELECT_OR)
        s2 = h5s.create_simple((3, 4))
        s2.select_all()
        create_vds(f, "v", (6, 10), "f4", [(v, "src.h5", "grow", s), (v2, "src.h5", "small", s2)],
                   maxshape=(6, h5s.UNLIMITED))
    compare(tmp_path / "vds.h5", "v", rng)
    with h5py.File(tmp_path / "src.h5", "a") as f:
        f["grow"].resize((3, 17))
        f["grow"][:, 10:] = -np.arange(21, dtype="f4").reshape(3, 7)
    assert compare(tmp_path / "vds.h5", "v", rng).shape == (6, 17)


def test_float16_into_wide_integers_stays_refused(tmp_path):
    """HDF5 2.0 converts float16 into integers wider than a byte without a consistent rule (-129
    wraps to 65407 in uint16 but clamps to 0 in uint8): h5py shows values, tessera refuses."""
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f["s"] = np.array([-129, 1.5], dtype="f2")
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        sp = h5s.create_simple((2,))
        create_vds(f, "v", (2,), "u2", [(sp, "src.h5", "s", sp)])
    with h5py.File(tmp_path / "vds.h5", "r") as f:
        assert f["v"][()].tolist() == [65407, 1]
    with pytest.raises(Exception, match=r"element type .* differs from the virtual dataset's uint16"):
        ts.open(str(tmp_path / "vds.h5"), dataset="v")[...]


def test_what_stays_refused_names_the_reason(tmp_path):
    """A compound source in a float VDS: HDF5 itself cannot convert it either (h5py fails too)."""
    with h5py.File(tmp_path / "src.h5", "w") as f:
        f.create_dataset("s", data=np.zeros(4, dtype=[("a", "<i4"), ("b", "<f8")]))
    with h5py.File(tmp_path / "vds.h5", "w") as f:
        v = h5s.create_simple((4,))
        s = h5s.create_simple((4,))
        create_vds(f, "v", (4,), "f8", [(v, "src.h5", "s", s)])
    with h5py.File(tmp_path / "vds.h5", "r") as f:
        with pytest.raises(Exception):
            f["v"][()]
    with pytest.raises(Exception, match=r"element type .* differs from the virtual dataset's float64"):
        ts.open(str(tmp_path / "vds.h5"), dataset="v")[...]


# --- point selections, which the HDF5 library reads but will not write -------------------------


def lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 hashlittle, as HDF5 checksums metadata with it."""
    mask = 0xFFFFFFFF

    def rot(x, k):
        return ((x << k) | (x >> (32 - k))) & mask

    length = len(data)
    a = b = c = (0xDEADBEEF + length + initval) & mask
    i = 0
    while length > 12:
        a = (a + int.from_bytes(data[i:i + 4], "little")) & mask
        b = (b + int.from_bytes(data[i + 4:i + 8], "little")) & mask
        c = (c + int.from_bytes(data[i + 8:i + 12], "little")) & mask
        a = (a - c) & mask; a ^= rot(c, 4); c = (c + b) & mask
        b = (b - a) & mask; b ^= rot(a, 6); a = (a + c) & mask
        c = (c - b) & mask; c ^= rot(b, 8); b = (b + a) & mask
        a = (a - c) & mask; a ^= rot(c, 16); c = (c + b) & mask
        b = (b - a) & mask; b ^= rot(a, 19); a = (a + c) & mask
        c = (c - b) & mask; c ^= rot(b, 4); b = (b + a) & mask
        length -= 12
        i += 12
    if length == 0:
        return c
    tail = data[i:] + bytes(12 - length)
    a = (a + int.from_bytes(tail[0:4], "little")) & mask
    b = (b + int.from_bytes(tail[4:8], "little")) & mask
    c = (c + int.from_bytes(tail[8:12], "little")) & mask
    c ^= b; c = (c - rot(b, 14)) & mask
    a ^= c; a = (a - rot(c, 11)) & mask
    b ^= a; b = (b - rot(a, 25)) & mask
    c ^= b; c = (c - rot(b, 16)) & mask
    a ^= c; a = (a - rot(c, 4)) & mask
    b ^= a; b = (b - rot(a, 14)) & mask
    c ^= b; c = (c - rot(b, 24)) & mask
    return c


def hyperslab_v1_bytes(rank, blocks):
    """An irregular hyperslab in version 1 (u32 fields), as HDF5 writes it for libver="earliest"."""
    body = struct.pack("<II", rank, len(blocks)) + b"".join(struct.pack(f"<{2 * rank}I", *blk) for blk in blocks)
    return struct.pack("<IIII", 2, 1, 0, len(body)) + body


def points_v1_bytes(rank, points):
    body = struct.pack("<II", rank, len(points)) + b"".join(struct.pack(f"<{rank}I", *p) for p in points)
    return struct.pack("<IIII", 1, 1, 0, len(body)) + body


def rewrite_mapping(path, old_source, new_source, old_virtual, new_virtual):
    """Rewrites a VDS mapping's two encoded selections in place (same lengths; the source selection
    followed by the virtual one must occur once in the file) and fixes the mapping list's checksum."""
    raw = bytearray(path.read_bytes())
    old = old_source + old_virtual
    assert len(old_source) == len(new_source) and len(old_virtual) == len(new_virtual)
    assert raw.count(old) == 1, "test setup: the mapping's selections must occur once"
    at = raw.index(old)
    end = at + len(old)
    stored = raw[end:end + 4]
    # The list starts with its version byte: the start whose checksum is the stored one.
    start = next(s for s in range(at - 1, max(at - 300, 0), -1)
                 if raw[s] in (0, 1) and struct.pack("<I", lookup3(bytes(raw[s:end]))) == stored)
    raw[at:end] = new_source + new_virtual
    raw[end:end + 4] = struct.pack("<I", lookup3(bytes(raw[start:end])))
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("seed", range(4))
def test_point_selections_read_in_hdf5s_element_order(tmp_path, seed):
    """A mapping of B single cells onto B single positions, written by HDF5, rewritten into the
    same bytes as 2B points (in random order, repeats allowed) onto B blocks of two positions (or,
    for odd seeds, B blocks of two source cells onto 2B virtual points).

    The HDF5 library refuses such a dataset on open ("point selections not currently supported
    with virtual datasets"), so h5py shows no values for it. The expected values come from HDF5
    all the same: an H5Dread of the source with the mapping's source selection as the file space
    and its virtual selection as the memory space pairs elements in the order a mapping does."""
    rng = np.random.default_rng(seed)
    b = int(rng.integers(2, 7))
    # Cells that touch no other (HDF5 would merge touching cells into one block).
    grid = [(r, c) for r in range(0, 6, 2) for c in range(0, 8, 2)]
    cells = [grid[i] for i in sorted(rng.choice(len(grid), size=b, replace=False))]
    spots = [3 * i + 1 for i in range(b)]
    vshape = (3 * b + 2,)
    path = tmp_path / "vds.h5"
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("s", data=(rng.random((6, 8)) * 1000).astype("i4"), chunks=(2, 3))
        s = h5s.create_simple((6, 8))
        s.select_none()
        for r, c in cells:
            s.select_hyperslab((r, c), (1, 1), op=h5s.SELECT_OR)
        v = h5s.create_simple(vshape)
        v.select_none()
        for p in spots:
            v.select_hyperslab((p,), (1,), op=h5s.SELECT_OR)
        create_vds(f, "v", vshape, "i4", [(v, ".", "s", s)], fill=-5)
    old_source = hyperslab_v1_bytes(2, [(r, c, r, c) for r, c in cells])
    old_virtual = hyperslab_v1_bytes(1, [(p, p) for p in spots])
    fspace = h5s.create_simple((6, 8))
    mspace = h5s.create_simple(vshape)
    fspace.select_none()
    mspace.select_none()
    if seed % 2 == 0:
        points = [cells[i] for i in rng.integers(0, b, size=2 * b)]
        new_source = points_v1_bytes(2, points)
        new_virtual = hyperslab_v1_bytes(1, [(p, p + 1) for p in spots])
        fspace.select_elements(np.array(points))
        for p in spots:
            mspace.select_hyperslab((p,), (2,), op=h5s.SELECT_OR)
    else:
        # Source blocks of two cells along a row, virtual points.
        new_source = hyperslab_v1_bytes(2, [(r, c, r, c + 1) for r, c in cells])
        positions = [int(x) for x in rng.choice(vshape[0], size=2 * b, replace=False)]
        new_virtual = points_v1_bytes(1, [(p,) for p in positions])
        for r, c in cells:
            fspace.select_hyperslab((r, c), (1, 2), op=h5s.SELECT_OR)
        mspace.select_elements(np.array(positions).reshape(-1, 1))
    rewrite_mapping(path, old_source, new_source, old_virtual, new_virtual)
    with h5py.File(path, "r") as f:
        with pytest.raises(KeyError, match="point selections not currently supported"):
            f["v"]
        expected = np.full(vshape, -5, dtype="i4")
        f["s"].id.read(mspace, fspace, expected)
    a = ts.open(str(path), dataset="v")
    assert_identical(a[...], expected)
    for sel in [slice(1, None, 2), slice(0, b), slice(b, None)]:
        assert_identical(a[sel], expected[sel])
