"""Acquisitions (tessera.create_group): several arrays streamed under one root, as microscopes
write them, checked by the peers.

* two cameras (one an OME-Zarr image with a pyramid, channel names and a voxel size) and a label
  image with colours, frames interleaved: ome-zarr-models validates every group, ome-zarr's
  Reader finds the image with its channel names and the labels, zarr-python and tessera read
  every array exactly;
* an HCS plate of 2x3 wells with 2 fields each: ome-zarr-models' HCS and Well models, ome-zarr's
  Reader, zarr-python exact;
* attributes changed mid-stream: a reader sees them after the next flush, and the last ones after
  close;
* kill -9 mid-stream: every group and array opens, each array holds exactly the rows it had
  published, and nothing unpublished looks valid;
* HDF5: the arrays are datasets of one file that h5py and h5dump read exactly;
* the shared pool and budget: the plan shows them, an array past memory_limit is refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import tessera
from interop_support import stable_seed

zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")
from ome_zarr_models.v05.hcs import HCS  # noqa: E402
from ome_zarr_models.v05.image import Image  # noqa: E402
from ome_zarr_models.v05.image_label import ImageLabel  # noqa: E402
from ome_zarr_models.v05.labels import Labels  # noqa: E402
from ome_zarr_models.v05.well import Well  # noqa: E402

AXES = "t:time:second,c:channel,y:space:micrometer,x:space:micrometer"
CHANNELS = {"channels": [
    {"label": "GFP", "color": "00FF00", "active": True, "window": {"start": 0, "end": 3000, "min": 0, "max": 65535}},
    {"label": "mCherry", "color": "FF0000", "active": True, "window": {"start": 0, "end": 3000, "min": 0, "max": 65535}},
]}
T, C, Y, X = 11, 2, 96, 80


def frames(seed, shape=(T, C, Y, X), dtype=np.uint16):
    return np.random.default_rng(seed).integers(0, 4000, size=shape, dtype=dtype)


def validated(model, path):
    """model.from_zarr on the group at path, OME-Zarr warnings as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return model.from_zarr(zarr.open_group(str(path), mode="r"))


def write_two_cameras(root):
    cam1, cam2 = frames(1), frames(2, (T, Y, X))
    cells = (frames(3, (T, 1, Y, X)) % 5).astype(np.uint32)
    with tessera.create_group(root, threads=2, attributes={"instrument": "scope 1"}) as acq:
        s1 = acq.create("cam1", dtype="uint16", shape=(0, C, Y, X), chunks=(1, 1, 32, 32),
                        shard_chunks=(4, 1, 2, 2), codec="zstd", pyramid=3, axes=AXES,
                        voxel_size=(2.0, 1.0, 0.5, 0.5), attributes={"omero": CHANNELS})
        s2 = acq.create("cam2", dtype="uint16", shape=(0, Y, X), chunks=(2, 48, 40), codec="blosc-lz4")
        lab = acq.create_labels("cam1", "cells", dtype="uint32", shape=(0, 1, Y, X), chunks=(1, 1, 32, 32),
                                colors={1: (255, 0, 0, 255), 2: (0, 0, 255, 128)},
                                properties={1: {"class": "nucleus"}, 2: {"class": "cytoplasm"}})
        for t in range(T):  # as the cameras deliver them: one frame of each in turn
            s1.append(cam1[t])
            acq.append("cam2", cam2[t])
            lab.append(cells[t])
    return cam1, cam2, cells


