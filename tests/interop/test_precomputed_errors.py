"""Bad Neuroglancer precomputed input gives a clear error naming the file and byte range, no crash."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from interop_support import assert_cli_error


def write_volume(tessera, path, extra=(), shape=(8, 8, 16), chunk=(4, 4, 4), shard=(2, 2, 2)):
    data = np.arange(np.prod(shape), dtype=np.uint16).reshape(shape)
    args = ["stream", path, "--format", "precomputed", "--dtype", "uint16", "--shape", ",".join(map(str, shape)),
            "--chunk", ",".join(map(str, chunk))]
    if shard:
        args += ["--shard-chunks", ",".join(map(str, shard))]
    tessera.run_ok(args + list(extra), data.tobytes())
    return data


def shard_files(path):
    return sorted((path / "s0").glob("*.shard"))


def test_corrupt_shard_index_entry(tessera, run_tessera, tmp_path):
    write_volume(tessera, tmp_path / "v")
    shard = shard_files(tmp_path / "v")[0]
    raw = bytearray(shard.read_bytes())
    raw[8:16] = struct.pack("<Q", 10**9)  # minishard 0's index ends far past the file
    shard.write_bytes(bytes(raw))
    err = assert_cli_error(run_tessera(["read", tmp_path / "v"]), "corrupt data", shard.name, "[0, 16)")
    assert "outside" in err


def test_minishard_index_entry_past_the_end(tessera, run_tessera, tmp_path):
    write_volume(tessera, tmp_path / "v")
    shard = shard_files(tmp_path / "v")[0]
    raw = bytearray(shard.read_bytes())
    index_bytes = 16 << 3  # 2x2x2 chunks per shard: 3 minishard bits, no preshift
    start, end = struct.unpack_from("<QQ", raw, 0)
    n = (end - start) // 24
    size_at = index_bytes + start + 16 * n  # row 2 (sizes) of the [3, n] array
    raw[size_at:size_at + 8] = struct.pack("<Q", 10**9)
    shard.write_bytes(bytes(raw))
    assert_cli_error(run_tessera(["read", tmp_path / "v"]), "corrupt data", shard.name, "minishard index", "past the end")


def test_gzip_garbage_in_chunk_data(tessera, run_tessera, tmp_path):
    write_volume(tessera, tmp_path / "v", ["--codec", "gzip"])
    shard = shard_files(tmp_path / "v")[0]
    raw = bytearray(shard.read_bytes())
    raw[16 << 3: (16 << 3) + 20] = b"\xAA" * 20  # the first chunk's gzip stream starts after the index
    shard.write_bytes(bytes(raw))
    assert_cli_error(run_tessera(["read", tmp_path / "v"]), "corrupt data", shard.name, "chunk")


def test_truncated_shard(tessera, run_tessera, tmp_path):
    write_volume(tessera, tmp_path / "v")
    shard = shard_files(tmp_path / "v")[0]
    shard.write_bytes(shard.read_bytes()[:50])
    assert_cli_error(run_tessera(["read", tmp_path / "v"]), "corrupt data", shard.name)


def test_unsharded_chunk_of_the_wrong_size(tessera, run_tessera, tmp_path):
    write_volume(tessera, tmp_path / "v", shard=None)
    chunk = tmp_path / "v" / "s0" / "0-4_0-4_0-4"
    chunk.write_bytes(chunk.read_bytes()[:-2])
    assert_cli_error(run_tessera(["read", tmp_path / "v"]), "corrupt data", "0-4_0-4_0-4", "126 bytes", "128")


@pytest.mark.parametrize("mutate, needle, kind", [
    (lambda info: "{not json", "malformed JSON", "corrupt data"),
    (lambda info: json.dumps({**info, "data_type": "complex64"}), "complex64", "unsupported"),
    (lambda info: json.dumps({**info, "scales": []}), "scales", "invalid argument"),
    (lambda info: json.dumps({**info, "scales": [{**info["scales"][0], "size": [1, 2]}]}), "scales[0].size", "invalid argument"),
    (lambda info: json.dumps({**info, "scales": [{**info["scales"][0], "encoding": "webp"}]}), "webp", "unsupported"),
    (lambda info: json.dumps({**info, "scales": [{**info["scales"][0],
                                                  "sharding": {"@type": "neuroglancer_uint64_sharded_v1",
                                                               "hash": "md5", "preshift_bits": 0,
                                                               "minishard_bits": 0, "shard_bits": 0}}]}), "md5", "unsupported"),
], ids=["not-json", "dtype", "no-scales", "size", "encoding", "hash"])
@pytest.mark.parametrize("command", ["read", "info"])
def test_malformed_info(tessera, run_tessera, tmp_path, mutate, needle, kind, command):
    write_volume(tessera, tmp_path / "v")
    info_path = tmp_path / "v" / "info"
    info_path.write_text(mutate(json.loads(info_path.read_text())))
    assert_cli_error(run_tessera([command, tmp_path / "v"]), kind, "info", needle)


def test_missing_chunks_read_as_zero(tessera, tmp_path):
    data = write_volume(tessera, tmp_path / "v", shard=None)
    (tmp_path / "v" / "s0" / "4-8_4-8_4-8").unlink()
    expected = data.copy()
    expected[4:8, 4:8, 4:8] = 0  # C order z, y, x
    assert np.array_equal(tessera.read(tmp_path / "v", None, "uint16", expected.shape), expected)
