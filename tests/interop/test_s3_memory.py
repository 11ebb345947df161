"""Streams to a slow object store stay within their plan (README "Object stores": a stream to an
object store writes through a queue of at most one shard row's raw bytes, `--plan` prints it as
`upload queue`, "so a slow network stalls encoding only when the queue is full"), and Python's
append blocks while the pipeline is busy (README "Python": "It blocks while the pipeline is busy
(backpressure)").

A real S3 server (SeaweedFS on 127.0.0.1, tests/s3_support.py) behind a proxy that holds every
answer back (FaultProxy, delay_rate=1): uploads drain far slower than tessera encodes, so a queue
that grew, or an append that returned before its data had room, would show in the streaming
process's peak RSS and in where the time goes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from interop_support import peak_rss_mib, plan_numbers, run_launched
from s3_support import FaultProxy, prefix_for

BUCKET = "memory"
SEED = 0x53_3A11
FRAME = (512, 512)
FRAME_BYTES = FRAME[0] * FRAME[1] * 2
DELAY_S = 0.2
UPLOAD_THREADS = 8  # README: "drained by 8 upload threads"
# Shards of 8 frames' 256 x 256 tiles (1 MiB, 4 per shard row), stored raw: what is queued is what is sent.
LAYOUT = ["--dtype", "uint16", "--chunk", "8,128,128", "--shard-chunks", "1,2,2", "--codec", "none"]
SIZES_MIB = (32, 128)
CLI_ALLOWANCE_MIB = 32  # the binary with its libraries and the allocator's slack (as test_memory_bounds)
PYTHON_ALLOWANCE_MIB = 16


@pytest.fixture(scope="module")
def server(s3_server):
    s3_server.create_bucket(BUCKET)
    return s3_server


def peak_and_queue(text: str) -> tuple[float, float]:
    """An object store stream's plan: its planned peak and its upload queue (MiB), both stated."""
    plan = plan_numbers(text)
    assert plan["queue"] > 0, f"an object store stream's plan names its upload queue: {text!r}"
    return plan["peak"], plan["queue"]


def camera_frames(first: int, count: int) -> np.ndarray:
    """Frames t = first, ...: a diagonal ramp moving with t plus seeded noise (differs every frame)."""
    rng = np.random.default_rng([SEED, first])
    ramp = np.add.outer(np.arange(FRAME[0], dtype=np.uint16), np.arange(FRAME[1], dtype=np.uint16))
    t = np.arange(first, first + count, dtype=np.uint16)[:, None, None]
    return (ramp + 7 * t) % 2048 + 1024 + rng.integers(0, 96, size=(count, *FRAME), dtype=np.uint16)


def test_cli_stream_to_a_slow_store_stays_within_its_plan_and_upload_queue(tessera, s3_env, request, tmp_path):
    prefix = prefix_for(request)
    peaks, plans, seconds, puts = {}, {}, {}, {}
    with FaultProxy(s3_env.endpoint, seed=11, delay_rate=1.0, delay_s=DELAY_S) as proxy:
        env = dict(os.environ, AWS_ENDPOINT_URL=proxy.url)
        for mib in SIZES_MIB:
            n = (mib << 20) // FRAME_BYTES
            raw = tmp_path / f"frames-{mib}.raw"
            with open(raw, "wb") as f:
                for first in range(0, n, 16):
                    f.write(camera_frames(first, 16).astype("<u2").tobytes())
            cmd = [str(tessera.binary), "stream", f"s3://{BUCKET}/{prefix}/s{mib}.zarr", *LAYOUT,
                   "--shape", f"{n},{FRAME[0]},{FRAME[1]}", "--threads", "2"]
            plan = subprocess.run([*cmd, "--plan"], capture_output=True, text=True, env=env, timeout=60)
            assert plan.returncode == 0, plan.stderr
            plans[mib] = peak_and_queue(plan.stdout)
            proxy.clear()
            start = time.monotonic()
            peaks[mib] = peak_rss_mib([*cmd, "--input", raw], env=env)
            seconds[mib] = time.monotonic() - start
            puts[mib] = proxy.method_counts["PUT"]
            raw.unlink()
    import tessera as tsr

    got = tsr.open(f"s3://{BUCKET}/{prefix}/s{SIZES_MIB[0]}.zarr")
    np.testing.assert_array_equal(got[16:32], camera_frames(16, 16))

    peak_mib, queue_mib = plans[SIZES_MIB[0]]
    assert all(p == plans[SIZES_MIB[0]] for p in plans.values()), plans
    limit = (peak_mib + queue_mib) * 1.1 + CLI_ALLOWANCE_MIB
    report = (f"planned peak {peak_mib:.1f} MiB + upload queue {queue_mib:.1f} MiB, limit {limit:.1f} MiB; "
              + "; ".join(f"{m} MiB: peak RSS {peaks[m]:.1f} MiB, {puts[m]} PUTs delayed {DELAY_S} s, "
                          f"{seconds[m]:.1f} s" for m in SIZES_MIB))
    # The premise: the uploads, not the encoding, set the pace.
    big = SIZES_MIB[-1]
    assert seconds[big] >= puts[big] * DELAY_S / UPLOAD_THREADS * 0.9, f"the store was not the bottleneck: {report}"
    assert big > 1.5 * limit, f"the stream must dwarf the limit: {report}"
    for mib, peak in peaks.items():
        assert peak <= limit, f"the peak exceeds the plan and its upload queue with {mib} MiB: {report}"
    assert peaks[big] <= peaks[SIZES_MIB[0]] * 1.1 + 16, f"the peak grows with the stream: {report}"


