"""tensorstore and cloud-volume read exactly the Neuroglancer precomputed volumes tessera streams.

tessera writes unsharded and sharded (identity and murmurhash3 hashes, raw and gzip) volumes, raw
and compressed_segmentation chunks, one and several channels, sizes that chunks do not divide and
voxel offsets; tensorstore's neuroglancer_precomputed driver and cloud-volume read every voxel back.
tessera's own reader is checked on the same stores with random slices, and it reads what
cloud-volume writes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorstore as ts

from interop_support import ZARR_DTYPES, stable_seed
from test_precomputed_read_peers import case_data, random_expr

# name: (dtype, shape C-order [C,]Z,Y,X, chunk Z,Y,X, shard chunks Z,Y,X or None, extra CLI args)
CASES = {
    "unsharded-uint8": ("uint8", (11, 20, 37), (4, 8, 16), None, []),
    "unsharded-offset": ("uint16", (9, 17, 30), (8, 8, 8), None, ["--voxel-offset", "5,-3,100"]),
    "unsharded-channels": ("int16", (3, 7, 13, 21), (4, 4, 8), None, []),
    "sharded-identity": ("uint16", (18, 33, 40), (8, 8, 8), (2, 2, 2), []),
    "sharded-identity-gzip": ("float32", (18, 33, 40), (4, 8, 8), (2, 2, 2), ["--codec", "gzip"]),
    "sharded-one-shard": ("uint8", (10, 10, 10), (4, 4, 4), (4, 4, 4), ["--codec", "gzip"]),
    "sharded-murmur": ("uint32", (13, 21, 50), (4, 4, 8), (1, 2, 2), ["--hash", "murmurhash3_x86_128"]),
    "sharded-murmur-gzip": ("uint64", (9, 33, 33), (4, 8, 16), (2, 2, 2),
                            ["--hash", "murmurhash3_x86_128", "--codec", "gzip"]),
    "cseg-uint32": ("uint32", (11, 18, 29), (8, 8, 16), None, ["--encoding", "compressed_segmentation"]),
    "cseg-uint64-sharded": ("uint64", (10, 24, 40), (8, 8, 8), (1, 2, 2),
                            ["--encoding", "compressed_segmentation", "--codec", "gzip", "--cseg-block", "8,4,2"]),
}


def tessera_write(tessera, path, dtype, data, chunk, shard_chunks, extra):
    args = ["stream", path, "--format", "precomputed", "--dtype", dtype, "--shape", ",".join(map(str, data.shape)),
            "--chunk", ",".join(map(str, chunk))]
    if shard_chunks:
        args += ["--shard-chunks", ",".join(map(str, shard_chunks))]
    return tessera.run_ok(args + extra, data.astype(ZARR_DTYPES[dtype]).tobytes())


def read_with_tensorstore(path) -> np.ndarray:
    """The volume as tessera's C order [c,] z, y, x."""
    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)}}).result()
    xyzc = t.read().result()
    czyx = np.transpose(xyzc, (3, 2, 1, 0))
    return czyx[0] if czyx.shape[0] == 1 else czyx


def read_with_cloudvolume(path) -> np.ndarray:
    from cloudvolume import CloudVolume

    cv = CloudVolume(f"file://{path}", mip=0, progress=False, fill_missing=True)
    xyzc = np.asarray(cv[:, :, :])
    czyx = np.transpose(xyzc, (3, 2, 1, 0))
    return czyx[0] if czyx.shape[0] == 1 else czyx


def c_order_data(rng, dtype, shape, segmentation):
    channels = shape[0] if len(shape) == 4 else 1
    zyx = shape[-3:]
    xyzc = case_data(rng, dtype, channels, tuple(reversed(zyx)), "compressed_segmentation" if segmentation else "raw")
    czyx = np.transpose(xyzc, (3, 2, 1, 0))
    return np.ascontiguousarray(czyx[0] if channels == 1 else czyx)


