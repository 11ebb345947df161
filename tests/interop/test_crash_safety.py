"""Crash safety of `tessera stream` for Neuroglancer precomputed and HDF5 output: SIGKILL at random
moments of a long stream fed through a pipe (test_stream_writer.py does the same for Zarr v3).

Each trial feeds 22.5 MB of uint16 through stdin in odd pieces and kills the process with SIGKILL
after a random number of bytes, or after the whole input and the end of stdin (to land in the final
flush, the shard merge, the HDF5 index write or the rename), after a random pause; some trials kill
as soon as the output reaches a given state (the new HDF5 file renamed into place, N chunk or shard
files present: for murmurhash shards, the middle of the final merge). The source data
is nonzero everywhere, so a voxel reading 0 (the fill value) was never written. Then:

HDF5 (the file is written under a temporary name beside the target and renamed into place at the end):
  * the target path holds the previous file byte for byte (or nothing, when there was none) unless
    the stream got to its rename, and then it is the complete file: h5py reads exactly the input;
    after exit 0 it is always the new file;
  * nothing else is in the directory but the file store's temporary files for it (.TARGET.tmp.PID.N),
    at most one, and none after exit 0.
Neuroglancer precomputed (`info` is written first, then chunk files, or shard files, as rows of
chunks complete; murmurhash-sharded volumes stage `.part-N` files and merge them at the end):
  * `info` parses and is byte for byte what a finished stream writes;
  * every file at a final name is complete: a raw chunk file holds exactly its region of the input;
    a shard file decodes whole (its shard index, every minishard index, every chunk) and holds
    exactly the chunks that belong to that shard, each equal to its region of the input;
  * tessera's reader and tensorstore read the input in the regions whose file is present, and the
    fill value 0 everywhere else;
  * temporary files (.NAME.tmp.PID.N) and staged parts are never at a final name; after exit 0 there
    are none, and every chunk or shard file is there.

Every random choice is seeded by the trial number, so a failure reproduces; the failure message names
the trial, the command, the bytes fed, the exit code and stderr.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from interop_support import assert_identical, join_ints, smooth_data

SEED = 0xC2A5_4001
DTYPE = "uint16"
SHAPE = (90, 250, 500)        # z, y, x: 22.5 MB, rows of 250 KB; edge chunks in every dimension
CHUNK = (16, 64, 64)          # a chunk grid of 6 x 4 x 8 (z, y, x)
THREADS = 2


@pytest.fixture(scope="module")
def source() -> np.ndarray:
    rng = np.random.default_rng([SEED, 0])
    noise = rng.integers(0, 64, size=SHAPE, dtype=np.uint16)
    return smooth_data(DTYPE, SHAPE) + noise + 1  # >= 1: a 0 read back was never written


@pytest.fixture(scope="module")
def source_raw(source) -> bytes:
    return source.astype("<u2").tobytes()


# ---------------------------------------------------------------------------------------------
# Feeding a pipe and killing the writer.


def require(condition: bool, message: str) -> None:
    """An assertion whose failure shows MESSAGE only (pytest's rewriting would print whole files)."""
    if not condition:
        raise AssertionError(message)


@dataclass
class Killed:
    trial: int
    args: list[str]
    total: int
    fed: int = 0
    closed_stdin: bool = False
    pause: float = 0.0
    rc: int | None = None
    stderr: str = ""
    seconds: float = 0.0

    def what(self) -> str:
        end = ", then closed stdin" if self.closed_stdin else ""
        return (f"trial {self.trial}: {' '.join(self.args)}; killed after feeding {self.fed} of {self.total} bytes"
                f"{end} (+{self.pause * 1000:.1f} ms), exit {self.rc}; stderr: {self.stderr!r}")


def kill_mid_stream(trial: int, args: list[str], raw: bytes, rng: np.random.Generator, workdir: Path,
                    started: Callable[[], bool], mode: str, kill_when: Callable[[], bool] | None = None) -> Killed:
    """Runs ARGS, waits until STARTED() (the output is open), feeds RAW in random pieces and
    SIGKILLs the process: MODE "mid" after a random number of bytes, "end" after all of them and
    the end of stdin, "watch" as "end" but only once KILL_WHEN() holds (or the process is gone);
    always after a random pause."""
    total = len(raw)
    view = memoryview(raw)
    if mode == "mid":
        kill_after = int(rng.integers(0, total))
        pause = float(rng.uniform(0, 0.04))
    elif mode == "end":
        kill_after = total
        pause = float(rng.uniform(0, 0.12))  # about the time the last rows, the index and the rename take
    else:
        assert mode == "watch" and kill_when is not None
        kill_after = total
        pause = float(rng.uniform(0, 0.004))
    k = Killed(trial, [str(a) for a in args], total, pause=pause)
    err_path = workdir / f"stderr-{trial}"
    t0 = time.monotonic()
    with open(err_path, "wb") as err_f:
        proc = subprocess.Popen(k.args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err_f, bufsize=0)
    try:
        deadline = time.monotonic() + 30
        while not started():
            if proc.poll() is not None or time.monotonic() > deadline:
                break  # reported below, with stderr
            time.sleep(0.002)
        fd = proc.stdin.fileno()
        try:
            while k.fed < kill_after:
                r = rng.random()  # pieces of at most 256 KiB, so the kill lands close to KILL_AFTER
                n = int(rng.integers(1, 65) if r < 0.2 else rng.integers(65, 8193) if r < 0.5
                        else rng.integers(8193, 256 << 10))
                n = min(n, kill_after - k.fed)
                view_n = view[k.fed:k.fed + n]
                while len(view_n):
                    view_n = view_n[os.write(fd, view_n):]
                k.fed += n
                if rng.random() < 0.3:
                    time.sleep(float(rng.uniform(0, 0.003)))
            if k.fed == total:
                proc.stdin.close()
                k.closed_stdin = True
        except BrokenPipeError:
            pass  # the writer is gone: its exit code says why
        if kill_when is not None:
            deadline = time.monotonic() + 30
            while not kill_when() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.0005)
        time.sleep(pause)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        k.rc = proc.wait(timeout=60)
        k.seconds = time.monotonic() - t0
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    k.stderr = err_path.read_text(errors="replace")
    return k


