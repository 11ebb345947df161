#!/usr/bin/env python3
"""Acquisition benchmark: several arrays in one stream, tessera against acquire-zarr (issue 28).

A microscope with two cameras delivers frames interleaved (cam1, cam2, cam1, ...). Both tools write
them into one Zarr v3 hierarchy, one array per camera, from one stream:
  acquire-zarr  StreamSettings(arrays=[ArraySettings(output_key="cam1", ...), ...]) and
                ZarrStream.append(frame, key=...), max_threads T (one pool for all arrays).
  tessera       tessera.create_group(root, threads=T) and acq.create("cam1", ...), acq.append(key, frame)
                (one compression pool and one memory budget for all arrays). Until create_group is in
                the installed package (or with --tessera-api streams) tessera runs as two
                tessera.create streams, each with T threads; the report says which ran.

Workloads (uint16 camera-like frames: a drifting scene of soft blobs + read noise, one seed per camera;
dimension 0 unbounded, frames appended one 2-D frame per call by both tools):
  cameras  cam1, cam2: t x 2048 x 2048 each, chunk 16x256x256, shard 1x4x4 chunks (16x1024x1024)
  pyramid  the same, and cam1 an OME-Zarr image with its multiscale levels built while streaming:
           2x2 spatial mean (t kept) until y and x fit one chunk, as acquire-zarr's
           DownsamplingMethod.MEAN does (2048 -> 1024 -> 512 -> 256: 4 levels); tessera pyramid=4,
           downsample='mean'. cam2 stays a plain array.
Stream length: 128 frames per camera (2 GiB in all, 8 shard rows per camera) by default. A chunk is
16 frames deep, so no tool can compress anything before each camera's 16th frame, and the last shard
row is compressed after the last append: a stream of a few shard rows (--frames 32: 2 per camera,
about half a second for tessera) measures mostly that fill and drain. acquire-zarr queues frames it
has not compressed yet (its RSS grows over a long stream and passes get_maximum_memory_usage()),
so a short stream also hides what its queue costs; --frames takes any length, to see both.
Codecs (inside sharding_indexed, index at the end, crc32c): blosc-lz4 and blosc-zstd at clevel
--blosc-level (default 1), byte shuffle, typesize 2. acquire-zarr has no plain zstd, so it is not run.
Sinks: tmpfs  - both tools write to a directory on tmpfs (/dev/shm)
       file   - both write to a directory on the work disk (default build/); `sync` runs, untimed,
                before each run so one run's write-back does not land in the next.

Input: each camera's frames are generated once into /dev/shm (not timed); every run memory-maps one
frame at a time (mapping dropped after its append), so input pages count in no one's RSS beyond the
frame in flight. Each run is its own child process started by bench_util's small launcher and reaped
with wait4: peak RSS is that run's (floor = an idle child, printed). Time: stream open to close inside
the child (interpreter start and imports excluded). GB/s = uncompressed bytes of both cameras / s
(1e9). CPU s = the child's user + system CPU time over the same span, all threads (time.process_time):
steadier than GB/s on a machine others are using. Cells are medians of --repeats runs, the tools
interleaved within each repeat. The goal the issue sets: tessera >= 2x acquire-zarr's GB/s at <= its
peak RSS (the last column).

Before timing, each tool writes a few frames (ending in a partial chunk) of each workload to the
file sink; zarr-python reads every camera back and compares it with the input; the pyramid's level
shapes must agree between the tools and each array's codecs must be the ones asked for.

Options (run from the repository root):
  .venv/bin/python bench/acquisition_bench.py
      [--workloads cameras,pyramid] [--codecs blosc-lz4,blosc-zstd] [--sinks tmpfs,file]
      [--frames N (per camera; default 128)] [--repeats R (default 3)] [--threads T (default: all cores)]
      [--blosc-level L] [--tessera-api auto|group|streams] [--tools tessera,acquire-zarr]
      [--shm-dir DIR] [--disk-dir DIR]
      [--keep] [--quick (512x512 frames, 1 repeat: a smoke test)]
The default run (2 workloads x 2 codecs x 2 sinks x 2 tools x 3 repeats of 2 x 128 frames of 8 MiB,
plus the read-back checks) takes about 6 minutes on a 2-core machine; --codecs blosc-lz4 --sinks tmpfs
or --frames 32 shortens it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import (child_or_parser, fs_type, make_camera_input, normalized_codecs, prefix_file,  # noqa: E402
                        rss_floor_mib, run_json_child, tree_bytes)
from stream_bench import expected_codecs  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOLS = ["tessera", "acquire-zarr"]
CODECS = ["blosc-lz4", "blosc-zstd"]
SINKS = ["tmpfs", "file"]
CAMERAS = ["cam1", "cam2"]
SEED = 20261126


@dataclass(frozen=True)
class Workload:
    key: str
    frame: tuple          # one camera frame (y, x)
    chunk: tuple          # (t, y, x)
    shard_chunks: tuple   # chunks per shard (t, y, x)
    frames: int           # frames per camera in a timed run
    pyramid_keys: tuple   # cameras written as OME-Zarr images with a pyramid

    @property
    def levels(self) -> int:
        """acquire-zarr's level count: halve y and x until both fit one chunk."""
        return 1 + max(math.ceil(math.log2(n / c)) for n, c in zip(self.frame, self.chunk[1:]))

    def frame_bytes(self) -> int:
        return 2 * math.prod(self.frame)


