"""Stream.append of any whole number of trailing rows (a (y, x) plane of a (t, c, y, x) stream),
create(progress=...), `tessera stream --progress` on a bounded shape, and an unknown HDF5
dataset's error listing the datasets the file holds."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tessera
from conftest import random_array, trailing_row_pieces

REPO_ROOT = Path(__file__).resolve().parents[2]

# (format, location name, create options): each format's streams, sharded and not.
LAYOUTS = {
    "zarr3": ("a.zarr", dict(codec="zstd")),
    "zarr3-sharded": ("a.zarr", dict(codec="zstd", shard_chunks=None)),  # shard_chunks set per shape below
    "precomputed": ("a", dict(format="precomputed")),
    "hdf5": ("a.h5", dict(codec="gzip")),
}


def run_cli(*args, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    binary = Path(os.environ.get("TESSERA_BIN", REPO_ROOT / "build" / "release" / "tessera"))
    if not binary.is_file():
        pytest.fail(f"the tessera CLI is not built ({binary})", pytrace=False)
    return subprocess.run([str(binary), *map(str, args)], input=input_bytes, capture_output=True, timeout=60)


def fresh_dirs(tmp_path: Path, *names: str) -> list[Path]:
    """Empty directories to create arrays in (an HDF5 file's directory must exist)."""
    for name in names:
        (tmp_path / name).mkdir()
    return [tmp_path / name for name in names]


def stored_files(location: Path) -> dict[str, bytes]:
    """Every file an array is stored as (one file, or a directory tree), by relative path."""
    if location.is_file():
        return {location.name: location.read_bytes()}
    return {str(p.relative_to(location)): p.read_bytes() for p in sorted(location.rglob("*")) if p.is_file()}


def layout_options(layout: str, shape: tuple[int, ...], rng: np.random.Generator) -> dict:
    name, options = LAYOUTS[layout]
    options = dict(options)
    options["chunks"] = tuple(int(rng.integers(1, n + 1)) for n in shape)
    if layout == "zarr3-sharded":
        options["shard_chunks"] = (2,) + (1,) * (len(shape) - 2) + (2,)
    return options


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("trial", range(3))
def test_trailing_row_appends_store_the_same_bytes_as_frame_appends(tmp_path, rng, layout, trial):
    # Random shapes: (t, c, y, x) for zarr3 and hdf5, (z, y, x) for precomputed (its 4-d is (c, z, y, x)).
    rank = 3 if layout == "precomputed" else 4
    shape = tuple(int(n) for n in rng.integers(2, 7, size=rank))
    data = random_array(rng, "uint16", shape)
    options = layout_options(layout, shape, rng)
    name = LAYOUTS[layout][0]
    fresh_dirs(tmp_path, "frames", "pieces")
    with tessera.create(tmp_path / "frames" / name, dtype="uint16", shape=shape, **options) as w:
        for frame in data:
            w.append(frame)
    pieces = trailing_row_pieces(data, rng)
    assert any(p.ndim < rank - 1 or p.shape[0] < shape[1] for p in pieces[1:] if p.ndim < rank)  # partial frames
    with tessera.create(tmp_path / "pieces" / name, dtype="uint16", shape=shape, **options) as w:
        for piece in pieces:
            w.append(piece)
    expected = stored_files(tmp_path / "frames" / name)
    assert expected and stored_files(tmp_path / "pieces" / name) == expected
    np.testing.assert_array_equal(tessera.open(tmp_path / "pieces" / name)[...], data)


@pytest.mark.parametrize("layout", ["zarr3", "zarr3-sharded", "hdf5"])
def test_channel_planes_of_an_unbounded_stream(tmp_path, rng, layout):
    # The camera case: (y, x) planes one channel at a time, the stream unbounded.
    data = random_array(rng, "uint16", (5, 2, 16, 12))
    options = layout_options(layout, data.shape, rng)
    name = LAYOUTS[layout][0]
    fresh_dirs(tmp_path, "frames", "planes")
    with tessera.create(tmp_path / "frames" / name, dtype="uint16", shape=(0, 2, 16, 12), **options) as w:
        w.append(data)
    with tessera.create(tmp_path / "planes" / name, dtype="uint16", shape=(0, 2, 16, 12), **options) as w:
        for t in range(5):
            for c in range(2):
                w.append(data[t, c])
    assert stored_files(tmp_path / "planes" / name) == stored_files(tmp_path / "frames" / name)
    np.testing.assert_array_equal(tessera.open(tmp_path / "planes" / name)[...], data)


def test_planes_of_a_pyramid_stream(tmp_path, rng):
    data = random_array(rng, "uint8", (6, 2, 16, 16))
    options = dict(chunks=(2, 1, 8, 8), pyramid=2, axes="t:time,c:channel,y:space,x:space")
    frames, planes = fresh_dirs(tmp_path, "frames", "planes")  # the same name: the image's name is stored
    with tessera.create(frames / "a.zarr", dtype="uint8", shape=(0, 2, 16, 16), **options) as w:
        w.append(data)
    with tessera.create(planes / "a.zarr", dtype="uint8", shape=(0, 2, 16, 16), **options) as w:
        for plane in data.reshape(12, 16, 16):
            w.append(plane)
    assert stored_files(planes / "a.zarr") == stored_files(frames / "a.zarr")


def test_a_wrong_trailing_shape_names_the_accepted_shapes(tmp_path):
    w = tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 2, 256, 256))
    for wrong in [(256, 128), (3, 256, 256), (2, 256, 255), (1, 2, 256), (1, 1, 2, 256, 256)]:
        with pytest.raises(tessera.InvalidArgumentError) as e:
            w.append(np.zeros(wrong, np.uint16))
        message = str(e.value)
        assert "(n, 2, 256, 256) (frames)" in message and "(k, 256, 256) with k <= 2" in message, message
        assert "(k, 256) with k <= 256" in message and "(k,) with k <= 256" in message, message
        assert message.endswith("got an array of shape (" + ", ".join(map(str, wrong)) + ")"), message
    w.append(np.zeros((256, 256), np.uint16))  # still open: a plane is taken
    w.append(np.zeros((1, 256, 256), np.uint16))
    w.close()
    assert tessera.open(tmp_path / "a.zarr").shape == (1, 2, 256, 256)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_partial_frame_at_close_is_an_error(tmp_path, rng, layout):
    shape = (0, 2, 8, 8) if layout != "precomputed" else (4, 8, 8)
    name = LAYOUTS[layout][0]
    options = layout_options(layout, tuple(max(n, 2) for n in shape), rng)
    w = tessera.create(tmp_path / name, dtype="uint8", shape=shape, **options)
    w.append(np.zeros(shape[1:], np.uint8))  # a whole frame
    w.append(np.zeros(shape[2:], np.uint8))  # and a part of the next
    frame_bytes = math.prod(shape[1:])
    with pytest.raises(tessera.InvalidArgumentError, match="stream ended after") as e:
        w.close()
    missing = f"{frame_bytes + math.prod(shape[2:])} bytes"
    assert missing in str(e.value), str(e.value)
    if shape[0] == 0:
        assert f"not a whole number of rows of {frame_bytes} bytes" in str(e.value)
    assert w.closed


