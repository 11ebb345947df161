"""Every blosc setting tessera writes (codec "blosc" with cname, shuffle, clevel, typesize and
blocksize) against zarr-python 3 and tensorstore: for each cname c-blosc writes (blosclz, lz4, lz4hc,
zlib, zstd) and each shuffle (noshuffle, shuffle, bitshuffle), tessera's arrays (tessera.create +
append, and the CLI) store exactly the blosc configuration asked for and read exactly in both peers;
the peers' arrays with those settings read exactly in tessera, which describes them with the same
settings (its spec: codec blosc, zarr3.cname, ...), not as chunk codecs carried as stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorstore as ts
import zarr
from zarr.codecs import BloscCodec

from interop_support import assert_cli_error, smooth_data

CNAMES = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]
COMBOS = [(c, s) for c in CNAMES for s in SHUFFLES]

SHAPE = (13, 11, 7)       # odd: edge chunks and edge shards everywhere
CHUNKS = (4, 5, 3)
SHARD_CHUNKS = (2, 2, 3)


def settings(index: int, itemsize: int) -> dict:
    """The clevel, typesize and blocksize of combination INDEX: each varies across the combinations
    (typesize None: tessera's default, the dtype's size)."""
    return {"level": index % 10,
            "typesize": [None, itemsize, 1, 4][index % 4],
            "blocksize": [0, 0, 256, 4096][(index // 2) % 4]}


def blosc_json(cname: str, shuffle: str, level: int, typesize: int, blocksize: int) -> dict:
    return {"name": "blosc", "configuration": {"typesize": typesize, "cname": cname, "clevel": level,
                                               "shuffle": shuffle, "blocksize": blocksize}}


def chunk_codecs(store: Path) -> list:
    """The codecs each chunk is encoded with: the inner chain of a sharded array."""
    codecs = json.loads((store / "zarr.json").read_text())["codecs"]
    if len(codecs) == 1 and codecs[0]["name"] == "sharding_indexed":
        return codecs[0]["configuration"]["codecs"]
    return codecs


def data_of(dtype: str, shape=SHAPE) -> np.ndarray:
    """Compressible values with some full-range noise (so every shuffle has bits to move)."""
    a = smooth_data(dtype, shape)
    rng = np.random.default_rng(7)
    flat = a.reshape(-1).view(np.uint8)
    flat[::5] = rng.integers(0, 256, size=flat[::5].size, dtype=np.uint8)
    return a


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def read_by_peers(store: Path) -> dict:
    by_ts = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)}}).result().read().result()
    return {"zarr-python": np.asarray(zarr.open_array(str(store), mode="r")[...]), "tensorstore": np.asarray(by_ts)}


def tessera_writes(store: Path, data: np.ndarray, cname: str, shuffle: str, sharded: bool, **chosen) -> None:
    import tessera

    with tessera.create(store, dtype=data.dtype, shape=(0,) + data.shape[1:], chunks=CHUNKS,
                        shard_chunks=SHARD_CHUNKS if sharded else None, codec="blosc", cname=cname,
                        shuffle=shuffle, **chosen) as w:
        w.append(data[:6])
        w.append(data[6:])


def check_tessera_array(store: Path, data: np.ndarray, want_blosc: dict) -> None:
    codecs = chunk_codecs(store)
    assert codecs[1:] == [want_blosc], codecs
    for peer, got in read_by_peers(store).items():
        assert same_bits(got, data), peer


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("cname,shuffle", COMBOS)
def test_tessera_writes_every_cname_and_shuffle(tmp_path, cname, shuffle, sharded):
    data = data_of("uint16")
    chosen = settings(COMBOS.index((cname, shuffle)) + sharded, 2)
    store = tmp_path / "a.zarr"
    tessera_writes(store, data, cname, shuffle, sharded, **chosen)
    want = blosc_json(cname, shuffle, chosen["level"], chosen["typesize"] or 2, chosen["blocksize"])
    check_tessera_array(store, data, want)


# uint8, float32 and int64 on a diagonal of the cname x shuffle grid (each dtype its own cells).
DIAGONAL = [(dtype, CNAMES[i], SHUFFLES[(i + shift) % 3]) for shift, dtype in enumerate(["uint8", "float32", "int64"])
            for i in range(len(CNAMES))]


@pytest.mark.parametrize("dtype,cname,shuffle", DIAGONAL)
def test_tessera_writes_other_dtypes(tmp_path, dtype, cname, shuffle):
    data = data_of(dtype)
    itemsize = data.dtype.itemsize
    store = tmp_path / "a.zarr"
    # Defaults: clevel 5, typesize the dtype's size, blocksize 0.
    tessera_writes(store, data, cname, shuffle, sharded=DIAGONAL.index((dtype, cname, shuffle)) % 2 == 1)
    check_tessera_array(store, data, blosc_json(cname, shuffle, 5, itemsize, 0))


def test_tessera_defaults_are_zarr_pythons(tmp_path):
    """codec="blosc" alone writes what zarr-python's BloscCodec() writes for the dtype."""
    import tessera

    for dtype in ["uint8", "uint16", "float64"]:
        data = data_of(dtype)
        ours, theirs = tmp_path / f"t-{dtype}.zarr", tmp_path / f"z-{dtype}.zarr"
        with tessera.create(ours, dtype=dtype, shape=data.shape, chunks=CHUNKS, codec="blosc") as w:
            w.append(data)
        z = zarr.create_array(str(theirs), shape=data.shape, dtype=dtype, chunks=CHUNKS, compressors=[BloscCodec()])
        z[...] = data
        # (zarr-python's bytes codec of a 1-byte dtype has no endian; the compressors are compared)
        assert chunk_codecs(ours)[1:] == chunk_codecs(theirs)[1:], dtype