APPEND_SCRIPT = textwrap.dedent(r"""
    import json, re, resource, sys, time
    import numpy as np
    import tessera

    location, n_frames = sys.argv[1], int(sys.argv[2])
    h, w = 512, 512
    rng = np.random.default_rng([%(seed)d, 3])
    ramp = np.add.outer(np.arange(h, dtype=np.uint16), np.arange(w, dtype=np.uint16))
    frames = np.empty((16, h, w), np.uint16)
    for i in range(16):
        np.add(ramp, 7 * i, out=frames[i])
        frames[i] %%= 2048
        frames[i] += 1024 + rng.integers(0, 96, size=(h, w), dtype=np.uint16)
    del ramp
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    s = tessera.create(location, dtype="uint16", shape=(0, h, w), chunks=(8, 128, 128), shard_chunks=(1, 2, 2),
                       codec="none", threads=2)
    plan = s.plan
    in_append = 0.0
    slowest = 0.0
    for i in range(n_frames):
        t = time.perf_counter()
        s.append(frames[i %% 16])
        dt = time.perf_counter() - t
        in_append += dt
        slowest = max(slowest, dt)
    t = time.perf_counter()
    s.close()
    in_close = time.perf_counter() - t
    print(json.dumps({"baseline": baseline, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "plan": plan, "in_append": in_append, "slowest": slowest, "in_close": in_close}))
""") % {"seed": SEED}


def test_python_append_blocks_while_uploads_are_slow_and_memory_stays_bounded(s3_env, request, tmp_path):
    """128 MiB appended frame by frame, over twice what the plan and the upload queue hold: once they
    are full, each append waits for uploads (a good share of the stream's time is spent inside
    append), the process's peak RSS stays within the plan and the queue, and close waits only for
    what is left in them."""
    mib = SIZES_MIB[-1]
    n = (mib << 20) // FRAME_BYTES
    url = f"s3://{BUCKET}/{prefix_for(request)}/a.zarr"
    with FaultProxy(s3_env.endpoint, seed=13, delay_rate=1.0, delay_s=DELAY_S) as proxy:
        env = dict(os.environ, AWS_ENDPOINT_URL=proxy.url)
        proc = run_launched([sys.executable, "-c", APPEND_SCRIPT, url, n], env=env)
        assert proc.returncode == 0, proc.stderr
        puts = proxy.method_counts["PUT"]
    r = json.loads(proc.stdout)
    peak_mib, queue_mib = peak_and_queue(r["plan"])
    above = r["peak"] - r["baseline"]
    limit = (peak_mib + queue_mib) * 1.1 + PYTHON_ALLOWANCE_MIB
    total = r["in_append"] + r["in_close"]
    drain = puts * DELAY_S / UPLOAD_THREADS  # the least time the uploads need
    report = (f"{mib} MiB in {n} appends; planned peak {peak_mib:.1f} MiB + upload queue {queue_mib:.1f} MiB, "
              f"limit {limit:.1f} MiB; peak RSS above the baseline {above:.1f} MiB; {puts} PUTs delayed {DELAY_S} s "
              f"(drain >= {drain:.1f} s); {r['in_append']:.2f} s inside append (slowest {r['slowest']:.2f} s), "
              f"{r['in_close']:.2f} s inside close")
    assert total >= drain * 0.9, f"the store was not the bottleneck: {report}"
    assert mib > 2 * limit, f"the stream must dwarf the limit: {report}"
    assert above <= limit, f"appending faster than the store drains grows memory: {report}"
    # At most `limit` MiB of the stream fit in memory, so the rest can only be appended as fast as the
    # uploads drain: a good share of the time is spent waiting inside append (appends that never
    # blocked would take the encoding's ~0.2 s in all, leaving the whole drain to close).
    assert r["in_append"] >= 0.3 * total, f"append did not block while the uploads were slow: {report}"
    assert r["slowest"] >= DELAY_S * 0.5, f"no append ever waited for an upload: {report}"
    # Close waits for what is still in memory, at most the plan and the queue, and then one publish of
    # the metadata: not for a backlog of every shard row's stale zarr.json, one round trip each.
    close_limit = (peak_mib + queue_mib) / mib * total + 4 * DELAY_S
    assert r["in_close"] <= close_limit, f"close took longer than draining the queue ({close_limit:.2f} s): {report}"

    import tessera as tsr

    got = tsr.open(url)
    assert got.shape == (n, *FRAME)