def test_two_cameras_with_labels_and_a_pyramid(tmp_path):
    root = tmp_path / "acq.ome.zarr"
    cam1, cam2, cells = write_two_cameras(root)

    g = zarr.open_group(str(root), mode="r")
    assert g.attrs["instrument"] == "scope 1"
    np.testing.assert_array_equal(g["cam1/0"][:], cam1)
    np.testing.assert_array_equal(g["cam2"][:], cam2)
    np.testing.assert_array_equal(g["cam1/labels/cells/0"][:], cells)
    np.testing.assert_array_equal(tessera.open(str(root / "cam1" / "0"))[:], cam1)
    np.testing.assert_array_equal(tessera.open(str(root / "cam2"))[3:9:2, ::-1], cam2[3:9:2, ::-1])
    # The levels are reductions of level 0 (2x2 mean over y, x), the label levels by mode.
    lvl1 = tessera.open(str(root / "cam1" / "1"))[:]
    assert lvl1.shape == (T, C, Y // 2, X // 2)
    lab1 = tessera.open(str(root / "cam1" / "labels" / "cells" / "1"))[:]
    assert lab1.shape == (T, 1, Y // 2, X // 2) and lab1.dtype == np.uint32

    image = validated(Image, root / "cam1")
    assert [a.name for a in image.ome_attributes.multiscales[0].axes] == ["t", "c", "y", "x"]
    assert image.labels is not None and list(image.labels.label_paths) == ["cells"]
    validated(Labels, root / "cam1" / "labels")
    label = validated(ImageLabel, root / "cam1" / "labels" / "cells")
    colors = {c.label_value: tuple(c.rgba) for c in label.ome_attributes.image_label.colors}
    assert colors == {1: (255, 0, 0, 255), 2: (0, 0, 255, 128)}

    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader
    nodes = list(Reader(parse_url(str(root / "cam1")))())
    assert nodes[0].metadata["channel_names"] == ["GFP", "mCherry"]
    np.testing.assert_array_equal(np.asarray(nodes[0].data[0]), cam1)
    specs = {str(n.zarr).split(" ")[0].rsplit("acq.ome.zarr/", 1)[1]: {type(s).__name__ for s in n.specs} for n in nodes}
    assert specs == {"cam1": {"Multiscales", "OMERO"}, "cam1/labels": {"Labels"},
                     "cam1/labels/cells": {"Label", "Multiscales"}}


def test_a_plate_of_2x3_wells_with_2_fields_each(tmp_path):
    root = tmp_path / "plate.ome.zarr"
    data = {}
    with tessera.create_group(root, threads=2) as acq:
        acq.create_plate("plate", rows=["A", "B"], columns=["1", "2", "3"], field_count=2,
                         acquisitions=[{"id": 0, "name": "first pass"}], name="test plate")
        streams = {}
        for row in "AB":
            for col in "123":
                for field in "01":
                    key = f"plate/{row}/{col}/{field}"
                    streams[key] = acq.create(key, dtype="uint16", shape=(C, 40, 48), chunks=(1, 40, 48),
                                              axes="c:channel,y:space:micrometer,x:space:micrometer",
                                              voxel_size=(1, 0.65, 0.65), acquisition=0)
                    data[key] = frames(stable_seed(key) % 1000, (C, 40, 48))
        for key, s in streams.items():
            for c in range(C):
                s.append(data[key][c])

    hcs = validated(HCS, root / "plate")
    plate = hcs.ome_attributes.plate
    assert [w.path for w in plate.wells] == ["A/1", "A/2", "A/3", "B/1", "B/2", "B/3"]
    assert plate.field_count == 2 and plate.name == "test plate"
    well = validated(Well, root / "plate" / "B" / "2")
    assert [i.path for i in well.ome_attributes.well.images] == ["0", "1"]
    validated(Image, root / "plate" / "B" / "2" / "1")
    g = zarr.open_group(str(root), mode="r")
    for key, expected in data.items():
        np.testing.assert_array_equal(g[key + "/0"][:], expected)

    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader
    nodes = list(Reader(parse_url(str(root / "plate")))())
    assert any(type(s).__name__ == "Plate" for n in nodes for s in n.specs)


def test_attributes_changed_mid_stream_are_published_at_the_next_flush(tmp_path):
    root = tmp_path / "acq.zarr"
    data = frames(4, (6, Y, X))
    acq = tessera.create_group(root, threads=2)
    s = acq.create("img", dtype="uint16", shape=(0, Y, X), chunks=(1, 48, 40), ome=True,
                   attributes={"omero": {"channels": [{"label": "before", "color": "FFFFFF"}]}})
    raw = acq.create("raw", dtype="uint16", shape=(0, Y, X), chunks=(1, 48, 40))
    for t in range(3):
        s.append(data[t])
        raw.append(data[t])
    acq.set_attributes("", {"state": "running", "frames": 3})
    acq.set_attributes("img", {"omero": {"channels": [{"label": "DAPI", "color": "0000FF"}]}})
    acq.set_attributes("raw", {"exposure_ms": [10, 12]})
    assert "state" not in zarr.open_group(str(root), mode="r").attrs  # not before the flush
    acq.flush()
    g = zarr.open_group(str(root), mode="r")
    assert g.attrs["state"] == "running"
    assert g["img"].attrs["ome"]["omero"]["channels"][0]["label"] == "DAPI"
    assert "multiscales" in g["img"].attrs["ome"]
    assert g["raw"].attrs["exposure_ms"] == [10, 12]
    np.testing.assert_array_equal(g["raw"][:], data[:3])
    validated(Image, root / "img")
    for t in range(3, 6):
        s.append(data[t])
        raw.append(data[t])
    acq.set_attributes("", {"state": "done", "frames": 6})
    acq.close()
    g = zarr.open_group(str(root), mode="r")
    assert dict(g.attrs) == {"state": "done", "frames": 6}
    np.testing.assert_array_equal(g["img/0"][:], data)
    with pytest.raises(tessera.NotFoundError, match="nope"):
        tessera.create_group(tmp_path / "x.zarr").set_attributes("nope", {})


KILL_SCRIPT = textwrap.dedent("""
    import os, sys, numpy as np, tessera
    root, marker = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(7)
    acq = tessera.create_group(root, threads=2)
    a = acq.create("cam1", dtype="uint16", shape=(0, 2, 64, 64), chunks=(2, 1, 32, 32), shard_chunks=(1, 2, 2, 2),
                   codec="zstd", pyramid=2, axes="t:time,c:channel,y:space,x:space")
    b = acq.create("cam2", dtype="uint16", shape=(0, 64, 64), chunks=(2, 32, 32))
    l = acq.create_labels("cam1", "cells", dtype="uint32", shape=(0, 1, 64, 64), chunks=(2, 1, 32, 32))
    t = 0
    while True:
        a.append(np.full((2, 64, 64), t + 1, np.uint16))
        b.append(np.full((64, 64), t + 1, np.uint16))
        l.append(np.full((1, 64, 64), t % 7, np.uint32))
        t += 1
        if t % 4 == 0:
            acq.flush()
            with open(marker + ".tmp", "w") as f:  # replaced whole: a kill never leaves it empty
                f.write(str(t))
            os.replace(marker + ".tmp", marker)
""")


@pytest.mark.parametrize("trial", range(4))
def test_kill_9_mid_stream_leaves_every_array_and_group_readable_as_far_as_published(tmp_path, trial):
    root, marker = tmp_path / "acq.zarr", tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(root), str(marker)])
    try:
        deadline = time.monotonic() + 60
        while (not marker.exists() or int(marker.read_text() or 0) < 8 + 4 * trial) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.013 * trial)  # between flushes, or in one
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    flushed = int(marker.read_text())
    g = zarr.open_group(str(root), mode="r")
    validated(Image, root / "cam1")
    validated(Labels, root / "cam1" / "labels")
    for key, frame in (("cam1/0", (2, 64, 64)), ("cam2", (64, 64)), ("cam1/labels/cells/0", (1, 64, 64))):
        a = g[key]
        n = a.shape[0]
        assert n >= flushed - 4, (key, n, flushed)  # a flush published every row appended before it
        got = a[:]
        t = tessera.open(str(root / key))[:]
        np.testing.assert_array_equal(got, t)
        for i in range(n):
            value = i % 7 if "cells" in key else i + 1
            np.testing.assert_array_equal(got[i], np.full(frame, value), err_msg=f"{key} row {i}")


