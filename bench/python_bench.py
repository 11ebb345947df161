#!/usr/bin/env python3
"""Python package benchmark: tessera's Python API against its own CLI and against peers' Python APIs.

Part 1, streaming numpy frames into a sharded Zarr v3 array (uint16 camera-like frames, dimension 0
unbounded, chunk 32x256x256, shard 1x4x4 chunks, blosc-lz4 clevel 1 with byte shuffle unless
--codec says otherwise; every tool writes to a tmpfs directory, /dev/shm):
  tessera-python  tessera.create(...).append(frame) once per frame, then close; the frames are numpy
                  arrays already in memory: the raw file's pages in /dev/shm, mapped with MAP_POPULATE
                  before the clock starts (so no tool touches fresh memory for its input).
  tessera-cli     build/release/tessera stream --input RAW: the same frames from a raw file in
                  /dev/shm; the whole process is timed (start to exit).
  acquire-zarr    acquire_zarr.ZarrStream.append(frame) once per frame, then close; the same frames
                  as tessera-python.
  Each run is its own child process started by bench_util.run_measured (wait4: peak RSS of that run),
  right after the parent touched and freed 2 GiB (see warm_memory); the tools' order rotates per repeat.
  Python children are timed inside, from stream creation to close (interpreter start, imports and
  mapping the frames excluded); their peak RSS includes the mapped frames (the "input held" column).
  Ratios: tessera-python GB/s / tessera-cli GB/s (target >= 0.95) and tessera-python / acquire-zarr
  (target >= 2).

Part 2, reading a 512^3 uint16 array (sharded: chunk 64^3, shard 4x4x4 chunks, zstd level 1; written
once with tessera, checked equal through tensorstore) from /dev/shm into numpy, both handles opened
once and kept open:
  whole     a[...] (tessera) vs t.read().result() (tensorstore): the whole array.
  blocks    32 random 64^3 blocks (random offsets, so most straddle 8 chunks), one read each.
  Run in this process, tools interleaved; tensorstore with its default context (no chunk cache).
  Ratio: tessera GB/s / tensorstore GB/s (target >= 1.3).

Every cell is the median of --repeats runs (default 7); the best run is shown too (this 2-core VM's
timings vary by up to 2x from run to run when other work runs). Run from the repository root after
`pip install .` and scripts/build.sh:
  .venv/bin/python bench/python_bench.py [--frames 64] [--frame 2048x2048] [--size 512] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import math
import mmap
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import fs_type, make_camera_input, rss_floor_mib, run_json_child, run_measured  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / "build" / "release" / "tessera"
SEED = 20240611


# ---------------------------------------------------------------------------------------------
# Part 1 children: one streaming run each, timed inside; one JSON line on stdout.


def child_main(cfg: dict) -> None:
    import resource

    import numpy as np

    frame = tuple(cfg["frame"])
    # The frames are the raw file's pages in /dev/shm, mapped and populated before the clock starts:
    # numpy arrays already in memory, read from the same page cache the CLI reads with read(2), and no
    # fresh anonymous memory (whose first touch on this VM costs a varying amount of system time).
    with open(cfg["raw"], "rb") as f:
        mapping = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ)
    frames = np.frombuffer(mapping, dtype="<u2").reshape(-1, *frame)
    chunk, shard_chunks, threads, codec, level = cfg["chunk"], cfg["shard_chunks"], cfg["threads"], cfg["codec"], cfg["level"]
    rss_ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if cfg["tool"] == "tessera-python":
        import tessera

        t0 = time.perf_counter()
        w = tessera.create(cfg["store"], format="zarr3", dtype="uint16", shape=(0, *frame), chunks=chunk,
                           shard_chunks=shard_chunks, codec=codec, level=level, threads=threads)
        for f in frames:
            w.append(f)
        w.close()
        seconds = time.perf_counter() - t0
    elif cfg["tool"] == "acquire-zarr":
        import acquire_zarr as az

        az.set_log_level(az.LogLevel.ERROR)
        shape = [0, *frame]
        names, kinds = ["t", "y", "x"], [az.DimensionType.TIME, az.DimensionType.SPACE, az.DimensionType.SPACE]
        dims = [az.Dimension(name=names[d], kind=kinds[d], array_size_px=shape[d], chunk_size_px=chunk[d],
                             shard_size_chunks=shard_chunks[d]) for d in range(3)]
        compression = None
        if codec != "none":
            cname = {"blosc-lz4": az.CompressionCodec.BLOSC_LZ4, "blosc-zstd": az.CompressionCodec.BLOSC_ZSTD}[codec]
            compression = az.CompressionSettings(compressor=az.Compressor.BLOSC1, codec=cname, level=level, shuffle=1)
        settings = az.StreamSettings(store_path=cfg["store"], overwrite=True, max_threads=threads)
        settings.arrays = [az.ArraySettings(dimensions=dims, data_type=np.uint16, compression=compression)]
        t0 = time.perf_counter()
        stream = az.ZarrStream(settings)
        for f in frames:
            stream.append(f)
        stream.close()
        seconds = time.perf_counter() - t0
    else:
        raise SystemExit(f"unknown tool {cfg['tool']}")
    print(json.dumps({"seconds": seconds, "rss_ready_mib": rss_ready}))


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.exists() else 0


def warm_memory(nbytes: int = 2 << 30) -> None:
    """Touches and frees NBYTES just before a measured run starts.

    This VM hands memory that stayed free for a few seconds back to its host; the next process to
    touch it pays a host page fault per page, several hundred ms of system time for a run of this size
    (measured: the same tessera stream takes 0.55 s right after another run and 1.0-1.2 s after 4 s of
    idle, CLI and Python alike). Touching and freeing the memory first gives every run, whatever its
    position in the schedule, memory that is already backed."""
    import numpy as np

    np.ones(nbytes, dtype=np.uint8)  # written (hence backed), then freed at once


def stream_once(args, tool: str, raw: Path, store: Path, keep: bool = False) -> dict:
    shutil.rmtree(store, ignore_errors=True)
    warm_memory()
    j = lambda xs: ",".join(str(x) for x in xs)  # noqa: E731
    if tool == "tessera-cli":
        argv = [str(args.binary), "stream", str(store), "--format", "zarr3", "--dtype", "uint16",
                "--shape", j((0, *args.frame)), "--chunk", j(args.chunk), "--shard-chunks", j(args.shard_chunks),
                "--codec", args.codec, "--index-location", "end", "--input", str(raw), "--threads", str(args.threads)]
        if args.level is not None:
            argv += ["--level", str(args.level)]
        wall, rss, _, _ = run_measured(argv)
        res = {"seconds": wall, "rss_mib": rss}
    else:
        cfg = {"tool": tool, "store": str(store), "raw": str(raw), "frame": list(args.frame), "chunk": list(args.chunk),
               "shard_chunks": list(args.shard_chunks), "codec": args.codec, "level": args.level,
               "threads": args.threads}
        res, rss = run_json_child(__file__, cfg)
        res["rss_mib"] = rss
    res["stored"] = tree_bytes(store)
    if not keep:
        shutil.rmtree(store, ignore_errors=True)
    return res


def verify_stream(args, raw: Path, work: Path) -> str:
    """tessera-python's output equals the input (read with zarr-python) and has tessera-cli's zarr.json."""
    import numpy as np
    import zarr

    small = work / "verify.raw"
    frames = 37  # ends in a partial chunk
    with open(raw, "rb") as f:
        small.write_bytes(f.read(frames * 2 * math.prod(args.frame)))
    expected = np.fromfile(small, dtype="<u2").reshape(frames, *args.frame)
    out, ok = [], True
    for tool in ("tessera-python", "tessera-cli", "acquire-zarr"):
        store = work / f"verify-{tool}.zarr"
        shutil.rmtree(store, ignore_errors=True)
        stream_once(args, tool, small, store, keep=True)
        got = zarr.open_array(str(store), mode="r")[...]
        same = got.shape == expected.shape and np.array_equal(got, expected)
        ok &= same
        out.append(f"{tool} {'OK' if same else 'MISMATCH'}")
        shutil.rmtree(store, ignore_errors=True)
    small.unlink()
    return ("verified" if ok else "VERIFICATION FAILED") + f" ({frames} frames read back with zarr-python): " + ", ".join(out)


def part1(args, shm: Path) -> dict:
    raw = shm / "frames.raw"
    t0 = time.perf_counter()
    make_camera_input(raw, tuple(args.frame), (0, 1), args.frames, SEED)
    nbytes = raw.stat().st_size
    print(f"[stream] input: {args.frames} frames of {'x'.join(map(str, args.frame))} uint16, "
          f"{nbytes / 2**20:.0f} MiB, generated in {time.perf_counter() - t0:.1f} s (not timed)", file=sys.stderr)
    note = verify_stream(args, raw, shm)
    print(f"[stream] {note}", file=sys.stderr)
    tools = ["tessera-python", "tessera-cli", "acquire-zarr"]
    runs = {t: [] for t in tools}
    for rep in range(args.repeats):
        for tool in tools[rep % 3:] + tools[:rep % 3]:  # each tool takes each place in the order
            res = stream_once(args, tool, raw, shm / f"{tool}.zarr")
            runs[tool].append(res)
            print(f"[stream] rep {rep + 1} {tool:15s} {nbytes / 1e9 / res['seconds']:.2f} GB/s "
                  f"peak RSS {res['rss_mib']:.0f} MiB", file=sys.stderr)
    raw.unlink()
    return {"runs": runs, "nbytes": nbytes, "note": note}


# ---------------------------------------------------------------------------------------------
# Part 2: reads in this process.


def part2(args, shm: Path) -> dict:
    import numpy as np
    import tensorstore as ts

    import tessera

    n, c = args.size, 64
    store = shm / "read.zarr"
    shutil.rmtree(store, ignore_errors=True)
    rng = np.random.default_rng(SEED)
    # smooth + noise: compresses like image data (zstd-1 about 2-3x)
    z = np.arange(n, dtype=np.float32)
    base = (np.sin(z / 17)[:, None, None] + np.cos(z / 23)[None, :, None] + np.sin(z / 29)[None, None, :]) * 3000 + 10000
    t0 = time.perf_counter()
    with tessera.create(store, dtype="uint16", shape=(n, n, n), chunks=(c, c, c), shard_chunks=(4, 4, 4),
                        codec="zstd", level=1, threads=args.threads) as w:
        for z0 in range(0, n, c):
            slab = base[z0:z0 + c] + rng.normal(0, 20, size=(min(c, n - z0), n, n)).astype(np.float32)
            w.append(np.ascontiguousarray(slab.astype(np.uint16)))
    print(f"[read] wrote {store}: {n}^3 uint16, {tree_bytes(store) / 2**20:.0f} MiB stored "
          f"({time.perf_counter() - t0:.1f} s, not timed)", file=sys.stderr)

    a = tessera.open(store)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)}, "open": True}).result()
    whole_tessera = a[...]
    whole_ts = t.read().result()
    same = np.array_equal(whole_tessera, whole_ts)
    del whole_tessera, whole_ts
    blocks = [tuple(int(rng.integers(0, n - 64 + 1)) for _ in range(3)) for _ in range(32)]
    for (z0, y0, x0) in blocks[:4]:
        sel = np.s_[z0:z0 + 64, y0:y0 + 64, x0:x0 + 64]
        same &= np.array_equal(a[sel], t[sel].read().result())
    note = (f"tessera and tensorstore read identical data (whole array + 4 blocks): {'yes' if same else 'NO'}")

    def whole_tessera():
        return a[...]

    def whole_tensorstore():
        return t.read().result()

    def blocks_tessera():
        for (z0, y0, x0) in blocks:
            a[z0:z0 + 64, y0:y0 + 64, x0:x0 + 64]

    def blocks_tensorstore():
        for (z0, y0, x0) in blocks:
            t[z0:z0 + 64, y0:y0 + 64, x0:x0 + 64].read().result()

    cases = {("whole", "tessera"): whole_tessera, ("whole", "tensorstore"): whole_tensorstore,
             ("blocks", "tessera"): blocks_tessera, ("blocks", "tensorstore"): blocks_tensorstore}
    for f in cases.values():  # warm-up: page cache, first-use allocations
        f()
    times = {k: [] for k in cases}
    for rep in range(args.repeats):
        for key, f in cases.items():
            t0 = time.perf_counter()
            r = f()
            times[key].append(time.perf_counter() - t0)
            del r
        print(f"[read] rep {rep + 1}: " + ", ".join(f"{k[0]}/{k[1]} {v[-1] * 1e3:.0f} ms" for k, v in times.items()),
              file=sys.stderr)
    shutil.rmtree(store, ignore_errors=True)
    return {"times": times, "whole_bytes": 2 * n**3, "blocks_bytes": 32 * 2 * 64**3, "note": note,
            "stored": None}


# ---------------------------------------------------------------------------------------------
# Report.


def versions() -> str:
    from importlib.metadata import version

    import tessera

    out = [f"tessera (python) {tessera.__version__}"]
    for pkg in ("acquire-zarr", "tensorstore", "numpy"):
        try:
            out.append(f"{pkg} {version(pkg)}")
        except Exception:  # noqa: BLE001
            out.append(f"{pkg} ?")
    return ", ".join(out)


def report(args, p1: dict, p2: dict, started: float, floor: float) -> None:
    p = print
    med = statistics.median
    p("\n## tessera Python benchmark\n")
    p(f"- {os.cpu_count()} CPUs; threads {args.threads} for every tool; median of {args.repeats} runs; "
      f"load average at start {args.load_start:.2f}, at end {os.getloadavg()[0]:.2f}; "
      f"total wall {time.perf_counter() - started:.0f} s")
    p(f"- {versions()}")
    p(f"- data in {args.shm} ({fs_type(args.shm)})")
    if p1:
        nbytes = p1["nbytes"]
        p(f"\n### 1. Streaming {args.frames} frames of {'x'.join(map(str, args.frame))} uint16 "
          f"({nbytes / 2**20:.0f} MiB) into sharded Zarr v3\n")
        p(f"chunk {'x'.join(map(str, args.chunk))}, shard {'x'.join(map(str, args.shard_chunks))} chunks, codec "
          f"{args.codec}{'' if args.level is None else f' level {args.level}'}; one append per frame for the Python "
          f"APIs; tessera-cli reads the raw file (--input). {p1['note']}\n")
        p("| tool | GB/s (median) | GB/s (best) | seconds | compression ratio | peak RSS MiB | input held MiB "
          "| tessera-python / tool (median) | (best) |")
        p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        ref = nbytes / 1e9 / med(r["seconds"] for r in p1["runs"]["tessera-python"])
        ref_best = nbytes / 1e9 / min(r["seconds"] for r in p1["runs"]["tessera-python"])
        for tool, runs in p1["runs"].items():
            secs = med(r["seconds"] for r in runs)
            gbps, best = nbytes / 1e9 / secs, nbytes / 1e9 / min(r["seconds"] for r in runs)
            stored = med(r["stored"] for r in runs)
            held = nbytes / 2**20 if tool != "tessera-cli" else 0
            rel = "ref" if tool == "tessera-python" else f"{ref / gbps:.2f}x"
            rel_best = "ref" if tool == "tessera-python" else f"{ref_best / best:.2f}x"
            p(f"| {tool} | {gbps:.2f} | {best:.2f} | {secs:.3f} | {nbytes / stored:.2f} | "
              f"{med(r['rss_mib'] for r in runs):.0f} | {held:.0f} | {rel} | {rel_best} |")
        p(f"\nPeak RSS includes the frames a Python child has mapped (input held); floor of the measuring "
          f"launcher {floor:.0f} MiB. Per-run GB/s: " + "; ".join(
              f"{tool} " + " ".join(f"{nbytes / 1e9 / r['seconds']:.2f}" for r in runs) for tool, runs in p1["runs"].items()))
    if p2:
        p(f"\n### 2. Reading a {args.size}^3 uint16 sharded zstd-1 array into numpy (handles kept open)\n")
        p(f"{p2['note']}\n")
        p("| read | tessera ms | tensorstore ms | tessera GB/s | tensorstore GB/s | tessera / tensorstore (median) "
          "| (best) |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        for what, nb, label in (("whole", p2["whole_bytes"], f"whole array ({p2['whole_bytes'] / 2**20:.0f} MiB)"),
                                ("blocks", p2["blocks_bytes"], "32 random 64^3 blocks (16 MiB)")):
            t_t = med(p2["times"][(what, "tessera")])
            t_s = med(p2["times"][(what, "tensorstore")])
            best = min(p2["times"][(what, "tensorstore")]) / min(p2["times"][(what, "tessera")])
            p(f"| {label} | {t_t * 1e3:.1f} | {t_s * 1e3:.1f} | {nb / 1e9 / t_t:.2f} | {nb / 1e9 / t_s:.2f} | "
              f"{t_s / t_t:.2f}x | {best:.2f}x |")
        p("\nPer-run ms: " + "; ".join(f"{k[0]}/{k[1]} " + " ".join(f"{v * 1e3:.0f}" for v in vs)
                                       for k, vs in p2["times"].items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--frame", default="2048x2048", help="frame shape, e.g. 2048x2048")
    ap.add_argument("--chunk", default="32x256x256")
    ap.add_argument("--shard-chunks", default="1x4x4")
    ap.add_argument("--codec", default="blosc-lz4", choices=["none", "blosc-lz4", "blosc-zstd"],
                    help="acquire-zarr has no plain zstd")
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--size", type=int, default=512, help="edge of the cube read in part 2")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--binary", type=Path, default=DEFAULT_BINARY)
    ap.add_argument("--shm", type=Path, default=Path("/dev/shm"))
    ap.add_argument("--parts", default="1,2")
    args = ap.parse_args()
    if args.child:
        child_main(json.loads(args.child))
        return
    parse = lambda s: tuple(int(v) for v in s.split("x"))  # noqa: E731
    args.frame, args.chunk, args.shard_chunks = parse(args.frame), parse(args.chunk), parse(args.shard_chunks)
    if args.codec == "none":
        args.level = None
    parts = set(args.parts.split(","))
    if "1" in parts and not args.binary.is_file():
        raise SystemExit(f"{args.binary} not found: build the CLI first (scripts/build.sh)")
    started = time.perf_counter()
    args.load_start = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="tessera-pybench-", dir=args.shm))
    try:
        floor = rss_floor_mib()
        p1 = part1(args, work) if "1" in parts else {}
        p2 = part2(args, work) if "2" in parts else {}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(args, p1, p2, started, floor)


if __name__ == "__main__":
    main()
