#!/usr/bin/env python3
"""HDF5 streaming benchmark: tessera stream --format hdf5 vs h5py, deflate level 1.

FRAMES camera-like uint16 frames of 2048 x 2048 (512 frames = 4 GiB by default; a drifting scene of
soft blobs with Gaussian read noise, fixed seed, from bench_util.make_camera_input) are written as
one chunked HDF5 dataset of shape (FRAMES, 2048, 2048), maximum shape (unlimited, 2048, 2048),
chunks 1 x 512 x 1024 (1 MiB), the deflate filter at level 1 (--shuffle adds the shuffle filter to
both tools).

  tessera: `tessera stream OUT.h5 --format hdf5 --shape 0,2048,2048 ... --input RAW`, one CLI
           process timed whole (start-up and reading the raw input included); deflate by libdeflate
           on --threads threads.
  h5py:    a Python child times create + write + close (interpreter start and imports excluded);
           one frame per write from an np.memmap of the same raw file (the mapping dropped after
           each frame so input pages do not pile up in its RSS); deflate by the HDF5 library's zlib,
           one thread (HDF5 filters run in the calling thread).

Then each tool reads the file h5py wrote back whole (read all): `tessera read FILE --dataset /data
--output /dev/null` (whole process timed), and an h5py child reading 16 frames per call (open to
close timed, the arrays dropped).

Both write to the same directory on the work disk (not tmpfs); `sync` runs, untimed, between runs.
Every run is its own child process (peak RSS from wait4 through a small launcher); each cell is the
median of --repeats runs. Both files are checked against the source (h5py reads every 16th frame of
each file and compares it exactly) before the table is printed.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import make_camera_input, run_measured  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
HEIGHT = WIDTH = 2048
CHUNK = (1, 512, 1024)


def child(out: str, raw: str, frames: int, shuffle: bool) -> None:
    import h5py
    import numpy as np

    t0 = time.perf_counter()
    if raw == "-":  # read all
        with h5py.File(out, "r") as f:
            d = f["data"]
            for t in range(0, frames, 16):
                block = d[t:t + 16]
                del block
        print(json.dumps({"seconds": time.perf_counter() - t0}))
        return
    with h5py.File(out, "w") as f:
        d = f.create_dataset("data", shape=(frames, HEIGHT, WIDTH), maxshape=(None, HEIGHT, WIDTH), dtype="<u2",
                             chunks=CHUNK, compression="gzip", compression_opts=1, shuffle=shuffle)
        frame_bytes = HEIGHT * WIDTH * 2
        for t in range(frames):
            src = np.memmap(raw, dtype="<u2", mode="r", offset=t * frame_bytes, shape=(HEIGHT, WIDTH))
            d[t] = src
            del src
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def run_tessera(args, out: Path, raw: Path) -> tuple[float, float]:
    argv = [str(args.binary), "stream", str(out), "--format", "hdf5", "--dataset", "/data", "--dtype", "uint16",
            "--shape", f"0,{HEIGHT},{WIDTH}", "--chunk", ",".join(map(str, CHUNK)), "--codec", "gzip", "--level", "1",
            "--input", str(raw), "--threads", str(args.threads)]
    if args.shuffle:
        argv.append("--shuffle")
    wall, rss, _, _ = run_measured(argv)
    return wall, rss


def read_tessera(args, path: Path) -> tuple[float, float]:
    wall, rss, _, _ = run_measured([str(args.binary), "read", str(path), "--dataset", "/data", "--output", "/dev/null",
                                    "--threads", str(args.threads)])
    return wall, rss


def read_h5py(args, path: Path) -> tuple[float, float]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", str(path), "-", str(args.frames), "0"]
    _, rss, stdout, _ = run_measured(argv)
    return json.loads(stdout.strip().splitlines()[-1])["seconds"], rss


def run_h5py(args, out: Path, raw: Path) -> tuple[float, float]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", str(out), str(raw), str(args.frames),
            "1" if args.shuffle else "0"]
    _, rss, stdout, _ = run_measured(argv)
    return json.loads(stdout.strip().splitlines()[-1])["seconds"], rss


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
    return "verified with h5py (every 16th frame of both files equal to the source)"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        out, raw, frames, shuffle = sys.argv[2:6]
        child(out, raw, int(frames), shuffle == "1")
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--binary", type=Path, default=REPO_ROOT / "build" / "release" / "tessera")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tessera-hdf5-bench-", dir=REPO_ROOT / "build"))
    try:
        raw = work / "frames.raw"
        make_camera_input(raw, (HEIGHT, WIDTH), (0, 1), args.frames, seed=20261123)
        files = {"tessera": work / "tessera.h5", "h5py": work / "h5py.h5"}
        runs = {tool: [] for tool in files}
        reads = {tool: [] for tool in files}
        for rep in range(args.repeats):
            for tool, path in files.items():
                path.unlink(missing_ok=True)
                os.sync()
                runs[tool].append((run_tessera if tool == "tessera" else run_h5py)(args, path, raw))
                print(f"[{rep + 1}] write {tool:8s} {runs[tool][-1][0]:.2f} s", file=sys.stderr)
            if rep == 0:
                check = verify(args, raw, files)
            for tool in files:
                reads[tool].append((read_tessera if tool == "tessera" else read_h5py)(args, files["h5py"]))
                print(f"[{rep + 1}] read  {tool:8s} {reads[tool][-1][0]:.2f} s", file=sys.stderr)
        nbytes = args.frames * HEIGHT * WIDTH * 2
        sizes = {tool: path.stat().st_size for tool, path in files.items()}
        med = {tool: statistics.median(s for s, _ in runs[tool]) for tool in files}
        rss = {tool: max(r for _, r in runs[tool]) for tool in files}
        print(f"\n{args.frames} frames of {HEIGHT}x{WIDTH} uint16 ({nbytes / 1e9:.2f} GB), chunks {CHUNK}, deflate "
              f"level 1{' + shuffle' if args.shuffle else ''}; tessera --threads {args.threads}; median of "
              f"{args.repeats}\n")
        rmed = {tool: statistics.median(s for s, _ in reads[tool]) for tool in files}
        rrss = {tool: max(r for _, r in reads[tool]) for tool in files}
        print("| operation | tool | median s | GB/s | peak RSS MiB | file MiB | compression ratio | speedup vs h5py |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for tool in files:
            speed = "1.00 (reference)" if tool == "h5py" else f"{med['h5py'] / med[tool]:.2f}x"
            print(f"| write | {tool} | {med[tool]:.2f} | {nbytes / 1e9 / med[tool]:.2f} | {rss[tool]:.0f} | "
                  f"{sizes[tool] / 2**20:.0f} | {nbytes / sizes[tool]:.2f} | {speed} |")
        for tool in files:
            speed = "1.00 (reference)" if tool == "h5py" else f"{rmed['h5py'] / rmed[tool]:.2f}x"
            print(f"| read all (h5py's file) | {tool} | {rmed[tool]:.2f} | {nbytes / 1e9 / rmed[tool]:.2f} | "
                  f"{rrss[tool]:.0f} | | | {speed} |")
        print(f"\nall runs (s): " + "; ".join(f"write {t}: " + ", ".join(f"{s:.2f}" for s, _ in runs[t]) for t in files)
              + "; " + "; ".join(f"read {t}: " + ", ".join(f"{s:.2f}" for s, _ in reads[t]) for t in files))
        print(check)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
