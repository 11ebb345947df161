#!/usr/bin/env python3
"""Before/after benchmark of two tessera builds: the same streaming, reading and convert commands,
run by build A and build B in turn (A B A B ...), each run a child process timed from start to exit
with its peak RSS (wait4). Prints per cell the median wall seconds and GB/s of each build, the
median of the paired ratios A/B (time; < 1: A is faster) and both peak RSS medians.

Use it when a change must not slow anything down (a refactor): build B is the old binary kept
aside, A the new one. Inputs and outputs live in a tmpfs directory (/dev/shm) so that the disk's
noise stays out; both builds read the same inputs, written once by build B.

  .venv/bin/python bench/ab_bench.py --a build/release/tessera --b /tmp/old/tessera [--repeats 7]

Cells (uint16, 128 x 1024 x 1024 = 256 MiB unless --frames says otherwise):
  stream zarr3       --synthetic camera, chunk 16x256x256, shard 1x2x2 chunks, zstd 1
  stream precomputed --synthetic camera, chunk 16x256x256, identity shards 2x2x2 chunks, raw
  stream hdf5        --synthetic camera, chunk 16x256x256, gzip 1
  read all           the zarr3 array, whole, to /dev/null
  read strided       the zarr3 array, [::3, 5:-5:2, ::-7]
  read hdf5          the hdf5 file, whole
  convert zarr->pc   the zarr3 array into precomputed (sharded, its own chunking)
  convert hdf5->zarr the hdf5 file into zarr3 (its chunking, gzip)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(cmd)}\n{err}")
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, default=REPO_ROOT / "build" / "release" / "tessera", help="build A (new)")
    ap.add_argument("--b", type=Path, required=True, help="build B (old, the baseline)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--frames", type=int, default=128)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--cells", default="", help="comma-separated cell names to run (default: all)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ab-bench-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    try:
        shape = f"{args.frames},1024,1024"
        nbytes = args.frames * 1024 * 1024 * 2
        threads = ["--threads", str(args.threads)]
        common = ["--dtype", "uint16", "--shape", shape, "--chunk", "16,256,256", "--synthetic", "camera", *threads]
        src_zarr, src_h5 = work / "src.zarr", work / "src.h5"
        subprocess.run([str(args.b), "stream", str(src_zarr), *common, "--shard-chunks", "1,2,2", "--codec", "zstd",
                        "--level", "1"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([str(args.b), "stream", str(src_h5), *common, "--codec", "gzip", "--level", "1"], check=True,
                       stdout=subprocess.DEVNULL)

        def out(tag: str, name: str) -> str:
            return str(work / f"{tag}-{name}")

        cells = {
            "stream zarr3": (nbytes, lambda b, t: [b, "stream", out(t, "s.zarr"), *common, "--shard-chunks", "1,2,2",
                                                   "--codec", "zstd", "--level", "1"]),
            "stream precomputed": (nbytes, lambda b, t: [b, "stream", out(t, "s.pc"), "--format", "precomputed",
                                                         *common, "--shard-chunks", "2,2,2"]),
            "stream hdf5": (nbytes, lambda b, t: [b, "stream", out(t, "s.h5"), *common, "--codec", "gzip",
                                                  "--level", "1"]),
            "read all": (nbytes, lambda b, t: [b, "read", str(src_zarr), "-o", "/dev/null", *threads]),
            "read strided": (None, lambda b, t: [b, "read", str(src_zarr), "--slice", "::3, 5:-5:2, ::-7", "-o",
                                                 "/dev/null", *threads]),
            "read hdf5": (nbytes, lambda b, t: [b, "read", str(src_h5), "-o", "/dev/null", *threads]),
            "convert zarr->pc": (nbytes, lambda b, t: [b, "convert", str(src_zarr), out(t, "c.pc"), "--format",
                                                       "precomputed", *threads]),
            "convert hdf5->zarr": (nbytes, lambda b, t: [b, "convert", str(src_h5), out(t, "c.zarr"), *threads]),
        }
        wanted = [c for c in args.cells.split(",") if c] or list(cells)
        print(f"{'cell':<20} {'A s':>8} {'B s':>8} {'A GB/s':>8} {'B GB/s':>8} {'A/B time':>9} "
              f"{'A MiB':>7} {'B MiB':>7}")
        for name in wanted:
            nb, make = cells[name]
            a_s, b_s, a_m, b_m, ratios = [], [], [], [], []
            for _ in range(args.repeats):
                pair = {}
                for tag, binary in (("a", args.a), ("b", args.b)):
                    for p in work.glob(f"{tag}-*"):
                        shutil.rmtree(p) if p.is_dir() else p.unlink()
                    pair[tag] = run([str(x) for x in make(str(binary), tag)])
                a_s.append(pair["a"][0]), a_m.append(pair["a"][1])
                b_s.append(pair["b"][0]), b_m.append(pair["b"][1])
                ratios.append(pair["a"][0] / pair["b"][0])
            ma, mb = statistics.median(a_s), statistics.median(b_s)
            gbs = (lambda s: f"{nb / s / 1e9:8.2f}") if nb else (lambda s: f"{'-':>8}")
            print(f"{name:<20} {ma:8.3f} {mb:8.3f} {gbs(ma)} {gbs(mb)} {statistics.median(ratios):9.3f} "
                  f"{statistics.median(a_m):7.0f} {statistics.median(b_m):7.0f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