# --- progress ----------------------------------------------------------------------------------


def test_create_progress_callable_gets_bytes_total_and_seconds(tmp_path, rng):
    data = random_array(rng, "uint16", (4, 2, 8, 8))
    calls = []
    with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=data.shape,
                        progress=lambda *a: calls.append(a)) as w:
        for frame in data:
            w.append(frame)
    assert [c[0] for c in calls] == [data[:i + 1].nbytes for i in range(4)]
    assert all(c[1] == data.nbytes for c in calls)
    assert all(isinstance(c[2], float) and c[2] >= 0 for c in calls)
    assert [c[2] for c in calls] == sorted(c[2] for c in calls)

    calls.clear()
    with tessera.create(tmp_path / "b.zarr", dtype="uint16", shape=(0, 2, 8, 8), progress=lambda *a: calls.append(a)) as w:
        for plane in data.reshape(8, 8, 8):
            w.append(plane)
    assert [c[:2] for c in calls] == [(128 * (i + 1), None) for i in range(8)]  # unbounded: no total


def test_create_progress_true_prints_a_line_on_stderr(tmp_path, rng, capsys):
    data = random_array(rng, "uint8", (4, 8, 8))
    with tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=data.shape, progress=True) as w:
        w.append(data[:2])
        w.append(data[2:])
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)  # the last line once, not again at close
    assert "/ 0.000 GB" in err and "GB/s" in err and "s left" in err, repr(err)

    with tessera.create(tmp_path / "b.zarr", dtype="uint8", shape=(0, 8, 8), progress=True) as w:
        w.append(data)
    err = capsys.readouterr().err
    assert err.endswith("\n") and "GB/s" in err and "s left" not in err and " / " not in err, repr(err)


def test_create_progress_refuses_other_values(tmp_path):
    with pytest.raises(TypeError, match="progress: expected a bool or a callable"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 4), progress="yes")
    assert not (tmp_path / "a.zarr").exists()


def test_cli_stream_progress_shows_the_total_and_time_left(tmp_path, rng):
    data = random_array(rng, "uint8", (16, 8, 16))
    r = run_cli("stream", tmp_path / "a.zarr", "--dtype", "uint8", "--shape", "16,8,16", "--progress",
                input_bytes=data.tobytes())
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "0.000 / 0.000 GB" in err and "GB/s" in err and "s left" in err and "16 frames" in err, err
    r = run_cli("stream", tmp_path / "b.zarr", "--dtype", "uint8", "--shape", "0,8,16", "--progress",
                input_bytes=data.tobytes())
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "GB/s" in err and "16 frames" in err and "s left" not in err and " / " not in err, err
    np.testing.assert_array_equal(tessera.open(tmp_path / "b.zarr")[...], data)


# --- an unknown HDF5 dataset -------------------------------------------------------------------


def test_an_unknown_hdf5_dataset_lists_the_datasets_the_file_holds(tmp_path):
    import h5py

    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f["scan/frames"] = np.zeros((2, 3), np.uint8)
        f["scan/dark"] = np.zeros((3,), np.uint8)
        f["meta"] = np.zeros((1,), np.uint8)
    with pytest.raises(tessera.NotFoundError) as e:
        tessera.open(path, dataset="/scna/frames")
    assert "/scna/frames" in str(e.value)
    assert "the file holds /meta, /scan/dark, /scan/frames" in str(e.value), str(e.value)
    with pytest.raises(tessera.NotFoundError, match="the file holds /meta, /scan/dark, /scan/frames"):
        tessera.open(path, dataset="/scan/frame")  # the last part misspelt
    r = run_cli("info", path, "--dataset", "/scna/frames")
    assert r.returncode != 0 and b"the file holds /meta, /scan/dark, /scan/frames" in r.stderr, r.stderr


def test_an_unknown_hdf5_dataset_lists_twenty_then_counts_the_rest(tmp_path):
    import h5py

    path = tmp_path / "many.h5"
    with h5py.File(path, "w") as f:
        for i in range(25):
            f[f"d{i:02d}"] = np.zeros((1,), np.uint8)
    with pytest.raises(tessera.NotFoundError) as e:
        tessera.open(path, dataset="d99")
    message = str(e.value)
    assert "/d00, /d01" in message and "/d19 and 5 more" in message and "/d20" not in message, message