@pytest.mark.parametrize("name", list(CASES))
def test_tensorstore_reads_what_tessera_writes(tessera, tmp_path, name):
    dtype, shape, chunk, shard_chunks, extra = CASES[name]
    rng = np.random.default_rng(stable_seed(name))
    data = c_order_data(rng, dtype, shape, "compressed_segmentation" in extra)
    path = tmp_path / "vol"
    tessera_write(tessera, path, dtype, data, chunk, shard_chunks, extra)
    assert np.array_equal(read_with_tensorstore(path), data)
    assert np.array_equal(read_with_cloudvolume(path), data)
    for _ in range(4):
        expr = random_expr(rng, data.shape)
        want = data[eval(f"np.s_[{expr}]")]
        assert np.array_equal(tessera.read(path, expr, dtype, want.shape), want), expr
    # No staging files are left behind.
    assert not list(path.rglob("*.part-*"))


def test_output_is_deterministic(tessera, tmp_path):
    rng = np.random.default_rng(5)
    data = c_order_data(rng, "uint16", (18, 33, 40), False)
    files = []
    for i, threads in enumerate(("1", "2")):
        path = tmp_path / f"v{i}"
        tessera_write(tessera, path, "uint16", data, (8, 8, 8), (2, 2, 2),
                      ["--codec", "gzip", "--hash", "murmurhash3_x86_128", "--threads", threads])
        files.append({p.relative_to(path): p.read_bytes() for p in path.rglob("*") if p.is_file()})
    assert files[0] == files[1]


def test_shard_shape_that_does_not_match_morton_order_is_rejected(tessera, tmp_path):
    data = np.zeros((16, 16, 16), dtype=np.uint8)
    args = ["stream", tmp_path / "v", "--format", "precomputed", "--dtype", "uint8", "--shape", "16,16,16",
            "--chunk", "4,4,4", "--shard-chunks", "2,1,1"]  # z first: not a Morton box
    proc = tessera.run(args, data.tobytes())
    assert proc.returncode == 1
    assert b"allowed Z,Y,X chunk counts" in proc.stderr
    assert not (tmp_path / "v" / "info").exists()


def test_info_json_matches_the_options(tessera, tmp_path):
    data = np.zeros((10, 20, 30), dtype=np.uint32)
    tessera_write(tessera, tmp_path / "v", "uint32", data, (5, 10, 10), None,
                  ["--encoding", "compressed_segmentation", "--resolution", "4,4,40", "--voxel-offset", "1,2,3"])
    info = json.loads((tmp_path / "v" / "info").read_text())
    assert info["type"] == "segmentation" and info["data_type"] == "uint32" and info["num_channels"] == 1
    scale = info["scales"][0]
    assert scale["size"] == [30, 20, 10] and scale["chunk_sizes"] == [[10, 10, 5]]
    assert scale["resolution"] == [4, 4, 40] and scale["voxel_offset"] == [1, 2, 3]
    assert scale["encoding"] == "compressed_segmentation"
    assert scale["compressed_segmentation_block_size"] == [8, 8, 8]


@pytest.mark.parametrize("encoding, compress", [("raw", False), ("raw", True), ("compressed_segmentation", False)],
                         ids=["raw", "raw-gz-files", "compressed_segmentation"])
def test_tessera_reads_what_cloudvolume_writes(tessera, tmp_path, encoding, compress):
    from cloudvolume import CloudVolume

    rng = np.random.default_rng(9)
    dtype = "uint64" if encoding == "compressed_segmentation" else "uint16"
    xyzc = case_data(rng, dtype, 1, (45, 30, 17), encoding)
    info = CloudVolume.create_new_info(num_channels=1, layer_type="segmentation" if encoding != "raw" else "image",
                                       data_type=dtype, encoding=encoding, resolution=[8, 8, 40],
                                       voxel_offset=[10, 20, 30], chunk_size=[16, 16, 8], volume_size=[45, 30, 17])
    cv = CloudVolume(f"file://{tmp_path / 'v'}", info=info, progress=False, compress=compress)
    cv.commit_info()
    cv[10:55, 20:50, 30:47] = xyzc
    assert any(p.suffix == ".gz" for p in (tmp_path / "v").rglob("*")) == compress
    expected = np.ascontiguousarray(np.transpose(xyzc, (3, 2, 1, 0))[0])
    assert np.array_equal(tessera.read(tmp_path / "v", None, dtype, expected.shape), expected)
    expr = "3:-2:2, ::-3, 5:40"
    want = expected[eval(f"np.s_[{expr}]")]
    assert np.array_equal(tessera.read(tmp_path / "v", expr, dtype, want.shape), want)


