"""Bad input through the CLI: each case must end with exit code 1 (2 for a usage error), not a crash,
a message on stderr starting with "tessera: error: <kind>:" of the expected kind, and the name of what
was wrong (key, file, byte range)."""

from __future__ import annotations

import json
import struct

import crc32c
import numpy as np
import pytest

from device_support import nvidia_gpu_present
from interop_support import assert_cli_error, codec_chain, random_data, write_peer

ZSTD1 = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
MISSING = 2**64 - 1


def stream_args(out, dtype="int16", shape="4,6", chunk="2,3", *extra):
    return ["stream", out, "--format", "zarr3", "--dtype", dtype, "--shape", shape, "--chunk", chunk, *extra]


def assert_names_range(err: str, begin: int, end: int) -> None:
    """ERR names the byte range [BEGIN, END): both ends, or the start and the length."""
    assert str(begin) in err, f"byte range start {begin} not in {err!r}"
    assert str(end) in err or str(end - begin) in err, f"byte range end {end} / length {end - begin} not in {err!r}"


# ---------------------------------------------------------------------------------------------
# tessera stream: input that does not fit the declared shape.


@pytest.mark.parametrize("n_bytes", [0, 47, 49, 96], ids=["empty", "one-short", "one-over", "double"])
def test_stream_byte_count_mismatch(run_tessera, tmp_path, n_bytes):
    # int16 4x6 = 48 bytes.
    proc = run_tessera(stream_args(tmp_path / "out.zarr"), bytes(n_bytes))
    err = assert_cli_error(proc, "invalid argument")
    assert str(n_bytes) in err or "48" in err, f"message does not say the sizes: {err!r}"


def test_stream_byte_count_mismatch_from_file(run_tessera, tmp_path):
    raw = tmp_path / "in.raw"
    raw.write_bytes(bytes(50))
    proc = run_tessera(stream_args(tmp_path / "out.zarr", "int16", "4,6", "2,3", "--input", raw))
    assert_cli_error(proc, "invalid argument")


@pytest.mark.parametrize("n_bytes", [1, 11, 13, 25], ids=["one", "row-minus-one", "row-plus-one", "two-rows-plus-one"])
def test_stream_unbounded_partial_row(run_tessera, tmp_path, n_bytes):
    # uint8 rows of 3x4 = 12 bytes; input must be a whole number of rows.
    proc = run_tessera(stream_args(tmp_path / "out.zarr", "uint8", "0,3,4", "2,3,4"), bytes(n_bytes))
    assert_cli_error(proc, "invalid argument")


def test_stream_missing_input_file(run_tessera, tmp_path):
    missing = tmp_path / "no-such-input.raw"
    proc = run_tessera(stream_args(tmp_path / "out.zarr", "int16", "4,6", "2,3", "--input", missing))
    assert_cli_error(proc, "not found", "no-such-input.raw")


@pytest.mark.skipif(nvidia_gpu_present(), reason="a GPU is present: the backend runs instead of failing")
@pytest.mark.parametrize("extra", [[], ["--plan"]], ids=["stream", "plan"])
def test_stream_cuda_backend_without_device(run_tessera, tmp_path, extra):
    proc = run_tessera(stream_args(tmp_path / "out.zarr", "int16", "4,6", "2,3", "--backend", "cuda", *extra),
                       bytes(48))
    assert_cli_error(proc, "unsupported", "--backend: cuda")
    assert not (tmp_path / "out.zarr" / "zarr.json").exists()


def test_stream_cuda_backend_rejects_blosc(run_tessera, tmp_path):
    """blosc has no GPU encoder: whatever the machine, the error says so before anything is written."""
    proc = run_tessera(stream_args(tmp_path / "out.zarr", "int16", "4,6", "2,3", "--backend", "cuda",
                                   "--codec", "blosc-lz4"), bytes(48))
    assert_cli_error(proc, "unsupported", "--backend: cuda")


@pytest.mark.parametrize("args, kind, needles", [
    (("--dtype", "int4"), "unsupported", ["int4"]),
    (("--dtype", "string"), "unsupported", ["string"]),
    (("--chunk", "2"), "invalid argument", ["--chunk", "rank"]),       # rank differs from the shape
    (("--chunk", "0,3"), "invalid argument", ["--chunk"]),             # zero-sized chunk
    (("--shape", "4,-6"), "invalid argument", ["--shape", "-6"]),
    (("--shard-chunks", "2,2,2"), "invalid argument", ["--shard-chunks", "rank"]),  # rank differs from the shape
    (("--shard-chunks", "0,1"), "invalid argument", ["--shard-chunks"]),
    (("--index-location", "middle"), "invalid argument", ["index-location", "middle"]),
    (("--codec", "lzma"), "usage", ["--codec", "lzma"]),  # not among the choices: exit 2
], ids=["dtype-int4", "dtype-string", "chunk-rank", "chunk-zero", "shape-negative", "shard-rank",
        "shard-zero", "index-location", "codec"])
