"""`tessera.convert` of a Zarr v3 array keeps the source's chunk codecs (issue 26's round trip, the
Zarr half of issue 27's "no silent codec loss"): a chain that tessera's codec names cannot spell
(blosc blosclz with bitshuffle, lz4hc, zlib, zstd with a checksum, crc32c, transpose, big-endian
bytes) goes into the copy's zarr.json as it is, written by zarr-python or tensorstore. Into the same
chunk grid the chunks are copied as stored; into another grid they are decoded and encoded with the
same chain. zarr-python and tensorstore read every copy exactly; a codec or level given replaces the
chain, and blosc settings given (codec "blosc", cname, shuffle, ...) are what the copy is written with.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorstore as ts
import zarr

from interop_support import WRITERS, codec_chain, smooth_data, write_peer


def blosc(cname: str, shuffle: str, typesize: int, clevel: int = 5, blocksize: int = 0) -> dict:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                               "typesize": typesize, "blocksize": blocksize}}


CHAINS = {
    "blosclz-bitshuffle": dict(compressors=[blosc("blosclz", "bitshuffle", 2, 9)]),
    "lz4hc-noshuffle": dict(compressors=[blosc("lz4hc", "noshuffle", 2, 4)]),
    "zlib-shuffle": dict(compressors=[blosc("zlib", "shuffle", 2, 1)]),
    "zstd-checksum": dict(compressors=[{"name": "zstd", "configuration": {"level": 2, "checksum": True}}]),
    "gzip-crc32c": dict(compressors=[{"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}]),
    "transpose-zstd": dict(transpose=(2, 0, 1), compressors=[{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]),
    "big-endian": dict(endian="big"),
}


def chunk_codecs(store) -> list:
    """The codecs each chunk is encoded with: the inner chain of a sharded array."""
    codecs = json.loads((store / "zarr.json").read_text())["codecs"]
    if len(codecs) == 1 and codecs[0]["name"] == "sharding_indexed":
        return codecs[0]["configuration"]["codecs"]
    return codecs


def read_peers(store) -> tuple[np.ndarray, np.ndarray]:
    by_ts = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)}}).result().read().result()
    return np.asarray(zarr.open_array(str(store), mode="r")[...]), np.asarray(by_ts)


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("writer", WRITERS)
def test_convert_keeps_the_chunk_codecs(tmp_path, writer, chain, sharded):
    import tessera

    data = smooth_data("uint16", (21, 13, 11))
    inner = (4, 5, 3)
    codecs = codec_chain(inner_chunks=inner if sharded else None, **CHAINS[chain])
    src = tmp_path / "src.zarr"
    write_peer(writer, src, data, grid=(8, 10, 6) if sharded else inner, codecs=codecs)
    want = chunk_codecs(src)
    # The same chunk grid (re-sharded): the chunks as stored; another grid: decoded and encoded.
    for name, options in [("same", dict(shard_chunks=(1, 2, 4) if sharded else None)), ("regrid", dict(chunks=(7, 6, 5)))]:
        dst = tmp_path / f"{name}.zarr"
        tessera.convert(src, dst, **options)
        assert chunk_codecs(dst) == want, (name, chunk_codecs(dst), want)
        for got in read_peers(dst):
            np.testing.assert_array_equal(got, data)
    # A codec given replaces the chain.
    dst = tmp_path / "zstd.zarr"
    tessera.convert(src, dst, codec="zstd", level=1)
    assert [c["name"] for c in chunk_codecs(dst)] == ["bytes", "zstd"]
    np.testing.assert_array_equal(read_peers(dst)[0], data)


def test_cli_convert_keeps_blosclz_and_plans_copying_chunks_as_stored(tessera, tmp_path):
    data = smooth_data("uint16", (32, 40, 24))
    src = tmp_path / "src.zarr"
    write_peer("tensorstore", src, data, grid=(16, 20, 24), codecs=codec_chain(compressors=[blosc("blosclz", "bitshuffle", 2, 9)]))
    plan = tessera.run_ok(["convert", src, tmp_path / "x.zarr", "--plan"]).stdout.decode()
    # blosclz + bitshuffle is spelled with codec blosc's settings (no chain carried as stored).
    assert "codec blosc (cname blosclz, shuffle bitshuffle) level 9" in plan, plan
    assert "copying its chunks as stored" in plan, plan
    tessera.run_ok(["convert", src, tmp_path / "dst.zarr"])
    assert chunk_codecs(tmp_path / "dst.zarr") == chunk_codecs(src)
    assert sorted(p.name for p in (tmp_path / "dst.zarr" / "c").rglob("*")) == \
        sorted(p.name for p in (src / "c").rglob("*"))
    tessera.run_ok(["convert", src, tmp_path / "gz.zarr", "--codec", "gzip"])
    assert [c["name"] for c in chunk_codecs(tmp_path / "gz.zarr")] == ["bytes", "gzip"]
    for store in (tmp_path / "dst.zarr", tmp_path / "gz.zarr"):
        for got in read_peers(store):
            np.testing.assert_array_equal(got, data)


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
def test_convert_writes_the_blosc_settings_chosen(tessera, tmp_path, sharded):
    import tessera as tessera_py

    data = smooth_data("uint16", (21, 13, 11))
    inner = (4, 5, 3)
    src = tmp_path / "src.zarr"
    codecs = codec_chain(inner_chunks=inner if sharded else None, compressors=[blosc("blosclz", "bitshuffle", 2, 9)])
    write_peer("zarr", src, data, grid=(8, 10, 6) if sharded else inner, codecs=codecs)
    # codec="blosc" with settings: exactly those (the source's settings go with its codec).
    dst = tmp_path / "chosen.zarr"
    tessera_py.convert(src, dst, codec="blosc", cname="lz4hc", shuffle="noshuffle", level=3)
    assert chunk_codecs(dst)[1:] == [blosc("lz4hc", "noshuffle", 2, 3)], chunk_codecs(dst)
    # One setting alone changes only that one: the source's blosclz 9 becomes zlib 9 + bitshuffle.
    dst = tmp_path / "zlib.zarr"
    tessera_py.convert(src, dst, cname="zlib")
    assert chunk_codecs(dst)[1:] == [blosc("zlib", "bitshuffle", 2, 9)], chunk_codecs(dst)
    # The CLI likewise, from a zstd source.
    zsrc = tmp_path / "zstd-src.zarr"
    tessera_py.convert(src, zsrc, codec="zstd", level=1)
    dst = tmp_path / "cli.zarr"
    tessera.run_ok(["convert", zsrc, dst, "--codec", "blosc", "--cname", "blosclz", "--shuffle", "bit",
                    "--typesize", "4", "--blocksize", "1024", "--level", "7"])
    assert chunk_codecs(dst)[1:] == [blosc("blosclz", "bitshuffle", 4, 7, blocksize=1024)], chunk_codecs(dst)
    for store in (tmp_path / "chosen.zarr", tmp_path / "zlib.zarr", dst):
        for got in read_peers(store):
            np.testing.assert_array_equal(got, data)