# ---------------------------------------------------------------------------------------------
# HDF5: the previous file or no file, never a broken one.

# trial: (codec and filter options, unbounded dimension 0, previous file at the target, kill mode)
HDF5_TRIALS = {
    0: (["--codec", "none"], False, None, "mid"),
    1: (["--codec", "gzip"], False, "tessera", "mid"),
    2: (["--codec", "none"], True, "h5py", "end"),
    3: (["--codec", "gzip", "--shuffle"], True, None, "end"),
    4: (["--codec", "none"], False, "h5py", "mid"),
    5: (["--codec", "gzip"], True, "tessera", "end"),
    6: (["--codec", "none", "--fletcher32"], True, None, "mid"),
    7: (["--codec", "gzip"], False, "h5py", "end"),
    # Killed as soon as the new file is at the target: the published file, before or after exit.
    8: (["--codec", "gzip"], False, "tessera", "watch"),
    9: (["--codec", "none"], True, None, "watch"),
}


def write_previous_hdf5(kind: str, tessera, target: Path, dataset: str, source: np.ndarray, scratch: Path) -> bytes:
    """A complete file at TARGET with other data in DATASET (by an earlier tessera run, or h5py)."""
    old = np.ascontiguousarray(source[:20, ::-1, :] ^ np.uint16(0x5A5A))
    if kind == "tessera":
        raw = scratch / "previous.raw"
        raw.write_bytes(old.astype("<u2").tobytes())
        tessera.run_ok(["stream", target, "--format", "hdf5", "--dtype", DTYPE, "--shape", join_ints(old.shape),
                        "--chunk", join_ints(CHUNK), "--dataset", dataset, "--input", raw])
        raw.unlink()
    else:
        import h5py

        with h5py.File(target, "w") as f:
            f.create_dataset(dataset, data=old, chunks=(4, 50, 100))
            f.attrs["previous"] = "yes"
    return target.read_bytes()


# trial -> (exit code, outcome, temporary files left): what each trial of this module's run saw.
HDF5_OUTCOMES: dict[int, tuple[int, str, int]] = {}


