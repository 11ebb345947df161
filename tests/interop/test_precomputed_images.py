"""Neuroglancer precomputed volumes with jpeg and png chunks, both directions, against tensorstore
and cloud-volume.

Reading: tensorstore and cloud-volume write jpeg (1 and 3 channels) and png (uint8 and uint16, 1 to
4 channels) volumes, unsharded and sharded, with several scales; tessera reads png exactly and jpeg
exactly as the writer itself decodes the same bytes (both use libjpeg-turbo's default integer
IDCT, so the pixels are identical, not merely close: the tests check equality).

Writing: tessera writes them (tessera.create, region writes, streaming with a pyramid, the CLI);
tensorstore reads png exactly and jpeg equal to tessera's own decode of the same bytes, and the
jpeg error against the original values is measured and bounded per quality.

A chunk is one image x wide and y*z high with the channels interleaved, as tensorstore and
Neuroglancer read it and cloud-volume writes it. cloud-volume 12's *reader* is the odd one out: it
reshapes a decoded multi-channel image in Fortran order as if the channels were planar (so it does
not read back its own 3-channel volumes), and pyspng neither writes nor reads 16-bit png for it.
cloud-volume is therefore checked on what it handles: one channel of uint8, both directions; its
multi-channel volumes are read here and compared with tensorstore's reading of them.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import tensorstore as ts

import tessera
from interop_support import stable_seed

IDENTITY_SHARDING = {"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": 0,
                     "minishard_bits": 1, "shard_bits": 2, "minishard_index_encoding": "raw",
                     "data_encoding": "raw"}

# name: (encoding, dtype, channels, size xyz, chunk xyz, sharding)
CASES = {
    "jpeg-gray": ("jpeg", "uint8", 1, (37, 21, 11), (16, 8, 4), None),
    "jpeg-rgb": ("jpeg", "uint8", 3, (30, 17, 9), (8, 8, 8), None),
    "jpeg-gray-sharded": ("jpeg", "uint8", 1, (40, 33, 18), (8, 8, 8), IDENTITY_SHARDING),
    "png-uint8": ("png", "uint8", 1, (29, 18, 11), (16, 8, 8), None),
    "png-uint16": ("png", "uint16", 1, (29, 18, 11), (16, 16, 4), None),
    "png-uint16-2ch": ("png", "uint16", 2, (21, 13, 7), (8, 4, 4), None),
    "png-uint8-4ch": ("png", "uint8", 4, (17, 9, 5), (8, 8, 2), None),
    "png-uint16-sharded": ("png", "uint16", 1, (40, 24, 10), (8, 8, 8), IDENTITY_SHARDING),
}


def image_data(rng, dtype: str, channels: int, size) -> np.ndarray:
    """[x, y, z, c]: smooth structure plus noise, as microscope images are."""
    x, y, z = np.meshgrid(*(np.arange(n) for n in size), indexing="ij")
    top = 255 if dtype == "uint8" else 65535
    out = []
    for c in range(channels):
        base = (np.sin(x / 5 + c) + np.cos(y / 7) + np.sin(z / 3)) * top / 8 + top / 2
        out.append(base + rng.normal(0, top / 40, size))
    return np.clip(np.stack(out, axis=-1), 0, top).astype(dtype)


def czyx(xyzc: np.ndarray) -> np.ndarray:
    out = np.transpose(xyzc, (3, 2, 1, 0))
    return out[0] if out.shape[0] == 1 else out


def ts_spec(path, scale_key=None, **extra) -> dict:
    spec = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)}, **extra}
    if scale_key is not None:
        spec["scale_metadata"] = {"key": scale_key}
    return spec


def write_with_tensorstore(path, encoding, dtype, channels, size, chunk, sharding, data, key="s0",
                           quality=None, factor=1) -> None:
    scale = {"key": key, "size": list(size), "chunk_size": list(chunk), "resolution": [4 * factor, 4 * factor, 40],
             "encoding": encoding}
    if sharding:
        scale["sharding"] = sharding
    if quality is not None:
        scale["jpeg_quality"] = quality
    spec = ts_spec(path, multiscale_metadata={"type": "image", "data_type": dtype, "num_channels": channels},
                   create=True)
    spec["scale_metadata"] = scale
    ts.open(spec).result().write(data).result()


def tensorstore_read(path, scale_key: str) -> np.ndarray:
    return czyx(ts.open(ts_spec(path, scale_key)).result().read().result())


@pytest.mark.parametrize("name", list(CASES))
def test_reads_what_tensorstore_writes(tmp_path, name):
    encoding, dtype, channels, size, chunk, sharding = CASES[name]
    rng = np.random.default_rng(stable_seed(name))
    data = image_data(rng, dtype, channels, size)
    path = tmp_path / name
    write_with_tensorstore(path, encoding, dtype, channels, size, chunk, sharding, data,
                           quality=85 if encoding == "jpeg" else None)
    # Two more scales of the same volume, halved in x and y.
    for k, factor in enumerate((2, 4), start=1):
        small = data[::factor, ::factor]
        write_with_tensorstore(path, encoding, dtype, channels, small.shape[:3], chunk, sharding, small,
                               key=f"s{k}", factor=factor)
    for k in range(3):
        want = tensorstore_read(path, f"s{k}")
        if encoding == "png" and k == 0:
            assert np.array_equal(want, czyx(data))  # the oracle itself is lossless
        got = tessera.open(path, scale=k)[...]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), f"scale {k}"
        # A slice touches only its chunks and gives the same values.
        sl = np.s_[..., 1:-1:2, 3:, :7] if got.ndim == 3 else np.s_[:, 1:, ::3, 2:9]
        assert np.array_equal(tessera.open(path, scale=k)[sl], want[sl])


@pytest.mark.parametrize("encoding,dtype,channels", [("jpeg", "uint8", 1), ("jpeg", "uint8", 3),
                                                     ("png", "uint8", 1), ("png", "uint8", 3)])
def test_reads_what_cloudvolume_writes(tmp_path, encoding, dtype, channels):
    from cloudvolume import CloudVolume

    rng = np.random.default_rng(7)
    size, chunk = (40, 30, 12), (16, 16, 4)
    data = image_data(rng, dtype, channels, size)
    info = CloudVolume.create_new_info(num_channels=channels, layer_type="image", data_type=dtype,
                                       encoding=encoding, resolution=[4, 4, 40], voxel_offset=[0, 0, 0],
                                       chunk_size=list(chunk), volume_size=list(size))
    cloudpath = "file://" + str(tmp_path / "cv")
    vol = CloudVolume(cloudpath, info=info, compress=False, progress=False)
    vol.commit_info()
    vol[:, :, :] = data
    want = tensorstore_read(tmp_path / "cv", info["scales"][0]["key"])
    if encoding == "png":
        assert np.array_equal(want, czyx(data))
    if channels == 1:
        assert np.array_equal(czyx(np.asarray(CloudVolume(cloudpath, progress=False)[:, :, :])), want)
    assert np.array_equal(tessera.open(tmp_path / "cv")[...], want)


# tessera writes; peers read. Max error of a jpeg against the original values, per quality, on
# image_data (smooth + noise): measured on libjpeg-turbo 2.1 with these volumes and bounded here
# with a margin, so a change in how chunks are laid out (a transposed or misplaced image) fails.
JPEG_MAX_ERROR = {50: 60, 75: 45, 95: 20}


def write_with_tessera(path, data_czyx, encoding, chunk_zyx, **options):
    dtype = data_czyx.dtype
    with tessera.create(path, format="precomputed", dtype=dtype, shape=data_czyx.shape, chunks=chunk_zyx,
                        encoding=encoding, **options) as w:
        w.append(np.ascontiguousarray(data_czyx))


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("encoding,dtype,channels,quality", [
    ("jpeg", "uint8", 1, 50), ("jpeg", "uint8", 1, 95), ("jpeg", "uint8", 3, 75),
    ("png", "uint8", 1, None), ("png", "uint16", 1, None), ("png", "uint16", 2, None), ("png", "uint8", 4, None)])
def test_tessera_writes_peers_read(tmp_path, encoding, dtype, channels, quality, sharded):
    from cloudvolume import CloudVolume

    rng = np.random.default_rng(11)
    size = (37, 26, 13)  # x, y, z: edge chunks in every dimension
    data = np.ascontiguousarray(czyx(image_data(rng, dtype, channels, size)))
    path = tmp_path / "v"
    options = dict(shard_chunks=(1, 2, 2) if channels == 1 else (1, 1, 2, 2)) if sharded else {}
    if quality is not None:
        options["jpeg_quality"] = quality
    chunk = (4, 8, 16) if channels == 1 else (channels, 4, 8, 16)
    write_with_tessera(path, data, encoding, chunk, **options)
    info = json.loads((path / "info").read_text())
    scale = info["scales"][0]
    assert scale["encoding"] == encoding
    if encoding == "jpeg":
        assert scale["jpeg_quality"] == quality
    ours = tessera.open(path)[...]
    by_tensorstore = tensorstore_read(path, "s0")
    assert np.array_equal(by_tensorstore, ours)
    if channels == 1 and dtype == "uint8":
        by_cloudvolume = czyx(np.asarray(CloudVolume("file://" + str(path), progress=False)[:, :, :]))
        assert np.array_equal(by_cloudvolume, ours)
    if encoding == "png":
        assert np.array_equal(ours, data)
    else:
        error = int(np.abs(ours.astype(int) - data.astype(int)).max())
        assert error <= JPEG_MAX_ERROR[quality], f"quality {quality}: max error {error}"


def test_region_writes_into_a_jpeg_volume(tmp_path):
    """A region write re-encodes the chunks it touches; the others stay byte for byte."""
    rng = np.random.default_rng(3)
    data = np.ascontiguousarray(czyx(image_data(rng, "uint8", 1, (32, 32, 8))))
    path = tmp_path / "v"
    write_with_tessera(path, data, "jpeg", (4, 16, 16), jpeg_quality=90)
    before = {p.name: p.read_bytes() for p in (path / "s0").iterdir()}
    patch = np.full((4, 16, 16), 200, np.uint8)
    a = tessera.open(path, mode="r+")
    a[4:8, 16:32, 0:16] = patch
    after = {p.name: p.read_bytes() for p in (path / "s0").iterdir()}
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed == {"0-16_16-32_4-8"}
    got = tessera.open(path)[...]
    assert np.abs(got[4:8, 16:32, 0:16].astype(int) - 200).max() <= 2
    assert np.array_equal(tensorstore_read(path, "s0"), got)


def test_streams_a_jpeg_pyramid(tmp_path):
    """A stream with a pyramid into jpeg: every scale jpeg, each the mean of the one below
    (up to jpeg's error), read by tensorstore as tessera reads it."""
    rng = np.random.default_rng(5)
    data = np.ascontiguousarray(czyx(image_data(rng, "uint8", 1, (64, 48, 16))))
    path = tmp_path / "v"
    with tessera.create(path, format="precomputed", dtype="uint8", shape=data.shape, chunks=(8, 16, 16),
                        encoding="jpeg", jpeg_quality=95, pyramid=3) as w:
        for z in range(data.shape[0]):
            w.append(data[z])
    info = json.loads((path / "info").read_text())
    assert [s["encoding"] for s in info["scales"]] == ["jpeg"] * 3
    previous = data.astype(float)
    for k in range(3):
        got = tessera.open(path, scale=k)[...]
        assert np.array_equal(tensorstore_read(path, info["scales"][k]["key"]), got)
        expected = previous
        assert got.shape == expected.shape
        assert np.abs(got.astype(float) - expected).max() <= 24, f"scale {k}"
        z, y, x = (n // 2 * 2 for n in got.shape)
        previous = got[:z, :y, :x].astype(float).reshape(z // 2, 2, y // 2, 2, x // 2, 2).mean(axis=(1, 3, 5))


def test_cli_writes_png_and_info_reads_it(tmp_path):
    import subprocess

    binary = os.environ.get("TESSERA_BIN", "build/release/tessera")
    data = (np.arange(6 * 10 * 12, dtype=np.uint16) * 37).reshape(6, 10, 12)
    raw = tmp_path / "in.raw"
    raw.write_bytes(data.tobytes())
    out = tmp_path / "v"
    subprocess.run([binary, "stream", str(out), "--format", "precomputed", "--dtype", "uint16", "--shape", "6,10,12",
                    "--chunk", "4,4,8", "--encoding", "png", "--png-level", "9", "--input", str(raw)], check=True)
    info = json.loads((out / "info").read_text())
    assert info["scales"][0]["encoding"] == "png" and info["scales"][0]["png_level"] == 9
    assert np.array_equal(tensorstore_read(out, info["scales"][0]["key"]), data)
    shown = subprocess.run([binary, "info", str(out)], check=True, capture_output=True, text=True).stdout
    assert "png" in shown
    # A copy keeps the encoding and its level, and --plan says so.
    plan = subprocess.run([binary, "convert", str(out), str(tmp_path / "copy"), "--format", "precomputed", "--plan"],
                          check=True, capture_output=True, text=True).stdout
    assert "encoding png (level 9)" in plan
    # Into Zarr the png encoding cannot be kept: an error naming it unless a codec is chosen.
    refused = subprocess.run([binary, "convert", str(out), str(tmp_path / "copy.zarr")], capture_output=True, text=True)
    assert refused.returncode != 0 and "png chunk encoding" in refused.stderr
    subprocess.run([binary, "convert", str(out), str(tmp_path / "copy.zarr"), "--codec", "zstd"], check=True)
    assert np.array_equal(tessera.open(tmp_path / "copy.zarr")[...], data)


@pytest.mark.parametrize("encoding,dtype,channels,needle", [
    ("jpeg", "uint16", 1, "jpeg holds 1 or 3 channels of uint8"),
    ("jpeg", "uint8", 2, "jpeg holds 1 or 3 channels of uint8"),
    ("png", "uint32", 1, "png holds 1 to 4 channels of uint8 or uint16"),
    ("webp", "uint8", 1, "unknown chunk encoding \"webp\""),
])
def test_refuses_what_an_encoding_cannot_hold(tmp_path, encoding, dtype, channels, needle):
    shape = (4, 8, 8) if channels == 1 else (channels, 4, 8, 8)
    chunk = (4, 8, 8) if channels == 1 else (channels, 4, 8, 8)
    with pytest.raises(tessera.Error) as e:
        tessera.create(tmp_path / "v", format="precomputed", dtype=dtype, shape=shape, chunks=chunk,
                       encoding=encoding)
    assert needle in str(e.value)
    assert "encoding" in str(e.value)
    assert not (tmp_path / "v" / "info").exists()


def test_a_corrupt_jpeg_chunk_is_an_error_naming_it(tmp_path):
    rng = np.random.default_rng(9)
    data = np.ascontiguousarray(czyx(image_data(rng, "uint8", 1, (16, 16, 4))))
    path = tmp_path / "v"
    write_with_tessera(path, data, "jpeg", (4, 16, 16))
    chunk = path / "s0" / "0-16_0-16_0-4"
    chunk.write_bytes(chunk.read_bytes()[:-40])
    with pytest.raises(tessera.Error) as e:
        tessera.open(path)[...]
    assert "0-16_0-16_0-4" in str(e.value)
