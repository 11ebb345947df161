#!/usr/bin/env python3
"""Pyramid benchmark: a stream with its multiscale levels built while streaming, against the same
stream without them and against acquire-zarr's multiscale stream (same levels, same method).

Scenarios (uint16, the frames camera-like: a drifting scene of soft blobs + read noise, fixed seed):
  camera  t x 2048 x 2048, 128 frames (1 GiB), chunk 32x256x256, shard 1x4x4 chunks; 4 levels of
          2x2 spatial mean (t kept): 2048 -> 1024 -> 512 -> 256 (acquire-zarr stops at one chunk too)
  volume  z x 1024 x 1024, 256 planes (512 MiB), chunk 64x64x64, shard 1x4x4 chunks; 2x2x2 mean
          (z halved too) until every dimension fits one chunk: 5 levels, as acquire-zarr makes
Codecs: zstd level 1 (tessera with and without the pyramid; acquire-zarr has no plain zstd) and
blosc-lz4 clevel 1 with shuffle (all three). Every run is a child process: frames memory-mapped from a
raw file in /dev/shm one at a time (acquire-zarr appends a frame per call; tessera a frame per call
too), written to the work disk (ext4; `sync` between runs), timed inside the child from open to
close; peak RSS by wait4. Medians of --repeats runs, tools interleaved.

Run from the repository root:  .venv/bin/python bench/pyramid_bench.py [--repeats 5] [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import child_or_parser, make_camera_input, run_json_child  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
SEED = 4242

SCENARIOS = {
    "camera": dict(frame=(2048, 2048), frames=128, chunk=(32, 256, 256), shard=(1, 4, 4), names=("t", "y", "x"),
                   kinds=("TIME", "SPACE", "SPACE"), factors=(1, 2, 2), levels=4, plane_axes=(0, 1)),
    "volume": dict(frame=(1024, 1024), frames=256, chunk=(64, 64, 64), shard=(1, 4, 4), names=("z", "y", "x"),
                   kinds=("SPACE", "SPACE", "SPACE"), factors=(2, 2, 2), levels=5, plane_axes=(0, 1)),
}
QUICK = {
    "camera": dict(SCENARIOS["camera"], frame=(512, 512), frames=32, chunk=(8, 64, 64)),
    "volume": dict(SCENARIOS["volume"], frame=(256, 256), frames=64, chunk=(16, 16, 16)),
}
RUNS = [("tessera", "zstd", False), ("tessera", "zstd", True), ("tessera", "blosc-lz4", False),
        ("tessera", "blosc-lz4", True), ("acquire-zarr", "blosc-lz4", True)]


def child_main(cfg: dict) -> None:
    import numpy as np

    frame, frames, raw = tuple(cfg["frame"]), cfg["frames"], cfg["raw"]
    frame_bytes = 2 * frame[0] * frame[1]
    chunk, shard = cfg["chunk"], cfg["shard"]
    if cfg["tool"] == "tessera":
        import tessera

        kwargs = {}
        if cfg["pyramid"]:
            axes = ",".join(f"{n}:{'time' if k == 'TIME' else 'space'}" for n, k in zip(cfg["names"], cfg["kinds"]))
            kwargs = dict(pyramid=cfg["levels"], downsample="mean", downsample_factors=cfg["factors"], axes=axes)
        t0 = time.perf_counter()
        w = tessera.create(cfg["store"], format="zarr3", dtype="uint16", shape=(frames, *frame), chunks=chunk,
                           shard_chunks=shard, codec=cfg["codec"], level=1, threads=cfg["threads"],
                           dimension_names=cfg["names"], **kwargs)
        for i in range(frames):
            f = np.memmap(raw, dtype="<u2", mode="r", offset=i * frame_bytes, shape=frame)
            w.append(f)
            del f
        w.close()
    else:
        import acquire_zarr as az

        az.set_log_level(az.LogLevel.ERROR)
        shape = (frames, *frame)
        dims = [az.Dimension(name=n, kind=getattr(az.DimensionType, k), array_size_px=shape[d], chunk_size_px=chunk[d],
                             shard_size_chunks=shard[d]) for d, (n, k) in enumerate(zip(cfg["names"], cfg["kinds"]))]
        compression = az.CompressionSettings(compressor=az.Compressor.BLOSC1, codec=az.CompressionCodec.BLOSC_LZ4,
                                             level=1, shuffle=1)
        settings = az.StreamSettings(store_path=cfg["store"], overwrite=True, max_threads=cfg["threads"])
        settings.arrays = [az.ArraySettings(dimensions=dims, data_type=np.uint16, compression=compression,
                                            downsampling_method=az.DownsamplingMethod.MEAN)]
        t0 = time.perf_counter()
        stream = az.ZarrStream(settings)
        for i in range(frames):
            f = np.memmap(raw, dtype="<u2", mode="r", offset=i * frame_bytes, shape=frame)
            stream.append(f)
            del f
        stream.close()
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def levels_written(store: Path) -> list:
    """Shapes of the arrays "0", "1", ... of an image group (or [shape] of a plain array)."""
    meta = json.loads((store / "zarr.json").read_text())
    if meta.get("node_type") == "array":
        return [meta["shape"]]
    out, k = [], 0
    while (store / str(k) / "zarr.json").exists():
        out.append(json.loads((store / str(k) / "zarr.json").read_text())["shape"])
        k += 1
    return out


def run(args, sc: dict, raw: Path, tool: str, codec: str, pyramid: bool) -> dict:
    store = args.disk / f"{tool}-{codec}-{pyramid}.zarr"
    shutil.rmtree(store, ignore_errors=True)
    os.sync()
    cfg = dict(sc, tool=tool, codec=codec, pyramid=pyramid, raw=str(raw), store=str(store), threads=args.threads)
    cfg.pop("plane_axes")
    res, rss = run_json_child(__file__, cfg)
    res["rss"] = rss
    res["levels"] = levels_written(store)
    shutil.rmtree(store, ignore_errors=True)
    return res


def main() -> None:
    ap = child_or_parser(child_main, __doc__)
    if ap is None:
        return
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--scenarios", default="camera,volume")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    table = QUICK if args.quick else SCENARIOS
    args.disk = Path(tempfile.mkdtemp(prefix="tessera-pyramid-bench-", dir=REPO_ROOT / "build"))
    shm = Path(tempfile.mkdtemp(prefix="tessera-pyramid-bench-", dir="/dev/shm"))
    started = time.perf_counter()
    results = {}
    try:
        for name in args.scenarios.split(","):
            sc = table[name]
            raw = shm / f"{name}.raw"
            make_camera_input(raw, sc["frame"], sc["plane_axes"], sc["frames"], SEED)
            runs = {key: [] for key in RUNS}
            for rep in range(args.repeats):
                for key in RUNS:
                    res = run(args, sc, raw, *key)
                    runs[key].append(res)
                    nbytes = sc["frames"] * sc["frame"][0] * sc["frame"][1] * 2
                    print(f"[{name}] {key} rep {rep + 1}: {nbytes / 1e9 / res['seconds']:.2f} GB/s, "
                          f"{res['rss']:.0f} MiB, levels {res['levels']}", file=sys.stderr)
            raw.unlink()
            results[name] = (sc, runs)
    finally:
        shutil.rmtree(args.disk, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
    report(args, results, started)


def report(args, results: dict, started: float) -> None:
    p = print
    p(f"\n## tessera pyramid benchmark\n\n- {os.cpu_count()} CPUs, threads {args.threads}, repeats {args.repeats} "
      f"(median), total wall {time.perf_counter() - started:.0f} s; file sink on ext4; frames memory-mapped\n")
    p("| scenario | tool | codec | pyramid | levels | median s | GB/s | peak RSS MiB | note |")
    p("|---|---|---|---|---|---:|---:|---:|---|")
    for name, (sc, runs) in results.items():
        nbytes = sc["frames"] * sc["frame"][0] * sc["frame"][1] * 2
        med = {key: statistics.median(r["seconds"] for r in v) for key, v in runs.items()}
        rss = {key: statistics.median(r["rss"] for r in v) for key, v in runs.items()}
        for key, v in runs.items():
            tool, codec, pyr = key
            note = ""
            if tool == "tessera" and pyr:
                note = f"pyramid / none: **{med[key] / med[(tool, codec, False)]:.2f}x** time"
            if tool == "acquire-zarr":
                t = ("tessera", codec, True)
                note = (f"tessera / acquire-zarr: **{med[key] / med[t]:.2f}x** speed, "
                        f"**{rss[t] / rss[key]:.2f}x** RSS")
            shapes = " ".join("x".join(map(str, s)) for s in v[0]["levels"])
            p(f"| {name} | {tool} | {codec} | {'yes' if pyr else 'no'} | {len(v[0]['levels'])}: {shapes} | "
              f"{med[key]:.2f} | {nbytes / 1e9 / med[key]:.2f} | {rss[key]:.0f} | {note} |")
    p("\nper-run seconds:")
    for name, (sc, runs) in results.items():
        for key, v in runs.items():
            p(f"- {name} {key[0]} {key[1]} pyramid={key[2]}: " + " ".join(f"{r['seconds']:.2f}" for r in v))


if __name__ == "__main__":
    main()
