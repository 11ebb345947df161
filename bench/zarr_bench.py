#!/usr/bin/env python3
"""Zarr v3 sharded write/read benchmark: tessera (Python package) vs tensorstore vs zarr-python 3.

The array is SIZE^3 uint16 (512^3 = 256 MiB by default): a smooth gradient plus low-amplitude
noise, generated once with a fixed seed and saved to a raw file. Every tool writes it with the same
layout: 128^3 shards of 32^3 inner chunks, bytes(little) + zstd level 1 (no checksum) inside,
index at the end with bytes + crc32c index codecs. Then each tool reads back the store it wrote
itself: everything, and the strided selection ::4,::4,::4. tessera also reads the peers' stores.

Each measurement runs in a fresh child process (so peak RSS is that child's) and is repeated
--repeats times, the tools interleaved within each repeat; the table shows the median.

Every compared tool does the same work, timed the same way: a Python child times its own open +
write/read, excluding interpreter start and imports. Writes take the source array already in memory
(loaded before the clock starts) and store the same bytes; reads return a newly allocated numpy
array that the child keeps until the clock stops (tessera: `tessera.open(store)[...]`). Threads:
each tool's default (one per core) unless --threads is given (tessera's reads have no thread
option: with --threads its read children are pinned to that many cores instead).

  tessera-python: the reference of every ratio.
  tessera CLI:    shown for comparison with earlier tables only, no ratio: the whole process is
                  timed (start-up, reading the raw input file for writes), and its reads go to
                  --output /dev/null (two reused buffers: the output is not kept).

Run from the repository root:  .venv/bin/python bench/zarr_bench.py [--size 512] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / "build" / "release" / "tessera"

SHARD = 128
CHUNK = 32
ZSTD_LEVEL = 1
DTYPE = "uint16"
STRIDED = "::4,::4,::4"
TOOLS = ["tessera-python", "tensorstore", "zarr-python", "tessera-cli"]
REF = "tessera-python"
PEERS = ["tensorstore", "zarr-python"]


# ---------------------------------------------------------------------------------------------
# The layout, as zarr.json's codecs list (what tensorstore is given; zarr-python and tessera are
# asked for the same through their own options and the result is checked against this).


def codecs_json() -> list:
    return [{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [CHUNK] * 3,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end",
        },
    }]


def normalized_codecs(codecs: list) -> list:
    """Fills in the defaults writers may leave out, so equal layouts compare equal."""
    out = []
    for c in codecs:
        c = json.loads(json.dumps(c))
        cfg = c.setdefault("configuration", {})
        if c["name"] == "bytes":
            cfg.setdefault("endian", "little")
        elif c["name"] == "zstd":
            cfg.setdefault("checksum", False)
        elif c["name"] == "sharding_indexed":
            cfg.setdefault("index_location", "end")
            cfg["codecs"] = normalized_codecs(cfg["codecs"])
            cfg["index_codecs"] = normalized_codecs(cfg["index_codecs"])
        if not cfg:
            del c["configuration"]
        out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# Child mode: one peer operation, timed from inside, result as JSON on stdout.


def child_main(tool: str, op: str, store: str, raw: str, size: int, threads: int | None) -> None:
    import numpy as np

    shape = (size,) * 3
    if tool == "tensorstore":
        import tensorstore as ts

        limit = threads or os.cpu_count()
        ctx = ts.Context({"data_copy_concurrency": {"limit": limit}, "file_io_concurrency": {"limit": limit}})
        kvstore = {"driver": "file", "path": store}
        if op == "write":
            data = np.fromfile(raw, dtype="<u2").reshape(shape)
            spec = {"driver": "zarr3", "kvstore": kvstore, "create": True, "delete_existing": True,
                    "metadata": {"shape": list(shape), "data_type": DTYPE, "fill_value": 0,
                                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [SHARD] * 3}},
                                 "codecs": codecs_json()}}
            t0 = time.perf_counter()
            t = ts.open(spec, context=ctx).result()
            t.write(data).result()
        else:
            t0 = time.perf_counter()
            t = ts.open({"driver": "zarr3", "kvstore": kvstore, "open": True}, context=ctx).result()
            out = (t if op == "read" else t[::4, ::4, ::4]).read().result()
    elif tool == "zarr-python":
        import zarr
        from zarr.codecs import ZstdCodec

        if threads:
            zarr.config.set({"threading.max_workers": threads})
        if op == "write":
            data = np.fromfile(raw, dtype="<u2").reshape(shape)
            t0 = time.perf_counter()
            arr = zarr.create_array(store, shape=shape, dtype=DTYPE, chunks=(CHUNK,) * 3, shards=(SHARD,) * 3,
                                    compressors=ZstdCodec(level=ZSTD_LEVEL, checksum=False), filters=None,
                                    fill_value=0, overwrite=True)
            arr[...] = data
        else:
            t0 = time.perf_counter()
            arr = zarr.open_array(store, mode="r")
            out = arr[...] if op == "read" else arr[::4, ::4, ::4]
    elif tool == "tessera-python":
        if threads and op != "write":  # reads have no thread option: give them THREADS cores
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])
        import tessera

        if op == "write":
            data = np.fromfile(raw, dtype="<u2").reshape(shape)
            t0 = time.perf_counter()
            with tessera.create(store, dtype=DTYPE, shape=shape, chunks=(CHUNK,) * 3,
                                shard_chunks=(SHARD // CHUNK,) * 3, codec="zstd", level=ZSTD_LEVEL,
                                index_location="end", threads=threads or 0) as w:
                w.append(data)
        else:
            t0 = time.perf_counter()
            a = tessera.open(store)
            out = a[...] if op == "read" else a[::4, ::4, ::4]
    else:
        raise SystemExit(f"unknown tool {tool}")
    seconds = time.perf_counter() - t0
    if op != "write":
        assert out.shape == ((size,) * 3 if op == "read" else ((size + 3) // 4,) * 3)
    print(json.dumps({"seconds": seconds}))


# ---------------------------------------------------------------------------------------------
# Parent: run children, collect wall time and peak RSS.


GNU_TIME = Path("/usr/bin/time")


def gnu_time_works() -> bool:
    if not GNU_TIME.is_file():
        return False
    probe = subprocess.run([str(GNU_TIME), "-f", "%M", "-o", os.devnull, "true"], capture_output=True)
    return probe.returncode == 0


USE_GNU_TIME = gnu_time_works()


def run_child(argv: list[str], own_timing: bool) -> tuple[float, float]:
    """Runs ARGV to completion; returns (seconds, peak RSS in MiB). With OWN_TIMING, seconds come
    from the child's JSON line on stdout; otherwise it is the parent's wall time of the process.

    Peak RSS comes from GNU time when present: Linux counts the RSS a child had before exec (a copy
    of its parent) into its ru_maxrss, so the child must be forked by a small process, not by this
    one. Without GNU time, wait4's rusage is used and includes this process's own RSS as a floor."""
    with tempfile.NamedTemporaryFile(prefix="rss-") as rss_file, tempfile.TemporaryFile() as err_file:
        if USE_GNU_TIME:
            argv = [str(GNU_TIME), "-f", "%M", "-o", rss_file.name, *argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err_file)
        stdout = proc.stdout.read()  # until the child closes it; then reap the child with wait4
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err_file.seek(0)
            raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{err_file.read().decode(errors='replace')}")
        rss_kib = int(Path(rss_file.name).read_text().split()[-1]) if USE_GNU_TIME else usage.ru_maxrss
    seconds = json.loads(stdout.decode().strip().splitlines()[-1])["seconds"] if own_timing else wall
    return seconds, rss_kib / 1024.0  # both are KiB on Linux


def tessera_argv(binary: Path, op: str, store: Path, raw: Path, size: int, threads: int | None) -> list[str]:
    if op == "write":
        argv = [str(binary), "stream", str(store), "--format", "zarr3", "--dtype", DTYPE,
                "--shape", f"{size},{size},{size}", "--chunk", f"{CHUNK},{CHUNK},{CHUNK}",
                "--shard-chunks", ",".join([str(SHARD // CHUNK)] * 3), "--codec", "zstd",
                "--level", str(ZSTD_LEVEL), "--index-location", "end", "--input", str(raw)]
    else:
        argv = [str(binary), "read", str(store), "--output", "/dev/null"]
        if op == "strided":
            argv.append(f"--slice={STRIDED}")
    if threads:
        argv += ["--threads", str(threads)]
    return argv


def run_once(tool, op, store, raw, args) -> tuple[float, float]:
    """One run of TOOL's OP on STORE in a fresh child: (seconds, peak RSS MiB)."""
    if op == "write" and store.exists():
        shutil.rmtree(store)
    os.sync()  # no write-back of earlier runs' dirty pages during this one
    if tool == "tessera-cli":
        return run_child(tessera_argv(args.binary, op, store, raw, args.size, args.threads), own_timing=False)
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", tool, op, str(store), str(raw),
            str(args.size), str(args.threads or 0)]
    return run_child(argv, own_timing=True)


