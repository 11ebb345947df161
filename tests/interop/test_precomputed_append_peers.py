"""tensorstore and cloud-volume read exactly the sharded precomputed scales tessera continues (mode a).

`tessera stream OUT --append --shape TOTAL` continues a sharded scale (identity Morton-box shards or
murmurhash3) with the new rows only, while the chunk grid keeps its compressed Morton bits per
dimension: the result is the files one stream of all the rows writes, and both peers read every voxel.
A total that changes the bits, and a multi-channel volume, are refused and leave the volume as it was.
A pyramid (the scales of one info) is continued scale by scale, the downsampling method found from the
stored scales; both peers read every scale exactly as of one stream.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import tensorstore as ts

from interop_support import ZARR_DTYPES, assert_cli_error, stable_seed
from test_precomputed_write_peers import c_order_data, read_with_cloudvolume, read_with_tensorstore

# name: (dtype, rows streamed per run, chunk Z,Y,X, shard chunks Z,Y,X, extra CLI args). Every total
# keeps 5..8 chunks of 4 rows along z (3 bits of Morton code); the parts end inside a chunk, on a
# chunk boundary inside a shard box, and on a box boundary.
CASES = {
    "identity-raw": ("uint16", (19, 10), (4, 8, 8), (2, 2, 2), []),
    "identity-cseg-gzip": ("uint32", (17, 3, 9), (4, 8, 8), (2, 2, 2),
                           ["--encoding", "compressed_segmentation", "--codec", "gzip"]),
    "identity-chunk-aligned": ("uint8", (20, 12), (4, 8, 8), (2, 2, 2), []),
    "murmur-raw-gzip": ("uint64", (19, 10), (4, 8, 8), (2, 2, 2), ["--hash", "murmurhash3_x86_128", "--codec", "gzip"]),
    "murmur-cseg": ("uint64", (17, 3, 9), (4, 8, 8), (1, 2, 2),
                    ["--hash", "murmurhash3_x86_128", "--encoding", "compressed_segmentation"]),
    "murmur-box-aligned": ("uint32", (24, 8), (4, 8, 8), (2, 2, 2), ["--hash", "murmurhash3_x86_128"]),
}
YX = (19, 21)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def stream_args(path, dtype, rows, chunk, shard_chunks, extra):
    return (["stream", path, "--format", "precomputed", "--dtype", dtype, "--shape", f"{rows},{YX[0]},{YX[1]}",
             "--chunk", ",".join(map(str, chunk)), "--shard-chunks", ",".join(map(str, shard_chunks))] + extra)


@pytest.mark.parametrize("name", list(CASES))
def test_peers_read_a_continued_sharded_scale(tessera, tmp_path, name):
    dtype, parts, chunk, shard_chunks, extra = CASES[name]
    total = sum(parts)
    rng = np.random.default_rng(stable_seed("append", name))
    data = c_order_data(rng, dtype, (total, *YX), "compressed_segmentation" in extra)
    raw = data.astype(ZARR_DTYPES[dtype])
    whole, pieces = tmp_path / "whole", tmp_path / "pieces"
    tessera.run_ok(stream_args(whole, dtype, total, chunk, shard_chunks, extra), raw.tobytes())
    at = 0
    for k, n in enumerate(parts):
        args = stream_args(pieces, dtype, at + n, chunk, shard_chunks, extra) + (["--append"] if k else [])
        tessera.run_ok(args, raw[at:at + n].tobytes())
        at += n
        # After each run: both peers read exactly the rows streamed so far.
        assert np.array_equal(read_with_tensorstore(pieces), data[:at]), (name, at)
    assert np.array_equal(read_with_cloudvolume(pieces), data)
    assert files_under(pieces) == files_under(whole)
    assert not list(pieces.rglob("*.part-*"))


def test_a_total_that_changes_the_morton_bits_is_refused(tessera, tmp_path):
    rng = np.random.default_rng(stable_seed("append-bits"))
    data = c_order_data(rng, "uint16", (17, *YX), False)
    path = tmp_path / "vol"
    tessera.run_ok(stream_args(path, "uint16", 13, (4, 8, 8), (2, 2, 2), []), data[:13].tobytes())
    before = files_under(path)
    proc = tessera.run(stream_args(path, "uint16", 17, (4, 8, 8), (2, 2, 2), []) + ["--append"], data[13:].tobytes())
    assert_cli_error(proc, "unsupported", "4 chunks along z", "from 2 to 3", "at most 16 rows")
    assert files_under(path) == before
    assert np.array_equal(read_with_tensorstore(path), data[:13])


def test_a_multi_channel_volume_is_not_continued(tessera, tmp_path):
    rng = np.random.default_rng(stable_seed("append-channels"))
    data = c_order_data(rng, "uint8", (3, 8, 9, 10), False)
    path = tmp_path / "vol"
    common = ["--format", "precomputed", "--dtype", "uint8", "--chunk", "4,4,4"]
    tessera.run_ok(["stream", path, *common, "--shape", "2,8,9,10"], data[:2].tobytes())
    before = files_under(path)
    proc = tessera.run(["stream", path, *common, "--shape", "3,8,9,10", "--append"], data[2:].tobytes())
    assert_cli_error(proc, "unsupported", "multi-channel volume", "the channel")
    assert files_under(path) == before


@pytest.mark.parametrize("hash_", ["identity", "murmurhash3_x86_128"])
@pytest.mark.parametrize("trial", range(3))
def test_sigkill_during_a_continuation_keeps_the_stored_rows_and_a_rerun_completes(tessera, tmp_path, hash_, trial):
    """A continuation killed while its input is still open (so before Close: the info still gives
    the stored size) keeps every stored row exactly as both peers read it; running --append again
    with the same rows completes it to one stream's files (the killed run's staged parts go)."""
    rng = np.random.default_rng(stable_seed("append-kill", hash_, trial))
    first, total = [19, 20, 17][trial], 29  # inside a chunk, on a chunk boundary, inside a chunk
    data = c_order_data(rng, "uint16", (total, *YX), False)
    extra = ["--hash", hash_] + (["--codec", "gzip"] if trial == 2 else [])
    path, whole = tmp_path / "vol", tmp_path / "whole"
    tessera.run_ok(stream_args(whole, "uint16", total, (4, 8, 8), (2, 2, 2), extra), data.tobytes())
    tessera.run_ok(stream_args(path, "uint16", first, (4, 8, 8), (2, 2, 2), extra), data[:first].tobytes())
    args = [str(tessera.binary), *map(str, stream_args(path, "uint16", total, (4, 8, 8), (2, 2, 2), extra)),
            "--append", "--threads", "2"]
    rest = data[first:].tobytes()
    fed = int(rng.integers(0, len(rest)))  # never all of it: the stream cannot reach Close
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proc.stdin.write(rest[:fed])
    proc.stdin.flush()
    time.sleep(float(rng.uniform(0.05, 0.3)))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdin.close()
    what = f"{hash_}: {first} rows stored, killed after {fed} of {len(rest)} new bytes"
    assert np.array_equal(read_with_tensorstore(path), data[:first]), what
    assert np.array_equal(read_with_cloudvolume(path), data[:first]), what
    tessera.run_ok(stream_args(path, "uint16", total, (4, 8, 8), (2, 2, 2), extra) + ["--append"], rest)
    assert files_under(path) == files_under(whole), what


@pytest.mark.parametrize("preshift,minishard", [(0, 3), (1, 2)])
def test_a_scale_tensorstore_wrote_is_continued_only_under_the_sharding_tessera_plans(tessera, tmp_path, preshift,
                                                                                     minishard):
    """tensorstore writes a sharded scale of 19 rows (5 chunks along z); tessera continues it to 29
    when its sharding is the one a tessera stream of it plans (the stored chunks keep their shards),
    and refuses, changing nothing, when the same shard boxes are split into minishards otherwise."""
    from test_precomputed_read_peers import write_with_tensorstore

    rng = np.random.default_rng(stable_seed("append-ts", preshift))
    data = c_order_data(rng, "uint16", (29, *YX), False)
    sharding = {"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": preshift,
                "minishard_bits": minishard, "shard_bits": 4, "minishard_index_encoding": "raw",
                "data_encoding": "raw"}
    path = tmp_path / "vol"
    xyzc = np.transpose(data[:19], (2, 1, 0))[..., None]
    write_with_tensorstore(path, "uint16", 1, (YX[1], YX[0], 19), (8, 8, 4), (0, 0, 0), "raw", sharding, xyzc)
    before = files_under(path)
    key = json.loads((path / "info").read_text())["scales"][0]["key"]  # tensorstore names the scale itself
    proc = tessera.run(["stream", path, "--format", "precomputed", "--dtype", "uint16", "--shape", f"29,{YX[0]},{YX[1]}",
                        "--chunk", "4,8,8", "--scale-key", key, "--append"], data[19:].tobytes())
    if preshift == 0:
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        assert np.array_equal(read_with_tensorstore(path), data)
    else:
        assert_cli_error(proc, "unsupported", "sharding", "preshift_bits")
        assert files_under(path) == before


def read_scale_with_tensorstore(path, scale: int) -> np.ndarray:
    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)},
                 "scale_index": scale}).result()
    return np.transpose(t.read().result(), (3, 2, 1, 0))[0]


def read_scale_with_cloudvolume(path, scale: int) -> np.ndarray:
    from cloudvolume import CloudVolume

    cv = CloudVolume(f"file://{path}", mip=scale, progress=False, fill_missing=True)
    return np.transpose(np.asarray(cv[:, :, :]), (3, 2, 1, 0))[0]


# name: (dtype, rows streamed per run, shard chunks or None, extra CLI args). Chunks of 4 rows and 3
# scales: the runs end inside chunks, below a chunk of rows at the top scale (written anew) and
# above it; the sharded case keeps every scale's compressed Morton bits.
PYRAMID_CASES = {
    "unsharded-mean": ("uint16", (9, 6, 11), None, []),
    "unsharded-max": ("float32", (5, 14), None, ["--downsample", "max"]),
    "unsharded-cseg-mode": ("uint64", (13, 10), None, ["--encoding", "compressed_segmentation"]),
    "sharded-identity-mean": ("uint8", (33, 17), (1, 2, 2), []),
    "sharded-murmur-median": ("int16", (35, 14), (1, 2, 2), ["--hash", "murmurhash3_x86_128", "--downsample", "median"]),
}


@pytest.mark.parametrize("name", list(PYRAMID_CASES))
def test_peers_read_every_scale_of_a_continued_pyramid(tessera, tmp_path, name):
    """A precomputed pyramid continued with only --shape and --append (the method found from the
    stored scales) ends with the files of one stream of all the rows; tensorstore and cloud-volume
    read every scale exactly as of that one stream, after each run too."""
    dtype, parts, shard_chunks, extra = PYRAMID_CASES[name]
    total = sum(parts)
    rng = np.random.default_rng(stable_seed("append-pyramid", name))
    data = c_order_data(rng, dtype, (total, *YX), "compressed_segmentation" in extra).astype(ZARR_DTYPES[dtype])

    def args(path, rows, first):
        a = ["stream", path, "--format", "precomputed", "--dtype", dtype, "--shape", f"{rows},{YX[0]},{YX[1]}"]
        if first:
            a += ["--chunk", "4,8,8", "--pyramid", "3", *extra]
            if shard_chunks:
                a += ["--shard-chunks", ",".join(map(str, shard_chunks))]
        return a + ([] if first else ["--append"])

    whole, pieces = tmp_path / "whole", tmp_path / "pieces"
    tessera.run_ok(args(whole, total, True), data.tobytes())
    at = 0
    for k, n in enumerate(parts):
        tessera.run_ok(args(pieces, at + n, k == 0), data[at:at + n].tobytes())
        at += n
        partial = tmp_path / f"partial{k}"
        tessera.run_ok(args(partial, at, True), data[:at].tobytes())
        for scale in range(3):
            assert np.array_equal(read_scale_with_tensorstore(pieces, scale),
                                  read_scale_with_tensorstore(partial, scale)), (name, at, scale)
    for scale in range(3):
        want = read_scale_with_tensorstore(whole, scale)
        assert np.array_equal(read_scale_with_cloudvolume(pieces, scale), want), (name, scale)
    assert files_under(pieces) == files_under(whole)
    assert not list(pieces.rglob("*.part-*"))


@pytest.mark.parametrize("hash_", ["identity", "murmurhash3_x86_128"])
def test_a_crash_between_the_shards_and_the_info_keeps_the_stored_rows(tessera, tmp_path, hash_):
    """The state a crash between a continuation's last shard files and its info leaves (one
    stream's shard files of all the rows, the info of the stored rows): tessera reads the stored
    rows exactly, the peers refuse the grown edge chunk with an error (never wrong values), and
    running --append again completes the volume to one stream's files."""
    import shutil

    import tessera as tessera_py

    stored, total = 19, 29
    rng = np.random.default_rng(stable_seed("append-crash-window", hash_))
    data = c_order_data(rng, "uint16", (total, *YX), False)
    before, whole, crashed = tmp_path / "before", tmp_path / "whole", tmp_path / "crashed"
    extra = ["--hash", hash_]
    tessera.run_ok(stream_args(before, "uint16", stored, (4, 8, 8), (2, 2, 2), extra), data[:stored].tobytes())
    tessera.run_ok(stream_args(whole, "uint16", total, (4, 8, 8), (2, 2, 2), extra), data.tobytes())
    shutil.copytree(whole, crashed)
    shutil.copy(before / "info", crashed / "info")
    assert np.array_equal(tessera_py.open(str(crashed))[...], data[:stored])
    with pytest.raises(Exception, match="chunk length"):
        read_with_tensorstore(crashed)
    tessera.run_ok(stream_args(crashed, "uint16", total, (4, 8, 8), (2, 2, 2), extra) + ["--append"],
                   data[stored:].tobytes())
    assert files_under(crashed) == files_under(whole)
