#!/usr/bin/env python3
"""Neuroglancer precomputed benchmark: tessera vs tensorstore, sharded gzip volume.

A SIZE^3 uint8 volume (1024^3 = 1 GiB by default; smooth image-like data with noise, fixed seed)
is written as sharded precomputed: 64^3 chunks, 4x4x4 chunks per shard (identity hash, 6
minishard bits), gzip data and minishard indices (zlib level 6 in both tools). Then each tool
reads its own volume back whole, and reads BLOCKS 64^3 chunk-aligned blocks at random places.

  tessera:     each operation is one CLI process, timed whole (start-up and reading the raw
               input file included; output to /dev/null). Blocks: one process per block.
  tensorstore: a Python child times open + write/read (interpreter start and imports excluded;
               the source is an np.memmap of the raw file). Blocks: one open, then every block.

Every run is its own child process (peak RSS from wait4 through a small launcher); each cell is
the median of --repeats runs. Both volumes are checked against the source before timing.

Run from the repository root:  .venv/bin/python bench/precomputed_bench.py [--size 1024] [--repeats 3]
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

REPO_ROOT = Path(__file__).resolve().parents[1]
CHUNK, SHARD_CHUNKS = 64, 4


def sharding() -> dict:
    return {"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": 0,
            "minishard_bits": 6, "shard_bits": 0, "minishard_index_encoding": "gzip", "data_encoding": "gzip"}


def make_source(raw: Path, size: int) -> None:
    import numpy as np

    rng = np.random.default_rng(20261123)
    x = np.arange(size, dtype=np.float32)
    with open(raw, "wb") as f:
        for z in range(size):  # C order z, y, x: one z plane at a time
            plane = (np.sin(x[None, :] / 37.0 + z / 51.0) * 40 + np.cos(x[:, None] / 23.0) * 40 + 120)
            plane += rng.normal(0, 3, size=(size, size)).astype(np.float32)
            f.write(np.clip(plane, 0, 255).astype(np.uint8).tobytes())


def block_origins(size: int, count: int) -> list[tuple[int, int, int]]:
    import numpy as np

    rng = np.random.default_rng(7)
    n = size // CHUNK
    return [tuple(int(v) * CHUNK for v in rng.integers(0, n, size=3)) for _ in range(count)]


# ---------------------------------------------------------------------------------------------
# tensorstore child


def child(op: str, path: str, raw: str, size: int, threads: int, blocks: int) -> None:
    import numpy as np
    import tensorstore as ts

    ctx = ts.Context({"data_copy_concurrency": {"limit": threads}, "file_io_concurrency": {"limit": threads}})
    kv = {"driver": "file", "path": path}
    t0 = time.perf_counter()
    if op == "write":
        shard = SHARD_CHUNKS * CHUNK
        sharding_spec = sharding()
        sharding_spec["shard_bits"] = 3 * (max(0, (size // CHUNK - 1).bit_length()) - 2)
        spec = {"driver": "neuroglancer_precomputed", "kvstore": kv, "create": True, "delete_existing": True,
                "multiscale_metadata": {"type": "image", "data_type": "uint8", "num_channels": 1},
                "scale_metadata": {"size": [size] * 3, "chunk_size": [CHUNK] * 3, "resolution": [1, 1, 1],
                                   "encoding": "raw", "sharding": sharding_spec}}
        src = np.memmap(raw, dtype="u1", mode="r", shape=(size, size, size))  # z, y, x
        arr = ts.open(spec, context=ctx).result()
        for z in range(0, size, shard):  # one shard-deep slab per write: whole shards
            arr[:, :, z:z + shard, 0].write(np.transpose(src[z:z + shard], (2, 1, 0))).result()
    else:
        arr = ts.open({"driver": "neuroglancer_precomputed", "kvstore": kv}, context=ctx).result()
        if op == "read":
            out = arr.read().result()
            assert out.shape == (size, size, size, 1)
        else:
            for x, y, z in block_origins(size, blocks):
                out = arr[x:x + CHUNK, y:y + CHUNK, z:z + CHUNK].read().result()
    print(json.dumps({"seconds": time.perf_counter() - t0}))


# ---------------------------------------------------------------------------------------------
# parent


def tessera(args, op: str, store: Path, raw: Path) -> tuple[float, float]:
    binary = str(args.binary)
    if op == "write":
        s = ",".join([str(args.size)] * 3)
        argv = [binary, "stream", str(store), "--format", "precomputed", "--dtype", "uint8", "--shape", s,
                "--chunk", f"{CHUNK},{CHUNK},{CHUNK}", "--shard-chunks", ",".join([str(SHARD_CHUNKS)] * 3),
                "--codec", "gzip", "--input", str(raw), "--threads", str(args.threads)]
        wall, rss, _, _ = run_measured(argv)
        return wall, rss
    if op == "read":
        wall, rss, _, _ = run_measured([binary, "read", str(store), "--output", "/dev/null",
                                        "--threads", str(args.threads)])
        return wall, rss
    total, peak = 0.0, 0.0
    for x, y, z in block_origins(args.size, args.blocks):
        expr = f"{z}:{z + CHUNK},{y}:{y + CHUNK},{x}:{x + CHUNK}"
        wall, rss, _, _ = run_measured([binary, "read", str(store), f"--slice={expr}", "--output", "/dev/null"])
        total, peak = total + wall, max(peak, rss)
    return total, peak


def peer(args, op: str, store: Path, raw: Path) -> tuple[float, float]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", op, str(store), str(raw),
            str(args.size), str(args.threads), str(args.blocks)]
    _, rss, out, _ = run_measured(argv)
    return json.loads(out.strip().splitlines()[-1])["seconds"], rss


def verify(args, raw: Path, stores: dict) -> str:
    import numpy as np
    import tensorstore as ts

    src = np.memmap(raw, dtype="u1", mode="r", shape=(args.size,) * 3)
    notes = []
    for tool, store in stores.items():
        arr = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(store)}}).result()
        for z in range(0, args.size, 256):
            got = np.transpose(arr[:, :, z:z + 256, 0].read().result(), (2, 1, 0))
            if not np.array_equal(got, src[z:z + 256]):
                raise SystemExit(f"{tool}'s volume differs from the source near z={z}")
        notes.append(f"{tool}: OK")
    return "verified with tensorstore: " + ", ".join(notes)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        op, path, raw, size, threads, blocks = sys.argv[2:8]
        child(op, path, raw, int(size), int(threads), int(blocks))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--blocks", type=int, default=32)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--binary", type=Path, default=REPO_ROOT / "build" / "release" / "tessera")
    args = ap.parse_args()
    if args.size % (CHUNK * SHARD_CHUNKS) or (args.size // CHUNK) & (args.size // CHUNK - 1):
        raise SystemExit("--size must be a power of two and a multiple of 256")
    work = Path(tempfile.mkdtemp(prefix="tessera-precomputed-bench-", dir=REPO_ROOT / "build"))
    shm = Path(tempfile.mkdtemp(prefix="tessera-precomputed-bench-", dir="/dev/shm"))
    raw = shm / "source.raw"
    try:
        make_source(raw, args.size)
        stores = {"tessera": work / "tessera", "tensorstore": work / "tensorstore"}
        runs = {(tool, op): [] for tool in stores for op in ("write", "read", "blocks")}
        for rep in range(args.repeats):
            for op in ("write", "read", "blocks"):
                for tool, store in stores.items():
                    if op == "write" and store.exists():
                        shutil.rmtree(store)
                    os.sync()
                    runs[(tool, op)].append((tessera if tool == "tessera" else peer)(args, op, store, raw))
                    print(f"[{rep + 1}] {op:6s} {tool:11s} {runs[(tool, op)][-1][0]:.2f} s", file=sys.stderr)
            if rep == 0:
                check = verify(args, raw, stores)
        nbytes = args.size ** 3
        print(f"\n{args.size}^3 uint8 ({nbytes / 2**30:.2f} GiB), sharded precomputed: 64^3 chunks, 4x4x4 chunks per "
              f"shard, identity hash, gzip data + minishard indices; {args.threads} threads; median of {args.repeats}\n")
        print("| operation | tool | median s | GB/s | peak RSS MiB | tessera speedup (peer s / tessera s) |")
        print("|---|---|---:|---:|---:|---:|")
        for op, label, moved in (("write", "write all", nbytes), ("read", "read all", nbytes),
                                 ("blocks", f"read {args.blocks} random 64^3 blocks", args.blocks * CHUNK ** 3)):
            med = {tool: statistics.median(s for s, _ in runs[(tool, op)]) for tool in stores}
            rss = {tool: max(r for _, r in runs[(tool, op)]) for tool in stores}
            for tool in stores:
                ratio = "1.00 (reference)" if tool == "tessera" else f"{med[tool] / med['tessera']:.2f}x"
                print(f"| {label} | {tool} | {med[tool]:.3f} | {moved / 1e9 / med[tool]:.2f} | {rss[tool]:.0f} | {ratio} |")
        sizes = {tool: sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) for tool, store in stores.items()}
        print("\nstored bytes: " + ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in sizes.items()))
        print(check)
        print("tessera blocks: one CLI process per block (start-up included); tensorstore: one open, all blocks")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    main()