def test_cli_writes_blosc_settings(tessera, tmp_path):
    data = data_of("uint16")
    store = tmp_path / "cli.zarr"
    tessera.run_ok(["stream", store, "--dtype", "uint16", "--shape", ",".join(map(str, data.shape)),
                    "--chunk", ",".join(map(str, CHUNKS)), "--shard-chunks", ",".join(map(str, SHARD_CHUNKS)),
                    "--codec", "blosc", "--cname", "blosclz", "--shuffle", "bitshuffle", "--typesize", "2",
                    "--blocksize", "0", "--level", "9"], data.tobytes())
    check_tessera_array(store, data, blosc_json("blosclz", "bitshuffle", 9, 2, 0))
    spec = tessera.info(store)["spec"]
    assert spec["codec"] == "blosc" and spec["level"] == 9, spec
    assert spec["zarr3"] == {"cname": "blosclz", "shuffle": "bitshuffle"}, spec
    # The aliases, the settings' defaults, and the spec's round trip through --spec.
    again = tmp_path / "again.zarr"
    tessera.run_ok(["stream", again, "--spec", json.dumps(spec), "--cname", "lz4hc", "--shuffle", "none"], data.tobytes())
    check_tessera_array(again, data, blosc_json("lz4hc", "noshuffle", 9, 2, 0))


def test_cli_refuses_settings_without_codec_blosc(tessera, tmp_path):
    base = ["stream", tmp_path / "x.zarr", "--dtype", "uint16", "--shape", "4,4", "--synthetic", "zeros"]
    proc = tessera.run([*base, "--codec", "zstd", "--cname", "lz4"])
    assert_cli_error(proc, "invalid argument", "--cname", "applies to codec blosc", "zstd")
    proc = tessera.run([*base, "--codec", "blosc-lz4", "--shuffle", "bitshuffle"])
    assert_cli_error(proc, "invalid argument", "--shuffle", "applies to codec blosc", "blosc-lz4")
    proc = tessera.run([*base, "--codec", "blosc", "--cname", "snappy"])
    assert_cli_error(proc, "invalid argument", "--cname", "blosclz, lz4, lz4hc, zlib, zstd")
    proc = tessera.run([*base, "--codec", "blosc", "--shuffle=bits"])
    assert_cli_error(proc, "invalid argument", "--shuffle", "noshuffle|shuffle|bitshuffle")
    # A word after --shuffle that is not one of its values is not taken as its value.
    proc = tessera.run([*base, "--codec", "blosc", "--shuffle", "bits"])
    assert_cli_error(proc, "usage", "bits")
    proc = tessera.run([*base, "--codec", "blosc", "--typesize", "0"])
    assert_cli_error(proc, "invalid argument", "--typesize", "1..255")
    assert not (tmp_path / "x.zarr" / "zarr.json").exists()


def test_cli_bare_shuffle_before_a_positional_is_hdf5s_flag(tessera, tmp_path):
    """--shuffle takes an optional value; a bare one before OUT stays HDF5's shuffle filter."""
    data = np.arange(16, dtype="<u2")
    h5 = tmp_path / "a.h5"
    tessera.run_ok(["stream", "--format", "hdf5", "--dtype", "uint16", "--shape", "4,4", "--codec", "gzip",
                    "--shuffle", h5], data.tobytes())
    assert tessera.info(h5)["spec"]["hdf5"]["shuffle"] is True
    store = tmp_path / "a.zarr"
    tessera.run_ok(["stream", "--dtype", "uint16", "--shape", "4,4", "--codec", "blosc", "--shuffle", store,
                    "--cname", "lz4hc"], data.tobytes())
    assert chunk_codecs(store)[1:] == [blosc_json("lz4hc", "shuffle", 5, 2, 0)]