WORKLOADS = {
    "cameras": Workload("cameras", (2048, 2048), (16, 256, 256), (1, 4, 4), 128, ()),
    "pyramid": Workload("pyramid", (2048, 2048), (16, 256, 256), (1, 4, 4), 128, ("cam1",)),
}
QUICK = {k: replace(w, frame=(512, 512), chunk=(8, 64, 64), frames=24) for k, w in WORKLOADS.items()}


# ---------------------------------------------------------------------------------------------
# Child mode: one run of one tool, timed from inside; one JSON line on stdout.


def frames_interleaved(cfg: dict):
    """Yields (camera key, frame) as the microscope delivers them: cam1 t, cam2 t, cam1 t+1, ...
    Each frame is a fresh memory mapping of its camera's raw file, dropped by the caller."""
    import numpy as np

    frame = tuple(cfg["frame"])
    frame_bytes = 2 * math.prod(frame)
    for t in range(cfg["frames"]):
        for key in CAMERAS:
            yield key, np.memmap(cfg["raws"][key], dtype="<u2", mode="r", offset=t * frame_bytes, shape=frame)


def write_acquire_zarr(cfg: dict) -> dict:
    import acquire_zarr as az
    import numpy as np

    az.set_log_level(az.LogLevel.ERROR)
    codec = {"blosc-lz4": az.CompressionCodec.BLOSC_LZ4, "blosc-zstd": az.CompressionCodec.BLOSC_ZSTD}
    compression = az.CompressionSettings(compressor=az.Compressor.BLOSC1, codec=codec[cfg["codec"]],
                                         level=cfg["level"], shuffle=1)  # 1 = byte shuffle
    shape = [0, *cfg["frame"]]  # 0: unbounded along t
    kinds = [az.DimensionType.TIME, az.DimensionType.SPACE, az.DimensionType.SPACE]
    arrays = []
    for key in CAMERAS:
        dims = [az.Dimension(name=n, kind=k, array_size_px=shape[d], chunk_size_px=cfg["chunk"][d],
                             shard_size_chunks=cfg["shard_chunks"][d]) for d, (n, k) in enumerate(zip("tyx", kinds))]
        pyramid = az.DownsamplingMethod.MEAN if key in cfg["pyramid_keys"] else None
        arrays.append(az.ArraySettings(output_key=key, dimensions=dims, data_type=np.uint16, compression=compression,
                                       downsampling_method=pyramid))
    settings = az.StreamSettings(store_path=cfg["store"], overwrite=True, max_threads=cfg["threads"])
    settings.arrays = arrays
    out = {"planned_mib": settings.get_maximum_memory_usage() / 2**20, "rss_ready_mib": rss_mib()}
    t0, cpu0 = time.perf_counter(), time.process_time()
    stream = az.ZarrStream(settings)
    for key, frame in frames_interleaved(cfg):
        stream.append(frame, key=key)
        del frame
    stream.close()
    out["seconds"], out["cpu_seconds"] = time.perf_counter() - t0, time.process_time() - cpu0
    return out


