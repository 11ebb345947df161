#!/usr/bin/env python3
"""S3 benchmark: tessera streaming to and reading from a real S3 server (SeaweedFS on 127.0.0.1,
started here), against the same stream to the local file store and against tensorstore's s3 kvstore
reading the same array, in the same run.

Array: t x 1024 x 1024 uint16 camera-like frames (bench_util.make_camera_input), zstd level 1,
chunk 16 x 256 x 256, shards of 1 x 2 x 2 chunks. Rows:
  stream   tessera (Python package) appends one frame per call, to S3 and to ext4 (open to close); again
           with 1 compression thread, which leaves the server a core of its own on a 2-core machine
  read     the whole array, tessera vs tensorstore (zarr3 driver on its s3 kvstore)
  blocks   N random 48^3 blocks (the same for both tools), one read call per block
Requests per read come from a counting proxy in front of the server (a separate, untimed pass).
Every timed run is a child process; medians of --repeats, tools interleaved.

Run from the repository root:  .venv/bin/python bench/s3_bench.py [--repeats 5] [--frames 64]
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_util import child_or_parser, make_camera_input, run_json_child  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
FRAME = (1024, 1024)
CHUNK, SHARD = (16, 256, 256), (1, 2, 2)
BUCKET = "bench"
BLOCK = 48


def blocks(shape, n, seed=7):
    import numpy as np

    rng = np.random.default_rng(seed)
    return [tuple(int(rng.integers(0, s - BLOCK + 1)) for s in shape) for _ in range(n)]


def child_main(cfg: dict) -> None:
    import numpy as np

    os.environ.update(cfg["env"])
    shape = (cfg["frames"], *FRAME)
    t0 = time.perf_counter()
    if cfg["op"] == "stream":
        import tessera

        w = tessera.create(cfg["url"], dtype="uint16", shape=shape, chunks=CHUNK, shard_chunks=SHARD, codec="zstd",
                           level=1, threads=cfg.get("threads", 0))
        frame_bytes = 2 * FRAME[0] * FRAME[1]
        for i in range(cfg["frames"]):
            w.append(np.memmap(cfg["raw"], dtype="<u2", mode="r", offset=i * frame_bytes, shape=FRAME))
        w.close()
    elif cfg["tool"] == "tessera":
        import tessera

        a = tessera.open(cfg["url"])
        if cfg["op"] == "read":
            a[...]
        else:
            for z, y, x in blocks(shape, cfg["blocks"]):
                a[z:z + BLOCK, y:y + BLOCK, x:x + BLOCK]
    else:
        import tensorstore as ts

        t = ts.open({"driver": "zarr3", "kvstore": cfg["kvstore"]}, read=True).result()
        if cfg["op"] == "read":
            t.read().result()
        else:
            for z, y, x in blocks(shape, cfg["blocks"]):
                t[z:z + BLOCK, y:y + BLOCK, x:x + BLOCK].read().result()
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def count_requests(server, url: str, frames: int, n_blocks: int) -> dict:
    """Requests tessera sends to open the array, read one block of a cold shard, and read it all."""
    from s3_support import FaultProxy

    import tessera

    with FaultProxy(server.endpoint) as proxy:
        os.environ.update(server.env())
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        a = tessera.open(url)
        opened = proxy.request_count
        proxy.clear()
        a[0:16, 0:256, 0:256]
        one = proxy.request_count
        proxy.clear()
        a[...]
        whole = proxy.request_count
    shards = (frames // CHUNK[0]) * (FRAME[0] // (CHUNK[1] * SHARD[1])) * (FRAME[1] // (CHUNK[2] * SHARD[2]))
    chunks = (frames // CHUNK[0]) * (FRAME[0] // CHUNK[1]) * (FRAME[1] // CHUNK[2])
    return {"open": opened, "one chunk (cold shard)": one, "whole array": whole, "shards": shards,
            "chunks": chunks}


def main() -> None:
    ap = child_or_parser(child_main, __doc__)
    if ap is None:
        return
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=64)
    args = ap.parse_args()
    from s3_support import S3Server, tensorstore_s3_kvstore

    started = time.perf_counter()
    shm = Path(tempfile.mkdtemp(prefix="tessera-s3-bench-", dir="/dev/shm"))
    disk = Path(tempfile.mkdtemp(prefix="tessera-s3-bench-", dir=REPO_ROOT / "build"))
    nbytes = args.frames * FRAME[0] * FRAME[1] * 2
    runs: dict[str, list] = {}
    try:
        raw = shm / "frames.raw"
        make_camera_input(raw, FRAME, (0, 1), args.frames, 4242)
        with S3Server() as server:
            server.create_bucket(BUCKET)
            env = {**server.env(), "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}
            base = dict(frames=args.frames, raw=str(raw), env=env, blocks=args.blocks)
            read_url = f"s3://{BUCKET}/read.zarr"
            run_json_child(__file__, dict(base, op="stream", url=read_url))
            kvstore = tensorstore_s3_kvstore(server, BUCKET, "read.zarr/")
            for rep in range(args.repeats):
                plan = [("stream to S3", dict(op="stream", url=f"s3://{BUCKET}/s{rep}.zarr")),
                        ("stream to ext4", dict(op="stream", url=str(disk / f"s{rep}.zarr"))),
                        ("stream to S3, 1 thread", dict(op="stream", url=f"s3://{BUCKET}/t{rep}.zarr", threads=1)),
                        ("stream to ext4, 1 thread", dict(op="stream", url=str(disk / f"t{rep}.zarr"), threads=1)),
                        ("read all: tessera", dict(op="read", tool="tessera", url=read_url)),
                        ("read all: tensorstore", dict(op="read", tool="tensorstore", kvstore=kvstore)),
                        ("blocks: tessera", dict(op="blocks", tool="tessera", url=read_url)),
                        ("blocks: tensorstore", dict(op="blocks", tool="tensorstore", kvstore=kvstore))]
                for name, cfg in plan:
                    os.sync()
                    res, rss = run_json_child(__file__, dict(base, **cfg))
                    runs.setdefault(name, []).append((res["seconds"], rss))
                    print(f"{name} rep {rep + 1}: {res['seconds']:.2f} s, {rss:.0f} MiB", file=sys.stderr)
                shutil.rmtree(disk / f"s{rep}.zarr", ignore_errors=True)
                shutil.rmtree(disk / f"t{rep}.zarr", ignore_errors=True)
            requests = count_requests(server, read_url, args.frames, args.blocks)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)

    med = {k: statistics.median(s for s, _ in v) for k, v in runs.items()}
    rss = {k: statistics.median(r for _, r in v) for k, v in runs.items()}
    p = print
    p(f"\n## tessera S3 benchmark\n\n- {os.cpu_count()} CPUs; SeaweedFS on 127.0.0.1; {args.frames} x 1024 x 1024 "
      f"uint16 ({nbytes / 2**20:.0f} MiB), zstd 1, chunk 16x256x256, shard 1x2x2; {args.blocks} blocks of "
      f"{BLOCK}^3; repeats {args.repeats} (median); total wall {time.perf_counter() - started:.0f} s\n")
    p("| run | median s | GB/s (of the array) | peak RSS MiB | note |")
    p("|---|---:|---:|---:|---|")
    notes = {"stream to S3": f"S3 / file: **{med['stream to ext4'] / med['stream to S3']:.0%}** of the file speed",
             "stream to S3, 1 thread": f"S3 / file: **{med['stream to ext4, 1 thread'] / med['stream to S3, 1 thread']:.0%}**"
                                       " (the server has a core of its own)",
             "read all: tessera": f"tessera / tensorstore: **{med['read all: tensorstore'] / med['read all: tessera']:.2f}x**",
             "blocks: tessera": f"tessera / tensorstore: **{med['blocks: tensorstore'] / med['blocks: tessera']:.2f}x**"}
    for k in runs:
        gbs = nbytes / 1e9 / med[k] if not k.startswith("blocks") else float("nan")
        p(f"| {k} | {med[k]:.2f} | {gbs:.2f} | {rss[k]:.0f} | {notes.get(k, '')} |")
    p("\nrequests tessera sends (counted by a proxy): " + ", ".join(f"{k} {v}" for k, v in requests.items()))
    p("\nper-run seconds:")
    for k, v in runs.items():
        p(f"- {k}: " + " ".join(f"{s:.2f}" for s, _ in v))


if __name__ == "__main__":
    main()
