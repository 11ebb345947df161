"""Creating never destroys data by accident (issue 25): mode 'w-' (the default) refuses a location
where anything exists and names it, 'w' replaces the array there wholly, an HDF5 file is never
extended with a dataset; a stream that fails keeps what it published, from Python and the CLI."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tessera
from conftest import random_array

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    binary = Path(os.environ.get("TESSERA_BIN", REPO_ROOT / "build" / "release" / "tessera"))
    if not binary.is_file():
        pytest.fail(f"the tessera CLI is not built ({binary})", pytrace=False)
    return subprocess.run([str(binary), *map(str, args)], input=input_bytes, capture_output=True, timeout=60)


def write(location, data, **kw):
    with tessera.create(location, dtype=data.dtype, shape=data.shape, **kw) as w:
        w.append(data)


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_create_over_an_existing_array_raises_and_changes_nothing(tmp_path, rng):
    data = random_array(rng, "uint16", (16, 8, 8))
    write(tmp_path / "a.zarr", data, chunks=(4, 4, 4), shard_chunks=(2, 2, 2))
    before = files_under(tmp_path)
    with pytest.raises(tessera.AlreadyExistsError, match=r"a\.zarr: a Zarr array \(zarr\.json\) exists here") as e:
        write(tmp_path / "a.zarr", data[:4], chunks=(4, 4, 4))
    assert isinstance(e.value, FileExistsError)
    assert files_under(tmp_path) == before
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)


def test_mode_w_replaces_the_array_wholly_and_nothing_beside_it(tmp_path, rng):
    old = random_array(rng, "uint16", (16, 8, 8))
    write(tmp_path / "a.zarr", old, chunks=(4, 4, 4), shard_chunks=(2, 2, 2))
    sibling = random_array(rng, "uint16", (4, 8, 8))
    write(tmp_path / "b.zarr", sibling)
    assert (tmp_path / "a.zarr" / "c" / "1" / "0" / "0").exists()
    new = random_array(rng, "uint16", (5, 8, 8))
    write(tmp_path / "a.zarr", new, chunks=(4, 4, 4), shard_chunks=(2, 2, 2), mode="w")
    assert not (tmp_path / "a.zarr" / "c" / "1").exists()  # the old shard row is gone with the old array
    a = tessera.open(tmp_path / "a.zarr")
    assert a.shape == (5, 8, 8)
    np.testing.assert_array_equal(a[...], new)
    np.testing.assert_array_equal(tessera.open(tmp_path / "b.zarr")[...], sibling)


def test_a_second_hdf5_dataset_is_refused_and_the_first_kept(tmp_path, rng):
    first = random_array(rng, "uint16", (6, 8, 8))
    write(tmp_path / "f.h5", first, dataset="/cam1/frames")
    with pytest.raises(tessera.AlreadyExistsError, match="cannot add a dataset to an existing one"):
        write(tmp_path / "f.h5", first, dataset="/cam2/frames")
    np.testing.assert_array_equal(tessera.open(tmp_path / "f.h5", dataset="/cam1/frames")[...], first)
    second = random_array(rng, "uint16", (3, 8, 8))
    write(tmp_path / "f.h5", second, dataset="/cam2/frames", mode="w")  # replaces the file
    np.testing.assert_array_equal(tessera.open(tmp_path / "f.h5")[...], second)


def test_convert_into_an_existing_ome_image_refuses_then_overwrite_replaces_it(tmp_path, rng):
    data = random_array(rng, "uint16", (16, 16, 16))
    write(tmp_path / "src.zarr", data)
    write(tmp_path / "img.ome.zarr", data, chunks=(4, 4, 4), pyramid=3)
    with pytest.raises(tessera.AlreadyExistsError, match="an OME-Zarr image of 3 level"):
        tessera.convert(tmp_path / "src.zarr", tmp_path / "img.ome.zarr")
    assert (tmp_path / "img.ome.zarr" / "2" / "zarr.json").exists()
    tessera.convert(tmp_path / "src.zarr", tmp_path / "img.ome.zarr", overwrite=True)
    assert not (tmp_path / "img.ome.zarr" / "1").exists() and not (tmp_path / "img.ome.zarr" / "2").exists()
    np.testing.assert_array_equal(tessera.open(tmp_path / "img.ome.zarr")[...], data)
    with pytest.raises(tessera.InvalidArgumentError, match="into itself"):
        tessera.convert(tmp_path / "src.zarr", tmp_path / "src.zarr", mode="w")
    np.testing.assert_array_equal(tessera.open(tmp_path / "src.zarr")[...], data)
    with pytest.raises(tessera.InvalidArgumentError, match="mode 'q'"):
        write(tmp_path / "x.zarr", data, mode="q")


def test_cli_stream_refuses_an_existing_array_unless_overwrite(tmp_path, rng):
    data = random_array(rng, "uint8", (8, 16))
    out = tmp_path / "a.zarr"
    args = ["stream", out, "--dtype", "uint8", "--shape", "8,16", "--chunk", "4,16"]
    assert run_cli(*args, input_bytes=data.tobytes()).returncode == 0
    again = run_cli(*args, input_bytes=data[::-1].tobytes())
    assert again.returncode != 0
    assert b"a Zarr array (zarr.json) exists here" in again.stderr and b"--overwrite" in again.stderr
    np.testing.assert_array_equal(tessera.open(out)[...], data)
    assert run_cli(*args, "--overwrite", input_bytes=data[::-1].tobytes()).returncode == 0
    np.testing.assert_array_equal(tessera.open(out)[...], data[::-1])
    converted = tmp_path / "b.zarr"
    assert run_cli("convert", out, converted).returncode == 0
    refused = run_cli("convert", out, converted)
    assert refused.returncode != 0 and b"--overwrite" in refused.stderr
    assert run_cli("convert", out, converted, "--overwrite").returncode == 0


@pytest.mark.parametrize("fmt", ["zarr3", "precomputed"])
def test_cli_input_ending_mid_frame_keeps_the_published_rows(tmp_path, rng, fmt):
    # 11 frames and half of the 12th on stdin, 16 declared: the stream fails at the end of its input
    # and keeps the rows it stored, as a kill at that moment would.
    data = random_array(rng, "uint8", (16, 8, 16))
    out = tmp_path / "out"
    cut = data[:11].tobytes() + data[11].tobytes()[:64]
    r = run_cli("stream", out, "--format", fmt, "--dtype", "uint8", "--shape", "16,8,16", "--chunk", "2,8,16",
                input_bytes=cut)
    assert r.returncode != 0 and b"stream ended after" in r.stderr
    a = tessera.open(out)
    rows = a.shape[0] if fmt == "zarr3" else 10  # zarr: the published rows; precomputed: fixed shape
    assert 0 < rows <= 11
    np.testing.assert_array_equal(a[:rows], data[:rows])


def test_mode_a_continues_an_array_as_one_stream_of_all_frames(tmp_path, rng):
    data = random_array(rng, "uint16", (29, 12, 10))
    kw = dict(chunks=(4, 4, 4), shard_chunks=(2, 2, 2))
    with tessera.create(tmp_path / "whole.zarr", dtype="uint16", shape=(0, 12, 10), **kw) as w:
        w.append(data)
    with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 12, 10), **kw) as w:
        w.append(data[:11])
    with tessera.create(tmp_path / "a.zarr", mode="a") as w:  # the stored spec: nothing else given
        assert w.stats.rows_published == 11
        w.append(data[11:20])
    with tessera.create(tmp_path / "a.zarr", dtype="uint16", shape=(0, 12, 10), mode="a", **kw) as w:
        w.append(data[20:])
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)
    whole, pieces = tmp_path / "whole.zarr", tmp_path / "a.zarr"
    assert {p.relative_to(pieces): p.read_bytes() for p in pieces.rglob("*") if p.is_file()} == \
        {p.relative_to(whole): p.read_bytes() for p in whole.rglob("*") if p.is_file()}
    with pytest.raises(tessera.InvalidArgumentError, match="^chunks: 2,4,4 contradicts the stored array's 4,4,4"):
        tessera.create(tmp_path / "a.zarr", chunks=(2, 4, 4), mode="a")


@pytest.mark.parametrize("pyramid", [None, 3], ids=["one-level", "pyramid"])
def test_mode_a_continues_an_ome_image_through_its_group(tmp_path, rng, pyramid):
    """An OME-Zarr image is continued level by level through its group, a single-level one too:
    the result equals one stream of all frames file for file, group metadata included."""
    data = random_array(rng, "uint16", (23, 16, 12))
    kw = dict(chunks=(4, 8, 4), shard_chunks=(2, 1, 3), ome=True,
              axes="z:space:micrometer,y:space:micrometer,x:space:micrometer", voxel_size=(2.0, 0.5, 0.5))
    if pyramid:
        kw["pyramid"] = pyramid
    # One name in two folders: the image's name in its metadata is the location's.
    whole, pieces = tmp_path / "whole" / "img.ome.zarr", tmp_path / "pieces" / "img.ome.zarr"
    for target in (whole, pieces):
        with tessera.create(target, dtype="uint16", shape=(0, 16, 12), **kw) as w:
            w.append(data if target == whole else data[:9])
    with tessera.create(pieces, mode="a") as w:
        w.append(data[9:])
    np.testing.assert_array_equal(tessera.open(pieces)[...], data)
    assert {p.relative_to(pieces): p.read_bytes() for p in pieces.rglob("*") if p.is_file()} == \
        {p.relative_to(whole): p.read_bytes() for p in whole.rglob("*") if p.is_file()}


def test_cli_append_continues_the_array(tmp_path, rng):
    data = random_array(rng, "uint8", (21, 8, 16))
    out = tmp_path / "a.zarr"
    assert run_cli("stream", out, "--dtype", "uint8", "--shape", "0,8,16", "--chunk", "4,8,16",
                   input_bytes=data[:9].tobytes()).returncode == 0
    r = run_cli("stream", out, "--append", input_bytes=data[9:].tobytes())
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(tessera.open(out)[...], data)
    r = run_cli("stream", out, "--append", "--chunk", "2,8,16", input_bytes=b"")
    assert r.returncode != 0 and b"--chunk: 2,8,16 contradicts" in r.stderr, r.stderr


def test_dask_writes_take_the_mode(tmp_path, rng):
    import dask.array as da
    import tessera.dask

    data = random_array(rng, "uint16", (8, 8))
    write(tmp_path / "a.zarr", data, chunks=(4, 4))
    x = da.from_array(data[::-1].copy(), chunks=4)
    with pytest.raises(tessera.AlreadyExistsError, match="a Zarr array"):
        tessera.dask.to_store(x, tmp_path / "a.zarr", chunks=(4, 4))
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data)
    tessera.dask.to_store(x, tmp_path / "a.zarr", chunks=(4, 4), mode="w")
    np.testing.assert_array_equal(tessera.open(tmp_path / "a.zarr")[...], data[::-1])
    with pytest.raises(tessera.InvalidArgumentError, match="into itself"):
        tessera.dask.convert(tmp_path / "a.zarr", tmp_path / "a.zarr", mode="w")


def test_cli_append_continues_a_precomputed_scale_to_the_given_rows(tmp_path, rng):
    data = random_array(rng, "uint8", (21, 8, 16))
    out = tmp_path / "vol"
    common = ["--format", "precomputed", "--dtype", "uint8", "--chunk", "4,8,8"]
    assert run_cli("stream", out, *common, "--shape", "9,8,16", input_bytes=data[:9].tobytes()).returncode == 0
    rest = tmp_path / "rest.raw"
    rest.write_bytes(data[9:].tobytes())  # a regular file of the new rows only
    r = run_cli("stream", out, *common, "--shape", "21,8,16", "--append", "--input", rest)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(tessera.open(out)[...], data)
    whole = tmp_path / "whole"
    assert run_cli("stream", whole, *common, "--shape", "21,8,16", input_bytes=data.tobytes()).returncode == 0
    assert files_under(out) == files_under(whole)