def peer_writes(writer: str, store: Path, data: np.ndarray, cname: str, shuffle: str, chosen: dict) -> dict:
    """DATA as a Zarr v3 array by WRITER with blosc CNAME, SHUFFLE and CHOSEN's settings (sharded
    for tensorstore, unsharded for zarr-python); returns the blosc codec JSON it was given."""
    typesize = chosen["typesize"] or data.dtype.itemsize
    want = blosc_json(cname, shuffle, chosen["level"], typesize, chosen["blocksize"])
    if writer == "zarr-python":
        codec = BloscCodec(cname=cname, shuffle=shuffle, clevel=chosen["level"], typesize=typesize,
                           blocksize=chosen["blocksize"])
        z = zarr.create_array(str(store), shape=data.shape, dtype=data.dtype, chunks=CHUNKS, compressors=[codec])
        z[...] = data
    else:
        inner = [{"name": "bytes", "configuration": {"endian": "little"}}, want]
        shard = tuple(c * n for c, n in zip(CHUNKS, SHARD_CHUNKS))
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(store)},
                     "metadata": {"shape": list(data.shape), "data_type": str(data.dtype),
                                  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
                                  "codecs": [{"name": "sharding_indexed", "configuration": {
                                      "chunk_shape": list(CHUNKS), "codecs": inner,
                                      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                       {"name": "crc32c"}]}}]}},
                    create=True).result()
        t.write(data).result()
    return want


@pytest.mark.parametrize("writer", ["zarr-python", "tensorstore"])
@pytest.mark.parametrize("cname,shuffle", COMBOS)
def test_peers_blosc_arrays_read_in_tessera(tmp_path, writer, cname, shuffle):
    import tessera

    data = data_of("uint16")
    chosen = settings(COMBOS.index((cname, shuffle)) + 1, 2)
    store = tmp_path / "peer.zarr"
    want = peer_writes(writer, store, data, cname, shuffle, chosen)
    stored = chunk_codecs(store)[-1]
    assert stored["configuration"]["cname"] == cname and stored["configuration"]["shuffle"] == shuffle, stored
    array = tessera.open(store)
    assert same_bits(array[...], data)
    if stored == want:  # every setting stored: tessera describes it with codec blosc's settings
        spec = array.spec
        preset = cname in ("lz4", "zstd") and shuffle == "shuffle" and want["configuration"]["typesize"] == 2 \
            and want["configuration"]["blocksize"] == 0
        if preset:  # exactly blosc-lz4 or blosc-zstd, as tessera wrote it before codec blosc had settings
            assert spec["codec"] == f"blosc-{cname}" and "zarr3" not in spec, spec
            return
        assert spec["codec"] == "blosc" and "chunk_codecs" not in spec.get("zarr3", {}), spec
        assert spec["zarr3"]["cname"] == cname and spec["zarr3"]["shuffle"] == shuffle, spec
        assert spec["zarr3"].get("typesize", 2) == want["configuration"]["typesize"], spec
        assert spec["zarr3"].get("blocksize", 0) == want["configuration"]["blocksize"], spec
        assert spec.get("level") == chosen["level"], spec


def test_python_refuses_settings_it_cannot_honour(tmp_path):
    import tessera

    with pytest.raises(tessera.InvalidArgumentError, match=r"^cname: applies to codec blosc, not zstd"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(2,), codec="zstd", cname="lz4")
    with pytest.raises(tessera.InvalidArgumentError, match=r"^shuffle: must be noshuffle, shuffle or bitshuffle"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(2,), codec="blosc", shuffle="bits")
    with pytest.raises(tessera.InvalidArgumentError, match=r"^typesize: must be 1\.\.255"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(2,), codec="blosc", typesize=300)
    with pytest.raises(tessera.UnsupportedError, match=r"^cname: .*only zarr3"):
        tessera.create(tmp_path / "p", dtype="uint8", shape=(2, 2, 2), format="precomputed", cname="lz4")
    # An HDF5 file's shuffle is its byte shuffle filter: a bool, or the byte shuffle's names.
    with pytest.raises(tessera.InvalidArgumentError, match=r"^shuffle: HDF5's shuffle filter is the byte shuffle"):
        tessera.create(tmp_path / "a.h5", dtype="uint16", shape=(2,), codec="gzip", shuffle="bitshuffle")
    with tessera.create(tmp_path / "b.h5", dtype="uint16", shape=(4,), codec="gzip", shuffle="byte") as w:
        w.append(np.arange(4, dtype=np.uint16))
    assert tessera.open(tmp_path / "b.h5").spec["hdf5"]["shuffle"] is True
    assert not (tmp_path / "a.zarr").exists()


def test_mode_a_continues_with_the_stored_settings(tmp_path):
    import tessera

    data = data_of("uint16", (8, 6))
    store = tmp_path / "a.zarr"
    with tessera.create(store, dtype="uint16", shape=(0, 6), chunks=(2, 6), codec="blosc", cname="blosclz",
                        shuffle="bit", level=9) as w:
        w.append(data[:4])
    # Settings that agree with the stored ones (typesize 2 is the default for uint16), then one that does not.
    with tessera.create(store, mode="a", cname="blosclz", shuffle="bitshuffle", typesize=2) as w:
        w.append(data[4:])
    check_tessera_array(store, data, blosc_json("blosclz", "bitshuffle", 9, 2, 0))
    with pytest.raises(tessera.InvalidArgumentError, match=r"^cname: .*contradicts the stored array's"):
        tessera.create(store, mode="a", cname="lz4")