def test_stream_bad_arguments(run_tessera, tmp_path, args, kind, needles):
    base = {"--dtype": "int16", "--shape": "4,6", "--chunk": "2,3"}
    extra = []
    for flag, value in zip(args[::2], args[1::2]):
        if flag in base:
            base[flag] = value
        else:
            extra += [flag, value]
    argv = ["stream", tmp_path / "out.zarr", "--format", "zarr3"]
    for flag, value in base.items():
        argv += [flag, value]
    proc = run_tessera(argv + extra, bytes(48))
    assert_cli_error(proc, kind, *needles)


# ---------------------------------------------------------------------------------------------
# tessera read: bad slice expressions.


@pytest.fixture
def small_store(tmp_path):
    """int16 array of shape (4, 6), unsharded, written by zarr-python."""
    data = np.arange(24, dtype="<i2").reshape(4, 6)
    store = tmp_path / "small.zarr"
    write_peer("zarr", store, data, grid=(2, 3), codecs=codec_chain(compressors=[ZSTD1]))
    return store


@pytest.mark.parametrize("expr", ["4", "-5", "0,6", "0,-7", "100,0", "1:2,9"],
                         ids=["dim0-end", "dim0-neg", "dim1-end", "dim1-neg", "far", "after-slice"])
def test_read_integer_index_out_of_range(run_tessera, small_store, expr):
    proc = run_tessera(["read", small_store, f"--slice={expr}"])
    assert_cli_error(proc, "out of range")
    assert proc.stdout == b"", "no partial output on error"


@pytest.mark.parametrize("expr", ["0,0,0", ":,:,:", "1,2,3,4"])
def test_read_too_many_entries(run_tessera, small_store, expr):
    # numpy: IndexError (too many indices)
    assert_cli_error(run_tessera(["read", small_store, f"--slice={expr}"]), "out of range", "entries", "rank 2")


@pytest.mark.parametrize("expr", ["::0", "a", "1:2:3:4", "1.5", "[0]", "1-2"])
def test_read_malformed_slice(run_tessera, small_store, expr):
    assert_cli_error(run_tessera(["read", small_store, f"--slice={expr}"]), "invalid argument", expr)


def test_read_slice_with_an_empty_entry_has_too_many_entries(run_tessera, small_store):
    assert_cli_error(run_tessera(["read", small_store, "--slice=0,,0"]), "out of range", "3 entries")


def test_read_negative_index_as_separate_argument(run_tessera, small_store):
    """`--slice -1` (the expression as its own argument) is a slice, not an unknown option."""
    proc = run_tessera(["read", small_store, "--slice", "-1,::-2"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    expected = np.arange(24, dtype="<i2").reshape(4, 6)[-1, ::-2]
    assert proc.stdout == expected.tobytes()


def test_read_missing_store(run_tessera, tmp_path):
    proc = run_tessera(["read", tmp_path / "no-such-store.zarr"])
    assert_cli_error(proc, "not found", "no-such-store.zarr")


def test_info_missing_store(run_tessera, tmp_path):
    proc = run_tessera(["info", tmp_path / "no-such-store.zarr", "--json"])
    assert_cli_error(proc, "not found", "no-such-store.zarr")


# ---------------------------------------------------------------------------------------------
# Bad zarr.json.


def edit_zarr_json(store, edit) -> None:
    path = store / "zarr.json"
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta))


@pytest.mark.parametrize("command", ["read", "info"])
def test_truncated_zarr_json(run_tessera, small_store, command):
    path = small_store / "zarr.json"
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    assert_cli_error(run_tessera([command, small_store]), "corrupt data", "zarr.json")


@pytest.mark.parametrize("command", ["read", "info"])
def test_unknown_codec(run_tessera, small_store, command):
    def edit(meta):
        meta["codecs"][1] = {"name": "frobnicate", "configuration": {"level": 1}}
    edit_zarr_json(small_store, edit)
    assert_cli_error(run_tessera([command, small_store]), "unsupported", "frobnicate")


def test_unknown_codec_inside_shard(run_tessera, tmp_path):
    store = tmp_path / "sharded.zarr"
    write_peer("zarr", store, np.zeros((4, 6), "<i2"), grid=(4, 6),
               codecs=codec_chain(inner_chunks=(2, 3), compressors=[ZSTD1]))
    def edit(meta):
        meta["codecs"][0]["configuration"]["codecs"][1]["name"] = "frobnicate"
    edit_zarr_json(store, edit)
    assert_cli_error(run_tessera(["read", store]), "unsupported", "frobnicate")