@pytest.mark.parametrize("trial", range(len(HDF5_TRIALS)))
def test_hdf5_sigkill_leaves_the_previous_file_or_the_complete_one(tessera, tmp_path, source, source_raw, trial):
    import h5py

    options, unbounded, previous_kind, mode = HDF5_TRIALS[trial]
    rng = np.random.default_rng([SEED, 1, trial])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "volume.h5"
    dataset = "/data" if trial % 2 == 0 else "/acquisition/raw"
    previous = None
    if previous_kind is not None:
        previous = write_previous_hdf5(previous_kind, tessera, target, dataset, source, tmp_path)
    shape = (0 if unbounded else SHAPE[0], *SHAPE[1:])
    args = [tessera.binary, "stream", target, "--format", "hdf5", "--dtype", DTYPE, "--shape", join_ints(shape),
            "--chunk", join_ints(CHUNK), "--dataset", dataset, "--threads", THREADS, *options]
    if previous is not None:
        args.append("--overwrite")  # replaces the previous file only once the new one is complete
    temp_name = re.compile(r"^\." + re.escape(target.name) + r"\.tmp\.\d+\.\d+$")  # the file store's temporary file

    def started() -> bool:  # the temporary file exists from the start
        return any(temp_name.match(p.name) for p in out_dir.iterdir())

    previous_inode = target.stat().st_ino if previous is not None else None

    def published() -> bool:
        try:
            return target.stat().st_ino != previous_inode
        except FileNotFoundError:
            return False

    k = kill_mid_stream(trial, args, source_raw, rng, tmp_path, started, mode, published if mode == "watch" else None)
    what = k.what()
    assert k.rc in (-signal.SIGKILL, 0), what

    names = sorted(p.name for p in out_dir.iterdir())
    temps = [n for n in names if temp_name.match(n)]
    others = [n for n in names if n != target.name and n not in temps]
    assert not others, f"unexpected files beside the target: {others}; {what}"
    assert len(temps) <= 1, f"more than one temporary file: {temps}; {what}"
    if k.rc == 0:
        assert not temps, f"finished cleanly but left temporary files {temps}; {what}"

    if not target.exists():
        assert previous is None, f"the previous file at {target} is gone; {what}"
        assert k.rc != 0, f"finished cleanly but {target} does not exist; {what}"
        outcome = "no file"
    elif previous is not None and target.read_bytes() == previous:
        assert k.rc != 0, f"finished cleanly but {target} still holds the previous file; {what}"
        outcome = "previous file, unchanged"
    else:
        # Anything else at the target must be the finished stream, which needs the whole input.
        require(k.closed_stdin, (f"{target} was replaced ({target.stat().st_size} bytes) although the input "
                                f"never ended; {what}"))
        try:
            with h5py.File(target, "r") as f:
                got = f[dataset][...]
                chunks = f[dataset].chunks
        except Exception as e:  # noqa: BLE001 - any failure to read is the broken file
            raise AssertionError(f"{target} is neither the previous file nor a readable new one "
                                 f"({type(e).__name__}: {e}); {what}") from e
        assert chunks == CHUNK, f"chunks {chunks}; {what}"
        assert_identical(got, source, f"the published file; {what}")
        outcome = "complete new file"
    print(f"hdf5 trial {trial}: fed {k.fed}/{k.total} bytes{' + EOF' if k.closed_stdin else ''}, "
          f"exit {k.rc}, {outcome}, temp files left: {len(temps)}, {k.seconds:.2f} s")
    HDF5_OUTCOMES[trial] = (k.rc, outcome, len(temps))


def test_some_hdf5_trial_was_killed_while_writing_and_some_after_publishing():
    """The HDF5 trials prove something only if some kill landed while the new file was being written
    (its temporary file left behind, the target as it was) and some after it was published."""
    assert sorted(HDF5_OUTCOMES) == list(range(len(HDF5_TRIALS))), (
        f"run with every trial of test_hdf5_sigkill_leaves_the_previous_file_or_the_complete_one: {HDF5_OUTCOMES}")
    writing = [t for t, (rc, outcome, temps) in HDF5_OUTCOMES.items()
               if rc == -signal.SIGKILL and temps == 1 and outcome != "complete new file"]
    published = [t for t, (rc, outcome, _) in HDF5_OUTCOMES.items() if outcome == "complete new file"]
    assert writing, f"no trial was killed while writing (trial: (exit code, outcome, temp files)): {HDF5_OUTCOMES}"
    assert published, f"no trial got as far as publishing the new file: {HDF5_OUTCOMES}"


# ---------------------------------------------------------------------------------------------
# Neuroglancer precomputed: info first, then complete chunk / shard files only.

