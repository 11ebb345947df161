"""`tessera stream --pyramid`: levels built while streaming raw bytes through the CLI (rows split
across reads at any byte), checked against tensorstore's downsample driver and read back with
`tessera read --level` and `tessera info`; a crash mid-stream leaves every level readable."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorstore as ts
import zarr

from interop_support import assert_cli_error, peak_rss_mib, random_data, stable_seed


def downsampled(level: np.ndarray, factors, method: str) -> np.ndarray:
    return ts.downsample(ts.array(level), list(factors), method).read().result()


@pytest.mark.parametrize("dtype,method", [("uint16", "mean"), ("int32", "median"), ("float32", "max"),
                                          ("uint8", "mode"), ("int64", "stride"), ("float64", "min")])
def test_cli_pyramid_levels_equal_tensorstore(tessera, tmp_path, dtype, method):
    rng = np.random.default_rng(stable_seed(dtype, method))
    # 1001 x 3 x uint16 rows: rows straddle every read of the CLI's staging.
    data = random_data(rng, dtype, (11, 3, 1001))
    if method in ("median", "mode"):
        data = (data % 5).astype(dtype)  # ties
    raw = tmp_path / "in.raw"
    raw.write_bytes(np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<")).tobytes())
    out = tmp_path / "p.zarr"
    tessera.run_ok(["stream", out, "--dtype", dtype, "--shape", "0,3,1001", "--chunk", "4,3,128",
                    "--shard-chunks", "1,1,2", "--input", raw, "--pyramid", "3", "--downsample", method,
                    "--axes", "z:space:micrometer,y:space:micrometer,x:space:micrometer",
                    "--downsample-factors", "2,1,2"])
    group = zarr.open_group(str(out), mode="r")
    previous = data
    for k in range(3):
        got = group[str(k)][...]
        if k:
            np.testing.assert_array_equal(got, downsampled(previous, [2, 1, 2], method))
        else:
            np.testing.assert_array_equal(got, data)
        read = tessera.run_ok(["read", out, "--level", str(k)]).stdout
        np.testing.assert_array_equal(np.frombuffer(read, dtype=got.dtype.newbyteorder("<")).reshape(got.shape), got)
        previous = got
    info = tessera.run_ok(["info", out]).stdout.decode()
    assert "levels: 3" in info and "level 2: [3, 3, 251]" in info, info


def test_cli_pyramid_plan_states_the_extra_memory(tessera, tmp_path):
    plan = tessera.run_ok(["stream", tmp_path / "x.zarr", "--dtype", "uint16", "--shape", "0,2048,2048",
                           "--chunk", "32,256,256", "--shard-chunks", "1,4,4", "--pyramid", "4",
                           "--axes", "t:time,y:space,x:space", "--plan"]).stdout.decode()
    assert "level 3 (unboundedx256x256)" in plan, plan
    assert "extra memory beyond level 0" in plan, plan
    assert not (tmp_path / "x.zarr").exists()


def test_cli_pyramid_errors(tessera, tmp_path):
    proc = tessera.run(["stream", tmp_path / "a.h5", "--format", "hdf5", "--dtype", "uint8", "--shape", "0,8,8",
                        "--pyramid", "2"], b"")
    assert_cli_error(proc, "unsupported", "--pyramid: hdf5")
    proc = tessera.run(["stream", tmp_path / "b.zarr", "--dtype", "uint8", "--shape", "0,8,8", "--chunk", "1,4,4",
                        "--pyramid", "2", "--axes", "t:time:parsec,y:space,x:space"], b"")
    assert_cli_error(proc, "invalid argument", "--axes:", "parsec")
    assert not (tmp_path / "b.zarr").exists()


def test_killed_stream_leaves_every_level_readable(tessera, tmp_path):
    """SIGKILL while streaming: each level's zarr.json parses and what it publishes is correct."""
    frame = (64, 96)
    rng = np.random.default_rng(7)
    block = random_data(rng, "uint16", (64, *frame))
    out = tmp_path / "k.zarr"
    proc = subprocess.Popen([str(tessera.binary), "stream", str(out), "--dtype", "uint16",
                             "--shape", f"0,{frame[0]},{frame[1]}", "--chunk", "2,32,32", "--pyramid", "3",
                             "--axes", "t:time,y:space,x:space"], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    sent = 0
    try:
        for _ in range(40):
            proc.stdin.write(block.tobytes())
            sent += len(block)
            proc.stdin.flush()
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # Killed mid-stream (the input never ended), not exited on its own.
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr.read().decode(errors="replace"))
    group = zarr.open_group(str(out), mode="r")
    # t is not downsampled: level k's row j depends on input row j alone, whatever each level
    # had published when the process died.
    expected = np.concatenate([block] * 40)[:sent]
    for k in range(3):
        meta = json.loads((out / str(k) / "zarr.json").read_text())
        n = meta["shape"][0]
        got = group[str(k)][...]
        # 2560 rows went in: every level has published some of them (an empty level proves nothing).
        assert 0 < got.shape[0] == n <= len(expected), f"level {k}: {n} rows published of {len(expected)} sent"
        np.testing.assert_array_equal(got, expected[:n], err_msg=f"level {k}")
        expected = downsampled(expected, [1, 2, 2], "mean")



def test_pyramid_memory_within_plan_and_flat_in_stream_length(tessera, tmp_path):
    """The plan states level 0's peak plus the pyramid's extra memory; the measured peak stays within it
    (+10%, + the process's own ~64 MiB), and does not grow with the stream's length."""
    import re

    common = ["--dtype", "uint16", "--chunk", "16,128,128", "--shard-chunks", "1,2,2", "--codec", "zstd",
              "--pyramid", "4", "--axes", "t:time,y:space,x:space", "--threads", "2"]
    plan = tessera.run_ok(["stream", tmp_path / "plan.zarr", "--shape", "0,512,512", *common, "--plan"]).stdout.decode()
    level0 = float(re.search(r"planned peak:\s*([0-9.]+)\s*MiB", plan).group(1))
    extra = float(re.search(r"extra memory beyond level 0:\s*([0-9.]+)\s*MiB", plan).group(1))
    planned = level0 + extra
    peaks = {}
    for frames in (128, 512):  # 64 MiB and 256 MiB of input
        cmd = [str(tessera.binary), "stream", str(tmp_path / f"m{frames}.zarr"), "--shape", f"{frames},512,512",
               *common, "--synthetic", "camera"]
        peaks[frames] = peak_rss_mib(cmd)
    report = f"planned {level0:.1f} + {extra:.1f} MiB; peaks {peaks}"
    print(report)
    assert max(peaks.values()) <= planned * 1.1 + 64, report
    assert peaks[512] <= peaks[128] * 1.10 + 16, report