@pytest.mark.parametrize("dtype", ["string", "int4", "float8_e4m3", "r16", "bogus"])
def test_unsupported_dtype(run_tessera, small_store, dtype):
    def edit(meta):
        meta["data_type"] = dtype
        meta["fill_value"] = "" if dtype == "string" else 0
    edit_zarr_json(small_store, edit)
    assert_cli_error(run_tessera(["read", small_store]), "unsupported", dtype)


@pytest.mark.parametrize("field", ["shape", "data_type", "chunk_grid", "codecs"])
def test_missing_required_field(run_tessera, small_store, field):
    edit_zarr_json(small_store, lambda meta: meta.pop(field))
    assert_cli_error(run_tessera(["read", small_store]), "invalid argument", "zarr.json", f"missing \"{field}\"")


def test_zarr_v2_store_reads_and_unknown_v2_codecs_are_named(run_tessera, tmp_path):
    store = tmp_path / "v2.zarr"
    store.mkdir()
    meta = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "compressor": None, "fill_value": 5,
            "order": "C", "filters": None}
    (store / ".zarray").write_text(json.dumps(meta))
    proc = run_tessera(["read", store])
    assert proc.returncode == 0, proc.stderr
    assert np.frombuffer(proc.stdout, dtype="<i2").tolist() == [5, 5, 5, 5]  # no chunk stored: the fill value
    (store / ".zarray").write_text(json.dumps(dict(meta, compressor={"id": "zfpy", "mode": 4})))
    assert_cli_error(run_tessera(["read", store]), "unsupported", 'compressor "zfpy"')


# ---------------------------------------------------------------------------------------------
# Corrupt shards and chunks. Shards written by zarr-python: shape (4, 6), inner chunks (2, 3), so
# 4 inner chunks and an index of 4 x (offset u64, nbytes u64) + crc32c u32 = 68 bytes.

N_INNER = 4
INDEX_BYTES = 16 * N_INNER + 4
SHARD_KEY = "c/0/0"


def make_shard(tmp_path, index_location="end"):
    data = random_data(np.random.default_rng(3), "int32", (4, 6))
    store = tmp_path / f"shard-{index_location}.zarr"
    write_peer("zarr", store, data, grid=(4, 6),
               codecs=codec_chain(inner_chunks=(2, 3), index_location=index_location, compressors=[ZSTD1]))
    shard = store / SHARD_KEY
    assert shard.is_file()
    return store, shard


def index_range(size: int, index_location: str) -> tuple[int, int]:
    return (0, INDEX_BYTES) if index_location == "start" else (size - INDEX_BYTES, size)


def read_index(blob: bytes, index_location: str) -> list[tuple[int, int]]:
    begin, end = index_range(len(blob), index_location)
    raw = blob[begin:end]
    assert struct.unpack("<I", raw[-4:])[0] == crc32c.crc32c(raw[:-4]), "test setup: zarr index crc"
    return [struct.unpack_from("<QQ", raw, 16 * i) for i in range(N_INNER)]


def write_index(blob: bytes, index_location: str, entries) -> bytes:
    body = b"".join(struct.pack("<QQ", off, n) for off, n in entries)
    index = body + struct.pack("<I", crc32c.crc32c(body))
    begin, end = index_range(len(blob), index_location)
    return blob[:begin] + index + blob[end:]


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_shard_index_checksum_mismatch(run_tessera, tmp_path, index_location):
    store, shard = make_shard(tmp_path, index_location)
    blob = bytearray(shard.read_bytes())
    begin, end = index_range(len(blob), index_location)
    blob[begin + 3] ^= 0x40  # inside the first entry's offset: the stored crc32c no longer matches
    shard.write_bytes(bytes(blob))
    err = assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)
    if index_location == "end":
        assert_names_range(err, begin, end)
    else:
        assert str(INDEX_BYTES) in err or str(INDEX_BYTES - 4) in err, f"index range not in {err!r}"


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_shard_index_crc_field_corrupt(run_tessera, tmp_path, index_location):
    store, shard = make_shard(tmp_path, index_location)
    blob = bytearray(shard.read_bytes())
    _, end = index_range(len(blob), index_location)
    blob[end - 1] ^= 0xFF  # the checksum itself
    shard.write_bytes(bytes(blob))
    assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)


@pytest.mark.parametrize("keep", ["half", "less-than-index", "one-byte"])
@pytest.mark.parametrize("index_location", ["start", "end"])
def test_truncated_shard(run_tessera, tmp_path, index_location, keep):
    store, shard = make_shard(tmp_path, index_location)
    blob = shard.read_bytes()
    n = {"half": len(blob) // 2, "less-than-index": INDEX_BYTES - 10, "one-byte": 1}[keep]
    shard.write_bytes(blob[:n])
    assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)


