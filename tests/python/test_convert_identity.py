"""Convert is byte-identical to a stream of the same values (README, "Conversion": "The output is
byte-identical to `tessera stream` of the same values with the same options").

Seeded random cases, every source format into every destination format: random shapes (rank 1..5
where both formats allow it; precomputed is (z, y, x) or (c, z, y, x)), dtypes, chunks, shards,
codecs and the format's own options, values with whole chunks of the fill value (which are not
stored). Each case writes the same destination three ways, under the same name in three folders
(names end up in metadata): tessera.convert(src, ...), `tessera convert SRC DST ...` (the CLI) and
tessera.create(...) + append of the source's values in random pieces; every file must be
byte-identical across the three, with the same relative paths, and read back as the source's values.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import tessera
from conftest import REPO_ROOT, random_array

SEED = 0x7E55_C0DE
FORMATS = ["zarr3", "hdf5", "precomputed"]
PAIRS = [(s, d) for s in FORMATS for d in FORMATS]
CASES_PER_PAIR = 4
NAMES = {"zarr3": "a.zarr", "hdf5": "a.h5", "precomputed": "vol"}
RANKS = {"zarr3": {1, 2, 3, 4, 5}, "hdf5": {1, 2, 3, 4, 5}, "precomputed": {3, 4}}
DTYPES = {
    "zarr3": {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
              "float64", "complex64", "complex128"},
    "hdf5": {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
             "float64"},
    "precomputed": {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32"},
}
ZARR_CODECS = {"none": None, "zstd": (1, 9), "gzip": (1, 9), "blosc-lz4": (1, 9), "blosc-zstd": (1, 9)}
# Boxes of chunks every precomputed volume accepts as shards (Morton order: x first, then y, z).
PRECOMPUTED_SHARDS = [(1, 1, 1), (1, 1, 2), (1, 2, 2), (2, 2, 2)]


def cli_binary() -> Path:
    binary = Path(os.environ.get("TESSERA_BIN", REPO_ROOT / "build" / "release" / "tessera"))
    assert binary.is_file(), f"the tessera CLI is not built ({binary}): build it with scripts/build.sh"
    return binary


def tree_bytes(root: Path) -> dict[str, bytes]:
    if root.is_file():
        return {"": root.read_bytes()}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def first_difference(a: bytes, b: bytes) -> str:
    n = min(len(a), len(b))
    at = next((i for i in range(n) if a[i] != b[i]), n)
    return f"{len(a)} vs {len(b)} bytes, first difference at byte {at}"


# --- random specs -------------------------------------------------------------------------------------


@dataclass
class Case:
    src_fmt: str
    dst_fmt: str
    data: np.ndarray
    src_options: dict  # tessera.create options of the source (besides dtype and shape)
    dst_options: dict  # the destination's options, given to convert and the CLI
    src_dataset: str | None

    @property
    def stream_options(self) -> dict:
        """What create gets: the destination's options, and the fill value convert carries over from
        the source when none is given (options left out are the source's)."""
        o = dict(self.dst_options)
        if self.dst_fmt != "precomputed" and "fill_value" not in o and "fill_value" in self.src_options:
            o["fill_value"] = self.src_options["fill_value"]
        return o


def random_chunks(rng, shape, fmt):
    chunks = []
    for n in shape:
        hi = n if fmt == "hdf5" else n + 3  # HDF5 refuses a chunk larger than a fixed dimension
        chunks.append(int(rng.integers(1, max(1, min(hi, 12)) + 1)))
    return tuple(chunks)


def random_fill(rng, dtype: np.dtype):
    """A fill value tessera and the CLI spell the same way (JSON): often the dtype's zero."""
    if dtype.kind == "c" or rng.random() < 0.4:
        return None
    if dtype == np.bool_:
        return bool(rng.integers(2))
    if dtype.kind == "f":
        return float(rng.choice([-1.5, 0.25, 3.0]))
    info = np.iinfo(dtype)
    return int(rng.integers(max(info.min, -100), min(info.max, 100), endpoint=True))


def random_options(rng, fmt, shape, dtype: np.dtype, channels: bool) -> dict:
    """Random create options of FORMAT for an array of SHAPE and DTYPE (all given explicitly, so
    nothing is left to what a source carries)."""
    o: dict = {"chunks": random_chunks(rng, shape, fmt)}
    if fmt == "zarr3":
        codec = str(rng.choice(list(ZARR_CODECS)))
        o["codec"] = codec
        if ZARR_CODECS[codec] and rng.random() < 0.7:
            o["level"] = int(rng.integers(ZARR_CODECS[codec][0], ZARR_CODECS[codec][1], endpoint=True))
        if rng.random() < 0.6:
            o["shard_chunks"] = tuple(int(rng.integers(1, 4)) for _ in shape)
            o["index_location"] = str(rng.choice(["start", "end"]))
        else:
            o["shard_chunks"] = None
        fill = random_fill(rng, dtype)
        if fill is not None:
            o["fill_value"] = fill
    elif fmt == "hdf5":
        o["shard_chunks"] = None
        o["codec"] = str(rng.choice(["none", "gzip"]))
        if o["codec"] == "gzip" and rng.random() < 0.7:
            o["level"] = int(rng.integers(1, 9, endpoint=True))
        o["shuffle"] = bool(rng.random() < 0.5) and o["codec"] == "gzip"
        o["fletcher32"] = bool(rng.random() < 0.3)
        fill = random_fill(rng, dtype)
        if fill is not None:
            o["fill_value"] = fill
    else:  # precomputed: (z, y, x) or (c, z, y, x); a chunk and a shard hold every channel
        if channels:
            o["chunks"] = (shape[0],) + o["chunks"][1:]
        cseg = dtype in (np.uint32, np.uint64) and rng.random() < 0.5
        o["encoding"] = "compressed_segmentation" if cseg else "raw"
        if cseg:
            o["cseg_block"] = tuple(int(rng.choice([2, 4, 8])) for _ in range(3))
        if rng.random() < 0.6:
            box = PRECOMPUTED_SHARDS[int(rng.integers(len(PRECOMPUTED_SHARDS)))]
            o["shard_chunks"] = ((1,) if channels else ()) + box
            o["hash"] = str(rng.choice(["identity", "murmurhash3_x86_128"]))
            o["codec"] = str(rng.choice(["none", "gzip"]))
        else:
            o["shard_chunks"] = None
            o["codec"] = "none"
        o["resolution"] = tuple(float(rng.choice([1, 4, 40, 2.5])) for _ in range(3))
        o["voxel_offset"] = tuple(int(rng.integers(-5, 6)) for _ in range(3))
    return o


def random_values(rng, dtype, shape, fill) -> np.ndarray:
    """Random values, with some whole boxes of the fill value (chunks that are not stored)."""
    data = random_array(rng, dtype, shape)
    for _ in range(int(rng.integers(0, 3))):
        lo = [int(rng.integers(0, n)) for n in shape]
        hi = [int(rng.integers(a, n + 1)) for a, n in zip(lo, shape)]
        data[tuple(slice(a, b + 1) for a, b in zip(lo, hi))] = fill if fill is not None else 0
    return data


def make_case(src_fmt: str, dst_fmt: str, index: int) -> Case:
    pair = FORMATS.index(src_fmt) * len(FORMATS) + FORMATS.index(dst_fmt)
    rng = np.random.default_rng([SEED, pair, index])
    rank = int(rng.choice(sorted(RANKS[src_fmt] & RANKS[dst_fmt])))
    dtype = np.dtype(str(rng.choice(sorted(DTYPES[src_fmt] & DTYPES[dst_fmt]))))
    channels = rank == 4 and "precomputed" in (src_fmt, dst_fmt)
    budget = 6000  # elements: small, but many chunks
    shape = []
    for d in range(rank):
        if channels and d == 0:
            shape.append(int(rng.integers(2, 4)))  # one channel would read back as (z, y, x)
            continue
        left = max(2, int(round((budget / max(1, np.prod(shape, dtype=np.int64))) ** (1 / (rank - d)))))
        shape.append(int(rng.integers(1, min(left, 40) + 1)))
    shape = tuple(shape)
    src_options = random_options(rng, src_fmt, shape, dtype, channels)
    dst_options = random_options(rng, dst_fmt, shape, dtype, channels)
    src_dataset = None
    if src_fmt == "hdf5" and rng.random() < 0.5:
        src_options["dataset"] = src_dataset = str(rng.choice(["/scan/frames", "x"]))
    if dst_fmt == "hdf5":
        dst_options["dataset"] = str(rng.choice(["/data", "/em/s0"]))
    case = Case(src_fmt, dst_fmt, None, src_options, dst_options, src_dataset)
    case.data = random_values(rng, dtype, shape, case.stream_options.get("fill_value"))
    return case


CASES = [(s, d, i) for s, d in PAIRS for i in range(CASES_PER_PAIR)]


# --- writing it three ways ------------------------------------------------------------------------------


def write_in_pieces(location: Path, data: np.ndarray, rng, fmt: str, **options) -> None:
    with tessera.create(location, dtype=data.dtype, shape=data.shape, format=fmt, threads=2, **options) as w:
        start = 0
        while start < data.shape[0]:
            n = int(rng.integers(1, max(2, data.shape[0] // 2) + 1))
            piece = data[start:start + n]
            w.append(piece[0] if n == 1 and rng.random() < 0.5 else piece)  # one row, or several
            start += n


def cli_flags(options: dict) -> list[str]:
    """The `tessera convert` flags that give the same destination as tessera.create(**options)."""
    flags = []
    for key, value in options.items():
        flag = {"chunks": "--chunk", "dataset": "--out-dataset"}.get(key, "--" + key.replace("_", "-"))
        if key == "shard_chunks" and value is None:
            flags += [flag, "none"]
        elif key == "fill_value":
            flags.append(f"{flag}={json.dumps(value)}")  # one token: values may start with "-"
        elif key in ("shuffle", "fletcher32"):
            flags.append(flag if value else f"{flag}=false")  # false drops a filter an HDF5 source has
        elif isinstance(value, bool):
            flags += [flag] if value else []
        elif isinstance(value, tuple):
            flags += [flag, ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)]
        else:
            flags += [flag, str(value)]
    return flags


@pytest.mark.parametrize("src_fmt,dst_fmt,index", CASES, ids=[f"{s}-to-{d}-{i}" for s, d, i in CASES])
def test_convert_is_byte_identical_to_a_stream(tmp_path, src_fmt, dst_fmt, index):
    case = make_case(src_fmt, dst_fmt, index)
    rng = np.random.default_rng([SEED, 99, FORMATS.index(src_fmt), FORMATS.index(dst_fmt), index])
    describe = (f"{src_fmt} {case.src_options} -> {dst_fmt} {case.stream_options}, dtype {case.data.dtype}, "
                f"shape {case.data.shape}")
    src = tmp_path / "src" / NAMES[src_fmt]
    src.parent.mkdir()
    write_in_pieces(src, case.data, rng, src_fmt, **case.src_options)

    name = NAMES[dst_fmt]
    outs = {way: tmp_path / way / name for way in ("convert", "cli", "stream")}
    for out in outs.values():
        out.parent.mkdir()
    tessera.convert(src, outs["convert"], dataset=case.src_dataset, format=dst_fmt, threads=2,
                    **{("out_dataset" if k == "dataset" else k): v for k, v in case.dst_options.items()})
    cmd = [str(cli_binary()), "convert", str(src), str(outs["cli"]), "--format", dst_fmt, "--threads", "2",
           *(["--dataset", case.src_dataset] if case.src_dataset else []), *cli_flags(case.dst_options)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr}"
    write_in_pieces(outs["stream"], case.data, rng, dst_fmt, **case.stream_options)

    trees = {way: tree_bytes(out) for way, out in outs.items()}
    assert len(trees["stream"]) >= 1
    for way in set(outs) - {"stream"}:
        assert sorted(trees[way]) == sorted(trees["stream"]), (
            f"{way}: other files than the stream's: {sorted(set(trees[way]) ^ set(trees['stream']))}; {describe}")
        different = {k: first_difference(trees[way][k], trees["stream"][k])
                     for k in trees["stream"] if trees[way][k] != trees["stream"][k]}
        assert not different, f"{way}: files that differ from the stream's: {different}; {describe}"
    got = tessera.open(outs["convert"], **({"dataset": case.dst_options["dataset"]} if dst_fmt == "hdf5" else {}))
    assert got.shape == case.data.shape and got.dtype == case.data.dtype, describe
    np.testing.assert_array_equal(got[...], case.data, err_msg=describe)


def test_the_cases_cover_every_rank_and_many_dtypes():
    """The random draw does what the docstring says (a changed seed or budget could lose coverage)."""
    cases = [make_case(s, d, i) for s, d, i in CASES]
    ranks = {(c.src_fmt, c.dst_fmt): c.data.ndim for c in cases}
    assert {c.data.ndim for c in cases} == {1, 2, 3, 4, 5}
    assert {c.data.ndim for c in cases if "precomputed" in (c.src_fmt, c.dst_fmt)} == {3, 4}, ranks
    assert len({str(c.data.dtype) for c in cases}) >= 9
    assert any(c.dst_options.get("shard_chunks") for c in cases if c.dst_fmt == "zarr3")
    assert any(c.dst_options.get("shard_chunks") for c in cases if c.dst_fmt == "precomputed")
    assert any(c.dst_options.get("encoding") == "compressed_segmentation" for c in cases)
    assert any(c.dst_options.get("fill_value") not in (None, 0) for c in cases)
    assert any(c.src_options.get(f) and not c.dst_options.get(f) for c in cases if c.dst_fmt == "hdf5"
               for f in ("shuffle", "fletcher32")), "no case drops an HDF5 source's filter"


def test_a_new_encoding_takes_its_own_block_size(tmp_path):
    """A compressed_segmentation source's block size belongs to its encoding: asking for raw chunks
    (or compressed_segmentation again) does not carry it over (it made the conversion fail)."""
    data = (np.arange(6 * 10 * 12, dtype=np.uint32).reshape(6, 10, 12) // 7) % 5
    src = tmp_path / "src"
    with tessera.create(src, format="precomputed", dtype="uint32", shape=data.shape, chunks=(4, 8, 8),
                        encoding="compressed_segmentation", cseg_block=(4, 4, 2)) as w:
        w.append(data)
    for encoding, block in [("raw", None), ("compressed_segmentation", [8, 8, 8])]:
        for way in ("python", "cli"):
            out = tmp_path / f"{way}-{encoding}"
            if way == "python":
                tessera.convert(src, out, format="precomputed", encoding=encoding)
            else:
                proc = subprocess.run([str(cli_binary()), "convert", str(src), str(out), "--format", "precomputed",
                                       "--encoding", encoding], capture_output=True, text=True, timeout=60)
                assert proc.returncode == 0, f"tessera convert --encoding {encoding}: {proc.stderr}"
            scale = tessera.open(out).metadata["scales"][0]
            assert scale["encoding"] == encoding and scale.get("compressed_segmentation_block_size") == block, scale
            np.testing.assert_array_equal(tessera.open(out)[...], data)
