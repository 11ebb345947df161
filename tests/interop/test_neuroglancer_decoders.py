"""Neuroglancer's own decoders read the jpeg, png and compresso chunks tessera writes.

Neuroglancer decodes chunks in the browser, in one "async computation" web worker: jpeg with jpgjs
(JavaScript, not libjpeg-turbo), png with libspng compiled to WebAssembly, compresso with its own
WebAssembly decoder. The PyPI `neuroglancer` package installs that worker as built and shipped
(neuroglancer/static/client: a bundled .js and the .wasm files it loads). neuroglancer_decode.mjs,
beside this file, runs that script under Node.js, posts it each chunk file with the arguments
Neuroglancer's precomputed backend passes, and writes out the voxels it answers.

Each volume has edge chunks in every dimension. png and compresso decode to exactly tessera's own
read of the volume, with two exceptions that are Neuroglancer's own bugs (present in 2.41.2 and in
its source as of 2026-08), each checked against a model of the bug so that anything else still fails:

- png with 16-bit samples and 2 to 4 channels: src/sliceview/png/index.ts hands libspng's interleaved
  output to transposeArray2d as bytes, not samples, so it moves bytes of the first half of the image
  and leaves the second half zero. Neuroglancer shows such a volume wrongly whoever wrote it.
- compresso uint64 labels of 2^32 and above: compresso.hpp reads a label stored in the locations
  stream through a size_t, which is 32 bits in the wasm32 build, so such a label on a boundary voxel
  (one that takes its label from that stream, not from a neighbour) comes out modulo 2^32.

jpeg decodes to within a measured bound of tessera's decode of the same bytes (JPEG_BOUNDS): jpgjs
and libjpeg-turbo are different decoders (inverse DCT, rounding, and for 3 channels the chroma
upsampling and colour conversion), so equality is not expected. The bounds are far below what a
chunk laid out wrongly (transposed, channels interleaved) gives.

Node.js (Debian's `nodejs`) and the `neuroglancer` package are installed by scripts/setup.sh; a
missing one is a failure, not a skip.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import tessera
from interop_support import stable_seed

DECODE_SCRIPT = Path(__file__).with_name("neuroglancer_decode.mjs")

OPERATIONS = {"jpeg": "decodeJpeg", "png": "decodePng", "compresso": "decodeCompresso"}


class Case(NamedTuple):
    encoding: str
    dtype: str
    shape: tuple  # [c,] z, y, x
    chunks: tuple  # [c,] z, y, x
    options: dict = {}
    label_top: int = 2**32 - 1  # compresso: the largest label

    @property
    def channels(self) -> int:
        return self.shape[0] if len(self.shape) == 4 else 1


CASES = {
    "jpeg-gray": Case("jpeg", "uint8", (11, 21, 37), (4, 8, 16)),
    "jpeg-gray-q50": Case("jpeg", "uint8", (9, 19, 29), (4, 8, 8), {"jpeg_quality": 50}),
    "jpeg-rgb": Case("jpeg", "uint8", (3, 9, 17, 30), (3, 4, 8, 8)),
    "png-uint8": Case("png", "uint8", (11, 18, 29), (8, 8, 16)),
    "png-uint16": Case("png", "uint16", (11, 18, 29), (4, 16, 16)),
    "png-uint8-4ch": Case("png", "uint8", (4, 5, 9, 17), (4, 2, 8, 8)),
    "png-uint16-2ch": Case("png", "uint16", (2, 7, 13, 21), (2, 4, 4, 8)),
    "compresso-uint8": Case("compresso", "uint8", (11, 29, 37), (8, 16, 16)),
    "compresso-uint16": Case("compresso", "uint16", (11, 29, 37), (8, 16, 16)),
    "compresso-uint32": Case("compresso", "uint32", (11, 29, 37), (8, 16, 16)),
    "compresso-uint64": Case("compresso", "uint64", (13, 29, 37), (8, 16, 16)),
    "compresso-uint64-over-32-bits": Case("compresso", "uint64", (13, 29, 37), (8, 16, 16), label_top=2**40),
}

# (largest, mean) |jpgjs - libjpeg-turbo| over a volume, for the same jpeg bytes. Measured with
# neuroglancer 2.41.2 against tessera's libjpeg-turbo 2.1 decode: one channel 1 and 0.07 (both
# qualities), three channels 8 and 1.15 (tessera's 4:2:0 chroma, upsampled differently). Bounded
# with a margin; a chunk read transposed or with its channels interleaved gives a mean of 10 to 20.
JPEG_BOUNDS = {1: (2, 0.2), 3: (10, 2.0)}


def neuroglancer_client_dir() -> Path:
    spec = importlib.util.find_spec("neuroglancer")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("the neuroglancer package is not installed: run scripts/setup.sh "
                    "(requirements.txt lists it)", pytrace=False)
    client = Path(list(spec.submodule_search_locations)[0]) / "static" / "client"
    if not client.is_dir():
        pytest.fail(f"the neuroglancer package has no built client at {client}", pytrace=False)
    return client


def node_binary() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.fail("Node.js is not installed: run scripts/setup.sh (it installs Debian's nodejs)",
                    pytrace=False)
    return node


def image_data(rng, dtype: str, shape) -> np.ndarray:
    """Smooth structure plus noise, as microscope images are; SHAPE is [c,] z, y, x."""
    grid = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    z, y, x = grid[-3:]
    c = grid[0] if len(shape) == 4 else 0
    top = np.iinfo(dtype).max
    base = (np.sin(x / 5 + c) + np.cos(y / 7) + np.sin(z / 3)) * top / 8 + top / 2
    return np.clip(base + rng.normal(0, top / 40, shape), 0, top).astype(dtype)


def labels(rng, dtype: str, shape, top: int) -> np.ndarray:
    """Segmentation-like labels up to TOP: blocky regions with ragged borders and a few specks;
    SHAPE is z, y, x."""
    top = min(np.iinfo(dtype).max, top)
    coarse = rng.integers(1, top, size=tuple(n // 5 + 1 for n in shape), dtype=np.uint64, endpoint=True)
    out = np.repeat(np.repeat(np.repeat(coarse, 5, 0), 5, 1), 5, 2)[: shape[0], : shape[1], : shape[2]]
    specks = rng.random(shape) < 0.02
    return np.where(specks, rng.integers(0, 5, size=shape), out).astype(dtype)


def chunk_box(name: str) -> tuple[slice, slice, slice]:
    """The z, y, x slices of a precomputed chunk file named "x0-x1_y0-y1_z0-z1"."""
    x, y, z = (tuple(int(v) for v in part.split("-")) for part in name.split("_"))
    return slice(*z), slice(*y), slice(*x)


def decode_with_neuroglancer(volume: Path, work: Path, case: Case) -> dict[str, np.ndarray]:
    """{chunk file name: its voxels as Neuroglancer decodes them, [c,] z, y, x}."""
    scale = json.loads((volume / "info").read_text())["scales"][0]
    assert scale["encoding"] == case.encoding
    dtype = np.dtype(case.dtype)
    requests, shapes = [], {}
    for chunk in sorted((volume / scale["key"]).iterdir()):
        zyx = tuple(s.stop - s.start for s in chunk_box(chunk.name))
        shapes[chunk.name] = zyx if case.channels == 1 else (case.channels, *zyx)
        requests.append({"operation": OPERATIONS[case.encoding], "input": str(chunk),
                         "output": str(work / chunk.name), "chunk_size_xyz": list(zyx[::-1]),
                         "channels": case.channels, "bytes_per_voxel": dtype.itemsize})
    assert len(requests) > 1
    (work / "requests.json").write_text(json.dumps(requests))
    result = subprocess.run([node_binary(), str(DECODE_SCRIPT), str(neuroglancer_client_dir()),
                             str(work / "requests.json")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"neuroglancer_decode.mjs failed:\n{result.stdout}{result.stderr}"
    decoded = {}
    for name, shape in shapes.items():
        voxels = np.fromfile(work / name, dtype=dtype)  # host endian, as Neuroglancer views them
        assert voxels.size == np.prod(shape), f"chunk {name}: {voxels.size} voxels, expected shape {shape}"
        decoded[name] = voxels.reshape(shape)
    return decoded


def png_as_neuroglancer_transposes_bytes(planar: np.ndarray) -> np.ndarray:
    """What Neuroglancer makes of a png of PLANAR ([c, z, y, x]) samples wider than a byte: libspng
    gives the samples interleaved, and transposeArray2d(bytes, pixels, channels) moves the bytes of
    the first pixels * channels of them and leaves the rest zero."""
    channels = planar.shape[0]
    pixels = planar[0].size
    interleaved = np.ascontiguousarray(np.moveaxis(planar, 0, -1)).view(np.uint8).reshape(-1)
    out = np.zeros_like(interleaved)
    out[: pixels * channels] = interleaved[: pixels * channels].reshape(pixels, channels).T.reshape(-1)
    return out.view(planar.dtype).reshape(planar.shape)


def check_exact(name: str, chunk: str, got: np.ndarray, want: np.ndarray, case: Case) -> None:
    if case.encoding == "png" and case.channels > 1 and want.dtype.itemsize > 1 \
            and not np.array_equal(got, want):
        assert np.array_equal(got, png_as_neuroglancer_transposes_bytes(want)), \
            f"{name}: chunk {chunk} is neither the voxels nor Neuroglancer's byte-transposed reading of them"
        return
    if case.encoding == "compresso" and want.dtype == np.uint64:
        wrong = got != want
        truncated = want[wrong] & np.uint64(2**32 - 1)
        assert np.array_equal(got[wrong], truncated) and bool(np.all(want[wrong] > truncated)), \
            f"{name}: chunk {chunk} differs other than by Neuroglancer's labels modulo 2^32"
        return
    assert np.array_equal(got, want), f"{name}: chunk {chunk} differs"


@pytest.mark.parametrize("name", CASES)
def test_neuroglancer_decodes_what_tessera_writes(tmp_path, name):
    case = CASES[name]
    rng = np.random.default_rng(stable_seed("neuroglancer decoders", name))
    if case.encoding == "compresso":
        data = labels(rng, case.dtype, case.shape, case.label_top)
    else:
        data = image_data(rng, case.dtype, case.shape)
    volume = tmp_path / "v"
    with tessera.create(volume, format="precomputed", dtype=case.dtype, shape=case.shape, chunks=case.chunks,
                        encoding=case.encoding, **case.options) as w:
        w.append(data)
    ours = tessera.open(volume)[...]
    if case.encoding != "jpeg":
        assert np.array_equal(ours, data)
    work = tmp_path / "decoded"
    work.mkdir()
    decoded = decode_with_neuroglancer(volume, work, case)

    largest, total = 0, 0
    for chunk, got in decoded.items():
        want = ours[(slice(None), *chunk_box(chunk)) if case.channels > 1 else chunk_box(chunk)]
        assert got.shape == want.shape, chunk
        if case.encoding == "jpeg":
            difference = np.abs(got.astype(np.int16) - want.astype(np.int16))
            largest, total = max(largest, int(difference.max())), total + int(difference.sum())
        else:
            check_exact(name, chunk, got, want, case)
    if case.encoding == "jpeg":
        bound_largest, bound_mean = JPEG_BOUNDS[case.channels]
        mean = total / ours.size
        assert largest <= bound_largest and mean <= bound_mean, \
            f"{name}: |jpgjs - libjpeg-turbo| largest {largest}, mean {mean:.3f}; " \
            f"bounds {bound_largest}, {bound_mean}"
