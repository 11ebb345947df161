#!/usr/bin/env python3
"""Streaming-writer benchmark: tessera stream vs acquire-zarr vs tensorstore, Zarr v3 sharded.

Scenarios (frames stream along dimension 0; uint16; the input is little-endian C-order frames):
  A  camera        t x 2048 x 2048          chunk 32x256x256       shard 1x4x4 chunks (32x1024x1024)
  B  two-channel   t x 2 x 2048 x 2304      chunk 16x1x256x256     shard 1x1x4x3 chunks (16x1x1024x768;
                                                                    2048x2304 = 2x3 shards, no partial shard)
  C  volume        t x 256 x 256 x 256 x 3  chunk 1x64x64x64x3     shard 1x4x4x4x1 chunks (one shard/volume)
Codecs (inside sharding_indexed; index at the end, bytes + crc32c): none; blosc-lz4 and blosc-zstd at
clevel --blosc-level (default 1) with byte shuffle, typesize 2; zstd at --zstd-level (default 1), no
checksum. acquire-zarr has no plain zstd, so that cell is n/a.
Tools: tessera-python (the Python package: tessera.create(..., discard=...), one append() per slab of
       the memory-mapped input, the slabs tensorstore writes; the reference of every ratio), tessera
       (the CLI, reading the raw file), acquire-zarr, tensorstore.
Sinks: tmpfs   - every tool, tessera included, writes its store to a tmpfs directory (/dev/shm): the
                 same bytes stored in the same place, so the peer ratios compare the same work.
       file    - every tool writes to a directory on the work disk (not tmpfs); `sync` runs,
                 untimed, between runs so one run's write-back does not land in the next.
       discard - tessera only (tessera-python and the CLI): its discard sink encodes everything and
                 stores nothing; the ceiling of tessera's own pipeline, with no peer ratio (the peers
                 have no such sink; comparing it with their tmpfs runs would set storing nothing
                 against storing everything).

Input: camera-like frames (a drifting scene of soft blobs on a ramp + Gaussian read noise, fixed
seed) generated once per scenario with numpy into /dev/shm (a block of <= 256 MiB repeated to the
frame count; not timed). The CLI reads the file with --input; the others memory-map the same file
with numpy one slab at a time (mapping dropped after use), so input pages count in nobody's RSS
beyond the slab in flight:
  acquire-zarr: one t-index per append() (A: a 2048x2048 frame; B: 2x2048x2304; C: a 256^3x3 volume),
                array_size_px 0 on dimension 0 (unbounded, like tessera's --shape 0,...), max_threads T.
  tensorstore:  preset shape (frames known up front), one shard-depth of frames per write (A: 32,
                B: 16, C: 1 frame), so every write covers whole shards; no transaction; at most 2
                writes in flight; data_copy/file_io concurrency T; file_io_sync false (tessera and
                acquire-zarr do not fsync either).
Each run is its own child process, started by a ~10 MiB launcher and reaped with wait4, so peak RSS
is that run's (Linux carries the spawner's RSS into a child's ru_maxrss across exec; the launcher
keeps that floor small, and the report prints it). The CLI's time is its whole wall time (process
start to exit); tessera-python's and a peer's time is measured inside its Python child from stream
open to close (interpreter start and imports excluded). GB/s = uncompressed input bytes
/ seconds (1e9). Ratio = input bytes / bytes stored (discard: the ratio tessera reports).
Each cell is the median of --repeats runs (tools interleaved within each repeat).

Limits: build/release/bench/codec_speed (tessera's codecs, one core, on this benchmark's own input
cut into tiles of the scenario's chunk shape; and memcpy bandwidth with T threads), plus the same
codecs through numcodecs (the builds the Python peers ship) on the same tiles. Compressor bound =
single-core codec GB/s x T.

Run from the repository root:
  .venv/bin/python bench/stream_bench.py [--frames N|A=N,B=N] [--repeats R] [--scenarios A,B,C]
                                         [--codecs none,blosc-lz4,...] [--sinks discard,tmpfs,file] [--quick]
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import (child_or_parser, fs_type, make_camera_input, normalized_codecs, prefix_file,  # noqa: E402
                        rss_floor_mib, run_json_child, run_measured, tile_codec_speed,
                        tree_bytes)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / "build" / "release" / "tessera"
DEFAULT_CODEC_SPEED = REPO_ROOT / "build" / "release" / "bench" / "codec_speed"
TOOLS = ["tessera-python", "tessera", "acquire-zarr", "tensorstore", "tessera-cuda"]
DEFAULT_TOOLS = ["tessera-python", "tessera", "acquire-zarr", "tensorstore"]  # tessera-cuda needs a GPU: opt in with --tools
CODECS = ["none", "blosc-lz4", "blosc-zstd", "zstd"]
SINKS = ["discard", "tmpfs", "file"]
TS_INFLIGHT = 2
SEED = 20240611


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    frame: tuple         # shape of one frame: dimensions 1..D-1
    chunk: tuple         # chunk shape, all D dimensions
    shard_chunks: tuple  # chunks per shard, all D dimensions
    names: tuple         # dimension names, all D
    kinds: tuple         # acquire-zarr dimension kinds, all D (its last dimension must be "space")
    plane_axes: tuple    # the two frame axes that form the camera image
    frames: int          # default frame count of a benchmark run
    verify_frames: int   # frame count of the correctness check (ends in a partial chunk if depth > 1)

    @property
    def shard(self) -> tuple:
        return tuple(c * s for c, s in zip(self.chunk, self.shard_chunks))

    def frame_bytes(self) -> int:
        return 2 * math.prod(self.frame)


SCENARIOS = {
    "A": Scenario("A", "camera", (2048, 2048), (32, 256, 256), (1, 4, 4), ("t", "y", "x"),
                  ("time", "space", "space"), (0, 1), frames=256, verify_frames=37),
    "B": Scenario("B", "two-channel camera", (2, 2048, 2304), (16, 1, 256, 256), (1, 1, 4, 3),
                  ("t", "c", "y", "x"), ("time", "channel", "space", "space"), (1, 2), frames=64,
                  verify_frames=19),
    "C": Scenario("C", "volume stream", (256, 256, 256, 3), (1, 64, 64, 64, 3), (1, 4, 4, 4, 1),
                  ("t", "z", "y", "x", "c"), ("time", "space", "space", "space", "space"), (1, 2),
                  frames=10, verify_frames=3),
}
# --quick: the same ranks and chunks-per-shard on frames small enough for a smoke test.
QUICK = {
    "A": replace(SCENARIOS["A"], frame=(512, 512), chunk=(16, 64, 64), frames=48, verify_frames=21),
    "B": replace(SCENARIOS["B"], frame=(2, 256, 384), chunk=(8, 1, 64, 64), frames=24, verify_frames=11),
    "C": replace(SCENARIOS["C"], frame=(64, 64, 64, 3), chunk=(1, 16, 16, 16, 3), frames=3, verify_frames=2),
}


def codec_level(codec: str, args) -> int | None:
    if codec == "none":
        return None
    return args.zstd_level if codec == "zstd" else args.blosc_level


def supported(tool: str, codec: str) -> bool:
    if tool == "tessera-cuda":
        return codec in ("none", "zstd")  # nvcomp encoders; blosc framing is CPU-only
    return not (tool == "acquire-zarr" and codec == "zstd")


def expected_codecs(sc: Scenario, codec: str, level: int | None) -> list:
    """The zarr.json codecs every tool is configured to write (and is checked against)."""
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if codec == "zstd":
        inner.append({"name": "zstd", "configuration": {"level": level, "checksum": False}})
    elif codec.startswith("blosc-"):
        inner.append({"name": "blosc", "configuration": {"cname": codec.removeprefix("blosc-"), "clevel": level,
                                                          "shuffle": "shuffle", "typesize": 2, "blocksize": 0}})
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(sc.chunk), "codecs": inner,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}]


# ---------------------------------------------------------------------------------------------
# Child mode: one peer run, timed from inside; one JSON line on stdout.


def child_main(cfg: dict) -> None:
    import resource

    import numpy as np

    frame, frames, raw = tuple(cfg["frame"]), cfg["frames"], cfg["raw"]
    chunk, shard_chunks, threads = cfg["chunk"], cfg["shard_chunks"], cfg["threads"]
    frame_bytes = 2 * math.prod(frame)
    extra = {}
    if cfg["tool"] == "acquire-zarr":
        import acquire_zarr as az

        az.set_log_level(az.LogLevel.ERROR)
        kinds = {"time": az.DimensionType.TIME, "channel": az.DimensionType.CHANNEL,
                 "space": az.DimensionType.SPACE}
        shape = [0, *frame]  # 0: unbounded append dimension
        dims = [az.Dimension(name=n, kind=kinds[k], array_size_px=shape[d], chunk_size_px=chunk[d],
                             shard_size_chunks=shard_chunks[d])
                for d, (n, k) in enumerate(zip(cfg["names"], cfg["kinds"]))]
        compression = None
        if cfg["codec"] != "none":
            codec = {"blosc-lz4": az.CompressionCodec.BLOSC_LZ4, "blosc-zstd": az.CompressionCodec.BLOSC_ZSTD}
            compression = az.CompressionSettings(compressor=az.Compressor.BLOSC1, codec=codec[cfg["codec"]],
                                                 level=cfg["level"], shuffle=1)  # 1 = byte shuffle
        settings = az.StreamSettings(store_path=cfg["store"], overwrite=True, max_threads=threads)
        settings.arrays = [az.ArraySettings(dimensions=dims, data_type=np.uint16, compression=compression)]
        extra["planned_mib"] = settings.get_maximum_memory_usage() / 2**20
        rss_ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        stream = az.ZarrStream(settings)
        for i in range(frames):
            slab = np.memmap(raw, dtype="<u2", mode="r", offset=i * frame_bytes, shape=frame)
            stream.append(slab)
            del slab  # unmaps: only the frame in flight is ever resident through the mapping
        stream.close()
    elif cfg["tool"] == "tensorstore":
        import tensorstore as ts

        ctx = ts.Context({"data_copy_concurrency": {"limit": threads}, "file_io_concurrency": {"limit": threads},
                          "file_io_sync": False})
        shard = [c * s for c, s in zip(chunk, shard_chunks)]
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": cfg["store"]},
                "create": True, "delete_existing": True,
                "metadata": {"shape": [frames, *frame], "data_type": "uint16", "fill_value": 0,
                             "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shard}},
                             "chunk_key_encoding": {"name": "default"},
                             "codecs": cfg["codecs"], "dimension_names": cfg["names"]}}
        rss_ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        arr = ts.open(spec, context=ctx).result()
        depth, pending = shard[0], []
        for start in range(0, frames, depth):
            n = min(depth, frames - start)
            slab = np.memmap(raw, dtype="<u2", mode="r", offset=start * frame_bytes, shape=(n, *frame))
            pending.append((arr[start:start + n].write(slab), slab))  # slab lives until its commit
            while len(pending) > TS_INFLIGHT:
                pending.pop(0)[0].result()
        for future, _ in pending:
            future.result()
        del pending
    elif cfg["tool"] == "tessera-python":
        import tessera

        rss_ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        w = tessera.create(cfg["store"], format="zarr3", dtype="uint16", shape=(0, *frame), chunks=chunk,
                           shard_chunks=shard_chunks, codec=cfg["codec"], level=cfg["level"], threads=threads,
                           dimension_names=cfg["names"], index_location="end", discard=cfg["discard"])
        depth = chunk[0] * shard_chunks[0]
        for start in range(0, frames, depth):  # the slabs tensorstore writes, mapped the same way
            n = min(depth, frames - start)
            slab = np.memmap(raw, dtype="<u2", mode="r", offset=start * frame_bytes, shape=(n, *frame))
            w.append(slab)  # returns once the rows are in tessera's buffers: the mapping can go
            del slab
        w.close()
        stats = w.stats
        if cfg["discard"] and stats.bytes_out:
            extra["ratio"] = stats.bytes_in / stats.bytes_out
    else:
        raise SystemExit(f"unknown tool {cfg['tool']}")
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "rss_ready_mib": rss_ready, **extra}))


# ---------------------------------------------------------------------------------------------
# Parent: one run of one tool.


def tessera_argv(args, sc: Scenario, codec: str, sink: str, store: Path, raw: Path) -> list[str]:
    j = lambda xs: ",".join(str(x) for x in xs)  # noqa: E731
    argv = [str(args.binary), "stream", str(store), "--format", "zarr3", "--dtype", "uint16",
            "--shape", j((0, *sc.frame)), "--chunk", j(sc.chunk), "--shard-chunks", j(sc.shard_chunks),
            "--codec", codec, "--index-location", "end", "--input", str(raw), "--threads", str(args.threads),
            "--sink", sink, "--progress"]
    level = codec_level(codec, args)
    if level is not None:
        argv += ["--level", str(level)]
    return argv


def run_once(args, sc: Scenario, tool: str, codec: str, sink: str, store: Path, raw: Path, frames: int) -> dict:
    """Runs TOOL once on FRAMES frames of RAW into STORE; returns seconds, RSS, ratio, notes."""
    if store.exists():
        shutil.rmtree(store)
    if sink == "file":
        os.sync()
    level = codec_level(codec, args)
    if tool in ("tessera", "tessera-cuda"):
        argv = tessera_argv(args, sc, codec, "discard" if sink == "discard" else "file", store, raw)
        if tool == "tessera-cuda":
            argv += ["--backend", "cuda"]
        wall, rss, _, err = run_measured(argv)
        res = {"seconds": wall, "rss_mib": rss}
        if sink == "discard":
            found = re.findall(r"ratio\s+([0-9.]+)", err)
            res["ratio"] = float(found[-1]) if found and float(found[-1]) > 0 else None
    else:
        cfg = {"tool": tool, "store": str(store), "raw": str(raw), "frame": list(sc.frame), "frames": frames,
               "chunk": list(sc.chunk), "shard_chunks": list(sc.shard_chunks), "names": list(sc.names),
               "kinds": list(sc.kinds), "codec": codec, "level": level, "threads": args.threads,
               "codecs": expected_codecs(sc, codec, level), "discard": sink == "discard"}
        res, rss = run_json_child(__file__, cfg)
        res["rss_mib"] = rss
    res["notes"] = []
    if store.exists() and not (sink == "discard" and tool.startswith("tessera")):
        stored = tree_bytes(store)
        res["ratio"] = frames * sc.frame_bytes() / stored if stored else None
        res["notes"] = check_metadata(store, sc, codec, level, frames, tool)
    return res


def check_metadata(store: Path, sc: Scenario, codec: str, level: int | None, frames: int, tool: str) -> list[str]:
    try:
        meta = json.loads((store / "zarr.json").read_text())
    except (OSError, ValueError) as e:
        return [f"{tool}: no readable zarr.json ({e})"]
    notes = []
    if meta.get("shape") != [frames, *sc.frame]:
        notes.append(f"{tool}: shape {meta.get('shape')} != {[frames, *sc.frame]}")
    grid = meta.get("chunk_grid", {}).get("configuration", {}).get("chunk_shape")
    if grid != list(sc.shard):
        notes.append(f"{tool}: shard grid {grid} != {list(sc.shard)}")
    if normalized_codecs(meta.get("codecs", [])) != normalized_codecs(expected_codecs(sc, codec, level)):
        notes.append(f"{tool}: codecs differ: {json.dumps(meta.get('codecs'))}")
    return notes


# ---------------------------------------------------------------------------------------------
# Correctness: write a few frames (ending in a partial chunk) and read them back with zarr-python.


def verify(args, sc: Scenario, raw: Path, disk: Path, codecs: list[str]) -> list[str]:
    import numpy as np
    import zarr

    frames = min(sc.verify_frames, args.frames_for[sc.key])
    small = raw.with_name(raw.stem + "-verify.raw")
    prefix_file(raw, small, frames * sc.frame_bytes())
    expected = np.fromfile(small, dtype="<u2").reshape(frames, *sc.frame)
    peer_codec = next((c for c in ("blosc-zstd", "blosc-lz4", "none") if c in codecs), codecs[0])
    lines, ok = [], True
    for tool in args.tools:
        for codec in (codecs if tool.startswith("tessera") else [peer_codec]):
            if not supported(tool, codec):
                continue
            store = disk / f"verify-{tool}.zarr"
            try:
                res = run_once(args, sc, tool, codec, "file", store, small, frames)
                got = zarr.open_array(str(store), mode="r")[...]
                same = got.shape == expected.shape and np.array_equal(got, expected)
                verdict = "OK" if same else "MISMATCH"
            except Exception as e:  # a tool that cannot write or a store zarr cannot read: report, go on
                same, res, verdict = False, {"notes": []}, f"ERROR {str(e).strip().splitlines()[-1][:160]}"
            finally:
                shutil.rmtree(store, ignore_errors=True)
            ok &= same and not res["notes"]
            lines.append(f"{tool}/{codec}: {verdict}" + "".join(f" [{n}]" for n in res["notes"]))
    small.unlink()
    status = "verified" if ok else "VERIFICATION FAILED"
    return [f"{status} ({frames} frames, file sink, read back with zarr-python {zarr.__version__}): " + ", ".join(lines)]


# ---------------------------------------------------------------------------------------------
# Limits: tessera's codecs on this scenario's tiles, one core; memcpy with T threads.


def limits(args, sc: Scenario, codec: str, raw: Path) -> dict | None:
    if not args.codec_speed.is_file():
        return None
    j = lambda xs: ",".join(str(x) for x in xs)  # noqa: E731
    argv = [str(args.codec_speed), "--dtype", "uint16", "--frame", j(sc.frame), "--chunk", j(sc.chunk),
            "--codec", codec, "--input", str(raw), "--epochs", "1" if args.quick else "2",
            "--memcpy-threads", str(args.threads)]
    level = codec_level(codec, args)
    if level is not None:
        argv += ["--level", str(level)]
    try:
        _, _, out, _ = run_measured(argv)
        return json.loads(out.strip().splitlines()[-1])
    except (RuntimeError, ValueError) as e:
        print(f"  codec_speed failed: {e}", file=sys.stderr)
        return None


def dd_once(args, sc: Scenario, raw: Path, disk: Path, frames: int) -> float:
    """What the file sink's disk accepts: T `dd` processes at once, each copying its share of RAW into
    its own file under DISK in writes of one uncompressed shard; GB/s written (wall, sync before)."""
    block = math.prod(sc.shard) * 2
    blocks = frames * sc.frame_bytes() // block
    os.sync()
    t0 = time.perf_counter()
    procs = []
    for k in range(args.threads):
        first, last = blocks * k // args.threads, blocks * (k + 1) // args.threads
        procs.append(subprocess.Popen(["dd", f"if={raw}", f"of={disk / f'dd-{k}.bin'}", f"bs={block}",
                                       f"skip={first}", f"count={last - first}", "status=none"]))
    if any(p.wait() for p in procs):
        raise RuntimeError("dd failed")
    seconds = time.perf_counter() - t0
    for k in range(args.threads):
        (disk / f"dd-{k}.bin").unlink()
    return blocks * block / 1e9 / seconds


def tessera_plan(args, sc: Scenario, codec: str, store: Path, raw: Path) -> str:
    try:
        _, _, out, err = run_measured(tessera_argv(args, sc, codec, "discard", store, raw) + ["--plan"])
    except RuntimeError:
        return "?"
    m = re.search(r"planned peak:\s*([0-9.]+\s*\w+)", out + err)
    return m.group(1) if m else "?"


# ---------------------------------------------------------------------------------------------
# Driver and report.


def run_scenario(args, sc: Scenario, shm: Path, disk: Path) -> dict:
    frames = args.frames_for[sc.key]
    raw = shm / f"input-{sc.key}.raw"
    t0 = time.perf_counter()
    make_camera_input(raw, sc.frame, sc.plane_axes, frames, SEED + ord(sc.key))
    print(f"[{sc.key}] input: {frames} frames, {raw.stat().st_size / 2**30:.2f} GiB, generated in "
          f"{time.perf_counter() - t0:.1f} s (not timed)", file=sys.stderr)
    out = {"scenario": sc, "frames": frames, "cells": {}, "limits": {}, "notes": [], "aux": {}, "dd": {}}
    out["notes"] += verify(args, sc, raw, disk, args.codecs)
    print(f"[{sc.key}] {out['notes'][-1]}", file=sys.stderr)
    out["aux"]["tessera_plan"] = tessera_plan(args, sc, args.codecs[0], shm / "plan.zarr", raw)
    for codec in args.codecs:
        out["limits"][codec] = {"probe": limits(args, sc, codec, raw),
                                "tiles": tile_codec_speed(raw, sc.frame, sc.chunk, codec, codec_level(codec, args))}
        for sink in args.sinks:
            root = disk if sink == "file" else shm
            runs = {tool: [] for tool in args.tools if supported(tool, codec)
                    and (sink != "discard" or tool.startswith("tessera"))}  # discard: tessera's ceiling only
            for rep in range(args.repeats):
                if sink == "file":  # the disk's bound, measured between the tools' runs
                    gbps = dd_once(args, sc, raw, disk, frames)
                    out["dd"].setdefault(codec, []).append(gbps)
                    print(f"[{sc.key}] {codec:10s} {sink:7s} {'dd':12s} rep {rep + 1}: {gbps:.2f} GB/s written",
                          file=sys.stderr)
                for tool in runs:
                    store = root / f"{tool}.zarr"
                    try:
                        res = run_once(args, sc, tool, codec, sink, store, raw, frames)
                    except (RuntimeError, ValueError, KeyError) as e:
                        res = {"error": str(e).strip().splitlines()[-1][:200], "notes": []}
                        print(f"  {tool} failed: {e}", file=sys.stderr)
                    finally:
                        shutil.rmtree(store, ignore_errors=True)
                    runs[tool].append(res)
                    for n in res["notes"]:
                        note = f"WARNING {codec}/{sink}: {n}"
                        if note not in out["notes"]:
                            out["notes"].append(note)
                    if "planned_mib" in res:
                        out["aux"].setdefault("acquire_planned", {})[codec] = res["planned_mib"]
                    if "rss_ready_mib" in res:
                        out["aux"].setdefault("rss_ready", {}).setdefault(tool, []).append(res["rss_ready_mib"])
                    gbps = f"{frames * sc.frame_bytes() / 1e9 / res['seconds']:.2f} GB/s" if "seconds" in res else "error"
                    print(f"[{sc.key}] {codec:10s} {sink:7s} {tool:12s} rep {rep + 1}: {gbps}", file=sys.stderr)
            out["cells"][(codec, sink)] = runs
    raw.unlink()
    return out


def summarize(runs: list[dict], nbytes: int) -> dict | None:
    good = [r for r in runs if "seconds" in r]
    if not good:
        return None
    ratios = [r["ratio"] for r in good if r.get("ratio")]
    return {"gbps": nbytes / 1e9 / statistics.median(r["seconds"] for r in good),
            "rss": statistics.median(r["rss_mib"] for r in good),
            "ratio": statistics.median(ratios) if ratios else None,
            "all": [nbytes / 1e9 / r["seconds"] for r in good], "n": len(good), "failed": len(runs) - len(good)}


def describe(sc: Scenario, frames: int) -> str:
    x = lambda xs: "x".join(str(v) for v in xs)  # noqa: E731
    chunk_mib = 2 * math.prod(sc.chunk) / 2**20
    return (f"{sc.key} ({sc.title}): {frames} frames of {x(sc.frame)} uint16 "
            f"({frames * sc.frame_bytes() / 2**30:.2f} GiB), dims {','.join(sc.names)}; chunk {x(sc.chunk)} "
            f"({chunk_mib:.2f} MiB), shard {x(sc.shard_chunks)} chunks = {x(sc.shard)}; tensorstore writes "
            f"{sc.shard[0]} frame(s) per write; acquire-zarr appends 1 frame per call (its own frame unit is "
            f"the last two dims, {x(sc.frame[-2:])} px)")


def report(args, results: list[dict], started: float, load_start: tuple) -> None:
    p = print
    p(f"\n## tessera stream benchmark\n")
    p(f"- {os.cpu_count()} CPUs; threads T = {args.threads} for every tool; repeats {args.repeats} (median shown)"
      f"; load average at start {load_start[0]:.2f}, at end {os.getloadavg()[0]:.2f}"
      f"; total wall {time.perf_counter() - started:.0f} s{' (--quick)' if args.quick else ''}")
    p(f"- versions: {tool_versions()}")
    p(f"- tmpfs sink: every tool writes to {args.shm} ({fs_type(args.shm)}); file sink: every tool writes to "
      f"{args.disk} ({fs_type(args.disk)}); discard sink: tessera only (stores nothing: its pipeline's "
      "ceiling, no peer ratio)")
    p(f"- codecs: blosc clevel {args.blosc_level} shuffle typesize 2; zstd level {args.zstd_level}; "
      "all inside sharding_indexed (index at end, crc32c)")
    p("- time: tessera-python and the peers = open..close inside their child, frames memory-mapped from the "
      "raw file one slab at a time; tessera (the CLI) = the whole process reading the raw file with read(2). "
      f"Ratios: {args.ref} / tool. "
      f"RSS = peak of the run's process (wait4; floor {args.rss_floor:.0f} MiB = an idle child). "
      "GB/s ratio > 1 and RSS ratio < 1 favour tessera\n")
    for r in results:
        p("- " + describe(r["scenario"], r["frames"]))
    p()
    p("| scenario | codec | sink | tool | GB/s | ratio | peak RSS MiB | tessera/peer GB/s | tessera/peer RSS |")
    p("|---|---|---|---|---:|---:|---:|---:|---:|")
    for r in results:
        sc, nbytes = r["scenario"], r["frames"] * r["scenario"].frame_bytes()
        for (codec, sink), runs in r["cells"].items():
            summ = {tool: summarize(v, nbytes) for tool, v in runs.items()}
            ref = summ.get(args.ref)
            for tool in args.tools:
                s = summ.get(tool)
                if tool not in runs:
                    if sink != "discard":  # discard has no peer rows: the peers cannot store nothing
                        p(f"| {sc.key} | {codec} | {sink} | {tool} | n/a | n/a | n/a | n/a | n/a |")
                    continue
                if s is None:
                    p(f"| {sc.key} | {codec} | {sink} | {tool} | failed | | | | |")
                    continue
                ratio = f"{s['ratio']:.2f}" if s["ratio"] else "-"
                if tool == args.ref:
                    rel_t = rel_m = "ref"
                elif ref:
                    rel_t, rel_m = f"{ref['gbps'] / s['gbps']:.2f}x", f"{ref['rss'] / s['rss']:.2f}x"
                else:
                    rel_t = rel_m = "-"
                flag = f" ({s['failed']} failed)" if s["failed"] else ""
                p(f"| {sc.key} | {codec} | {sink} | {tool} | {s['gbps']:.2f}{flag} | {ratio} | {s['rss']:.0f} | "
                  f"{rel_t} | {rel_m} |")
    limits_table(args, results)
    file_bound_table(args, results)
    p("\n### Notes\n")
    for r in results:
        aux = r["aux"]
        p(f"- {r['scenario'].key}: tessera --plan planned peak {aux.get('tessera_plan', '?')}; acquire-zarr "
          "get_maximum_memory_usage(): " + (", ".join(f"{c} {v:.0f} MiB" for c, v in
                                                        aux.get("acquire_planned", {}).items()) or "-")
          + "; peer child RSS after imports, before writing: "
          + (", ".join(f"{t} {statistics.median(v):.0f} MiB" for t, v in aux.get("rss_ready", {}).items()) or "-"))
        for n in r["notes"]:
            p(f"- {r['scenario'].key}: {n}")
    p("- per-run GB/s (every repeat), for judging noise:")
    for r in results:
        nbytes = r["frames"] * r["scenario"].frame_bytes()
        for (codec, sink), runs in r["cells"].items():
            cells = []
            for tool, v in runs.items():
                s = summarize(v, nbytes)
                cells.append(f"{tool} " + (" ".join(f"{g:.2f}" for g in s["all"]) if s else "failed"))
            if sink == "file" and codec in r["dd"]:
                cells.append("dd (written) " + " ".join(f"{g:.2f}" for g in r["dd"][codec]))
            p(f"  - {r['scenario'].key} {codec} {sink}: " + "; ".join(cells))


def h2d_bandwidth_line(args) -> str | None:
    """The pinned host-to-device bandwidth (build/release/bench/h2d_bandwidth), when tessera-cuda runs."""
    probe = args.binary.parent / "bench" / "h2d_bandwidth"
    if "tessera-cuda" not in args.tools:
        return None
    if not probe.is_file():
        return "H2D bandwidth: not measured (build/release/bench/h2d_bandwidth missing: no CUDA build)"
    proc = subprocess.run([str(probe)], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"H2D bandwidth: not measured ({proc.stderr.strip()})"
    return f"H2D bandwidth (pinned, 256 MiB copies, median of 10): {proc.stdout.split()[-1]} GB/s"


def limits_table(args, results: list[dict]) -> None:
    p, T = print, args.threads
    p("\n### Limits\n")
    h2d = h2d_bandwidth_line(args)
    if h2d:
        p(h2d + "\n")
    p(f"probe = build/release/bench/codec_speed: tessera's own codecs (the libraries it links), one core, on "
      f"the first two chunk-depths of this benchmark's input cut into the scenario's tiles (the issue's "
      f"compressor bound), and memcpy with {T} threads. numcodecs = the same codecs through numcodecs' bundled "
      f"builds (c-blosc / libzstd, what the Python peers ship), one core, on the first chunk-depth's tiles. "
      f"bound = 1-core GB/s x {T} threads. The last column checks both measured the run's data.\n")
    p(f"| scenario | codec | {args.ref} GB/s (sink) | memcpy GB/s | % of memcpy | probe 1-core GB/s | probe bound "
      f"| % of probe bound | numcodecs 1-core GB/s | numcodecs bound | % of numcodecs bound "
      "| ratio: probe / numcodecs / tessera run |")
    p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    f2 = lambda v: f"{v:.2f}" if v else "-"  # noqa: E731
    for r in results:
        sc, nbytes = r["scenario"], r["frames"] * r["scenario"].frame_bytes()
        for codec, lim in r["limits"].items():
            sink = next((k for k in ("discard", "tmpfs", "file") if (codec, k) in r["cells"]), "file")
            s = summarize(r["cells"].get((codec, sink), {}).get(args.ref, []), nbytes)
            if s is None:
                continue
            cells = [f"{s['gbps']:.2f} ({sink})"]
            probe, tiles = lim["probe"], lim["tiles"]
            cells += [f"{probe['memcpy_gbps']:.2f}", f"{100 * s['gbps'] / probe['memcpy_gbps']:.0f}%"] if probe else ["-", "-"]
            for src in (probe, tiles):
                if src is None or codec == "none":  # the bytes codec is a no-op: memcpy is the only bound
                    cells += ["no-op" if codec == "none" else "-", "-", "-"]
                else:
                    bound = src["single_core_gbps"] * T
                    cells += [f"{src['single_core_gbps']:.2f}", f"{bound:.2f}", f"{100 * s['gbps'] / bound:.0f}%"]
            cells.append(" / ".join([f2(probe and probe["ratio"]), f2(tiles and tiles["ratio"]), f2(s["ratio"])]))
            p(f"| {sc.key} | {codec} | " + " | ".join(cells) + " |")


def file_bound_table(args, results: list[dict]) -> None:
    """tessera's file sink against its two bounds: its own discard-sink run and what the disk accepts."""
    if not any(r["dd"] for r in results):
        return
    p = print
    p(f"\n### File sink against its bounds\n")
    p(f"dd = {args.threads} `dd` processes at once copying the input into files on the file-sink disk, in "
      "writes of one uncompressed shard, run in every repeat between the tools (GB/s written). In input "
      "GB/s the disk accepts dd x ratio (a compressed shard is fewer bytes). The bound that applies is the "
      "lower of that and the discard run; target >= 90% of it.\n")
    p(f"| scenario | codec | {args.ref} file GB/s | discard GB/s | dd GB/s written | dd x ratio | bound "
      "| % of bound |")
    p("|---|---|---:|---:|---:|---:|---|---:|")
    for r in results:
        sc, nbytes = r["scenario"], r["frames"] * r["scenario"].frame_bytes()
        for codec, dd in r["dd"].items():
            f = summarize(r["cells"].get((codec, "file"), {}).get(args.ref, []), nbytes)
            d = summarize(r["cells"].get((codec, "discard"), {}).get(args.ref, []), nbytes)
            if f is None:
                continue
            disk = statistics.median(dd) * (f["ratio"] or 1.0)
            bounds = {"disk (dd)": disk} | ({"discard": d["gbps"]} if d else {})
            name = min(bounds, key=bounds.get)
            p(f"| {sc.key} | {codec} | {f['gbps']:.2f} | {d['gbps']:.2f} | " if d else
              f"| {sc.key} | {codec} | {f['gbps']:.2f} | - | ", end="")
            p(f"{statistics.median(dd):.2f} | {disk:.2f} | {name} | {100 * f['gbps'] / bounds[name]:.0f}% |")