def test_several_scales(tessera, tmp_path):
    """Each scale is streamed on its own; the info keeps every scale, ordered by resolution."""
    rng = np.random.default_rng(12)
    full = c_order_data(rng, "uint8", (16, 32, 48), False)
    half = np.ascontiguousarray(full[::2, ::2, ::2])
    path = tmp_path / "v"
    tessera_write(tessera, path, "uint8", half, (4, 8, 8), (2, 2, 2), ["--scale-key", "s1", "--resolution", "2,2,2"])
    tessera_write(tessera, path, "uint8", full, (4, 8, 8), (2, 2, 2), ["--scale-key", "s0", "--append"])  # adds s0
    info = json.loads((path / "info").read_text())
    assert [s["key"] for s in info["scales"]] == ["s0", "s1"]
    for index, data in enumerate((full, half)):
        t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)},
                     "scale_index": index}).result()
        assert np.array_equal(np.transpose(t.read().result()[..., 0], (2, 1, 0)), data)
        got = np.frombuffer(tessera.run_ok(["read", path, "--scale", str(index)]).stdout, dtype="u1")
        assert np.array_equal(got.reshape(data.shape), data)
    # A scale of another data type is refused and the volume is left as it was.
    before = (path / "info").read_text()
    proc = tessera.run(["stream", path, "--format", "precomputed", "--dtype", "uint16", "--shape", "8,16,24",
                        "--chunk", "4,8,8", "--scale-key", "s2", "--append"], bytes(8 * 16 * 24 * 2))
    assert proc.returncode == 1 and b"uint16" in proc.stderr
    assert (path / "info").read_text() == before


def morton_boxes(grid_xyz) -> list[tuple[int, int, int]]:
    """The shard boxes (z, y, x chunk counts) whose chunks share the high compressed-Morton bits."""
    bits = [max(0, (g - 1).bit_length()) for g in grid_xyz]
    seen, boxes = [0, 0, 0], [(1, 1, 1)]
    for i in range(max(bits, default=0)):
        for d in range(3):
            if i < bits[d]:
                seen[d] += 1
                boxes.append((2 ** seen[2], 2 ** seen[1], 2 ** seen[0]))
    return boxes


@pytest.mark.parametrize("seed", range(16))
def test_random_geometries(tessera, tmp_path, seed):
    rng = np.random.default_rng([77, seed])
    channels = int(rng.choice([1, 1, 1, 2]))
    zyx = tuple(int(v) for v in rng.integers(1, 40, size=3))
    chunk = tuple(int(v) for v in rng.integers(1, 12, size=3))
    segmentation = bool(rng.random() < 0.3)
    dtype = str(rng.choice(["uint32", "uint64"] if segmentation else ["uint8", "int16", "uint32", "float32", "uint64"]))
    shape = ((channels,) if channels > 1 else ()) + zyx
    data = c_order_data(rng, dtype, shape, segmentation)
    extra = ["--encoding", "compressed_segmentation", "--cseg-block", "4,2,3"] if segmentation else []
    shard = None
    if rng.random() < 0.7:
        grid_xyz = [-(-zyx[2 - d] // chunk[2 - d]) for d in range(3)]
        boxes = morton_boxes(grid_xyz)
        shard = boxes[int(rng.integers(0, len(boxes)))]
        if rng.random() < 0.5:
            extra += ["--hash", "murmurhash3_x86_128"]
        if rng.random() < 0.5:
            extra += ["--codec", "gzip"]
    path = tmp_path / "vol"
    tessera_write(tessera, path, dtype, data, chunk, shard, extra)
    assert np.array_equal(read_with_tensorstore(path), data), (shape, chunk, shard, extra)
    expr = random_expr(rng, data.shape)
    want = data[eval(f"np.s_[{expr}]")]
    assert np.array_equal(tessera.read(path, expr, dtype, want.shape), want), expr
