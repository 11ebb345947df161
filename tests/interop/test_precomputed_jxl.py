"""Neuroglancer precomputed volumes with jxl (JPEG XL) chunks, written by cloud-volume, read by tessera.

cloud-volume (through imagecodecs, which bundles libjxl 0.11) writes a chunk as one gray image x
wide and y*z high per channel: one frame for one channel, an animation of one frame per channel for
three (the only counts it writes), and Neuroglancer reads the frames one after another as the
chunk's planar channels. tessera reads them with Debian's libjxl 0.7. Lossless chunks (jxl_quality
100) read exactly as written. Lossy chunks are compared with the writer's own decoder (imagecodecs)
on the same bytes, chunk by chunk, in Neuroglancer's layout: cloud-volume 12's reader reshapes
multi-channel chunks in Fortran order as if interleaved samples were planar, so it is the reference
only for one channel. The two libjxl versions do not decode lossy (XYB) frames to the same 8-bit
samples: about a quarter of the samples differ, by 1 (measured on these volumes at quality 85 and
60; Neuroglancer's own decoder, jxl-oxide, truncates where libjxl rounds, so it too differs by up to
1). The bound is MAX_LOSSY_DECODER_DIFFERENCE.

imagecodecs takes a (3, y*z, x) array whose last axis is 3 or 4 long as one RGB(A) image, so
cloud-volume's 3-channel chunks only come out as frames when the chunk is not 3 or 4 voxels wide
in x; tessera refuses the others (color frames), which Neuroglancer would misread.

tessera writes no jxl, and tensorstore reads none (it refuses the encoding; checked below).
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorstore as ts

import tessera

# The largest difference, in 8-bit steps, between libjxl 0.7's and 0.11's decodes of the same
# lossy chunk; measured on these volumes.
MAX_LOSSY_DECODER_DIFFERENCE = 1


def image_data(rng, channels: int, size) -> np.ndarray:
    """[x, y, z, c] uint8: smooth structure plus noise, as microscope images are."""
    x, y, z = np.meshgrid(*(np.arange(n) for n in size), indexing="ij")
    out = [(np.sin(x / 5 + c) + np.cos(y / 7) + np.sin(z / 3)) * 32 + 128 + rng.normal(0, 6, size)
           for c in range(channels)]
    return np.clip(np.stack(out, axis=-1), 0, 255).astype(np.uint8)


def czyx(xyzc: np.ndarray) -> np.ndarray:
    out = np.transpose(xyzc, (3, 2, 1, 0))
    return out[0] if out.shape[0] == 1 else out


def write_with_cloudvolume(path, data, chunk, quality):
    from cloudvolume import CloudVolume

    info = CloudVolume.create_new_info(num_channels=data.shape[3], layer_type="image", data_type="uint8",
                                       encoding="jxl", resolution=[4, 4, 40], voxel_offset=[0, 0, 0],
                                       chunk_size=list(chunk), volume_size=list(data.shape[:3]))
    info["scales"][0]["jxl_quality"] = quality
    vol = CloudVolume("file://" + str(path), info=info, compress=False, progress=False)
    vol.commit_info()
    vol[:, :, :] = data
    return info["scales"][0]["key"]


def decode_like_neuroglancer(path, key, size, channels) -> np.ndarray:
    """The volume as [c, z, y, x], each chunk decoded by imagecodecs: its frames are the channels."""
    import imagecodecs

    out = np.zeros((channels, size[2], size[1], size[0]), np.uint8)
    for f in (path / key).iterdir():
        (x0, x1), (y0, y1), (z0, z1) = (map(int, r.split("-")) for r in f.name.split("_"))
        frames = imagecodecs.jpegxl_decode(f.read_bytes())
        frames = frames.reshape(channels, z1 - z0, y1 - y0, x1 - x0)  # one frame x by y*z per channel
        out[:, z0:z1, y0:y1, x0:x1] = frames
    return out


CASES = {  # name: (channels, size xyz, chunk xyz)
    "gray": (1, (37, 21, 11), (16, 8, 4)),
    "rgb": (3, (30, 17, 9), (8, 8, 8)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reads_lossless_jxl_exactly(tmp_path, name):
    channels, size, chunk = CASES[name]
    data = image_data(np.random.default_rng(3), channels, size)
    write_with_cloudvolume(tmp_path / "cv", data, chunk, quality=100)
    got = tessera.open(tmp_path / "cv")[...]
    assert got.dtype == np.uint8
    assert np.array_equal(got, czyx(data))
    # A region across chunk boundaries.
    sl = (slice(1, 4), slice(3, 12), slice(5, 19)) if channels == 1 else (slice(None), slice(2, 9), slice(3, 12))
    assert np.array_equal(tessera.open(tmp_path / "cv")[sl], czyx(data)[sl])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("quality", [85, 60])
def test_reads_lossy_jxl_as_the_writers_decoder_does(tmp_path, name, quality):
    channels, size, chunk = CASES[name]
    data = image_data(np.random.default_rng(5), channels, size)
    key = write_with_cloudvolume(tmp_path / "cv", data, chunk, quality=quality)
    got = tessera.open(tmp_path / "cv")[...]
    want = decode_like_neuroglancer(tmp_path / "cv", key, size, channels)
    want = want[0] if channels == 1 else want
    difference = np.abs(got.astype(int) - want.astype(int)).max()
    assert difference <= MAX_LOSSY_DECODER_DIFFERENCE, difference
    assert np.abs(got.astype(int) - czyx(data).astype(int)).max() > 0  # lossy indeed
    if channels == 1:
        from cloudvolume import CloudVolume

        by_cloudvolume = czyx(np.asarray(CloudVolume("file://" + str(tmp_path / "cv"), progress=False)[:, :, :]))
        assert np.array_equal(by_cloudvolume, want)


def test_writing_jxl_is_refused(tmp_path):
    with pytest.raises(Exception, match="read, not written"):
        tessera.create(tmp_path / "out", shape=(4, 4, 4), dtype="uint8", chunks=(4, 4, 4), format="precomputed",
                       encoding="jxl")


def test_tensorstore_does_not_read_jxl(tmp_path):
    write_with_cloudvolume(tmp_path / "cv", image_data(np.random.default_rng(1), 1, (8, 8, 8)), (8, 8, 8), 100)
    with pytest.raises(Exception):
        spec = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(tmp_path / "cv")}}
        ts.open(spec).result().read().result()
