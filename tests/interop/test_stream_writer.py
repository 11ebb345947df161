"""`tessera stream` (the streaming writer) against the real libraries.

Checks, each against zarr-python 3 and/or tensorstore:
  * random geometries (rank 2-5, ragged edges, bounded and unbounded dimension 0, every codec,
    sharded or not, index at start or end, fill values), fed through a pipe in random pieces
    (1-byte writes up to huge ones), read back exactly by zarr-python and tensorstore;
  * determinism: the same input twice, and --threads 1 vs 2 vs 4, give byte-identical stores;
  * crash safety: SIGKILL at random moments of an unbounded stream leaves a store whose zarr.json
    parses and whose published extent holds exactly the input;
  * bounded memory: peak RSS stays within the --plan estimate and does not grow with the stream;
  * byte-count errors on a bounded stream: exit 1, the counts on stderr, no zarr.json left.

All data and all random choices are seeded, so every run does the same thing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

from interop_support import ZARR_DTYPES, assert_identical, join_ints, peak_rss_mib, plan_numbers, random_data, smooth_data

SEED = 0x5EA3_2024
STREAM_DTYPES = ["uint8", "int16", "uint16", "float32", "float64", "int64"]
CODECS = ["none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"]


# ---------------------------------------------------------------------------------------------
# Helpers: the command line, feeding a pipe in odd pieces, reading back.


@dataclass
class StreamCase:
    """One `tessera stream` invocation and the array it should produce."""

    dtype: str
    data: np.ndarray                     # the full array fed (C order)
    chunk: list[int]
    shard_chunks: list[int] | None = None
    codec: str | None = None
    level: int | None = None
    index_location: str | None = None
    fill_value: Any = None               # CLI text for --fill-value (None: default)
    expected_fill: Any = 0               # the fill value readers must report
    unbounded: bool = False
    threads: int | None = None
    extra: list[str] = field(default_factory=list)

    def args(self, binary: Path, out: Path) -> list[str]:
        shape = list(self.data.shape)
        if self.unbounded:
            shape[0] = 0
        args = [str(binary), "stream", str(out), "--format", "zarr3", "--dtype", self.dtype,
                "--shape", join_ints(shape), "--chunk", join_ints(self.chunk)]
        if self.shard_chunks is not None:
            args += ["--shard-chunks", join_ints(self.shard_chunks)]
        if self.codec is not None:
            args += ["--codec", self.codec]
        if self.level is not None:
            args += ["--level", str(self.level)]
        if self.index_location is not None:
            args += ["--index-location", self.index_location]
        if self.fill_value is not None:
            args.append(f"--fill-value={self.fill_value}")  # one token: values may start with "-"
        if self.threads is not None:
            args += ["--threads", str(self.threads)]
        return args + list(self.extra)

    def raw(self) -> bytes:
        return np.ascontiguousarray(self.data, dtype=ZARR_DTYPES[self.dtype]).tobytes()


def piece_sizes(rng: np.random.Generator, total: int) -> list[int]:
    """Random write sizes summing to TOTAL: many 1-byte writes, small ones, log-uniform medium
    ones, and now and then a big one of half to all of what is left."""
    sizes, pos = [], 0
    while pos < total:
        left = total - pos
        r = rng.random()
        if r < 0.25:
            n = 1
        elif r < 0.5:
            n = int(rng.integers(2, 65))
        elif r < 0.9:
            n = int(np.exp(rng.uniform(np.log(65), np.log(max(66, left // 4)))))
        else:
            n = int(rng.integers(left // 2, left + 1))
        n = max(1, min(n, left))
        sizes.append(n)
        pos += n
    return sizes


def write_all(fd: int, view: memoryview) -> None:
    while len(view):
        n = os.write(fd, view)
        view = view[n:]


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    fed: int            # bytes the test managed to write before the pipe closed
    broken_pipe: bool


def stream_through_pipe(args: Sequence[str], raw: bytes, rng: np.random.Generator, workdir: Path,
                        sleep_prob: float = 0.03, timeout: float = 120) -> Finished:
    """Runs ARGS with RAW written into its stdin in random pieces (and a few short pauses, so the
    reader sees short reads), then closes stdin and waits. stdout/stderr go to files, so the
    child can never block on them while the test is blocked writing."""
    out_path, err_path = workdir / "stream.stdout", workdir / "stream.stderr"
    with open(out_path, "wb") as out_f, open(err_path, "wb") as err_f:
        proc = subprocess.Popen(list(args), stdin=subprocess.PIPE, stdout=out_f, stderr=err_f, bufsize=0)
    view = memoryview(raw)
    fed, broken = 0, False
    try:
        fd = proc.stdin.fileno()
        for n in piece_sizes(rng, len(raw)):
            write_all(fd, view[fed:fed + n])
            fed += n
            if rng.random() < sleep_prob:
                time.sleep(0.001)
    except BrokenPipeError:
        broken = True
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            broken = True
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{' '.join(args)} did not finish within {timeout} s")
    return Finished(rc, out_path.read_text(errors="replace"), err_path.read_text(errors="replace"), fed, broken)


def run_ok_through_pipe(case: StreamCase, binary: Path, out: Path, rng: np.random.Generator,
                        workdir: Path) -> None:
    args = case.args(binary, out)
    res = stream_through_pipe(args, case.raw(), rng, workdir)
    assert res.returncode == 0 and not res.broken_pipe, (
        f"{' '.join(args)} (fed {res.fed} of {case.data.nbytes} bytes through a pipe) exited "
        f"{res.returncode}\nstderr: {res.stderr}")


def zarr_read(store: Path):
    import zarr

    arr = zarr.open_array(str(store), mode="r")
    return arr, arr[...]


def tensorstore_read(store: Path):
    import tensorstore as ts

    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)}},
                open=True, read=True).result()
    return t, t.read().result()


def store_files(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def case_text(case: StreamCase) -> str:
    return (f"dtype={case.dtype} shape={case.data.shape} unbounded={case.unbounded} chunk={case.chunk} "
            f"shards={case.shard_chunks} codec={case.codec} level={case.level} "
            f"index={case.index_location} fill={case.fill_value!r}")


# ---------------------------------------------------------------------------------------------
# 1. Random geometries through a pipe, read back by zarr-python and tensorstore.

N_RANDOM_CASES = 30
MAX_ELEMENTS = 120_000


def random_fill(rng: np.random.Generator, dtype: str) -> tuple[Any, Any]:
    """(CLI text or None, the value readers must report)."""
    dt = ZARR_DTYPES[dtype]
    r = rng.random()
    if r < 0.25:
        return None, 0
    if dt.kind == "f":
        text = ["NaN", "Infinity", "-Infinity", "1.5", "-0.0", "-1e10", "0.25"][int(rng.integers(0, 7))]
        value = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.get(text)
        return text, float(text) if value is None else value
    info = np.iinfo(dt)
    choice = rng.random()
    if choice < 0.3:
        v = int(info.max)
    elif choice < 0.45:
        v = int(info.min)
    else:
        v = int(rng.integers(max(info.min, -1000), min(info.max, 1000), endpoint=True))
    return str(v), v


def random_case(idx: int) -> tuple[StreamCase, np.random.Generator]:
    rng = np.random.default_rng([SEED, idx])
    rank = 2 + idx % 4  # ranks 2..5 evenly
    dtype = STREAM_DTYPES[int(rng.integers(0, len(STREAM_DTYPES)))]
    # Inner dimensions: small enough that a handful of rows stays under MAX_ELEMENTS.
    inner_cap = {2: 150, 3: 30, 4: 12, 5: 7}[rank]
    inner = [int(rng.integers(1, inner_cap + 1)) for _ in range(rank - 1)]
    row = int(np.prod(inner))
    unbounded = bool(rng.random() < 0.5)
    max_rows = max(1, min(150, MAX_ELEMENTS // row))
    rows = int(rng.integers(1, max_rows + 1))
    shape = [rows, *inner]
    # Chunks: mostly not dividing the shape; sometimes 1, sometimes larger than the dimension.
    chunk = []
    for n in shape:
        r = rng.random()
        if r < 0.1:
            c = 1
        elif r < 0.2:
            c = n + int(rng.integers(1, 4))
        else:
            c = int(rng.integers(1, max(2, n) + 1))
        chunk.append(max(1, c))
    if all(n % c == 0 for n, c in zip(shape, chunk)):  # force at least one ragged edge
        d = int(rng.integers(0, rank))
        chunk[d] = shape[d] + 1 if shape[d] == 1 else (shape[d] // 2 + 1 if shape[d] > 2 else shape[d] + 1)
    shard_chunks = None
    if rng.random() < 0.65:
        shard_chunks = [int(rng.integers(1, 4)) for _ in range(rank)]
    codec = None if rng.random() < 0.1 else CODECS[int(rng.integers(0, len(CODECS)))]
    level = int(rng.integers(1, 10)) if codec not in (None, "none") and rng.random() < 0.4 else None
    index_location = None
    if shard_chunks is not None and rng.random() < 0.8:
        index_location = ["start", "end"][int(rng.integers(0, 2))]
    fill_text, fill = random_fill(rng, dtype)
    data = smooth_data(dtype, shape) if rng.random() < 0.3 else random_data(rng, dtype, shape)
    case = StreamCase(dtype=dtype, data=data, chunk=chunk, shard_chunks=shard_chunks, codec=codec,
                      level=level, index_location=index_location, fill_value=fill_text,
                      expected_fill=fill, unbounded=unbounded)
    return case, rng


@pytest.mark.parametrize("idx", range(N_RANDOM_CASES))
def test_random_geometry_through_pipe(tessera, tmp_path, idx):
    case, rng = random_case(idx)
    store = tmp_path / "out.zarr"
    run_ok_through_pipe(case, tessera.binary, store, rng, tmp_path)
    what = case_text(case)

    meta = json.loads((store / "zarr.json").read_text())
    assert meta["shape"] == list(case.data.shape), f"zarr.json shape {meta['shape']} ({what})"
    assert meta["data_type"] == case.dtype, what

    want_fill = np.asarray(case.expected_fill, dtype=ZARR_DTYPES[case.dtype].newbyteorder("="))
    z, got = zarr_read(store)
    assert_identical(got, case.data, f"zarr-python read, {what}")
    assert_identical(np.asarray(z.fill_value), want_fill, f"zarr-python fill_value, {what}")

    t, got = tensorstore_read(store)
    assert tuple(t.shape) == case.data.shape, f"tensorstore shape {t.shape} ({what})"
    assert_identical(got, case.data, f"tensorstore read, {what}")
    if t.fill_value is not None:
        assert_identical(np.asarray(t.fill_value), want_fill, f"tensorstore fill_value, {what}")


def test_random_geometries_cover_the_space():
    """The seeded cases really cover what they claim (guards against a generator regression)."""
    cases = [random_case(i)[0] for i in range(N_RANDOM_CASES)]
    assert {c.data.ndim for c in cases} == {2, 3, 4, 5}
    assert {c.dtype for c in cases} == set(STREAM_DTYPES)
    assert {c.codec for c in cases} >= set(CODECS)
    assert any(c.unbounded for c in cases) and any(not c.unbounded for c in cases)
    assert any(c.shard_chunks for c in cases) and any(c.shard_chunks is None for c in cases)
    assert {c.index_location for c in cases} >= {"start", "end"}
    assert any(c.fill_value is not None for c in cases)
    assert all(any(n % k for n, k in zip(c.data.shape, c.chunk)) for c in cases)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fill_text, fill", [("NaN", float("nan")), ("Infinity", float("inf")),
                                             ("-Infinity", float("-inf")), ("-0.0", -0.0), ("-2.5e-3", -2.5e-3)],
                         ids=["nan", "inf", "-inf", "-0", "neg-small"])
def test_float_fill_values(tessera, tmp_path, dtype, fill_text, fill):
    """Special float fill values reach zarr.json in a form both readers understand, bit for bit."""
    rng = np.random.default_rng([SEED, 9, len(fill_text), ZARR_DTYPES[dtype].itemsize])
    data = random_data(rng, dtype, (13, 6, 5))
    case = StreamCase(dtype=dtype, data=data, chunk=[4, 4, 3], shard_chunks=[2, 1, 2], codec="zstd",
                      fill_value=fill_text, expected_fill=fill, unbounded=True)
    store = tmp_path / "fill.zarr"
    run_ok_through_pipe(case, tessera.binary, store, rng, tmp_path)
    want_fill = np.asarray(fill, dtype=ZARR_DTYPES[dtype].newbyteorder("="))
    z, got = zarr_read(store)
    assert_identical(got, data, f"zarr-python, fill {fill_text}")
    assert_identical(np.asarray(z.fill_value), want_fill, f"zarr-python fill_value for --fill-value={fill_text}")
    t, got = tensorstore_read(store)
    assert_identical(got, data, f"tensorstore, fill {fill_text}")
    assert t.fill_value is not None
    assert_identical(np.asarray(t.fill_value), want_fill, f"tensorstore fill_value for --fill-value={fill_text}")


@pytest.mark.parametrize("dtype", ["uint16", "float32"])
def test_unbounded_empty_stream(tessera, tmp_path, dtype):
    """An unbounded stream with no input at all is a valid array with 0 rows."""
    case = StreamCase(dtype=dtype, data=np.zeros((0, 5, 7), dtype=ZARR_DTYPES[dtype]), chunk=[2, 3, 3],
                      shard_chunks=[2, 2, 2], codec="zstd", unbounded=True)
    store = tmp_path / "empty.zarr"
    run_ok_through_pipe(case, tessera.binary, store, np.random.default_rng(1), tmp_path)
    _, got = zarr_read(store)
    assert_identical(got, case.data, "zarr-python")
    _, got = tensorstore_read(store)
    assert_identical(got, case.data, "tensorstore")


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_synthetic_input_with_rows_larger_than_a_read(tessera, tmp_path, codec):
    """--synthetic fills any span of elements, so rows larger than the writer's input staging
    (2 MiB) stream whole; the values depend only on the element index, so two chunkings store the
    same array."""
    shape = (5, 1100, 1300)  # 2.7 MiB rows of uint16
    arrays = []
    for i, (chunk, shard) in enumerate([("2,256,512", "1,2,2"), ("3,1100,128", "2,1,4")]):
        store = tmp_path / f"syn{i}.zarr"
        tessera.run_ok(["stream", store, "--format", "zarr3", "--dtype", "uint16", "--shape", ",".join(map(str, shape)),
                        "--chunk", chunk, "--shard-chunks", shard, "--codec", codec, "--synthetic", "camera"])
        _, got = zarr_read(store)
        assert got.shape == shape
        arrays.append(got)
    assert np.array_equal(arrays[0], arrays[1])
    assert arrays[0].std() > 0  # a camera-like image, not a constant


# ---------------------------------------------------------------------------------------------
# 2. Determinism: identical bytes whatever the feeding and the thread count.


DETERMINISM_CASES = {
    "sharded-zstd-index-start": dict(dtype="float32", shape=(70, 45, 33), chunk=[4, 8, 10],
                                     shard_chunks=[2, 3, 2], codec="zstd", index_location="start"),
    "sharded-blosc-unbounded": dict(dtype="uint16", shape=(131, 40, 52), chunk=[5, 16, 16],
                                    shard_chunks=[3, 2, 2], codec="blosc-zstd", unbounded=True),
    "unsharded-gzip-rank4": dict(dtype="int16", shape=(37, 9, 11, 13), chunk=[3, 4, 5, 6], codec="gzip",
                                 fill_value="7"),
}


@pytest.mark.parametrize("name", list(DETERMINISM_CASES))
def test_deterministic_output(tessera, tmp_path, name):
    spec = dict(DETERMINISM_CASES[name])
    dtype, shape = spec.pop("dtype"), spec.pop("shape")
    rng = np.random.default_rng([SEED, 7, len(name)])
    # Half smooth, half noise, so chunks compress to many different sizes.
    data = smooth_data(dtype, shape)
    noise = random_data(rng, dtype, shape)
    data.reshape(-1)[::2] = noise.reshape(-1)[::2]
    runs = [("pipe-A", 2), ("pipe-B", 2), ("threads-1", 1), ("threads-2", 2), ("threads-4", 4)]
    stores = {}
    for label, threads in runs:
        case = StreamCase(dtype=dtype, data=data, threads=threads, **spec)
        store = tmp_path / f"{label}.zarr"
        # Each run gets its own piece sizes: the split of the input must not matter either.
        run_ok_through_pipe(case, tessera.binary, store, np.random.default_rng([SEED, 8, len(stores)]),
                            tmp_path)
        stores[label] = store_files(store)
    ref_label = runs[0][0]
    ref = stores[ref_label]
    assert "zarr.json" in ref and len(ref) > 2
    for label, files in stores.items():
        assert sorted(files) == sorted(ref), (
            f"{label} vs {ref_label}: file sets differ: only in {label}: {sorted(set(files) - set(ref))}, "
            f"only in {ref_label}: {sorted(set(ref) - set(files))}")
        differing = [k for k in ref if files[k] != ref[k]]
        assert not differing, f"{label} vs {ref_label}: files differ: {differing[:10]}"
    _, got = zarr_read(tmp_path / f"{ref_label}.zarr")
    assert_identical(got, data, "zarr-python read of the deterministic store")


# ---------------------------------------------------------------------------------------------
# 3. Crash safety: SIGKILL mid-stream.


CRASH_TRIALS = 12
CRASH_FRAME = (96, 128)            # uint16 frames: 24 KiB a row
CRASH_ROWS = 1024                  # 24 MiB: several of the CLI's 8 MiB read blocks


@pytest.fixture(scope="module")
def crash_data() -> np.ndarray:
    rng = np.random.default_rng([SEED, 3])
    base = smooth_data("uint16", (CRASH_ROWS, *CRASH_FRAME))
    noise = rng.integers(0, 64, size=base.shape, dtype=np.uint16)
    return base + noise


# trial -> (exit code, rows published): what each trial of this module's run saw.
CRASH_OUTCOMES: dict[int, tuple[int, int]] = {}


@pytest.mark.parametrize("trial", range(CRASH_TRIALS))
def test_sigkill_leaves_a_readable_prefix(tessera, tmp_path, crash_data, trial):
    import zarr

    rng = np.random.default_rng([SEED, 4, trial])
    shard_chunks = [[2, 2, 3], [1, 1, 1], [3, 2, 2]][trial % 3]
    index_location = ["end", "start"][trial % 2]
    codec = ["zstd", "none", "blosc-lz4", "gzip"][trial % 4]
    case = StreamCase(dtype="uint16", data=crash_data, chunk=[4, 32, 32], shard_chunks=shard_chunks,
                      codec=codec, index_location=index_location, unbounded=True, threads=2)
    store = tmp_path / "crash.zarr"
    args = case.args(tessera.binary, store)
    raw = memoryview(case.raw())
    total = len(raw)
    # Kill after a random number of bytes has gone in (sometimes after the end of the input, to
    # land in the final flush), plus a random pause so the kill falls anywhere in the pipeline.
    kill_after = int(rng.integers(0, int(total * 1.15)))
    pause = float(rng.uniform(0, 0.04))

    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as err_f:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err_f,
                                bufsize=0)
    killed_at_fed = None
    fed = 0
    try:
        # zarr.json is written at start, before any input is read.
        deadline = time.monotonic() + 30
        while not (store / "zarr.json").exists():
            assert proc.poll() is None, f"{' '.join(args)} exited {proc.returncode} before writing zarr.json"
            assert time.monotonic() < deadline, "zarr.json did not appear within 30 s"
            time.sleep(0.002)
        fd = proc.stdin.fileno()
        while fed < min(kill_after, total):
            r = rng.random()  # pieces of at most 256 KiB, so the kill lands close to KILL_AFTER
            n = int(rng.integers(1, 65) if r < 0.2 else rng.integers(65, 8193) if r < 0.5
                    else rng.integers(8193, 256 << 10))
            n = min(n, total - fed)
            write_all(fd, raw[fed:fed + n])
            fed += n
            if rng.random() < 0.3:
                time.sleep(float(rng.uniform(0, 0.003)))
        if fed >= total:
            proc.stdin.close()
        time.sleep(pause)
        killed_at_fed = fed
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        rc = proc.wait(timeout=60)
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    what = (f"trial {trial}: {' '.join(args)}; killed after feeding {killed_at_fed} of {total} bytes "
            f"(+{pause * 1000:.1f} ms), exit {rc}; stderr: {err_path.read_text(errors='replace')!r}")
    assert rc in (-signal.SIGKILL, 0), what

    text = (store / "zarr.json").read_text()
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as e:
        raise AssertionError(f"zarr.json does not parse ({e}): {text[:200]!r}; {what}")
    arr = zarr.open_array(str(store), mode="r")
    published = arr.shape[0]
    assert list(arr.shape[1:]) == list(CRASH_FRAME), f"published shape {arr.shape}; {what}"
    assert meta["shape"][0] == published
    row_bytes = int(np.prod(CRASH_FRAME)) * 2
    assert published * row_bytes <= fed, f"published {published} rows but only {fed // row_bytes} were fed; {what}"
    if rc == 0:
        assert published == CRASH_ROWS, f"finished cleanly but published {published} rows; {what}"
    got = arr[...]
    assert_identical(got, crash_data[:published], f"published rows 0..{published}; {what}")
    leftovers = sorted(str(p.relative_to(store)) for p in store.rglob("*") if ".tmp." in p.name)
    print(f"trial {trial}: fed {fed}/{total} bytes, published {published}/{CRASH_ROWS} rows, "
          f"exit {rc}, temp files left: {len(leftovers)}")
    CRASH_OUTCOMES[trial] = (rc, published)


def test_some_sigkill_trial_landed_mid_output():
    """The trials above prove something only if a kill landed while output was being written: some
    trial must have been killed with rows published and rows still to come."""
    assert sorted(CRASH_OUTCOMES) == list(range(CRASH_TRIALS)), (
        f"run with every trial of test_sigkill_leaves_a_readable_prefix; outcomes: {CRASH_OUTCOMES}")
    mid = [t for t, (rc, published) in CRASH_OUTCOMES.items() if rc == -signal.SIGKILL and 0 < published < CRASH_ROWS]
    assert mid, f"no trial was killed mid-output (trial: (exit code, rows published)): {CRASH_OUTCOMES}"


# ---------------------------------------------------------------------------------------------
# 4. Bounded memory.


FRAME = (512, 512)
MEM_ARGS = ["--dtype", "uint16", "--chunk", "16,128,128", "--shard-chunks", "1,2,2", "--codec", "zstd",
            "--threads", "2"]

def write_frames(path: Path, n_frames: int) -> None:
    """Camera-like 12-bit frames: a moving gradient plus noise, written a few frames at a time."""
    rng = np.random.default_rng([SEED, 5])
    y, x = np.mgrid[0:FRAME[0], 0:FRAME[1]]
    noise = rng.integers(0, 96, size=(8, *FRAME), dtype=np.uint16)
    with open(path, "wb") as f:
        for start in range(0, n_frames, 8):
            k = min(8, n_frames - start)
            t = np.arange(start, start + k)[:, None, None]
            frames = ((x + y + 7 * t) % 2048 + 1024).astype(np.uint16) + noise[:k]
            f.write(frames.astype("<u2").tobytes())


RESUME_TRIALS = 6


@pytest.mark.parametrize("trial", range(RESUME_TRIALS))
def test_sigkill_during_a_resumed_stream_keeps_the_earlier_rows(tessera, tmp_path, crash_data, trial):
    """`stream --append` restarts at the last shard-row boundary and rewrites the stored shards of
    that row with the same bytes before going on: a SIGKILL at any moment of it keeps every row the
    first stream published, and whatever else is published is the new input, exactly."""
    import zarr

    rng = np.random.default_rng([SEED, 5, trial])
    shard_chunks = [[2, 2, 3], [3, 1, 2], [1, 2, 2]][trial % 3]
    case = StreamCase(dtype="uint16", data=crash_data, chunk=[4, 32, 32], shard_chunks=shard_chunks,
                      codec=["zstd", "none"][trial % 2], unbounded=True, threads=2)
    store = tmp_path / "resume.zarr"
    row_bytes = int(np.prod(CRASH_FRAME)) * 2
    # The first stream ends inside a shard row (odd row count), so the resume re-feeds stored rows.
    first = int(rng.integers(1, CRASH_ROWS // 2)) | 1
    done = subprocess.run(case.args(tessera.binary, store), input=crash_data[:first].tobytes(), capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    rest = memoryview(crash_data[first:].tobytes())
    # Trial 0 kills before any new row goes in: while the stored rows are being re-fed.
    kill_after = 0 if trial == 0 else int(rng.integers(0, int(len(rest) * 1.1)))
    args = case.args(tessera.binary, store) + ["--append"]
    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as err_f:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err_f, bufsize=0)
    fed = 0
    try:
        fd = proc.stdin.fileno()
        while fed < min(kill_after, len(rest)):
            n = min(int(rng.integers(1, 256 << 10)), len(rest) - fed)
            write_all(fd, rest[fed:fed + n])
            fed += n
        if fed >= len(rest):
            proc.stdin.close()
        time.sleep(float(rng.uniform(0, 0.02)))
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        rc = proc.wait(timeout=60)
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    what = (f"trial {trial}: first stream {first} rows, then {' '.join(args)} killed after {fed} of {len(rest)} "
            f"bytes, exit {rc}; stderr: {err_path.read_text(errors='replace')!r}")
    assert rc in (-signal.SIGKILL, 0), what
    arr = zarr.open_array(str(store), mode="r")
    published = arr.shape[0]
    assert published >= first, f"the resumed stream lost rows: {published} published; {what}"
    assert (published - first) * row_bytes <= fed, f"published {published} rows; {what}"
    assert_identical(arr[...], crash_data[:published], f"rows 0..{published} after the kill; {what}")
    leftovers = [str(p) for p in store.rglob("*") if ".tmp." in p.name]
    print(f"resume trial {trial}: {first} rows, then fed {fed}/{len(rest)} bytes: {published} rows published, "
          f"exit {rc}, temp files left: {len(leftovers)}")


def test_peak_memory_is_bounded(tessera, tmp_path):
    frame_bytes = FRAME[0] * FRAME[1] * 2
    plan = subprocess.run([str(tessera.binary), "stream", str(tmp_path / "plan.zarr"), "--shape",
                           f"0,{FRAME[0]},{FRAME[1]}", *MEM_ARGS, "--plan"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert plan.returncode == 0, plan.stderr.decode(errors="replace")
    planned_mib = plan_numbers(plan.stdout.decode())["peak"]
    assert not (tmp_path / "plan.zarr" / "zarr.json").exists(), "--plan must not write anything"

    baseline = peak_rss_mib(["true"])
    peaks = {}
    for mib in (64, 256):
        n_frames = (mib << 20) // frame_bytes
        raw = tmp_path / f"frames-{mib}.raw"
        write_frames(raw, n_frames)
        store = tmp_path / f"mem-{mib}.zarr"
        cmd = [tessera.binary, "stream", store, "--shape", f"{n_frames},{FRAME[0]},{FRAME[1]}", *MEM_ARGS,
               "--input", raw]
        peaks[mib] = peak_rss_mib(cmd)
        raw.unlink()
        meta = json.loads((store / "zarr.json").read_text())
        assert meta["shape"] == [n_frames, *FRAME]
        if mib == 64:  # spot-check the content of the smaller one
            import zarr

            arr = zarr.open_array(str(store), mode="r")
            check = tmp_path / "check.raw"
            write_frames(check, 24)
            want = np.fromfile(check, dtype="<u2").reshape(24, *FRAME)
            assert_identical(arr[:24], want, "first frames of the 64 MiB stream")
        shutil.rmtree(store)
    limit = planned_mib * 1.1 + 64
    report = (f"planned peak {planned_mib:.1f} MiB, limit {limit:.1f} MiB; peak RSS 64 MiB stream "
              f"{peaks[64]:.1f} MiB, 256 MiB stream {peaks[256]:.1f} MiB (measuring interpreter alone "
              f"{baseline:.1f} MiB)")
    print(report)
    for mib, peak in peaks.items():
        assert peak <= limit, f"{mib} MiB stream: {report}"
    assert peaks[256] <= peaks[64] * 1.10 + 16, f"peak RSS grows with the stream length: {report}"


# ---------------------------------------------------------------------------------------------
# 5. Byte-count errors on a bounded stream.


@dataclass(frozen=True)
class CountCase:
    dtype: str
    shape: tuple
    chunk: tuple
    shard_chunks: tuple | None
    n_bytes: int
    codec: str | None = None


SHORT_CASES = {
    # int16 4x6 = 48 bytes, rows of 12.
    "empty": CountCase("int16", (4, 6), (2, 3), None, 0),
    "whole-rows-short": CountCase("int16", (4, 6), (2, 3), None, 36),
    "partial-row-short": CountCase("int16", (4, 6), (2, 3), None, 40),
    "one-byte-short": CountCase("int16", (4, 6), (2, 3), (1, 2), 47),
    # 10,000,000 bytes: more than one of the CLI's 8 MiB read blocks, so shards were already
    # written when the input ends; zarr.json must still go.
    "multi-block-short": CountCase("uint16", (500, 100, 100), (8, 32, 32), (2, 2, 2), 9_000_000),
    "multi-block-partial-row": CountCase("uint16", (500, 100, 100), (8, 32, 32), (2, 2, 2), 9_000_001),
}
LONG_CASES = {
    "one-byte-over": CountCase("int16", (4, 6), (2, 3), None, 49),
    "one-row-over": CountCase("int16", (4, 6), (2, 3), (1, 2), 60),
    "double": CountCase("int16", (4, 6), (2, 3), None, 96),
    "multi-block-over": CountCase("uint16", (500, 100, 100), (8, 32, 32), (2, 2, 2), 10_000_001),
    "multi-block-rows-over": CountCase("uint16", (500, 100, 100), (8, 32, 32), (2, 2, 2), 10_400_000),
    # Big epochs and a slow codec: the writer is still compressing (and then publishing) the
    # first read block when the CLI sees the excess bytes in the second one.
    "multi-block-over-slow-codec": CountCase("uint16", (500, 100, 100), (50, 100, 100), None, 10_000_001,
                                             "gzip"),
}


def count_case_input(c: CountCase) -> bytes:
    rng = np.random.default_rng([SEED, 6, c.n_bytes])
    return rng.integers(0, 256, size=c.n_bytes, dtype=np.uint8).tobytes()


def run_count_case(tessera, tmp_path, c: CountCase) -> tuple[Finished, int, Path, list[str]]:
    itemsize = ZARR_DTYPES[c.dtype].itemsize
    needed = int(np.prod(c.shape)) * itemsize
    raw = count_case_input(c)
    rng = np.random.default_rng([SEED, 7, c.n_bytes])  # the pipe's pauses
    store = tmp_path / "out.zarr"
    args = [str(tessera.binary), "stream", str(store), "--format", "zarr3", "--dtype", c.dtype,
            "--shape", join_ints(c.shape), "--chunk", join_ints(c.chunk)]
    if c.shard_chunks:
        args += ["--shard-chunks", join_ints(c.shard_chunks)]
    if c.codec:
        args += ["--codec", c.codec]
    res = stream_through_pipe(args, raw, rng, tmp_path, sleep_prob=0.0)
    return res, needed, store, args


def check_clean_failure(res: Finished, store: Path, args: list[str], c: CountCase) -> None:
    """A clear error, no crash, and of the array exactly what the stream published (what a crash at
    that moment would leave): zarr-python reads its rows as the first rows of the input."""
    import zarr

    what = f"{' '.join(args)} (fed {res.fed} bytes)"
    assert res.returncode == 1, f"{what}: exit {res.returncode}, expected 1; stderr: {res.stderr!r}"
    assert "tessera: error:" in res.stderr, f"{what}: stderr lacks 'tessera: error:': {res.stderr!r}"
    for marker in ("terminate called", "Segmentation fault", "Aborted", "AddressSanitizer"):
        assert marker not in res.stderr, f"{what}: crash on stderr: {res.stderr!r}"
    kept = zarr.open_array(str(store), mode="r")
    rows = kept.shape[0]
    assert 0 <= rows <= c.shape[0], f"{what}: {rows} rows published"
    dtype = ZARR_DTYPES[c.dtype]
    row_bytes = int(np.prod(c.shape[1:])) * dtype.itemsize
    expected = np.frombuffer(count_case_input(c)[:rows * row_bytes], dtype=dtype)
    np.testing.assert_array_equal(kept[...].reshape(-1), expected, err_msg=what)


@pytest.mark.parametrize("name", list(SHORT_CASES))
def test_bounded_stream_too_few_bytes(tessera, tmp_path, name):
    c = SHORT_CASES[name]
    res, needed, store, args = run_count_case(tessera, tmp_path, c)
    check_clean_failure(res, store, args, c)
    assert not res.broken_pipe
    for count in (c.n_bytes, needed):
        assert re.search(rf"\b{count}\b", res.stderr), (
            f"{' '.join(args)} with {c.n_bytes} of {needed} bytes: message does not name {count}: "
            f"{res.stderr!r}")


@pytest.mark.parametrize("name", list(LONG_CASES))
def test_bounded_stream_too_many_bytes(tessera, tmp_path, name):
    c = LONG_CASES[name]
    res, needed, store, args = run_count_case(tessera, tmp_path, c)
    check_clean_failure(res, store, args, c)
    assert re.search(rf"\b{needed}\b", res.stderr), (
        f"{' '.join(args)} with {c.n_bytes} of {needed} bytes: message does not name {needed}: {res.stderr!r}")