def test_truncated_shard_region_read(run_tessera, tmp_path):
    """A read that touches only the damaged part still fails rather than returning garbage."""
    store, shard = make_shard(tmp_path, "start")
    blob = shard.read_bytes()
    entries = read_index(blob, "start")
    last = max(entries, key=lambda e: e[0])
    shard.write_bytes(blob[: last[0] + last[1] // 2])   # cut through the last inner chunk
    assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_index_entry_past_end(run_tessera, tmp_path, index_location):
    store, shard = make_shard(tmp_path, index_location)
    blob = shard.read_bytes()
    entries = read_index(blob, index_location)
    offset, nbytes = len(blob) + 1000, entries[0][1]
    entries[0] = (offset, nbytes)
    shard.write_bytes(write_index(blob, index_location, entries))
    err = assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)
    assert_names_range(err, offset, offset + nbytes)


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_index_entry_straddles_end(run_tessera, tmp_path, index_location):
    store, shard = make_shard(tmp_path, index_location)
    blob = shard.read_bytes()
    entries = read_index(blob, index_location)
    offset, nbytes = len(blob) - 5, 50
    entries[1] = (offset, nbytes)
    shard.write_bytes(write_index(blob, index_location, entries))
    err = assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)
    assert_names_range(err, offset, offset + nbytes)


def test_index_entry_offset_overflow(run_tessera, tmp_path):
    """offset + nbytes wraps around 2^64: must be rejected, not wrapped into a small range."""
    store, shard = make_shard(tmp_path, "end")
    blob = shard.read_bytes()
    entries = read_index(blob, "end")
    entries[2] = (2**64 - 8, 16)
    shard.write_bytes(write_index(blob, "end", entries))
    assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)


def test_index_entry_half_missing(run_tessera, tmp_path):
    """Only one field of an entry set to the missing marker is neither a chunk nor missing."""
    store, shard = make_shard(tmp_path, "end")
    blob = shard.read_bytes()
    entries = read_index(blob, "end")
    entries[0] = (MISSING, entries[0][1])
    shard.write_bytes(write_index(blob, "end", entries))
    assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)


def test_index_entry_overlapping_index(run_tessera, tmp_path):
    """An entry whose range is the index itself decodes garbage: the zstd frame check must fail."""
    store, shard = make_shard(tmp_path, "end")
    blob = shard.read_bytes()
    entries = read_index(blob, "end")
    entries[0] = (len(blob) - INDEX_BYTES, INDEX_BYTES)
    shard.write_bytes(write_index(blob, "end", entries))
    assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)


def test_inner_chunk_garbage(run_tessera, tmp_path):
    """A valid index pointing at bytes that are not a zstd frame: the error names the shard."""
    store, shard = make_shard(tmp_path, "end")
    blob = bytearray(shard.read_bytes())
    offset, nbytes = read_index(bytes(blob), "end")[1]
    blob[offset:offset + nbytes] = b"\xAB" * nbytes
    shard.write_bytes(bytes(blob))
    err = assert_cli_error(run_tessera(["read", store]), "corrupt data", SHARD_KEY)
    assert str(offset) in err, f"inner chunk byte range not named: {err!r}"


def test_unsharded_chunk_garbage(run_tessera, small_store):
    (small_store / "c/1/0").write_bytes(b"this is not a zstd frame")
    assert_cli_error(run_tessera(["read", small_store]), "corrupt data", "c/1/0")


def test_unsharded_chunk_crc32c_mismatch(run_tessera, tmp_path):
    data = np.arange(24, dtype="<i2").reshape(4, 6)
    store = tmp_path / "crc.zarr"
    write_peer("zarr", store, data, grid=(2, 3), codecs=codec_chain(compressors=[{"name": "crc32c"}]))
    chunk = store / "c/0/1"
    blob = bytearray(chunk.read_bytes())
    blob[0] ^= 1
    chunk.write_bytes(bytes(blob))
    assert_cli_error(run_tessera(["read", store]), "corrupt data", "c/0/1")


def test_unsharded_chunk_wrong_size(run_tessera, tmp_path):
    """An uncompressed chunk whose byte count does not match the chunk shape."""
    data = np.arange(24, dtype="<i2").reshape(4, 6)
    store = tmp_path / "raw.zarr"
    write_peer("zarr", store, data, grid=(2, 3), codecs=codec_chain())
    (store / "c/1/1").write_bytes(bytes(5))
    assert_cli_error(run_tessera(["read", store]), "corrupt data", "c/1/1")


def test_corrupt_chunk_outside_selection_is_not_read(run_tessera, small_store):
    """Only the chunks a selection touches are read: a corrupt chunk elsewhere does not matter."""
    (small_store / "c/1/1").write_bytes(b"garbage")
    proc = run_tessera(["read", small_store, "--slice=0:2,0:3"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stdout == np.arange(24, dtype="<i2").reshape(4, 6)[0:2, 0:3].tobytes()
