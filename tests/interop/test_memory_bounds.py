"""Bounded memory, measured: a child process's peak RSS against the memory its --plan (or the Python
stream's .plan) promises, at two input sizes, so that a pipeline that holds its input (or any part
of it that grows with the input) fails.

  * `tessera convert` (README "Conversion": region by region into Zarr and precomputed, a few
    shards per worker; else two slabs plus the stream's plan, whatever the array's size) from a
    Zarr v3, an HDF5 and a precomputed source several times its memory, and region by region from
    1 and 8 GiB arrays whose chunk row spans a wide cross-section;
  * `tessera stream --format precomputed`, sharded (identity hash) and unsharded (README: each shard
    file is written once, complete, "bounded memory");
  * `tessera stream --format hdf5`: the chunk index grows with the stored chunks (README: "Memory
    holds the stream's epoch buffers plus the chunk index ..."), measured per chunk;
  * tessera.create + append in a fresh Python process (every format): peak RSS above what the
    interpreter, numpy and the input held before the stream, against the stream's .plan.

Peak RSS is the kernel's high-water mark (getrusage ru_maxrss) of a child that runs nothing else.
The test data are camera-like frames (a moving ramp plus seeded noise): compressible, not trivially.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from interop_support import peak_rss_mib, plan_numbers, run_launched

SEED = 0x3E3_B0D5
FRAME = (512, 512)
FRAME_BYTES = FRAME[0] * FRAME[1] * 2
SIZES_MIB = (64, 256)
# A child's peak may exceed its plan by 10% (allocator rounding, page granularity) plus this much:
# the binary with its libraries (~15 MiB) and the allocator's slack.
CLI_ALLOWANCE_MIB = 32
# The growth allowed from the 64 MiB to the 256 MiB input: 10% of the smaller peak plus this much.
GROWTH_ALLOWANCE_MIB = 16

def cli_plan(tessera, args: Sequence) -> dict[str, float]:
    proc = tessera.run([*args, "--plan"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return plan_numbers(proc.stdout.decode())


class CameraFrames:
    """Frames t = 0, 1, ...: a diagonal ramp moving with t, plus noise from a seeded block of 16."""

    def __init__(self):
        rng = np.random.default_rng([SEED, 1])
        self.ramp = np.add.outer(np.arange(FRAME[0], dtype=np.uint16), np.arange(FRAME[1], dtype=np.uint16))
        self.noise = rng.integers(0, 96, size=(16, *FRAME), dtype=np.uint16)

    def block(self, first: int, count: int) -> np.ndarray:
        t = np.arange(first, first + count, dtype=np.uint16)[:, None, None]
        return (self.ramp + 7 * t) % 2048 + 1024 + self.noise[(first + np.arange(count)) % 16]

    def write_raw(self, path: Path, n_frames: int) -> None:
        with open(path, "wb") as f:
            for first in range(0, n_frames, 16):
                f.write(self.block(first, min(16, n_frames - first)).astype("<u2").tobytes())

    def stream_into(self, location: Path, n_frames: int, **options) -> None:
        import tessera

        with tessera.create(location, dtype="uint16", shape=(n_frames, *FRAME), threads=2, **options) as w:
            for first in range(0, n_frames, 16):
                w.append(self.block(first, min(16, n_frames - first)))


def frames_of(mib: int) -> int:
    return (mib << 20) // FRAME_BYTES


def check_bounded(what: str, planned: float, peaks: dict[int, float], allowance: float) -> None:
    limit = planned * 1.1 + allowance
    report = (f"{what}: planned {planned:.1f} MiB, limit {limit:.1f} MiB; peak RSS "
              + ", ".join(f"{peaks[m]:.1f} MiB for {m} MiB" for m in sorted(peaks)))
    for mib, peak in peaks.items():
        assert peak <= limit, f"the peak exceeds the plan with {mib} MiB of input: {report}"
    small, large = min(peaks), max(peaks)
    assert peaks[large] <= peaks[small] * 1.10 + GROWTH_ALLOWANCE_MIB, f"the peak grows with the input: {report}"


# --- tessera convert ----------------------------------------------------------------------------------

CONVERSIONS = {
    # name: (source file name, source options, destination name, convert options)
    "zarr3-to-zarr3": ("src.zarr", dict(chunks=(16, 128, 128), shard_chunks=(1, 2, 2), codec="zstd", level=1),
                       "dst.zarr", ["--chunk", "16,128,128", "--shard-chunks", "2,2,2", "--codec", "blosc-lz4"]),
    "hdf5-to-precomputed": ("src.h5", dict(chunks=(16, 128, 128), codec="gzip", level=1),
                            "dst", ["--format", "precomputed", "--chunk", "16,64,64", "--shard-chunks", "2,2,2",
                                    "--codec", "gzip"]),
    "precomputed-to-hdf5": ("src", dict(format="precomputed", chunks=(32, 64, 64)),
                            "dst.h5", ["--chunk", "8,128,128", "--codec", "gzip", "--level", "1"]),
}


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_convert_peak_memory_is_bounded(tessera, tmp_path, name):
    src_name, src_options, dst_name, args = CONVERSIONS[name]
    frames = CameraFrames()
    peaks, plans = {}, {}
    try:
        for mib in SIZES_MIB:
            src, dst = tmp_path / f"{mib}" / src_name, tmp_path / f"{mib}" / dst_name
            src.parent.mkdir()
            frames.stream_into(src, frames_of(mib), **src_options)
            cmd = ["convert", src, dst, *args, "--threads", "2"]
            plans[mib] = plan_numbers(tessera.run_ok(cmd + ["--plan"]).stdout.decode())
            peaks[mib] = peak_rss_mib([tessera.binary, *cmd])
            if mib == SIZES_MIB[0]:  # the copy is exact (spot check of the smaller one)
                import tessera as tsr

                got = tsr.open(dst)
                assert got.shape == (frames_of(mib), *FRAME)
                np.testing.assert_array_equal(got[100:116], frames.block(100, 16))
            shutil.rmtree(src.parent)  # hundreds of MiB: not kept for pytest's last three runs
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
    assert plans[SIZES_MIB[0]] == plans[SIZES_MIB[1]], f"the plan depends on the array's length: {plans}"
    plan = plans[SIZES_MIB[0]]
    assert SIZES_MIB[-1] >= 3 * (plan["peak"] + plan["slabs"]), f"the source must dwarf the plan: {plan}"
    check_bounded(f"convert {name} (stream plan {plan['peak']:.1f} MiB + read slabs {plan['slabs']:.1f} MiB)",
                  plan["peak"] + plan["slabs"], peaks, CLI_ALLOWANCE_MIB)


# --- tessera stream --format precomputed ---------------------------------------------------------------


@pytest.mark.parametrize("sharded", [True, False], ids=["sharded-identity", "unsharded"])
def test_precomputed_stream_peak_memory_is_bounded(tessera, tmp_path, sharded):
    layout = ["--format", "precomputed", "--dtype", "uint16", "--chunk", "32,64,64"]
    if sharded:
        layout += ["--shard-chunks", "2,2,2", "--hash", "identity", "--codec", "gzip"]
    frames = CameraFrames()
    peaks, plans = {}, {}
    try:
        for mib in SIZES_MIB:
            n = frames_of(mib)
            raw = tmp_path / f"frames-{mib}.raw"
            frames.write_raw(raw, n)
            cmd = ["stream", tmp_path / f"vol-{mib}", *layout, "--shape", f"{n},{FRAME[0]},{FRAME[1]}", "--threads", "2"]
            plans[mib] = cli_plan(tessera, cmd)
            peaks[mib] = peak_rss_mib([tessera.binary, *cmd, "--input", raw])
            raw.unlink()
            if mib == SIZES_MIB[0]:
                import tessera as tsr

                np.testing.assert_array_equal(tsr.open(tmp_path / f"vol-{mib}")[40:72], frames.block(40, 32))
            shutil.rmtree(tmp_path / f"vol-{mib}")
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
    assert plans[SIZES_MIB[0]] == plans[SIZES_MIB[1]], f"the plan depends on the volume's depth: {plans}"
    check_bounded(f"precomputed stream ({'sharded' if sharded else 'unsharded'})", plans[SIZES_MIB[0]]["peak"],
                  peaks, CLI_ALLOWANCE_MIB)


# --- tessera stream --format hdf5: the chunk index ------------------------------------------------------

# README ("HDF5 writing"): the index's peak (at Close) per stored chunk, by the dataset's rank.
HDF5_INDEX_BYTES_PER_CHUNK = {3: 150, 5: 170}
HDF5_CHUNK_COUNTS = (100_000, 400_000)


@pytest.mark.parametrize("rank", [3, 5])
def test_hdf5_stream_index_memory_per_stored_chunk(tessera, tmp_path, rank):
    """Many tiny chunks (one per row, every one stored): the epoch buffers are tiny and fixed, so
    what the peak gains from 100,000 to 400,000 chunks is the index, Close included."""
    row = (8, 8) if rank == 3 else (2, 2, 2, 2)
    rng = np.random.default_rng([SEED, rank])
    block = rng.integers(1, 256, size=(50_000, *row), dtype=np.uint8)  # no chunk is all fill value (0)
    peaks = {}
    for n in HDF5_CHUNK_COUNTS:
        raw = tmp_path / f"rows-{n}.raw"
        with open(raw, "wb") as f:
            for _ in range(n // len(block)):
                f.write(block.tobytes())
        out = tmp_path / f"index-{n}.h5"
        shape = ",".join(map(str, (0, *row)))
        chunk = ",".join(map(str, (1, *row)))
        peaks[n] = peak_rss_mib([tessera.binary, "stream", out, "--dtype", "uint8", "--shape", shape,
                                     "--chunk", chunk, "--threads", "2", "--input", raw])
        raw.unlink()
        if n == HDF5_CHUNK_COUNTS[0]:
            import h5py

            with h5py.File(out, "r") as f:
                d = f["data"]
                assert d.shape == (n, *row) and d.chunks == (1, *row)
                assert d.id.get_num_chunks() == n, "every chunk is stored"
                np.testing.assert_array_equal(d[-7:], block[-7:])
        out.unlink()
    small, large = HDF5_CHUNK_COUNTS
    per_chunk = (peaks[large] - peaks[small]) * 2**20 / (large - small)
    assert per_chunk < HDF5_INDEX_BYTES_PER_CHUNK[rank], (
        f"rank {rank}: the HDF5 stream's peak RSS grows by {per_chunk:.0f} bytes per stored chunk "
        f"({peaks[small]:.1f} MiB with {small} chunks, {peaks[large]:.1f} MiB with {large}); the README "
        f"promises under {HDF5_INDEX_BYTES_PER_CHUNK[rank]}")


# --- tessera.create + append in a fresh Python process ---------------------------------------------------

APPEND_SCRIPT = textwrap.dedent(r"""
    import json, re, resource, sys
    import numpy as np
    import tessera

    location, fmt, n_frames, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
    h, w = 512, 512
    # The input: 16 frames, built without big temporaries, so the high-water mark before the stream
    # is what the interpreter, numpy and the input hold.
    rng = np.random.default_rng([%(seed)d, 2])
    ramp = np.add.outer(np.arange(h, dtype=np.uint16), np.arange(w, dtype=np.uint16))
    frames = np.empty((16, h, w), np.uint16)
    for i in range(16):
        np.add(ramp, 7 * i, out=frames[i])
        frames[i] %%= 2048
        frames[i] += 1024 + rng.integers(0, 96, size=(h, w), dtype=np.uint16)
    del ramp

    def status_mib(field):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    resident = status_mib("VmRSS")
    shape = (0, h, w) if fmt != "precomputed" else (n_frames, h, w)
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    s = tessera.create(location, format=fmt, dtype="uint16", shape=shape, threads=2, **options)
    planned = float(re.search(r"planned peak:\s*([0-9.]+)\s*MiB", s.plan).group(1))
    for i in range(n_frames):
        s.append(frames[i %% 16])
    s.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"baseline": baseline, "resident": resident, "peak": peak, "planned": planned,
                      "rows": s.stats.rows_published}))