def test_hdf5_acquisition_is_one_file_of_datasets(tmp_path):
    path = tmp_path / "acq.h5"
    cam1, cam2 = frames(5, (T, Y, X)), frames(6, (T, 2, Y, X))
    with tessera.create_group(path, threads=2, attributes={"instrument": "scope 1"}) as acq:
        a = acq.create("cam1", dtype="uint16", shape=(0, Y, X), chunks=(1, 48, 40), codec="gzip")
        b = acq.create("cams/cam2", dtype="uint16", shape=(T, 2, Y, X), chunks=(1, 2, 48, 40))
        for t in range(T):
            a.append(cam1[t])
            b.append(cam2[t])
        acq.set_attributes("cam1", {"exposure_ms": 12})
        assert not path.exists()
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["cam1"][:], cam1)
        np.testing.assert_array_equal(f["cams/cam2"][:], cam2)
        assert f["cam1"].attrs["exposure_ms"] == 12
        assert f.attrs["instrument"] in ("scope 1", b"scope 1")
    out = subprocess.run(["h5dump", "-H", str(path)], capture_output=True, text=True, check=True).stdout
    assert 'DATASET "cam1"' in out and 'GROUP "cams"' in out and 'DATASET "cam2"' in out


def test_the_pool_and_the_memory_budget_are_shared(tmp_path):
    acq = tessera.create_group(tmp_path / "a.zarr", threads=3)
    acq.create("x", dtype="uint16", shape=(0, 512, 512), chunks=(8, 128, 128))
    one = acq.planned_peak_bytes
    assert "one pool of 3 compression threads" in acq.plan and 'array "x"' in acq.plan
    acq.close()
    acq = tessera.create_group(tmp_path / "b.zarr", threads=3, memory_limit=one + one // 2)
    acq.create("x", dtype="uint16", shape=(0, 512, 512), chunks=(8, 128, 128))
    with pytest.raises(tessera.OutOfResourcesError, match='"y".*memory_limit|memory_limit.*"y"'):
        acq.create("y", dtype="uint16", shape=(0, 512, 512), chunks=(8, 128, 128))
    assert acq.keys() == ["x"] and "of the memory limit" in acq.plan
    with pytest.raises(TypeError, match="threads"):
        acq.create("z", dtype="uint16", shape=(0, 8), threads=2)
    acq.close()
    with pytest.raises(tessera.AlreadyExistsError, match="b.zarr"):
        tessera.create_group(tmp_path / "b.zarr")
    with tessera.create_group(tmp_path / "b.zarr", mode="w") as acq:
        assert acq.keys() == []
    assert not (tmp_path / "b.zarr" / "x").exists()


def test_opening_the_root_names_its_members(tmp_path):
    root = tmp_path / "acq.zarr"
    with tessera.create_group(root) as acq:
        acq.create("cam1", dtype="uint8", shape=(1, 4), chunks=(1, 4)).append(np.zeros((1, 4), np.uint8))
        acq.create("cam2", dtype="uint8", shape=(1, 4), chunks=(1, 4)).append(np.zeros((1, 4), np.uint8))
    with pytest.raises(tessera.InvalidArgumentError, match="it holds cam1, cam2"):
        tessera.open(root)


def test_a_single_streams_attributes_change_at_its_next_flush(tmp_path):
    s = tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(0, 4), chunks=(1, 4), attributes={"v": 1})
    s.append(np.zeros((2, 4), np.uint8))
    s.set_attributes({"v": 2})
    assert zarr.open_array(str(tmp_path / "a.zarr"), mode="r").attrs["v"] == 1
    s.flush()
    assert zarr.open_array(str(tmp_path / "a.zarr"), mode="r").attrs["v"] == 2
    s.set_attributes({"v": 3})
    s.close()
    assert dict(zarr.open_array(str(tmp_path / "a.zarr"), mode="r").attrs) == {"v": 3}
    h = tessera.create(tmp_path / "a.h5", dtype="uint8", shape=(0, 4), chunks=(1, 4))
    with pytest.raises(tessera.UnsupportedError, match="attributes"):
        h.set_attributes({"v": 2})
    h.abort()


