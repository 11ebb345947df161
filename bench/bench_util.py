"""Helpers shared by the benchmark scripts in bench/: child processes measured with wait4, store
sizes, file-system names, camera-like input generation and Zarr codec-list normalisation.

Everything here is plain functions; nothing runs on import.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path


# A child's ru_maxrss on Linux is at least the RSS of the process that spawned it: execve() folds the
# old address space's high-water mark into the new image's (for vfork/posix_spawn, the old address
# space is the parent's own). Measured straight from a benchmark parent holding hundreds of MiB, every
# child would report at least that. So each measured command is started by this tiny launcher, a
# fresh `python -S -I` of about 10 MiB, which spawns it, reaps it with wait4 and writes the result to
# a file. Peak RSS therefore has a floor of the launcher's size (see rss_floor_mib()).
_LAUNCHER = r"""
import json, os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(sys.argv[1], "w") as f:
    json.dump({"wall": wall, "maxrss_kib": usage.ru_maxrss, "rc": os.waitstatus_to_exitcode(status)}, f)
"""


def run_measured(argv: list[str]) -> tuple[float, float, str, str]:
    """Runs ARGV to completion through the launcher above.

    Returns (wall seconds from spawn to exit, peak RSS in MiB, stdout, stderr). Raises
    RuntimeError with the tail of the child's stderr when it exits non-zero."""
    import tempfile

    fd, result_path = tempfile.mkstemp(prefix="bench-rusage-", suffix=".json")
    os.close(fd)
    try:
        proc = subprocess.run([sys.executable, "-S", "-I", "-c", _LAUNCHER, result_path, *argv],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
        try:
            with open(result_path) as f:
                result = json.load(f)
        except (OSError, ValueError):
            raise RuntimeError(f"launcher for {' '.join(argv)} failed ({proc.returncode}):\n{err[-4000:]}")
    finally:
        os.unlink(result_path)
    if result["rc"] != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {result['rc']}:\n{err[-4000:]}")
    return result["wall"], result["maxrss_kib"] / 1024.0, out, err  # ru_maxrss is KiB on Linux


def child_or_parser(child_main, doc: str):
    """The start of a benchmark's main(): as a child (`--child JSON`, see run_json_child), runs
    child_main(config) and returns None; as the parent, returns the argument parser to fill.

    The parent sets OPENBLAS_NUM_THREADS=1, which every child inherits: numpy's OpenBLAS threads spin
    for a while after start-up and steal a share of the cores from whatever runs then, and no tool
    here calls BLAS."""
    import argparse

    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child_main(json.loads(sys.argv[2]))
        return None
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def run_json_child(script: str, cfg: dict) -> tuple[dict, float]:
    """Runs `python SCRIPT --child JSON(cfg)` through run_measured; returns the JSON object the child
    printed last on stdout and the child's peak RSS in MiB."""
    _, rss, out, _ = run_measured([sys.executable, str(Path(script).resolve()), "--child", json.dumps(cfg)])
    return json.loads(out.strip().splitlines()[-1]), rss


def rss_floor_mib() -> float:
    """The smallest peak RSS run_measured can report: that of a child which touches nothing."""
    return run_measured(["true"])[1]


def tree_bytes(root: Path) -> int:
    """Sum of the sizes of the regular files under ROOT (0 when it does not exist)."""
    if not root.exists():
        return 0
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def fs_type(path: Path) -> str:
    """The file-system type (tmpfs, ext4, overlay, ...) of the mount holding PATH."""
    path = path.resolve()
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                mount, fstype = fields[1], fields[2]
                if (str(path) == mount or str(path).startswith(mount.rstrip("/") + "/")) and len(mount) > len(best):
                    best, kind = mount, fstype
    except OSError:
        pass
    return kind


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
        elif c["name"] == "blosc":
            cfg.setdefault("blocksize", 0)
        elif c["name"] == "sharding_indexed":
            cfg.setdefault("index_location", "end")
            cfg["codecs"] = normalized_codecs(cfg["codecs"])
            cfg["index_codecs"] = normalized_codecs(cfg["index_codecs"])
        if not cfg:
            del c["configuration"]
        out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# Camera-like input. A static 2-D "scene" (a gentle background ramp plus a few dozen soft
# Gaussian blobs, like cells or beads) drifts by a pixel per frame; the remaining axes of a frame
# (channels, z) modulate its brightness smoothly; Gaussian read noise of a few counts on top.
# zstd-1 / blosc compress it a few times, like real microscope frames.


def _scene(height: int, width: int, rng) -> "np.ndarray":
    import numpy as np

    y = np.arange(height, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    img = 150.0 + 200.0 * (y / height) + 120.0 * (x / width)
    img = np.broadcast_to(img, (height, width)).copy()
    n_blobs = max(4, (height * width) // 60000)
    for _ in range(n_blobs):
        cy, cx = rng.uniform(0, height), rng.uniform(0, width)
        sigma = rng.uniform(3, max(4.0, min(height, width) / 40))
        amp = rng.uniform(300, 3000)
        r = int(4 * sigma) + 1
        y0, y1 = max(0, int(cy) - r), min(height, int(cy) + r + 1)
        x0, x1 = max(0, int(cx) - r), min(width, int(cx) + r + 1)
        if y0 >= y1 or x0 >= x1:
            continue
        gy = np.exp(-0.5 * ((np.arange(y0, y1, dtype=np.float32) - cy) / sigma) ** 2)[:, None]
        gx = np.exp(-0.5 * ((np.arange(x0, x1, dtype=np.float32) - cx) / sigma) ** 2)[None, :]
        img[y0:y1, x0:x1] += amp * gy * gx
    return img


def make_camera_input(path: Path, frame_shape: tuple, plane_axes: tuple, frames: int, seed: int,
                      block_bytes: int = 256 << 20) -> None:
    """Writes FRAMES frames of FRAME_SHAPE little-endian uint16 to PATH.

    PLANE_AXES names the two axes of a frame that form the camera image; the other axes modulate
    its brightness. A block of up to BLOCK_BYTES of distinct frames is generated once and repeated
    to reach FRAMES (every chunk is compressed on its own, so repetition does not help a codec)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ay, ax = plane_axes
    height, width = frame_shape[ay], frame_shape[ax]
    scene = _scene(height, width, rng)
    frame_elements = math.prod(frame_shape)
    block_frames = max(1, min(frames, block_bytes // (2 * frame_elements)))

    # Brightness modulation over the non-image axes, broadcast to the frame's shape.
    modulation = np.ones([1] * len(frame_shape), dtype=np.float32)
    for d, n in enumerate(frame_shape):
        if d in plane_axes or n == 1:
            continue
        i = np.arange(n, dtype=np.float32)
        m = 0.75 + 0.25 * np.sin(2 * np.pi * i / max(n, 2) * 1.5 + d).astype(np.float32)
        shape = [1] * len(frame_shape)
        shape[d] = n
        modulation = modulation * m.reshape(shape)
    plane_shape = [1] * len(frame_shape)
    plane_shape[ay], plane_shape[ax] = height, width

    block = np.empty((block_frames, *frame_shape), dtype="<u2")
    for t in range(block_frames):
        moved = np.roll(scene, shift=(t, 2 * t), axis=(0, 1)).reshape(plane_shape)
        f = moved * modulation
        f = f + rng.standard_normal(size=frame_shape, dtype=np.float32) * np.float32(3.0)
        np.clip(f, 0, 65535, out=f)
        block[t] = f.astype("<u2")
    data = memoryview(block.reshape(-1).view("u1"))
    per_frame = 2 * frame_elements
    with open(path, "wb") as out:
        remaining = frames
        while remaining > 0:
            n = min(remaining, block_frames)
            out.write(data[: n * per_frame])
            remaining -= n


def prefix_file(src: Path, dst: Path, nbytes: int) -> None:
    """Copies the first NBYTES of SRC to DST."""
    with open(src, "rb") as f, open(dst, "wb") as g:
        left = nbytes
        while left > 0:
            buf = f.read(min(left, 64 << 20))
            if not buf:
                raise ValueError(f"{src} is shorter than {nbytes} bytes")
            g.write(buf)
            left -= len(buf)


def tile_codec_speed(raw: Path, frame_shape: tuple, chunk: tuple, codec: str, level: int | None) -> dict | None:
    """One-core encode speed of numcodecs' CODEC on the tiles of the first chunk-depth of frames of
    RAW (uint16), cut exactly as a chunked writer cuts them (edge tiles zero-padded to the full
    chunk). Only the encode calls are timed. Returns {"single_core_gbps", "ratio"}, or None for
    codec "none". numcodecs wraps the same C libraries (c-blosc, libzstd), possibly other versions."""
    import itertools

    import numpy as np

    if codec == "none":
        return None
    if codec == "zstd":
        from numcodecs import Zstd

        encoder = Zstd(level=level)
    else:
        from numcodecs import Blosc

        Blosc.use_threads = False
        encoder = Blosc(cname=codec.removeprefix("blosc-"), clevel=level, shuffle=Blosc.SHUFFLE, blocksize=0)
    depth = chunk[0]
    epoch = np.fromfile(raw, dtype="<u2", count=depth * math.prod(frame_shape))
    epoch = epoch.reshape(-1, *frame_shape)
    grid = [range(0, n, c) for n, c in zip(epoch.shape, chunk)]
    tile = np.zeros(chunk, dtype="<u2")
    seconds, in_bytes, out_bytes = 0.0, 0, 0
    for origin in itertools.product(*grid):
        part = epoch[tuple(slice(o, o + c) for o, c in zip(origin, chunk))]
        tile[...] = 0
        tile[tuple(slice(0, n) for n in part.shape)] = part
        t0 = time.perf_counter()
        encoded = encoder.encode(tile)
        seconds += time.perf_counter() - t0
        in_bytes += tile.nbytes
        out_bytes += len(encoded)
    return {"single_core_gbps": in_bytes / 1e9 / seconds, "ratio": in_bytes / out_bytes}