""") % {"seed": SEED}

APPEND_FORMATS = {
    "zarr3": ("a.zarr", dict(chunks=[16, 128, 128], shard_chunks=[1, 2, 2], codec="blosc-lz4")),
    "hdf5": ("a.h5", dict(chunks=[8, 128, 128], codec="none")),
    "precomputed": ("vol", dict(chunks=[32, 64, 64], shard_chunks=[2, 2, 2])),
}
# The Python process's peak above its baseline may exceed the plan by 10% plus this much.
PYTHON_ALLOWANCE_MIB = 16


@pytest.mark.parametrize("fmt", list(APPEND_FORMATS))
def test_python_append_peak_memory_is_within_the_plan(tmp_path, fmt):
    name, options = APPEND_FORMATS[fmt]
    runs = {}
    for mib in SIZES_MIB:
        out = tmp_path / f"{mib}" / name
        out.parent.mkdir()
        proc = run_launched([sys.executable, "-c", APPEND_SCRIPT, out, fmt, frames_of(mib), json.dumps(options)])
        assert proc.returncode == 0, proc.stderr
        runs[mib] = r = json.loads(proc.stdout)
        assert r["rows"] == frames_of(mib)
        # The baseline is meaningful only if nothing freed before it had pushed the high-water mark up.
        assert r["baseline"] <= r["resident"] + 4, f"the input's construction left a high-water mark: {r}"
        shutil.rmtree(out.parent)
    planned = runs[SIZES_MIB[0]]["planned"]
    assert all(r["planned"] == planned for r in runs.values()), runs
    check_bounded(f"Python append, {fmt} (peak above the interpreter + numpy + input baseline)", planned,
                  {mib: r["peak"] - r["baseline"] for mib, r in runs.items()}, PYTHON_ALLOWANCE_MIB)


# --- tessera convert region by region: flat from 1 to 8 GiB ---------------------------------------------


def test_convert_by_regions_memory_is_flat_from_1_to_8_gib(tessera, tmp_path):
    """A conversion whose destination chunk row spans a wide cross-section (64 rows of 2048 x 2048:
    512 MiB, which a stream would hold twice) is copied region by region, whole 64 MiB shards on two
    workers: its peak RSS stays within the plan, and the same for a 1 GiB and an 8 GiB array."""
    import tessera as tsr

    cross = (2048, 2048)
    row_bytes = cross[0] * cross[1] * 2
    ramp = np.add.outer(np.arange(cross[0], dtype=np.uint16), np.arange(cross[1], dtype=np.uint16))
    args = ["--chunk", "64,128,128", "--shard-chunks", "2,4,4", "--codec", "blosc-lz4", "--threads", "2"]
    peaks, plans = {}, {}
    try:
        for gib in (1, 8):
            rows = (gib << 30) // row_bytes
            src, dst = tmp_path / f"src{gib}.zarr", tmp_path / f"dst{gib}.zarr"
            with tsr.create(src, dtype="uint16", shape=(rows, *cross), chunks=(128, 512, 512), codec="none",
                            threads=2) as w:
                for first in range(0, rows, 16):
                    t = np.arange(first, first + 16, dtype=np.uint16)[:, None, None]
                    w.append(ramp + 3 * t)
            cmd = ["convert", src, dst, *args]
            plan_text = tessera.run_ok(cmd + ["--plan"]).stdout.decode()
            assert "copy by regions:" in plan_text, plan_text
            plans[gib] = plan_numbers(plan_text)
            peaks[gib] = peak_rss_mib([tessera.binary, *cmd])
            got = tsr.open(dst)
            assert got.shape == (rows, *cross) and got.shards == (128, 512, 512), (got.shape, got.shards)
            last = rows - 1
            np.testing.assert_array_equal(got[last], ramp + np.uint16((3 * (last % 16 + last // 16 * 16)) % 65536))
            shutil.rmtree(src)
            shutil.rmtree(dst)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
    assert plans[1] == plans[8], f"the plan depends on the array's length: {plans}"
    check_bounded("convert by regions", plans[1]["peak"], {m << 10: p for m, p in peaks.items()}, CLI_ALLOWANCE_MIB)