PRECOMPUTED_CONFIGS = {
    "unsharded": [],
    "identity": ["--shard-chunks", "2,2,2"],
    "identity-gzip": ["--shard-chunks", "1,2,2", "--codec", "gzip"],
    "murmur-gzip": ["--shard-chunks", "2,2,2", "--hash", "murmurhash3_x86_128", "--codec", "gzip"],
}
# Config trial % 4. Trials 0-7: kill modes such that each config gets one "mid" and one "end";
# trials 8-11: "watch", killed once a random number of chunk / shard files is there (for murmurhash
# shards, which appear only when the staged parts are merged at the end: in the middle of the merge).
PRECOMPUTED_TRIALS = 12

GRID = tuple(-(-s // c) for s, c in zip(SHAPE, CHUNK))   # z, y, x
CHUNK_NAME = re.compile(r"^\d+-\d+_\d+-\d+_\d+-\d+$")
SHARD_NAME = re.compile(r"^[0-9a-f]*\.shard$")
PART_NAME = re.compile(r"^[0-9a-f]*\.shard\.part-\d+$")
TEMP_NAME = re.compile(r"^\..+\.tmp\.\d+\.\d+$")


def precomputed_args(binary, vol: Path, config: str) -> list:
    return [binary, "stream", vol, "--format", "precomputed", "--dtype", DTYPE, "--shape", join_ints(SHAPE),
            "--chunk", join_ints(CHUNK), "--threads", THREADS, *PRECOMPUTED_CONFIGS[config]]


@pytest.fixture(scope="module")
def finished_volumes(tessera, tmp_path_factory, source_raw):
    """config -> a volume that one uninterrupted stream of the same input wrote (made on first use)."""
    made: dict[str, Path] = {}
    root = tmp_path_factory.mktemp("finished")

    def get(config: str) -> Path:
        if config not in made:
            raw = root / "input.raw"
            if not raw.exists():
                raw.write_bytes(source_raw)
            vol = root / config
            tessera.run_ok(precomputed_args(tessera.binary, vol, config)[1:] + ["--input", raw])
            made[config] = vol
        return made[config]

    return get


def chunk_box(g) -> tuple[slice, slice, slice]:
    """The C-order region of chunk G = (gz, gy, gx)."""
    return tuple(slice(gi * c, min((gi + 1) * c, s)) for gi, c, s in zip(g, CHUNK, SHAPE))


def chunk_file_name(g) -> str:
    """The unsharded chunk file of G: x, y, z ranges (voxel offset 0)."""
    box = chunk_box(g)
    return "_".join(f"{box[d].start}-{box[d].stop}" for d in (2, 1, 0))


def compressed_morton_code(g) -> int:
    """Neuroglancer's compressed Morton code of G = (gz, gy, gx): bits of x, y, z interleaved, each
    dimension taking only the bits its grid extent needs."""
    gxyz = (g[2], g[1], g[0])
    bits = [max(0, (n - 1).bit_length()) for n in (GRID[2], GRID[1], GRID[0])]
    code, j = 0, 0
    for i in range(max(bits)):
        for d in range(3):
            if i < bits[d]:
                code |= ((gxyz[d] >> i) & 1) << j
                j += 1
    return code


def decode_chunk(data: bytes, g) -> np.ndarray:
    box = chunk_box(g)
    shape = tuple(b.stop - b.start for b in box)
    require(len(data) == int(np.prod(shape)) * 2, f"chunk {g}: {len(data)} bytes for a {shape} region of uint16")
    return np.frombuffer(data, dtype="<u2").reshape(shape)  # raw: x fastest, i.e. C order z, y, x


def decode_shard(blob: bytes, sharding: dict, where: str) -> dict[int, tuple[int, bytes]]:
    """chunk id -> (minishard, chunk bytes, data encoding undone), reading the whole shard file the way
    the neuroglancer_uint64_sharded_v1 format lays it out; any inconsistency is an AssertionError."""
    n_mini = 1 << sharding["minishard_bits"]
    index_bytes = 16 * n_mini
    size = len(blob)
    require(size >= index_bytes, f"{where}: {size} bytes, shorter than its {index_bytes}-byte shard index")
    shard_index = np.frombuffer(blob, dtype="<u8", count=2 * n_mini).reshape(n_mini, 2)
    chunks: dict[int, tuple[int, bytes]] = {}
    for m in range(n_mini):
        start, end = (int(v) + index_bytes for v in shard_index[m])
        if start == end:
            continue
        require(start < end <= size, f"{where}: minishard {m} index at [{start}, {end}) of {size} bytes")
        raw_index = blob[start:end]
        if sharding["minishard_index_encoding"] == "gzip":
            raw_index = gzip.decompress(raw_index)
        require(len(raw_index) % 24 == 0, f"{where}: minishard {m} index of {len(raw_index)} bytes")
        table = np.frombuffer(raw_index, dtype="<u8").reshape(3, -1)
        chunk_id, pos = 0, index_bytes
        for id_delta, offset_delta, chunk_bytes in zip(*(map(int, row) for row in table)):
            chunk_id += id_delta
            begin = pos + offset_delta
            pos = begin + chunk_bytes
            require(pos <= size, f"{where}: chunk {chunk_id} at [{begin}, {pos}) of {size} bytes")
            data = blob[begin:pos]
            if sharding["data_encoding"] == "gzip":
                data = gzip.decompress(data)
            require(chunk_id not in chunks, f"{where}: chunk {chunk_id} listed twice")
            chunks[chunk_id] = (m, data)
    return chunks


def read_with_tensorstore(vol: Path) -> np.ndarray:
    import tensorstore as ts

    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(vol)}}).result()
    xyzc = t.read().result()
    return np.ascontiguousarray(np.transpose(xyzc, (3, 2, 1, 0))[0])


