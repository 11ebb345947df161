#!/usr/bin/env python3
"""HDF5 streaming benchmark: tessera (Python package) vs h5py, deflate level 1.

FRAMES camera-like uint16 frames of 2048 x 2048 (512 frames = 4 GiB by default; a drifting scene of
soft blobs with Gaussian read noise, fixed seed, from bench_util.make_camera_input) are written as
one chunked HDF5 dataset of shape (FRAMES, 2048, 2048), maximum shape (unlimited, 2048, 2048),
chunks 1 x 512 x 1024 (1 MiB), the deflate filter at level 1 (--shuffle adds the shuffle filter to
both tools).

Every compared run is a Python child doing the same work, timed the same way (open to close,
interpreter start and imports excluded):
  write: create the dataset, then one frame per call from an np.memmap of the same raw file (the
         mapping dropped after each frame so input pages do not pile up in the RSS), close.
         h5py: `f.create_dataset(...)`, `d[t] = frame`; its deflate is the HDF5 library's zlib in
         the calling thread (one thread). tessera: `tessera.create(..., dataset="/data")`,
         `w.append(frame)`; its deflate is libdeflate on `threads` compression threads.
  read:  the file h5py wrote, 16 frames per call, each call's result a newly allocated numpy array
         (dropped after the call, the same for both tools): h5py `d[t:t + 16]`, tessera
         `tessera.open(path, dataset="/data")[t:t + 16]`.
Threads: h5py is single threaded, so the like-for-like rows run tessera on one core: threads=1 and
the child pinned to one CPU (for reads, which have no thread option, tessera's decode threads share
that CPU); h5py's child is pinned to the same CPU. Rows with tessera on --threads threads (all
cores) say so; their ratio is not like for like.

  tessera CLI: shown for comparison with earlier tables only, no ratio: `tessera stream --format hdf5
               --input RAW` and `tessera read --output /dev/null` (the output is not kept), whole
               processes timed, --threads threads.

Both write to the same directory on the work disk (not tmpfs); `sync` runs, untimed, between runs.
Every run is its own child process (peak RSS from wait4 through a small launcher); each cell is the
median of --repeats runs, the runs interleaved within each repeat. Every written file is checked
against the source (h5py reads every 16th frame of each and compares it exactly) after the first
repeat.

Run from the repository root:  .venv/bin/python bench/hdf5_bench.py [--frames 512] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import make_camera_input, run_measured  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
HEIGHT = WIDTH = 2048
CHUNK = (1, 512, 1024)


READ_FRAMES = 16  # frames per read call, both tools


def child(cfg: dict) -> None:
    import numpy as np

    if cfg["cpus"]:
        os.sched_setaffinity(0, cfg["cpus"])
    path, frames, frame_bytes = cfg["path"], cfg["frames"], HEIGHT * WIDTH * 2
    if cfg["tool"] == "h5py":
        import h5py

        t0 = time.perf_counter()
        if cfg["op"] == "read":
            with h5py.File(path, "r") as f:
                d = f["data"]
                for t in range(0, frames, READ_FRAMES):
                    block = d[t:t + READ_FRAMES]
                    del block
        else:
            with h5py.File(path, "w") as f:
                d = f.create_dataset("data", shape=(frames, HEIGHT, WIDTH), maxshape=(None, HEIGHT, WIDTH),
                                     dtype="<u2", chunks=CHUNK, compression="gzip", compression_opts=1,
                                     shuffle=cfg["shuffle"])
                for t in range(frames):
                    src = np.memmap(cfg["raw"], dtype="<u2", mode="r", offset=t * frame_bytes, shape=(HEIGHT, WIDTH))
                    d[t] = src
                    del src
    else:
        import tessera

        t0 = time.perf_counter()
        if cfg["op"] == "read":
            with tessera.open(path, dataset="/data") as d:
                for t in range(0, frames, READ_FRAMES):
                    block = d[t:t + READ_FRAMES]
                    del block
        else:
            with tessera.create(path, dtype="uint16", shape=(0, HEIGHT, WIDTH), chunks=CHUNK, codec="gzip", level=1,
                                shuffle=cfg["shuffle"], dataset="/data", threads=cfg["threads"]) as w:
                for t in range(frames):
                    src = np.memmap(cfg["raw"], dtype="<u2", mode="r", offset=t * frame_bytes, shape=(HEIGHT, WIDTH))
                    w.append(src)
                    del src
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def run_cli(args, op: str, path: Path, raw: Path) -> tuple[float, float]:
    if op == "read":
        argv = [str(args.binary), "read", str(path), "--dataset", "/data", "--output", "/dev/null"]
    else:
        argv = [str(args.binary), "stream", str(path), "--format", "hdf5", "--dataset", "/data", "--dtype", "uint16",
                "--shape", f"0,{HEIGHT},{WIDTH}", "--chunk", ",".join(map(str, CHUNK)), "--codec", "gzip",
                "--level", "1", "--input", str(raw)] + (["--shuffle"] if args.shuffle else [])
    wall, rss, _, _ = run_measured(argv + ["--threads", str(args.threads)])
    return wall, rss


def run_python(args, row: "Row", path: Path, raw: Path) -> tuple[float, float]:
    cfg = {"tool": row.tool, "op": row.op, "path": str(path), "raw": str(raw), "frames": args.frames,
           "shuffle": args.shuffle, "threads": row.threads, "cpus": [args.cpu] if row.pinned else None}
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(cfg)]
    _, rss, stdout, _ = run_measured(argv)
    return json.loads(stdout.strip().splitlines()[-1])["seconds"], rss


@dataclass(frozen=True)
class Row:
    op: str          # write / read
    tool: str        # tessera-python / h5py / tessera-cli
    threads: int     # tessera's threads (0: h5py's one)
    pinned: bool     # the child is pinned to one CPU
    label: str
    ratio: bool      # a speedup vs h5py is shown


def rows(args) -> list[Row]:
    t = args.threads
    return [
        Row("write", "tessera-python", 1, True, "tessera, 1 thread (pinned to 1 core)", True),
        Row("write", "tessera-python", t, False, f"tessera, {t} threads (h5py has 1)", True),
        Row("write", "h5py", 0, True, "h5py (1 thread, pinned to the same core)", False),
        Row("write", "tessera-cli", t, False, f"tessera CLI, {t} threads (whole process, reads the raw file)", False),
        Row("read", "tessera-python", 0, True, "tessera, 1 core (pinned; its decode threads share it)", True),
        Row("read", "tessera-python", 0, False, f"tessera, {os.cpu_count()} cores (h5py has 1)", True),
        Row("read", "h5py", 0, True, "h5py (1 thread, pinned to the same core)", False),
        Row("read", "tessera-cli", t, False, f"tessera CLI, {t} threads, output discarded (not comparable)", False),
    ]


def verify(args, raw: Path, files: dict) -> str:
    import h5py
    import numpy as np

    src = np.memmap(raw, dtype="<u2", mode="r", shape=(args.frames, HEIGHT, WIDTH))
    for tool, path in files.items():
        with h5py.File(path, "r") as f:
            d = f["data"]
            if d.shape != src.shape or d.chunks != CHUNK or d.compression != "gzip" or d.compression_opts != 1:
                raise SystemExit(f"{tool}: unexpected dataset {d.shape} chunks {d.chunks} {d.compression}")
            for t in range(0, args.frames, 16):
                if not np.array_equal(d[t], src[t]):
                    raise SystemExit(f"{tool}'s frame {t} differs from the source")
    return f"verified with h5py (every 16th frame of all {len(files)} files equal to the source)"


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="tessera's threads in the all-core rows")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)), help="the CPU the one-core rows run on")
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--binary", type=Path, default=REPO_ROOT / "build" / "release" / "tessera")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tessera-hdf5-bench-", dir=REPO_ROOT / "build"))
    try:
        raw = work / "frames.raw"
        make_camera_input(raw, (HEIGHT, WIDTH), (0, 1), args.frames, seed=20261123)
        plan = rows(args)
        files = {row: work / f"w{i}.h5" for i, row in enumerate(plan) if row.op == "write"}
        h5py_file = next(path for row, path in files.items() if row.tool == "h5py")
        runs = {row: [] for row in plan}
        last_write, check = [row for row in plan if row.op == "write"][-1], ""
        for rep in range(args.repeats):
            for row in plan:
                if row.op == "write":
                    path = files[row]
                    path.unlink(missing_ok=True)
                    os.sync()
                else:
                    path = h5py_file
                run = run_cli(args, row.op, path, raw) if row.tool == "tessera-cli" else run_python(args, row, path, raw)
                runs[row].append(run)
                print(f"[{rep + 1}] {row.op:5s} {row.label:60s} {run[0]:.2f} s", file=sys.stderr)
                if rep == 0 and row == last_write:  # every file written once: check them
                    check = verify(args, raw, {r.label: files[r] for r in files})
        nbytes = args.frames * HEIGHT * WIDTH * 2
        med = {row: statistics.median(s for s, _ in runs[row]) for row in plan}
        rss = {row: max(r for _, r in runs[row]) for row in plan}
        ref = {row.op: med[row] for row in plan if row.tool == "h5py"}
        print(f"\n{args.frames} frames of {HEIGHT}x{WIDTH} uint16 ({nbytes / 1e9:.2f} GB), chunks {CHUNK}, deflate "
              f"level 1{' + shuffle' if args.shuffle else ''}; one-core rows pinned to CPU {args.cpu}; median of "
              f"{args.repeats}; reads: h5py's file, {READ_FRAMES} frames per call into a new array\n")
        print("| operation | tool | median s | GB/s | peak RSS MiB | file MiB | compression ratio | speedup vs h5py |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for row in plan:
            if row.tool == "h5py":
                speed = "1.00 (reference)"
            else:
                speed = f"{ref[row.op] / med[row]:.2f}x" if row.ratio else "-"
            size = files[row].stat().st_size if row.op == "write" else 0
            file_cells = f"{size / 2**20:.0f} | {nbytes / size:.2f}" if size else " | "
            op = "write" if row.op == "write" else "read all (h5py's file)"
            print(f"| {op} | {row.label} | {med[row]:.2f} | {nbytes / 1e9 / med[row]:.2f} | {rss[row]:.0f} | "
                  f"{file_cells} | {speed} |")
        print("\nall runs (s): " + "; ".join(f"{row.op} {row.label}: " + ", ".join(f"{s:.2f}" for s, _ in runs[row])
                                           for row in plan))
        print(check)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
