"""Storage order different from arrival order: tessera.create(..., arrival_order=...) takes frames
whose dimensions after the first arrive in another order than they are stored, and stores exactly
what a stream given numpy's transpose of them to the stored order stores (every file, byte for
byte), for zarr3 (sharded or not), precomputed, hdf5 and pyramids; read back by tessera and by
zarr-python. Also the orders given by name, the errors, and `tessera stream --arrival-order`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr

import tessera
from conftest import random_array, trailing_row_pieces

REPO_ROOT = Path(__file__).resolve().parents[2]

# (location name, create options) of each format's streams, sharded and not.
LAYOUTS = {
    "zarr3": ("a.zarr", dict(codec="zstd")),
    "zarr3-sharded": ("a.zarr", dict(codec="blosc-lz4")),  # shard_chunks set per shape below
    "precomputed": ("a", dict(format="precomputed")),
    "hdf5": ("a.h5", dict(codec="gzip")),
}


def run_cli(*args, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    binary = Path(os.environ.get("TESSERA_BIN", REPO_ROOT / "build" / "release" / "tessera"))
    if not binary.is_file():
        pytest.fail(f"the tessera CLI is not built ({binary})", pytrace=False)
    return subprocess.run([str(binary), *map(str, args)], input=input_bytes, capture_output=True, timeout=60)


def stored_files(location: Path) -> dict[str, bytes]:
    """Every file an array is stored as (one file, or a directory tree), by relative path."""
    if location.is_file():
        return {location.name: location.read_bytes()}
    return {str(p.relative_to(location)): p.read_bytes() for p in sorted(location.rglob("*")) if p.is_file()}


def random_order(rng: np.random.Generator, rank: int) -> tuple[int, ...]:
    """A permutation of 0..rank-1 with 0 first, not the identity."""
    while True:
        order = (0,) + tuple(int(d) + 1 for d in rng.permutation(rank - 1))
        if order != tuple(range(rank)):
            return order


def arriving(stored: np.ndarray, order) -> np.ndarray:
    """The frames as they arrive: arriving dimension i is stored dimension order[i]."""
    return np.ascontiguousarray(stored.transpose(order))


def write_both(tmp_path: Path, name: str, stored: np.ndarray, order, rng, shape=None, given=None,
               **options) -> tuple[Path, Path]:
    """The same array streamed twice: in stored order (frames) and in arrival order `order` (given
    to create as `given`, by default the same; random pieces of the arriving frames). Returns
    (stored-order location, arrival-order location)."""
    shape = stored.shape if shape is None else shape
    for sub in ("stored", "arrived"):
        (tmp_path / sub).mkdir()
    with tessera.create(tmp_path / "stored" / name, dtype=stored.dtype, shape=shape, **options) as w:
        for frame in stored:
            w.append(frame)
    with tessera.create(tmp_path / "arrived" / name, dtype=stored.dtype, shape=shape, arrival_order=given or order,
                        **options) as w:
        for piece in trailing_row_pieces(arriving(stored, order), rng):
            w.append(piece)
    return tmp_path / "stored" / name, tmp_path / "arrived" / name


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("trial", range(4))
def test_arrival_order_stores_what_the_transposed_frames_store(tmp_path, rng, layout, trial):
    # Random ranks and odd extents: (z, y, x) or (c, z, y, x) for precomputed, 3-5 dimensions else.
    rank = int(rng.integers(3, 5)) if layout == "precomputed" else int(rng.integers(3, 6))
    shape = tuple(int(n) for n in rng.integers(2, 8 if rank < 5 else 5, size=rank))
    dtype = ["uint8", "uint16", "float32", "int64"][trial] if layout != "precomputed" else ["uint8", "uint16", "uint32", "float32"][trial]
    stored = random_array(rng, dtype, shape)
    order = random_order(rng, rank)
    name, options = LAYOUTS[layout]
    options = dict(options)
    chunks = [int(rng.integers(1, n + 1)) for n in shape]
    if layout == "precomputed" and rank == 4:
        chunks = chunks[1:]  # a chunk holds every channel
    options["chunks"] = tuple(chunks)
    if layout == "zarr3-sharded":
        options["shard_chunks"] = (2,) + (1,) * (rank - 2) + (2,)
    stored_at, arrived_at = write_both(tmp_path, name, stored, order, rng, **options)
    expected = stored_files(stored_at)
    assert expected and stored_files(arrived_at) == expected
    np.testing.assert_array_equal(tessera.open(arrived_at)[...], stored)
    if layout.startswith("zarr3"):
        np.testing.assert_array_equal(zarr.open_array(str(arrived_at), mode="r")[...], stored)


def test_the_camera_case_t_z_c_y_x_stored_t_c_z_y_x(tmp_path, rng):
    # Frames arrive (z, c, y, x) per timepoint, one (y, x) plane at a time, unbounded; stored t, c, z, y, x.
    stored = random_array(rng, "uint16", (3, 2, 5, 24, 20))
    options = dict(chunks=(1, 1, 2, 16, 8), shard_chunks=(2, 2, 3, 2, 3), dimension_names=["t", "c", "z", "y", "x"])
    (tmp_path / "stored").mkdir()
    (tmp_path / "arrived").mkdir()
    with tessera.create(tmp_path / "stored" / "a.zarr", dtype="uint16", shape=(0, 2, 5, 24, 20), **options) as w:
        w.append(stored)
    frames = arriving(stored, (0, 2, 1, 3, 4))
    with tessera.create(tmp_path / "arrived" / "a.zarr", dtype="uint16", shape=(0, 2, 5, 24, 20),
                        arrival_order=("t", "z", "c", "y", "x"), **options) as w:
        assert w.shape == (0, 2, 5, 24, 20)  # the stored shape
        for plane in frames.reshape(-1, 24, 20):
            w.append(plane)
    assert stored_files(tmp_path / "arrived" / "a.zarr") == stored_files(tmp_path / "stored" / "a.zarr")
    z = zarr.open_array(str(tmp_path / "arrived" / "a.zarr"), mode="r")
    assert z.metadata.dimension_names == ("t", "c", "z", "y", "x")
    np.testing.assert_array_equal(z[...], stored)
    np.testing.assert_array_equal(tessera.open(tmp_path / "arrived" / "a.zarr")[...], stored)


@pytest.mark.parametrize("layout", ["zarr3", "precomputed"])
def test_pyramid_levels_are_the_transposed_frames_levels(tmp_path, rng, layout):
    # Every level, not only level 0: the downsamplers reduce stored rows (a float mean to the bit).
    if layout == "zarr3":
        stored = random_array(rng, "float32", (5, 3, 18, 22))
        options = dict(chunks=(2, 1, 8, 8), pyramid=3, axes="t:time,c:channel,y:space,x:space")
        order, given = (0, 3, 1, 2), ("t", "x", "c", "y")  # by the OME axes' names
    else:
        stored = random_array(rng, "uint16", (10, 18, 14))
        options = dict(format="precomputed", chunks=(4, 8, 8), pyramid=2)
        order, given = (0, 2, 1), None
    name = "a.zarr" if layout == "zarr3" else "a"
    stored_at, arrived_at = write_both(tmp_path, name, stored, order, rng, given=given, **options)
    expected = stored_files(stored_at)
    assert len(expected) > 3 and stored_files(arrived_at) == expected
    np.testing.assert_array_equal(tessera.open(arrived_at)[...], stored)
    if layout == "zarr3":
        group = zarr.open_group(str(arrived_at), mode="r")
        reference = zarr.open_group(str(stored_at), mode="r")
        for level in ("0", "1", "2"):
            np.testing.assert_array_equal(group[level][...], reference[level][...])
        np.testing.assert_array_equal(group["0"][...], stored)


def test_identity_and_unknown_names_and_bad_orders(tmp_path):
    shape = (0, 3, 4, 5)
    # The identity is stored order.
    with tessera.create(tmp_path / "i.zarr", dtype="uint8", shape=shape, arrival_order=(0, 1, 2, 3)) as w:
        w.append(np.zeros((3, 4, 5), np.uint8))
    with pytest.raises(tessera.InvalidArgumentError, match=r"arrival_order: 0,2,1 has 3 entries for a rank-4 array"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=shape, arrival_order=(0, 2, 1))
    with pytest.raises(tessera.InvalidArgumentError, match=r"arrival_order: must start with 0"):
        tessera.create(tmp_path / "b.zarr", dtype="uint8", shape=shape, arrival_order=(1, 0, 2, 3))
    with pytest.raises(tessera.InvalidArgumentError, match=r"arrival_order: must be a permutation of 0..3, not 0,1,1,3"):
        tessera.create(tmp_path / "c.zarr", dtype="uint8", shape=shape, arrival_order=(0, 1, 1, 3))
    with pytest.raises(tessera.InvalidArgumentError, match=r"'q' is not one of the array's dimension names \(t, c, y, x\)"):
        tessera.create(tmp_path / "d.zarr", dtype="uint8", shape=shape, dimension_names=list("tcyx"),
                       arrival_order=("t", "q", "c", "x"))
    with pytest.raises(TypeError, match="arrival_order"):
        tessera.create(tmp_path / "e.zarr", dtype="uint8", shape=shape, arrival_order=(0, "y", 1, 3))
    with pytest.raises(TypeError, match="arrival_order"):
        tessera.create(tmp_path / "f.zarr", dtype="uint8", shape=shape, arrival_order="tcyx")
    with pytest.raises(tessera.UnsupportedError, match="arrival_order: the cuda backend"):
        tessera.create(tmp_path / "g.zarr", dtype="uint8", shape=shape, arrival_order=(0, 2, 1, 3), backend="cuda")
    # Regions (an empty array to write into, the scale-out writers) are written in stored order.
    with pytest.raises(tessera.UnsupportedError, match="arrival_order: regions are written in stored order"):
        tessera.create_array(tmp_path / "h.zarr", dtype="uint8", shape=(2, 3, 4, 5), arrival_order=(0, 2, 1, 3))
    # Continuing a stored array takes rows in stored order.
    with pytest.raises(tessera.UnsupportedError, match="arrival_order: continuing an array"):
        tessera.create(tmp_path / "i.zarr", mode="a", arrival_order=(0, 2, 1, 3))


def test_append_names_the_arriving_shapes(tmp_path):
    w = tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 2, 6, 4), arrival_order=(0, 3, 1, 2))
    with pytest.raises(tessera.InvalidArgumentError) as e:
        w.append(np.zeros((2, 6, 4), np.uint16))  # a stored-order frame
    message = str(e.value)
    assert "in its arrival order (0, 4, 2, 6)" in message and "(n, 4, 2, 6) (frames)" in message, message
    w.append(np.zeros((4, 2, 6), np.uint16))
    w.close()


def test_cli_stream_arrival_order_and_plan(tmp_path, rng):
    stored = random_array(rng, "uint16", (3, 4, 5, 6))
    order = (0, 2, 3, 1)
    args = ["--dtype", "uint16", "--shape", "3,4,5,6", "--chunk", "1,2,3,4", "--shard-chunks", "3,2,1,2"]
    plan = run_cli("stream", tmp_path / "p.zarr", *args, "--arrival-order", "0,2,3,1", "--plan")
    assert plan.returncode == 0, plan.stderr.decode()
    assert "arrival order:          0,2,3,1" in plan.stdout.decode(), plan.stdout.decode()
    done = run_cli("stream", tmp_path / "a.zarr", *args, "--arrival-order", "0,2,3,1", "--input", "-",
                   input_bytes=arriving(stored, order).tobytes())
    assert done.returncode == 0, done.stderr.decode()
    reference = run_cli("stream", tmp_path / "s.zarr", *args, "--input", "-", input_bytes=stored.tobytes())
    assert reference.returncode == 0, reference.stderr.decode()
    assert stored_files(tmp_path / "a.zarr") == stored_files(tmp_path / "s.zarr")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...], stored)
    bad = run_cli("stream", tmp_path / "b.zarr", *args, "--arrival-order", "0,1,1,3", "--input", "-", input_bytes=b"")
    assert bad.returncode != 0 and "--arrival-order: must be a permutation of 0..3" in bad.stderr.decode(), bad.stderr.decode()