def summary(tool, op, store, runs) -> dict:
    return {"tool": tool, "op": op, "store": store, "seconds": statistics.median(s for s, _ in runs),
            "rss_mib": max(r for _, r in runs), "all_seconds": [s for s, _ in runs]}


def make_source(raw: Path, size: int) -> None:
    """A smooth 3-D gradient plus 0..3 noise: zstd-1 compresses it about 2.5x (moderately)."""
    import numpy as np

    rng = np.random.default_rng(20240611)
    i = np.arange(size, dtype=np.uint16)
    scale = max(1, 40000 // (3 * size))
    with open(raw, "wb") as f:
        for z in range(size):  # one plane at a time keeps the generator's memory small
            plane = (i[:, None] * scale + i[None, :] * scale + np.uint16(z * scale))
            plane = plane + rng.integers(0, 4, size=(size, size), dtype=np.uint16)
            f.write(plane.astype("<u2").tobytes())


def verify(binary: Path, stores: dict, raw: Path, size: int, workdir: Path) -> None:
    """tessera's full and strided reads of its own store equal the source bytes (the Python package's
    and the CLI's), and the Python package's store is byte-identical to the CLI's."""
    import numpy as np

    import tessera

    src = np.memmap(raw, dtype="<u2", mode="r", shape=(size,) * 3)
    a = tessera.open(stores["tessera-python"])
    if not np.array_equal(a[...], src) or not np.array_equal(a[::4, ::4, ::4], src[::4, ::4, ::4]):
        raise SystemExit("verification failed: tessera-python's read of its own store differs from the source")
    for path in stores["tessera-python"].rglob("*"):
        other = stores["tessera-cli"] / path.relative_to(stores["tessera-python"])
        if path.is_file() and (not other.is_file() or path.read_bytes() != other.read_bytes()):
            raise SystemExit(f"verification failed: tessera-python's {path.name} differs from the CLI's")
    out = workdir / "verify.raw"
    subprocess.run([str(binary), "read", str(stores["tessera-cli"]), "--output", str(out)], check=True)
    got = np.memmap(out, dtype="<u2", mode="r", shape=(size,) * 3)
    if not np.array_equal(got, src):
        raise SystemExit("verification failed: tessera read of its own store differs from the source")
    del got
    strided = subprocess.run([str(binary), "read", str(stores["tessera-cli"]), f"--slice={STRIDED}"],
                             check=True, stdout=subprocess.PIPE).stdout
    if strided != np.ascontiguousarray(src[::4, ::4, ::4]).astype("<u2").tobytes():
        raise SystemExit("verification failed: tessera strided read differs from numpy")
    out.unlink()


def check_same_layout(stores: dict) -> list[str]:
    notes = []
    reference = normalized_codecs(codecs_json())
    for tool, store in stores.items():
        meta = json.loads((store / "zarr.json").read_text())
        grid = meta["chunk_grid"]["configuration"]["chunk_shape"]
        if normalized_codecs(meta["codecs"]) != reference or grid != [SHARD] * 3:
            notes.append(f"WARNING: {tool}'s layout differs: grid {grid}, codecs {json.dumps(meta['codecs'])}")
    return notes or ["layout check: all stores have identical chunk grids and codecs "
                     f"({SHARD}^3 shards, {CHUNK}^3 chunks, zstd {ZSTD_LEVEL}, index at end + crc32c)"]


def store_bytes(store: Path) -> int:
    return sum(p.stat().st_size for p in store.rglob("*") if p.is_file())


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tool, op, store, raw, size, threads = sys.argv[2:8]
        child_main(tool, op, store, raw, int(size), int(threads) or None)
        return

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=512, help="edge of the cubic array (default 512)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement; the median is shown")
    ap.add_argument("--threads", type=int, default=None,
                    help="passed to tessera --threads, tensorstore's concurrency limits, zarr's max_workers")
    ap.add_argument("--binary", type=Path, default=Path(os.environ.get("TESSERA_BIN", DEFAULT_BINARY)))
    ap.add_argument("--workdir", type=Path, default=None, help="where stores go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-cross", action="store_true", help="skip tessera reading the peers' stores")
    args = ap.parse_args()
    if args.size % SHARD:
        print(f"note: size {args.size} is not a multiple of the {SHARD} shard edge; edge shards are partial")
    if not args.binary.is_file():
        raise SystemExit(f"tessera binary not found at {args.binary}: build it with scripts/build.sh")

    workdir = Path(tempfile.mkdtemp(prefix="tessera-bench-", dir=args.workdir))
    try:
        raw = workdir / "source.raw"
        make_source(raw, args.size)
        stores = {tool: workdir / f"{tool}.zarr" for tool in TOOLS}
        # (tool, op, store read); each repeat runs every one of them once, in this order
        cells = [(tool, op, tool) for op in ("write", "read", "strided") for tool in TOOLS]
        if not args.no_cross:
            cells += [(REF, op, peer) for peer in PEERS for op in ("read", "strided")]
        runs = {cell: [] for cell in cells}
        for rep in range(args.repeats):
            for tool, op, owner in cells:
                runs[(tool, op, owner)].append(run_once(tool, op, stores[owner], raw, args))
                store_read = owner + "'s"
                print(f"  [{rep + 1}] {tool:14s} {op:8s} {store_read:16s} {runs[(tool, op, owner)][-1][0]:.3f} s",
                      file=sys.stderr)
        results = [summary(tool, op, stores[owner], runs[(tool, op, owner)]) for tool, op, owner in cells]
        verify(args.binary, stores, raw, args.size, workdir)
        notes = check_same_layout(stores)
        sizes = {tool: store_bytes(store) for tool, store in stores.items()}
        print_table(results, args, sizes, notes)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def print_table(results: list, args, sizes: dict, notes: list[str]) -> None:
    full_bytes = args.size ** 3 * 2
    strided_bytes = ((args.size + 3) // 4) ** 3 * 2
    op_names = {"write": "write all", "read": "read all", "strided": f"read {STRIDED}"}
    ref = {r["op"]: r["seconds"] for r in results if r["tool"] == REF and r["store"].name == f"{REF}.zarr"}

    print(f"\n{args.size}^3 {DTYPE} ({full_bytes / 2**20:.0f} MiB), {SHARD}^3 shards of {CHUNK}^3 chunks, "
          f"zstd level {ZSTD_LEVEL}, index at end (crc32c); median of {args.repeats}; "
          f"threads: {f'{args.threads} (tessera-python reads: pinned to {args.threads} core(s))' if args.threads else 'each tool default (one per core)'}; "
          f"{os.cpu_count()} CPUs")
    print("every compared tool: a Python child timing open + write/read; writes from an array in memory, "
          "reads into a new numpy array kept until the clock stops")
    print("throughput = uncompressed bytes moved / seconds (the strided read counts only the selected bytes, "
          f"{strided_bytes / 1e6:.1f} MB)\n")
    print("| operation | tool | store read | median s | MB/s | peak RSS MiB | tessera speedup (peer s / tessera-python s) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in results:
        nbytes = strided_bytes if r["op"] == "strided" else full_bytes
        store = "-" if r["op"] == "write" else r["store"].name.removesuffix(".zarr") + "'s"
        tool = r["tool"]
        if tool == REF:
            speedup = "1.00 (reference)" if r["store"].name == f"{REF}.zarr" else "-"
        elif tool == "tessera-cli":
            tool = "tessera CLI (whole process" + (", reads the raw file)" if r["op"] == "write" else
                                                   ", output discarded: not comparable)")
            speedup = "-"
        else:
            speedup = f"{r['seconds'] / ref[r['op']]:.2f}x"
        print(f"| {op_names[r['op']]} | {tool} | {store} | {r['seconds']:.3f} | "
              f"{nbytes / r['seconds'] / 1e6:.0f} | {r['rss_mib']:.0f} | {speedup} |")
    print()
    print("store sizes: " + ", ".join(f"{t} {b / 2**20:.1f} MiB" for t, b in sizes.items())
          + f" (ratio {full_bytes / sizes[REF]:.2f} for tessera)")
    for note in notes:
        print(note)
    print("verified: tessera's full and strided reads of its own store equal the source (Python and CLI); "
          "tessera-python's store is byte-identical to the CLI's")
    print("all runs (s): " + "; ".join(
        f"{r['tool']} {r['op']} {r['store'].name.removesuffix('.zarr')}'s " + " ".join(f"{s:.3f}" for s in r["all_seconds"])
        for r in results))
    print("peak RSS: " + ("GNU time's maximum resident set size of each child process" if USE_GNU_TIME else
                          "wait4 ru_maxrss (no GNU time found: includes the benchmark process's own RSS as a floor)"))
    print("page cache: reads follow the writes, so stores are read from memory (every tool alike); "
          "the store is synced to disk before each run")


if __name__ == "__main__":
    main()