# trial -> (exit code, chunks written, chunks in the volume): what each trial of this module's run saw.
PRECOMPUTED_OUTCOMES: dict[int, tuple[int, int, int]] = {}


@pytest.mark.parametrize("trial", range(PRECOMPUTED_TRIALS))
def test_precomputed_sigkill_leaves_complete_files_only(tessera, tmp_path, source, source_raw, finished_volumes,
                                                         trial):
    config = list(PRECOMPUTED_CONFIGS)[trial % 4]
    mode = "watch" if trial >= 8 else "end" if (trial // 4 + trial % 4) % 2 else "mid"
    rng = np.random.default_rng([SEED, 2, trial])
    finished = finished_volumes(config)
    n_finished = sum(1 for p in (finished / "s0").iterdir())
    kill_at_files = int(rng.integers(1, n_finished))
    vol = tmp_path / "vol"

    def enough_files() -> bool:
        try:
            return sum(1 for n in os.listdir(vol / "s0") if not TEMP_NAME.match(n) and not PART_NAME.match(n)) \
                >= kill_at_files
        except FileNotFoundError:
            return False

    args = precomputed_args(tessera.binary, vol, config)
    k = kill_mid_stream(trial, args, source_raw, rng, tmp_path, lambda: (vol / "info").exists(), mode,
                        enough_files if mode == "watch" else None)
    what = f"[{config}] " + k.what()
    assert k.rc in (-signal.SIGKILL, 0), what

    # info: written before the first byte is read, and never rewritten.
    text = (vol / "info").read_bytes()
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise AssertionError(f"info does not parse ({e}): {text[:200]!r}; {what}") from e
    assert text == (finished / "info").read_bytes(), f"info differs from a finished stream's: {text!r}; {what}"
    info = json.loads(text)
    scale = info["scales"][0]
    sharding = scale.get("sharding")

    top = sorted(p.name for p in vol.iterdir())
    assert set(top) <= {"info", "s0"} and "info" in top, f"top level holds {top}; {what}"
    names = sorted(p.name for p in (vol / "s0").iterdir()) if (vol / "s0").is_dir() else []
    finished_names = {p.name for p in (finished / "s0").iterdir()}
    temps = [n for n in names if TEMP_NAME.match(n)]
    parts = [n for n in names if PART_NAME.match(n)]
    final = [n for n in names if n not in temps and n not in parts]
    final_re = SHARD_NAME if sharding else CHUNK_NAME
    assert all(final_re.match(n) for n in final), f"unexpected names in s0: {final}; {what}"
    strays = set(final) - finished_names
    assert not strays, f"names a finished stream does not write: {sorted(strays)}; {what}"
    if parts:
        assert sharding and sharding["hash"] != "identity", f"staged parts {parts} in a {config} volume; {what}"

    # Every file at a final name is complete and exact; the chunks it holds are "written".
    grid_cells = [(z, y, x) for z in range(GRID[0]) for y in range(GRID[1]) for x in range(GRID[2])]
    written: set[tuple[int, int, int]] = set()
    if not sharding:
        by_name = {chunk_file_name(g): g for g in grid_cells}
        for n in final:
            g = by_name[n]
            try:
                got = decode_chunk((vol / "s0" / n).read_bytes(), g)
            except AssertionError as e:
                raise AssertionError(f"s0/{n}: {e}; {what}") from None
            assert_identical(got, source[chunk_box(g)], f"chunk file s0/{n}; {what}")
            written.add(g)
    else:
        from cloudvolume.datasource.precomputed.sharding import ShardingSpecification

        spec = ShardingSpecification.from_dict(sharding)
        cell_of_id = {compressed_morton_code(g): g for g in grid_cells}
        expected_in: dict[str, dict[int, int]] = {}  # shard file -> chunk id -> minishard
        for cid in cell_of_id:
            loc = spec.compute_shard_location(cid)
            expected_in.setdefault(f"{loc.shard_number}.shard", {})[cid] = int(loc.minishard_number)
        assert set(expected_in) == finished_names - {n for n in finished_names if not SHARD_NAME.match(n)}, (
            f"the finished volume's shards {sorted(finished_names)} are not those the spec gives "
            f"{sorted(expected_in)}")
        for n in final:
            where = f"shard file s0/{n}"
            try:
                chunks = decode_shard((vol / "s0" / n).read_bytes(), sharding, where)
            except AssertionError as e:
                raise AssertionError(f"{e}; {what}") from None
            except Exception as e:  # noqa: BLE001 - gzip / struct errors: the shard is broken
                raise AssertionError(f"{where} does not decode ({type(e).__name__}: {e}); {what}") from e
            want = expected_in[n]
            assert set(chunks) == set(want), (f"{where} holds chunks {sorted(chunks)}, a whole shard holds "
                                              f"{sorted(want)}; {what}")
            for cid, (m, data) in chunks.items():
                g = cell_of_id[cid]
                assert m == want[cid], f"{where}: chunk {cid} in minishard {m}, not {want[cid]}; {what}"
                try:
                    got = decode_chunk(data, g)
                except AssertionError as e:
                    raise AssertionError(f"{where}: {e}; {what}") from None
                assert_identical(got, source[chunk_box(g)], f"{where}, chunk {g}; {what}")
                written.add(g)

    # Readers: the input where a file is present, the fill value 0 elsewhere.
    expected = np.zeros(SHAPE, dtype=np.uint16)
    for g in written:
        expected[chunk_box(g)] = source[chunk_box(g)]
    assert_identical(tessera.read(vol, None, DTYPE, SHAPE), expected, f"tessera read; {what}")
    assert_identical(read_with_tensorstore(vol), expected, f"tensorstore read; {what}")

    if k.rc == 0:
        assert set(final) == finished_names, f"finished cleanly without {finished_names - set(final)}; {what}"
        assert not temps and not parts, f"finished cleanly but left {temps + parts}; {what}"
        assert len(written) == len(grid_cells)
    print(f"precomputed trial {trial} [{config}]: fed {k.fed}/{k.total} bytes{' + EOF' if k.closed_stdin else ''}, "
          f"exit {k.rc}, {len(final)}/{len(finished_names)} {'shard' if sharding else 'chunk'} files, "
          f"{len(written)}/{len(grid_cells)} chunks written, temp files left: {len(temps)}, staged parts left: "
          f"{len(parts)}, {k.seconds:.2f} s")
    PRECOMPUTED_OUTCOMES[trial] = (k.rc, len(written), len(grid_cells))


def test_some_precomputed_trial_was_killed_mid_output():
    """The precomputed trials prove something only if some kill landed with chunks written and chunks
    still to come."""
    assert sorted(PRECOMPUTED_OUTCOMES) == list(range(PRECOMPUTED_TRIALS)), (
        f"run with every trial of test_precomputed_sigkill_leaves_complete_files_only: {PRECOMPUTED_OUTCOMES}")
    mid = [t for t, (rc, written, cells) in PRECOMPUTED_OUTCOMES.items()
           if rc == -signal.SIGKILL and 0 < written < cells]
    assert mid, f"no trial was killed mid-output (trial: (exit code, chunks written, chunks)): {PRECOMPUTED_OUTCOMES}"