@pytest.mark.parametrize("name", ["acq.zarr", "acq.h5"])
def test_arrival_order_in_an_acquisition(tmp_path, name):
    stored = frames(8, (5, 3, 2, 40, 48))  # t, c, z, y, x stored; frames arrive t, z, c, y, x
    arriving = np.ascontiguousarray(stored.transpose(0, 2, 1, 3, 4))
    with tessera.create_group(tmp_path / name) as acq:
        s = acq.create("cam", dtype="uint16", shape=(0, 3, 2, 40, 48), chunks=(1, 1, 1, 40, 48),
                       arrival_order=(0, 2, 1, 3, 4))
        for t in range(5):
            s.append(arriving[t])
    got = tessera.open(tmp_path / name / "cam")[:] if name.endswith(".zarr") else \
        h5py.File(tmp_path / name, "r")["cam"][:]
    np.testing.assert_array_equal(got, stored)


def test_labels_without_the_images_channel_axis(tmp_path):
    root = tmp_path / "acq.zarr"
    with tessera.create_group(root) as acq:
        img = acq.create("img", dtype="uint16", shape=(0, 2, 4, 32, 32), chunks=(1, 1, 4, 32, 32), pyramid=2,
                         axes="t:time,c:channel,z:space:micrometer,y:space:micrometer,x:space:micrometer",
                         voxel_size=(1, 1, 2.0, 0.5, 0.5))
        lab = acq.create_labels("img", "cells", dtype="uint8", shape=(0, 4, 32, 32), chunks=(1, 4, 32, 32))
        for t in range(3):
            img.append(np.zeros((2, 4, 32, 32), np.uint16))
            lab.append(np.full((4, 32, 32), t, np.uint8))
    label = validated(ImageLabel, root / "img" / "labels" / "cells")
    ms = label.ome_attributes.multiscales[0]
    assert [a.name for a in ms.axes] == ["t", "z", "y", "x"]
    assert list(ms.datasets[0].coordinateTransformations[0].scale) == [1, 2.0, 0.5, 0.5]
    assert tessera.open(root / "img" / "labels" / "cells", level=1).shape == (3, 2, 16, 16)