def tool_versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for pkg in ("acquire-zarr", "tensorstore", "zarr", "numpy"):
        try:
            out.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            out.append(f"{pkg} missing")
    return ", ".join(out)


def parse_frames(text: str | None, keys: list[str], table: dict) -> dict:
    frames = {k: table[k].frames for k in keys}
    if not text:
        return frames
    for part in text.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            frames[k.strip().upper()] = int(v)
        else:
            frames = {k: int(part) for k in keys}
    return frames


def main() -> None:
    ap = child_or_parser(child_main, __doc__)
    if ap is None:
        return
    ap.add_argument("--frames", help="frames per run: N for every scenario, or A=256,B=64,C=10")
    ap.add_argument("--repeats", type=int, default=None, help="runs per cell, median shown (default 3; quick 1)")
    ap.add_argument("--scenarios", default="A,B,C")
    ap.add_argument("--codecs", default=",".join(CODECS))
    ap.add_argument("--sinks", default=",".join(SINKS))
    ap.add_argument("--tools", default=",".join(DEFAULT_TOOLS))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--blosc-level", type=int, default=1)
    ap.add_argument("--zstd-level", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="tiny frames, 1 repeat: a smoke test")
    ap.add_argument("--binary", type=Path, default=Path(os.environ.get("TESSERA_BIN", DEFAULT_BINARY)))
    ap.add_argument("--codec-speed", type=Path, default=DEFAULT_CODEC_SPEED)
    ap.add_argument("--shm-dir", type=Path, default=Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else None,
                    help="where inputs and every tool's tmpfs-sink stores go (default /dev/shm)")
    ap.add_argument("--disk-dir", type=Path, default=REPO_ROOT / "build" if (REPO_ROOT / "build").is_dir() else None,
                    help="where file-sink stores go (default build/, on the work disk)")
    ap.add_argument("--keep", action="store_true", help="keep the work directories")
    args = ap.parse_args()

    table = QUICK if args.quick else SCENARIOS
    keys = [k.strip().upper() for k in args.scenarios.split(",") if k.strip()]
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()]  # noqa: E731
    args.codecs, args.sinks, args.tools = split(args.codecs), split(args.sinks), split(args.tools)
    for name, given, allowed in (("scenario", keys, table), ("codec", args.codecs, CODECS),
                                 ("sink", args.sinks, SINKS), ("tool", args.tools, TOOLS)):
        bad = [g for g in given if g not in allowed]
        if bad:
            raise SystemExit(f"unknown {name}(s) {bad}; choose from {list(allowed)}")
    if not any(t in args.tools for t in ("tessera-python", "tessera")):
        args.tools.insert(0, "tessera-python")
    # The reference every ratio is taken against: the Python package (frames from memory, timed
    # inside the child like the peers) unless only the CLI runs.
    args.ref = "tessera-python" if "tessera-python" in args.tools else "tessera"
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.frames_for = parse_frames(args.frames, keys, table)
    if not args.binary.is_file():
        raise SystemExit(f"tessera binary not found at {args.binary}: build it with scripts/build.sh")

    load_start, started = os.getloadavg(), time.perf_counter()
    args.rss_floor = rss_floor_mib()
    args.shm = Path(tempfile.mkdtemp(prefix="tessera-stream-bench-", dir=args.shm_dir))
    args.disk = Path(tempfile.mkdtemp(prefix="tessera-stream-bench-", dir=args.disk_dir))
    if fs_type(args.disk) == "tmpfs":
        print(f"warning: file-sink dir {args.disk} is on tmpfs; pass --disk-dir", file=sys.stderr)
    try:
        results = [run_scenario(args, table[k], args.shm, args.disk) for k in keys]
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