def tessera_options(cfg: dict, key: str) -> dict:
    options = dict(dtype="uint16", shape=(0, *cfg["frame"]), chunks=cfg["chunk"], shard_chunks=cfg["shard_chunks"],
                   codec=cfg["codec"], level=cfg["level"], dimension_names=["t", "y", "x"], index_location="end")
    if key in cfg["pyramid_keys"]:
        options.update(pyramid=cfg["levels"], downsample="mean", axes="t:time,y:space,x:space")
    if cfg.get("tessera_blocksize"):  # the same blosc codec and level, blocks of this size (not c-blosc's choice)
        options.update(codec="blosc", cname=cfg["codec"].split("-")[1], shuffle="shuffle", typesize=2,
                       blocksize=cfg["tessera_blocksize"])
    return options


def write_tessera(cfg: dict) -> dict:
    import tessera

    out = {"rss_ready_mib": rss_mib()}
    root = Path(cfg["store"])
    if cfg["api"] == "group":
        t0, cpu0 = time.perf_counter(), time.process_time()
        acq = tessera.create_group(root, format="zarr3", threads=cfg["threads"])
        for key in CAMERAS:
            acq.create(key, **tessera_options(cfg, key))
        out["plan"] = acq.plan  # each array's planned memory, the shared pool, the total
        for key, frame in frames_interleaved(cfg):
            acq.append(key, frame)
            del frame
        acq.close()
    else:  # two independent streams: what tessera offered before create_group
        t0, cpu0 = time.perf_counter(), time.process_time()
        root.mkdir(parents=True, exist_ok=True)
        streams = {key: tessera.create(root / key, format="zarr3", threads=cfg["threads"], **tessera_options(cfg, key))
                   for key in CAMERAS}
        for key, frame in frames_interleaved(cfg):
            streams[key].append(frame)
            del frame
        for s in streams.values():
            s.close()
    out["seconds"], out["cpu_seconds"] = time.perf_counter() - t0, time.process_time() - cpu0
    return out


def rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_main(cfg: dict) -> None:
    writer = {"acquire-zarr": write_acquire_zarr, "tessera": write_tessera}[cfg["tool"]]
    print(json.dumps(writer(cfg)))


# ---------------------------------------------------------------------------------------------
# Parent: one run, its metadata checks, and the read-back check.


def array_paths(store: Path, key: str) -> list[Path]:
    """The arrays written for camera KEY: [key] for a plain array, [key/0, key/1, ...] for an image."""
    node = store / key
    meta = json.loads((node / "zarr.json").read_text())
    if meta.get("node_type") == "array":
        return [node]
    out = []
    while (node / str(len(out)) / "zarr.json").exists():
        out.append(node / str(len(out)))
    return out


