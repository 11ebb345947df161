#!/usr/bin/env python3
"""Reading a jpeg-encoded Neuroglancer precomputed volume (what public EM image volumes are): tessera
against tensorstore, on the same volume.

A SIZE^3 uint8 EM-like volume (512^3 = 128 MiB by default: smooth membranes-and-cytoplasm texture
plus noise, fixed seed) is written once by tensorstore as jpeg precomputed (quality 85, 64^3
chunks; --sharded: 4x4x4 chunks per shard, identity hash). Then each tool reads it back whole
(into a new numpy array, [x, y, z, c] for tensorstore, [z, y, x] for tessera) and reads BLOCKS
random chunk-aligned 64^3 blocks, each into a new array after one open. Each run is a fresh Python
child timing open + read (imports excluded); peak RSS from wait4. Both on --threads threads
(tensorstore's data_copy / file_io concurrency; tessera's reads use every core, so with --threads
below the core count its children are pinned to that many cores). Before timing, tessera's whole
read is checked equal to tensorstore's (same bytes, both libjpeg-turbo: identical pixels).
Cells: medians of --repeats runs, tools interleaved. Ratio: tessera's speed / tensorstore's.

Run from the repository root:  .venv/bin/python bench/jpeg_read_bench.py [--size 512] [--repeats 5]
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
from bench_util import run_measured  # noqa: E402
from precomputed_bench import CHUNK, block_origins  # noqa: E402  (the same 64^3 blocks, the same seed)

TOOLS = ["tessera", "tensorstore"]


def em_like(size: int, z: int, rng):
    """One z plane of EM-like texture: cell interiors, dark membranes, noise."""
    import numpy as np

    y, x = np.mgrid[0:size, 0:size].astype(np.float32)
    cells = np.sin(x / 17.0 + np.sin(y / 23.0 + z / 40.0) * 2) * np.cos(y / 13.0 - z / 31.0)
    membranes = np.exp(-(cells ** 2) * 40)
    plane = 150 + 40 * cells - 90 * membranes + rng.normal(0, 8, size=(size, size))
    return np.clip(plane, 0, 255).astype(np.uint8)


def write_volume(path: Path, size: int, sharded: bool) -> None:
    import numpy as np
    import tensorstore as ts

    scale = {"size": [size] * 3, "chunk_size": [CHUNK] * 3, "resolution": [8, 8, 8], "encoding": "jpeg",
             "jpeg_quality": 85}
    if sharded:
        grid_bits = max(0, (size // CHUNK - 1).bit_length())
        scale["sharding"] = {"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": 6,
                             "minishard_bits": 0, "shard_bits": max(0, 3 * grid_bits - 6),
                             "minishard_index_encoding": "gzip", "data_encoding": "raw"}
    spec = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)}, "create": True,
            "multiscale_metadata": {"type": "image", "data_type": "uint8", "num_channels": 1},
            "scale_metadata": scale}
    arr = ts.open(spec).result()
    rng = np.random.default_rng(20261126)
    for z0 in range(0, size, CHUNK):
        slab = np.stack([em_like(size, z, rng) for z in range(z0, z0 + CHUNK)])  # z, y, x
        arr[:, :, z0:z0 + CHUNK, 0].write(np.transpose(slab, (2, 1, 0))).result()


def child(tool: str, op: str, path: str, size: int, threads: int, blocks: int) -> None:
    if tool == "tessera" and threads < len(os.sched_getaffinity(0)):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])
    if tool == "tessera":
        import tessera

        t0 = time.perf_counter()
        arr = tessera.open(path)
        if op == "read":
            out = arr[...]
            assert out.shape == (size,) * 3
        else:
            for x, y, z in block_origins(size, blocks):
                out = arr[z:z + CHUNK, y:y + CHUNK, x:x + CHUNK]
    else:
        import tensorstore as ts

        ctx = ts.Context({"data_copy_concurrency": {"limit": threads}, "file_io_concurrency": {"limit": threads}})
        t0 = time.perf_counter()
        arr = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": path}},
                      context=ctx).result()
        if op == "read":
            out = arr.read().result()
            assert out.shape == (size, size, size, 1)
        else:
            for x, y, z in block_origins(size, blocks):
                out = arr[x:x + CHUNK, y:y + CHUNK, z:z + CHUNK].read().result()
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def run_child(args, tool: str, op: str, store: Path) -> tuple[float, float]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", tool, op, str(store), str(args.size),
            str(args.threads), str(args.blocks)]
    _, rss, out, _ = run_measured(argv)
    return json.loads(out.strip().splitlines()[-1])["seconds"], rss


def verify(store: Path) -> None:
    import numpy as np
    import tensorstore as ts

    import tessera

    want = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(store)}}
                   ).result().read().result()
    got = tessera.open(store)[...]
    if not np.array_equal(got, np.transpose(want[..., 0], (2, 1, 0))):
        raise SystemExit("tessera's read of the jpeg volume differs from tensorstore's")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tool, op, path, size, threads, blocks = sys.argv[2:8]
        child(tool, op, path, int(size), int(threads), int(blocks))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--blocks", type=int, default=32)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--sharded", action="store_true")
    ap.add_argument("--work-dir", type=Path, default=Path(__file__).resolve().parents[1] / "build")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="jpeg-read-bench-", dir=args.work_dir))
    try:
        store = work / "volume"
        t0 = time.perf_counter()
        write_volume(store, args.size, args.sharded)
        stored = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
        print(f"volume: {args.size}^3 uint8 jpeg (quality 85), {CHUNK}^3 chunks"
              f"{', sharded 4x4x4' if args.sharded else ''}, {stored / 2**20:.1f} MiB stored "
              f"({args.size ** 3 / stored:.1f}:1), written by tensorstore in {time.perf_counter() - t0:.1f} s")
        verify(store)
        print("verified: tessera's whole read equals tensorstore's")
        results = {(tool, op): [] for tool in TOOLS for op in ("read", "blocks")}
        for r in range(args.repeats):
            for op in ("read", "blocks"):
                for tool in TOOLS:
                    seconds, rss = run_child(args, tool, op, store)
                    results[(tool, op)].append((seconds, rss))
                    print(f"  rep {r + 1} {op:6s} {tool:11s} {seconds:.3f} s  {rss:.0f} MiB", file=sys.stderr)
        print(f"\n{os.cpu_count()} CPUs, threads {args.threads}, median of {args.repeats}\n")
        print("| op | tool | median s | MB/s (decoded) | peak RSS MiB | tessera / tensorstore speed |")
        print("|---|---|---:|---:|---:|---:|")
        for op in ("read", "blocks"):
            nbytes = args.size ** 3 if op == "read" else args.blocks * CHUNK ** 3
            med = {tool: statistics.median(s for s, _ in results[(tool, op)]) for tool in TOOLS}
            for tool in TOOLS:
                rss = statistics.median(m for _, m in results[(tool, op)])
                ratio = "ref" if tool == "tensorstore" else f"**{med['tensorstore'] / med['tessera']:.2f}x**"
                label = "read all" if op == "read" else f"{args.blocks} random {CHUNK}^3 blocks"
                print(f"| {label} | {tool} | {med[tool]:.3f} | {nbytes / med[tool] / 1e6:.0f} | {rss:.0f} | {ratio} |")
        runs = {f"{tool} {op}": " ".join(f"{s:.3f}" for s, _ in v) for (tool, op), v in results.items()}
        print("\nper-run seconds: " + "; ".join(f"{k}: {v}" for k, v in runs.items()))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
