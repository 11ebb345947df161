#!/usr/bin/env python3
"""Neuroglancer precomputed benchmark: tessera vs tensorstore, sharded gzip volume.

A SIZE^3 uint8 volume (1024^3 = 1 GiB by default; smooth image-like data with noise, fixed seed)
is written as sharded precomputed: 64^3 chunks, 4x4x4 chunks per shard (identity hash, 6
minishard bits), gzip data and minishard indices (level 6: tessera's libdeflate, tensorstore's
zlib). Then each tool reads its own volume back whole, and reads BLOCKS 64^3 chunk-aligned blocks
at random places.

The compared tools do the same work, timed the same way: a Python child times open + write/read
(interpreter start and imports excluded). Writes: one shard-deep slab at a time from an np.memmap
of the raw file. Read all: into a newly allocated numpy array, kept until the clock stops. Blocks:
one open, then every block, each into a new array. Both on --threads threads (tensorstore's
concurrency limits; tessera's compression threads; tessera's reads have no thread option, so with
--threads below the core count its read children are pinned to that many cores).

  tessera-python: the Python package (tessera.create / tessera.open); the reference of every ratio.
  tensorstore:    its neuroglancer_precomputed driver.
  tessera CLI:    shown for comparison with earlier tables only, no ratio: whole processes timed
                  (start-up, reading the raw input file), reads to --output /dev/null (the output
                  is not kept), blocks one process per block.

Every run is its own child process (peak RSS from wait4 through a small launcher); each cell is
the median of --repeats runs, the tools interleaved within each repeat. The tessera-python and
tensorstore volumes are checked against the source with tensorstore, the CLI's volume is checked
byte-identical to tessera-python's.

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
TOOLS = ["tessera-python", "tensorstore", "tessera-cli"]
REF = "tessera-python"
CLI_NOTE = {"write": "whole process, reads the raw file",
            "read": "whole process, output discarded: not comparable",
            "blocks": "one process per block: not comparable"}


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


def child(tool: str, op: str, path: str, raw: str, size: int, threads: int, blocks: int) -> None:
    import numpy as np

    if tool == "tessera-python":
        tessera_child(op, path, raw, size, threads, blocks)
        return
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


def tessera_child(op: str, path: str, raw: str, size: int, threads: int, blocks: int) -> None:
    import numpy as np

    if op != "write" and threads < len(os.sched_getaffinity(0)):  # reads have no thread option
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])
    import tessera

    t0 = time.perf_counter()
    if op == "write":
        shard = SHARD_CHUNKS * CHUNK
        src = np.memmap(raw, dtype="u1", mode="r", shape=(size, size, size))  # z, y, x: tessera's order
        with tessera.create(path, format="precomputed", dtype="uint8", shape=(size,) * 3, chunks=(CHUNK,) * 3,
                            shard_chunks=(SHARD_CHUNKS,) * 3, codec="gzip", threads=threads) as w:
            for z in range(0, size, shard):  # one shard-deep slab per append: whole shards
                w.append(src[z:z + shard])
    else:
        arr = tessera.open(path)
        if op == "read":
            out = arr[...]
            assert out.shape == (size, size, size)
        else:
            for x, y, z in block_origins(size, blocks):
                out = arr[z:z + CHUNK, y:y + CHUNK, x:x + CHUNK]
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


def python_child(args, tool: str, op: str, store: Path, raw: Path) -> tuple[float, float]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", tool, op, str(store), str(raw),
            str(args.size), str(args.threads), str(args.blocks)]
    _, rss, out, _ = run_measured(argv)
    return json.loads(out.strip().splitlines()[-1])["seconds"], rss


def verify(args, raw: Path, stores: dict) -> str:
    import numpy as np
    import tensorstore as ts

    src = np.memmap(raw, dtype="u1", mode="r", shape=(args.size,) * 3)
    notes = []
    ours, cli = stores["tessera-python"], stores["tessera-cli"]
    for path in sorted(ours.rglob("*")):
        other = cli / path.relative_to(ours)
        if path.is_file() and (not other.is_file() or path.read_bytes() != other.read_bytes()):
            raise SystemExit(f"tessera-python's {path.relative_to(ours)} differs from the CLI's")
    notes.append("tessera-cli: byte-identical to tessera-python's")
    for tool, store in stores.items():
        if tool == "tessera-cli":
            continue
        arr = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(store)}}).result()
        for z in range(0, args.size, 256):
            got = np.transpose(arr[:, :, z:z + 256, 0].read().result(), (2, 1, 0))
            if not np.array_equal(got, src[z:z + 256]):
                raise SystemExit(f"{tool}'s volume differs from the source near z={z}")
        notes.append(f"{tool}: OK")
    return "verified with tensorstore: " + ", ".join(notes)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tool, op, path, raw, size, threads, blocks = sys.argv[2:9]
        child(tool, op, path, raw, int(size), int(threads), int(blocks))
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
        stores = {tool: work / tool for tool in TOOLS}
        runs = {(tool, op): [] for tool in stores for op in ("write", "read", "blocks")}
        for rep in range(args.repeats):
            for op in ("write", "read", "blocks"):
                for tool, store in stores.items():
                    if op == "write" and store.exists():
                        shutil.rmtree(store)
                    os.sync()
                    runs[(tool, op)].append(tessera(args, op, store, raw) if tool == "tessera-cli" else
                                            python_child(args, tool, op, store, raw))
                    print(f"[{rep + 1}] {op:6s} {tool:14s} {runs[(tool, op)][-1][0]:.3f} s", file=sys.stderr)
            if rep == 0:
                check = verify(args, raw, stores)
        nbytes = args.size ** 3
        print(f"\n{args.size}^3 uint8 ({nbytes / 2**30:.2f} GiB), sharded precomputed: 64^3 chunks, 4x4x4 chunks per "
              f"shard, identity hash, gzip data + minishard indices; {args.threads} threads"
              f"{' (tessera-python reads pinned to as many cores)' if args.threads < len(os.sched_getaffinity(0)) else ''}"
              f"; median of {args.repeats}")
        print("tessera-python and tensorstore: open + write/read timed inside a Python child; writes from an "
              "np.memmap, one shard-deep slab per call; reads into new numpy arrays kept until the clock stops; "
              "blocks: one open, then every block\n")
        print("| operation | tool | median s | GB/s | peak RSS MiB | tessera speedup (peer s / tessera-python s) |")
        print("|---|---|---:|---:|---:|---:|")
        for op, label, moved in (("write", "write all", nbytes), ("read", "read all", nbytes),
                                 ("blocks", f"read {args.blocks} random 64^3 blocks", args.blocks * CHUNK ** 3)):
            med = {tool: statistics.median(s for s, _ in runs[(tool, op)]) for tool in stores}
            rss = {tool: max(r for _, r in runs[(tool, op)]) for tool in stores}
            for tool in stores:
                name, ratio = tool, f"{med[tool] / med[REF]:.2f}x"
                if tool == REF:
                    ratio = "1.00 (reference)"
                elif tool == "tessera-cli":
                    name, ratio = "tessera CLI (" + CLI_NOTE[op] + ")", "-"
                print(f"| {label} | {name} | {med[tool]:.3f} | {moved / 1e9 / med[tool]:.2f} | {rss[tool]:.0f} | {ratio} |")
        sizes = {tool: sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) for tool, store in stores.items()}
        print("\nstored bytes: " + ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in sizes.items()))
        print(check)
        print("all runs (s): " + "; ".join(f"{op} {tool} " + " ".join(f"{s:.3f}" for s, _ in v)
                                           for (tool, op), v in runs.items()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    main()