def check_metadata(store: Path, wl: Workload, codec: str, level: int, frames: int, tool: str,
                   root_group: bool, blocksize: int = 0) -> list[str]:
    """Notes on anything a tool wrote other than asked: no root group (when ROOT_GROUP: two plain
    streams write none), shapes, levels, shards, codecs."""
    notes = []
    try:
        root = json.loads((store / "zarr.json").read_text())
        if root.get("node_type") != "group":
            notes.append(f"{tool}: root zarr.json is a {root.get('node_type')}, not a group")
    except (OSError, ValueError):
        if root_group:
            notes.append(f"{tool}: no root group (zarr.json) at {store.name}")
    want_codecs = normalized_codecs(expected_codecs(SimpleNamespace(chunk=wl.chunk), codec, level))
    for inner in want_codecs[0]["configuration"]["codecs"]:  # --tessera-blocksize: asked for, so expected
        if inner["name"] == "blosc" and blocksize:
            inner["configuration"]["blocksize"] = blocksize
    for key in CAMERAS:
        try:
            paths = array_paths(store, key)
        except (OSError, ValueError) as e:
            notes.append(f"{tool}: {key}: no readable zarr.json ({e})")
            continue
        levels = wl.levels if key in wl.pyramid_keys else 1
        if len(paths) != levels:
            notes.append(f"{tool}: {key}: {len(paths)} levels, expected {levels}")
        for k, path in enumerate(paths):
            meta = json.loads((path / "zarr.json").read_text())
            want_shape = [frames, *(-(-n // 2**k) for n in wl.frame)]
            name = f"{key}/{k}" if len(paths) > 1 or key in wl.pyramid_keys else key
            if meta.get("shape") != want_shape:
                notes.append(f"{tool}: {name}: shape {meta.get('shape')} != {want_shape}")
            # A level smaller than a shard has shards clipped to its chunks (both tools do so).
            shard = [wl.chunk[0] * wl.shard_chunks[0]] + [
                min(c * s, -(-n // c) * c) for n, c, s in zip(want_shape[1:], wl.chunk[1:], wl.shard_chunks[1:])]
            grid = meta.get("chunk_grid", {}).get("configuration", {}).get("chunk_shape")
            if grid != shard:
                notes.append(f"{tool}: {name}: shard {grid} != {shard}")
            if normalized_codecs(meta.get("codecs", [])) != want_codecs:
                notes.append(f"{tool}: {name}: codecs differ: {json.dumps(meta.get('codecs'))}")
    return notes


def run_once(args, wl: Workload, tool: str, codec: str, sink: str, store: Path, raws: dict, frames: int) -> dict:
    shutil.rmtree(store, ignore_errors=True)
    if sink == "file":
        os.sync()
    cfg = {"tool": tool, "store": str(store), "raws": {k: str(v) for k, v in raws.items()}, "frame": list(wl.frame),
           "frames": frames, "chunk": list(wl.chunk), "shard_chunks": list(wl.shard_chunks), "codec": codec,
           "level": args.blosc_level, "threads": args.threads, "pyramid_keys": list(wl.pyramid_keys),
           "levels": wl.levels, "api": args.tessera_api, "tessera_blocksize": args.tessera_blocksize}
    res, rss = run_json_child(__file__, cfg)
    res["rss_mib"] = rss
    stored = tree_bytes(store)
    res["ratio"] = len(CAMERAS) * frames * wl.frame_bytes() / stored if stored else None
    res["notes"] = check_metadata(store, wl, codec, args.blosc_level, frames, tool,
                                  root_group=tool != "tessera" or args.tessera_api == "group",
                                  blocksize=args.tessera_blocksize if tool == "tessera" else 0)
    return res


def verify(args, wl: Workload, raws: dict) -> str:
    """Each tool writes a few frames (ending in a partial chunk) to the file sink; zarr-python reads
    every camera's level 0 back against the input, and the pyramid's level shapes are compared."""
    import numpy as np
    import zarr

    frames = min(wl.frames, wl.chunk[0] + 3)
    small = {k: raws[k].with_name(raws[k].stem + "-verify.raw") for k in CAMERAS}
    for k in CAMERAS:
        prefix_file(raws[k], small[k], frames * wl.frame_bytes())
    expected = {k: np.fromfile(small[k], dtype="<u2").reshape(frames, *wl.frame) for k in CAMERAS}
    lines, ok, level_shapes = [], True, {}
    codec = args.codecs[0]
    for tool in args.tools:
        store = args.disk / f"verify-{tool}.zarr"
        try:
            res = run_once(args, wl, tool, codec, "file", store, small, frames)
            bad = [k for k in CAMERAS
                   if not np.array_equal(zarr.open_array(str(array_paths(store, k)[0]), mode="r")[...], expected[k])]
            level_shapes[tool] = {k: [zarr.open_array(str(p), mode="r").shape for p in array_paths(store, k)]
                                  for k in CAMERAS}
            verdict = "OK" if not bad else "MISMATCH in " + ",".join(bad)
            ok &= not bad and not res["notes"]
        except Exception as e:  # a tool that cannot write or a store zarr cannot read: report, go on
            res, verdict, ok = {"notes": []}, f"ERROR {str(e).strip().splitlines()[-1][:160]}", False
        finally:
            shutil.rmtree(store, ignore_errors=True)
        lines.append(f"{tool}: {verdict}" + "".join(f" [{n}]" for n in res["notes"]))
    if len(level_shapes) > 1 and len({json.dumps(v) for v in level_shapes.values()}) != 1:
        ok = False
        lines.append(f"level shapes differ: {level_shapes}")
    for path in small.values():
        path.unlink()
    status = "verified" if ok else "VERIFICATION FAILED"
    return (f"{status} ({frames} frames per camera, {codec}, file sink, read back with zarr-python "
            f"{zarr.__version__}): " + "; ".join(lines))


# ---------------------------------------------------------------------------------------------
# Driver and report.


def run_workload(args, wl: Workload) -> dict:
    raws = {k: args.shm / f"input-{wl.key}-{k}.raw" for k in CAMERAS}
    t0 = time.perf_counter()
    for i, k in enumerate(CAMERAS):
        make_camera_input(raws[k], wl.frame, (0, 1), wl.frames, SEED + 97 * i)
    print(f"[{wl.key}] input: 2 cameras x {wl.frames} frames of {wl.frame[0]}x{wl.frame[1]} uint16 "
          f"({2 * wl.frames * wl.frame_bytes() / 2**30:.2f} GiB), generated in {time.perf_counter() - t0:.1f} s "
          "(not timed)", file=sys.stderr)
    out = {"workload": wl, "cells": {}, "notes": [verify(args, wl, raws)], "aux": {}}
    print(f"[{wl.key}] {out['notes'][0]}", file=sys.stderr)
    nbytes = len(CAMERAS) * wl.frames * wl.frame_bytes()
    for codec in args.codecs:
        for sink in args.sinks:
            runs = {tool: [] for tool in args.tools}
            for rep in range(args.repeats):
                for tool in args.tools:
                    store = (args.disk if sink == "file" else args.shm) / f"{tool}.zarr"
                    try:
                        res = run_once(args, wl, tool, codec, sink, store, raws, wl.frames)
                    except (RuntimeError, ValueError, KeyError) as e:
                        res = {"error": str(e).strip().splitlines()[-1][:200], "notes": []}
                        print(f"  {tool} failed: {e}", file=sys.stderr)
                    finally:
                        shutil.rmtree(store, ignore_errors=True)
                    runs[tool].append(res)
                    for n in res["notes"]:
                        if f"WARNING {codec}/{sink}: {n}" not in out["notes"]:
                            out["notes"].append(f"WARNING {codec}/{sink}: {n}")
                    for field in ("planned_mib", "plan", "rss_ready_mib"):
                        if field in res:
                            out["aux"].setdefault((tool, field), []).append(res[field])
                    speed = (f"{nbytes / 1e9 / res['seconds']:.2f} GB/s, {res['cpu_seconds']:.2f} CPU-s"
                             if "seconds" in res else "error")
                    print(f"[{wl.key}] {codec:10s} {sink:5s} {tool:12s} rep {rep + 1}: {speed}", file=sys.stderr)
            out["cells"][(codec, sink)] = runs
    for path in raws.values():
        path.unlink()
    return out


def summarize(runs: list[dict], nbytes: int) -> dict | None:
    good = [r for r in runs if "seconds" in r]
    if not good:
        return None
    ratios = [r["ratio"] for r in good if r.get("ratio")]
    return {"gbps": nbytes / 1e9 / statistics.median(r["seconds"] for r in good),
            "rss": statistics.median(r["rss_mib"] for r in good), "ratio": statistics.median(ratios) if ratios else None,
            "cpu": statistics.median(r["cpu_seconds"] for r in good),
            "all": [nbytes / 1e9 / r["seconds"] for r in good], "failed": len(runs) - len(good)}


def tessera_api_used(args) -> str:
    return ("tessera.create_group (one pool of T threads, one budget)" if args.tessera_api == "group" else
            "two tessera.create streams (T threads each: create_group is not in the installed package)")


def report(args, results: list[dict], started: float, load_start: tuple) -> None:
    from importlib.metadata import version

    p = print
    p("\n## tessera acquisition benchmark: two cameras in one stream, against acquire-zarr\n")
    p(f"- {os.cpu_count()} CPUs; threads T = {args.threads}; repeats {args.repeats} (median shown); load average at "
      f"start {load_start[0]:.2f}, at end {os.getloadavg()[0]:.2f}; total wall {time.perf_counter() - started:.0f} s"
      + (" (--quick)" if args.quick else ""))
    p(f"- versions: acquire-zarr {version('acquire-zarr')}, zarr {version('zarr')}, numpy {version('numpy')}")
    p(f"- tessera ran as {tessera_api_used(args)}; acquire-zarr as one ZarrStream with 2 ArraySettings "
      "(max_threads T)")
    p(f"- sinks: tmpfs {args.shm} ({fs_type(args.shm)}); file {args.disk} ({fs_type(args.disk)}, sync before each run)")
    p(f"- codecs: blosc clevel {args.blosc_level}, byte shuffle, typesize 2, inside sharding_indexed")
    p(f"- GB/s: both cameras' uncompressed bytes / open..close seconds; RSS: the run's peak (wait4; floor "
      f"{args.rss_floor:.0f} MiB); goal: tessera >= 2x acquire-zarr's GB/s at <= its peak RSS\n")
    for r in results:
        wl = r["workload"]
        pyramid = (f"; {', '.join(wl.pyramid_keys)} with a {wl.levels}-level 2x2 mean pyramid" if wl.pyramid_keys
                   else "; no pyramid")
        p(f"- {wl.key}: 2 cameras x {wl.frames} frames of {wl.frame[0]}x{wl.frame[1]} uint16, interleaved; chunk "
          f"{'x'.join(map(str, wl.chunk))}, shard {'x'.join(map(str, wl.shard_chunks))} chunks{pyramid}")
    p()
    p("| workload | codec | sink | tool | GB/s | CPU s | ratio | peak RSS MiB | tessera/acquire-zarr GB/s "
      "| tessera/acquire-zarr RSS | goal |")
    p("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        wl = r["workload"]
        nbytes = len(CAMERAS) * wl.frames * wl.frame_bytes()
        for (codec, sink), runs in r["cells"].items():
            s = {tool: summarize(v, nbytes) for tool, v in runs.items()}
            ref, peer = s.get("tessera"), s.get("acquire-zarr")
            for tool in args.tools:
                cell = s[tool]
                if cell is None:
                    p(f"| {wl.key} | {codec} | {sink} | {tool} | failed | | | | | | |")
                    continue
                ratio = f"{cell['ratio']:.2f}" if cell["ratio"] else "-"
                rel_t = rel_m = goal = ""
                if tool == "tessera" and peer:
                    speedup, memory = ref["gbps"] / peer["gbps"], ref["rss"] / peer["rss"]
                    rel_t, rel_m = f"{speedup:.2f}x", f"{memory:.2f}x"
                    goal = "met" if speedup >= 2 and memory <= 1 else "**not met**"
                flag = f" ({cell['failed']} failed)" if cell["failed"] else ""
                p(f"| {wl.key} | {codec} | {sink} | {tool} | {cell['gbps']:.2f}{flag} | {cell['cpu']:.2f} | {ratio} "
                  f"| {cell['rss']:.0f} "
                  f"| {rel_t} | {rel_m} | {goal} |")
    p("\n### Notes\n")
    for r in results:
        wl, aux = r["workload"], r["aux"]
        planned = aux.get(("acquire-zarr", "planned_mib"))
        ready = {t: statistics.median(v) for (t, f), v in aux.items() if f == "rss_ready_mib"}
        p(f"- {wl.key}: acquire-zarr get_maximum_memory_usage() "
          + (f"{statistics.median(planned):.0f} MiB" if planned else "-")
          + "; child RSS after imports, before writing: " + ", ".join(f"{t} {v:.0f} MiB" for t, v in ready.items()))
        plans = aux.get(("tessera", "plan"))
        if plans:
            summary = [line for line in plans[-1].splitlines() if not line.startswith(" ")]  # per array, total
            p(f"- {wl.key}: tessera acq.plan: " + "; ".join(line.strip().rstrip(":") for line in summary))
        for n in r["notes"]:
            p(f"- {wl.key}: {n}")
    p("- per-run GB/s (every repeat), for judging noise:")
    for r in results:
        nbytes = len(CAMERAS) * r["workload"].frames * r["workload"].frame_bytes()
        for (codec, sink), runs in r["cells"].items():
            cells = []
            for tool, v in runs.items():
                s = summarize(v, nbytes)
                cells.append(f"{tool} " + (" ".join(f"{g:.2f}" for g in s["all"]) if s else "failed"))
            p(f"  - {r['workload'].key} {codec} {sink}: " + "; ".join(cells))


def main() -> None:
    ap = child_or_parser(child_main, __doc__)
    if ap is None:
        return
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--codecs", default=",".join(CODECS))
    ap.add_argument("--sinks", default=",".join(SINKS))
    ap.add_argument("--frames", type=int, help="frames per camera (default 128; quick 24)")
    ap.add_argument("--repeats", type=int, help="runs per cell, median shown (default 3; quick 1)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--tools", default=",".join(TOOLS), help="tools to run (default both)")
    ap.add_argument("--blosc-level", type=int, default=1)
    ap.add_argument("--tessera-blocksize", type=int, default=0,
                    help="tessera's blosc block size in bytes (default 0: c-blosc's automatic choice, as acquire-zarr "
                         "gets; the metadata check then notes the codecs differ by their blocksize)")
    ap.add_argument("--tessera-api", choices=["auto", "group", "streams"], default="auto",
                    help="tessera.create_group (group), two tessera.create streams, or group when it exists")
    ap.add_argument("--quick", action="store_true", help="512x512 frames, 1 repeat: a smoke test")
    ap.add_argument("--shm-dir", type=Path, default=Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else None,
                    help="where inputs and the tmpfs-sink stores go (default /dev/shm)")
    ap.add_argument("--disk-dir", type=Path, default=REPO_ROOT / "build" if (REPO_ROOT / "build").is_dir() else None,
                    help="where file-sink stores go (default build/, on the work disk)")
    ap.add_argument("--keep", action="store_true", help="keep the work directories")
    args = ap.parse_args()

    split = lambda s: [x.strip() for x in s.split(",") if x.strip()]  # noqa: E731
    table = QUICK if args.quick else WORKLOADS
    keys, args.codecs, args.sinks = split(args.workloads), split(args.codecs), split(args.sinks)
    args.tools = split(args.tools)
    for name, given, allowed in (("workload", keys, table), ("codec", args.codecs, CODECS), ("sink", args.sinks, SINKS),
                                 ("tool", args.tools, TOOLS)):
        bad = [g for g in given if g not in allowed]
        if bad:
            raise SystemExit(f"unknown {name}(s) {bad}; choose from {list(allowed)}")
    if args.tessera_api == "auto":
        import tessera

        args.tessera_api = "group" if hasattr(tessera, "create_group") else "streams"
    args.repeats = args.repeats or (1 if args.quick else 3)
    workloads = [replace(table[k], frames=args.frames) if args.frames else table[k] for k in keys]

    load_start, started = os.getloadavg(), time.perf_counter()
    args.rss_floor = rss_floor_mib()
    args.shm = Path(tempfile.mkdtemp(prefix="tessera-acq-bench-", dir=args.shm_dir))
    args.disk = Path(tempfile.mkdtemp(prefix="tessera-acq-bench-", dir=args.disk_dir))
    if "file" in args.sinks and fs_type(args.disk) == "tmpfs":
        print(f"warning: file-sink dir {args.disk} is on tmpfs; pass --disk-dir", file=sys.stderr)
    try:
        results = [run_workload(args, wl) for wl in workloads]
        report(args, results, started, load_start)
    finally:
        if args.keep:
            print(f"kept {args.shm} and {args.disk}", file=sys.stderr)
        else:
            shutil.rmtree(args.shm, ignore_errors=True)
            shutil.rmtree(args.disk, ignore_errors=True)
    if any("FAILED" in n for r in results for n in r["notes"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
