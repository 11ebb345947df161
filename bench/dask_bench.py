#!/usr/bin/env python3
"""Scale-out benchmark: one conversion as a Dask graph on a 2-process LocalCluster against the same
conversion by one `tessera convert` process, on this machine.

Source: a 4 GiB uint16 Zarr v3 array, 512 x 2048 x 2048, camera-like values (`tessera stream
--synthetic camera`), chunks 32x256x256 in shards of 1x4x4 chunks, zstd level 1. Destination: Zarr v3,
chunks 16x256x256 in shards of 1x8x8 chunks, blosc-lz4 level 1 (a re-chunking and a re-compression:
every byte is read, decoded, re-encoded and written). Both write to the work disk.

  convert   `tessera convert SRC DST ...` with --threads = cores (a child process; wall time, peak RSS)
  dask      tessera.dask.convert(SRC, DST, ...) on LocalCluster(n_workers=2, threads_per_worker=1,
            processes=True), one compression thread per task; the cluster is started before the clock
            (its start-up is reported apart); peak RSS = the largest worker's ru_maxrss
            Each cluster converts twice: "first" is its first conversion (its workers touch their
            memory for the first time, which on this VM costs a host page fault per page: ~1.3 s per
            GiB), "next" the same conversion again on the same, now warm, workers (a long-lived
            cluster's steady state). Peak RSS is the same for both (the workers' high-water mark).

Each run's output is checked byte-identical to the first convert's (every file hashed) once. Medians of
--repeats runs, the two interleaved; `sync` and a dropped destination between runs.

Run from the repository root:  .venv/bin/python bench/dask_bench.py [--repeats 3] [--quick]
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import child_or_parser, run_json_child, run_measured  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
TESSERA = REPO_ROOT / "build" / "release" / "tessera"
FULL = dict(shape=(512, 2048, 2048))
QUICK = dict(shape=(64, 1024, 1024))
DEST = ["--chunk", "16,256,256", "--shard-chunks", "1,8,8", "--codec", "blosc-lz4", "--level", "1"]
DEST_KW = dict(chunks=(16, 256, 256), shard_chunks=(1, 8, 8), codec="blosc-lz4", level=1)


def child_main(cfg: dict) -> None:
    import json
    import resource

    import dask
    import distributed

    import tessera.dask

    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        startup = time.perf_counter() - t0
        seconds = []
        for dst in (cfg["dst"] + ".cold", cfg["dst"]):  # a fresh cluster, then the same one again
            t1 = time.perf_counter()
            tessera.dask.convert(cfg["src"], dst, threads=cfg.get("threads", 1), **DEST_KW)
            seconds.append(time.perf_counter() - t1)
        shutil.rmtree(cfg["dst"] + ".cold")
        workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    print(json.dumps({"cold": seconds[0], "warm": seconds[1], "startup": startup, "worker_rss_mib": max(workers.values()) / 1024}))


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def main() -> None:
    parser = child_or_parser(child_main, __doc__)
    if parser is None:
        return
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a 128 MiB array (a smoke test, not a measurement)")
    parser.add_argument("--task-threads", type=int, default=1, help="compression threads per Dask task")
    parser.add_argument("--workdir", default=None, help="where the arrays go (default: a temporary directory)")
    args = parser.parse_args()
    shape = (QUICK if args.quick else FULL)["shape"]
    raw_bytes = 2 * shape[0] * shape[1] * shape[2]
    work = Path(tempfile.mkdtemp(prefix="tessera-dask-bench-", dir=args.workdir))
    try:
        src = work / "src.zarr"
        subprocess.run([str(TESSERA), "stream", str(src), "--dtype", "uint16", "--shape", ",".join(map(str, shape)),
                        "--chunk", "32,256,256", "--shard-chunks", "1,4,4", "--codec", "zstd", "--level", "1",
                        "--synthetic", "camera"], check=True)
        subprocess.run(["sync"])
        results = {"convert": [], "dask-cold": [], "dask-warm": []}
        rss = {"convert": [], "dask-cold": [], "dask-warm": []}
        startup = []
        reference = None
        cores = os.cpu_count() or 1
        for i in range(args.repeats):
            dst = work / "convert.zarr"
            wall, peak, _, _ = run_measured([str(TESSERA), "convert", str(src), str(dst), "--threads", str(cores), *DEST])
            results["convert"].append(wall)
            rss["convert"].append(peak)
            if reference is None:
                reference = tree_hash(dst)
            shutil.rmtree(dst)
            subprocess.run(["sync"])
            dst = work / "dask.zarr"
            out, peak = run_json_child(__file__, {"src": str(src), "dst": str(dst), "threads": args.task_threads})
            for name in ("cold", "warm"):
                results["dask-" + name].append(out[name])
                rss["dask-" + name].append(max(peak, out["worker_rss_mib"]))
            startup.append(out["startup"])
            if i == 0:
                assert tree_hash(dst) == reference, "the Dask conversion's files differ from tessera convert's"
            shutil.rmtree(dst)
            subprocess.run(["sync"])
            print(f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in results.items()), file=sys.stderr)
        base = raw_bytes / statistics.median(results["convert"]) / 1e9
        print(f"\nConvert {raw_bytes / 2**30:.2f} GiB (uint16 {'x'.join(map(str, shape))}, zstd 32x256x256/1x4x4 -> "
              f"blosc-lz4 16x256x256/1x8x8), {cores} cores, medians of {args.repeats} runs; outputs byte-identical\n")
        print("| run | seconds | GB/s | peak RSS (MiB) | vs tessera convert |")
        print("|---|---:|---:|---:|---:|")
        for name, label in (("convert", "tessera convert (1 process)"),
                            ("dask-cold", "tessera.dask.convert, LocalCluster 2 processes, first conversion"),
                            ("dask-warm", "the same cluster, next conversion")):
            sec = statistics.median(results[name])
            gbps = raw_bytes / sec / 1e9
            print(f"| {label} | {sec:.2f} | {gbps:.2f} | {statistics.median(rss[name]):.0f} | {gbps / base:.2f}x |")
        print(f"\nLocalCluster start-up (not in the times above): median {statistics.median(startup):.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
