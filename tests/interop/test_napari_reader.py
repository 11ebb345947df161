"""napari-ome-zarr's reader function, run headless, on OME-Zarr 0.5 written by tessera (issue 28).

napari_ome_zarr.napari_get_reader(path) returns the function napari calls to load a path; it gives a
list of (data, metadata, layer_type) tuples: data is the pyramid (one dask array per level),
metadata the keyword arguments of napari's add_image / add_labels (name, scale, channel_axis,
colormap, contrast_limits, ...). Nothing here opens a viewer: the reader imports napari.utils only,
and no Qt binding is installed.

What a microscopist sees in napari is checked here: one layer per channel named after the omero
channel labels ("<image name>: <label>"), the scale of level 0's voxel size (the channel axis
dropped, as napari splits channels into layers), contrast limits from the omero windows, every
pyramid level with its exact values, the labels layer of an image (colours and properties from
image-label), and a plate stitched into one image from its wells, with its labels. Single images come
from tessera.create; two cameras with labels and a 2x3 plate from tessera.create_group.

The reader only takes the first coordinate transformation of level 0 (the scale): a translation
does not reach napari's layer through this reader, so none is asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zarr

tessera = pytest.importorskip("tessera")
from napari_ome_zarr import napari_get_reader  # noqa: E402  (a requirement: missing is a failure)

AXES = "t:time:second,c:channel,z:space:micrometer,y:space:micrometer,x:space:micrometer"
VOXEL_SIZE = [2.5, 1.0, 2.0, 0.5, 0.25]  # t in seconds, c unitless, z y x in micrometres
CHANNELS = [
    {"label": "DAPI", "color": "0000FF", "active": True,
     "window": {"start": 10, "end": 4000, "min": 0, "max": 65535}},
    {"label": "GFP", "color": "00FF00", "active": False,
     "window": {"start": 100, "end": 3000, "min": 0, "max": 65535}},
]
OMERO = {"channels": CHANNELS, "rdefs": {"model": "color"}}
SHAPE = (2, 2, 4, 32, 48)  # t, c, z, y, x
CHUNKS = (1, 1, 2, 16, 16)
LABEL_COLORS = {1: (255, 0, 0, 255), 2: (0, 255, 0, 128)}
LABEL_PROPERTIES = {1: {"class": "nucleus", "area": 42}, 2: {"class": "cytoplasm", "area": 7}}


def read_layers(path: Path) -> list[tuple]:
    """What napari would load for PATH: the reader function's (data, metadata, layer_type) list."""
    reader = napari_get_reader(str(path))
    assert reader is not None, f"napari-ome-zarr has no reader for {path}"
    return reader(str(path))


def multiscales_name(image: Path) -> str:
    attrs = json.loads((image / "zarr.json").read_text())["attributes"]
    return attrs["ome"]["multiscales"][0].get("name", "")


def stored_levels(image: Path) -> list[np.ndarray]:
    """Every level of the OME image at IMAGE, read by zarr-python (the reference for the reader)."""
    group = zarr.open_group(str(image), mode="r")
    paths = [d["path"] for d in group.attrs["ome"]["multiscales"][0]["datasets"]]
    return [group[p][...] for p in paths]


def camera_data(rng, shape=SHAPE) -> np.ndarray:
    return rng.integers(0, 4000, size=shape, dtype=np.uint16)


def label_data(rng, shape) -> np.ndarray:
    return rng.integers(0, 3, size=shape, dtype=np.uint32)


def assert_image_layer(layer: tuple, image: Path, channels=CHANNELS, voxel_size=VOXEL_SIZE) -> None:
    """One image layer split into channels: names, scale, units, contrast, colours and every level."""
    data, meta, kind = layer
    assert kind == "image"
    assert meta["channel_axis"] == 1
    name = multiscales_name(image)
    labels = [c["label"] for c in channels]
    assert meta["name"] == [f"{name}: {label}" if name else label for label in labels]
    assert meta["scale"] == pytest.approx([v for d, v in enumerate(voxel_size) if d != 1])
    assert meta["axis_labels"] == ("t", "z", "y", "x")
    assert meta["units"] == ("second", "micrometer", "micrometer", "micrometer")
    assert meta["contrast_limits"] == [[c["window"]["start"], c["window"]["end"]] for c in channels]
    assert meta["visible"] == [c.get("active", True) for c in channels]
    rgb = [[int(c["color"][i:i + 2], 16) / 255 for i in (0, 2, 4)] for c in channels]
    assert [list(cm.colors[-1][:3]) for cm in meta["colormap"]] == [pytest.approx(v) for v in rgb]
    expected = stored_levels(image)
    assert len(data) == len(expected)
    for level, (got, want) in enumerate(zip(data, expected)):
        assert got.shape == want.shape, f"level {level}"
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"level {level}")


def test_a_pyramid_with_omero_gives_one_layer_per_named_channel_at_the_voxel_size(tmp_path, rng):
    path = tmp_path / "cells.ome.zarr"
    data = camera_data(rng)
    s = tessera.create(path, dtype="uint16", shape=SHAPE, chunks=CHUNKS, pyramid=3, axes=AXES,
                       voxel_size=VOXEL_SIZE, attributes={"omero": OMERO}, threads=2)
    s.append(data)
    s.close()

    layers = read_layers(path)
    assert len(layers) == 1, [m.get("name") for _, m, _ in layers]
    assert_image_layer(layers[0], path)
    np.testing.assert_array_equal(np.asarray(layers[0][0][0]), data)
    assert [d.shape for d in layers[0][0]] == [SHAPE, (2, 2, 2, 16, 24), (2, 2, 1, 8, 12)]


def test_an_image_without_a_pyramid_reads_as_one_level(tmp_path, rng):
    path = tmp_path / "single.ome.zarr"
    data = camera_data(rng)
    s = tessera.create(path, dtype="uint16", shape=(0, *SHAPE[1:]), chunks=CHUNKS, ome=True, axes=AXES,
                       voxel_size=VOXEL_SIZE, attributes={"omero": OMERO}, threads=2)
    s.append(data)
    s.close()

    layers = read_layers(path)
    assert len(layers) == 1
    assert_image_layer(layers[0], path)
    np.testing.assert_array_equal(np.asarray(layers[0][0][0]), data)


# ---------------------------------------------------------------------------------------------
# Acquisitions (tessera.create_group): two cameras, labels on one, and an HCS plate.


def assert_labels_layer(layer: tuple, label_name: str, expected_levels: list[np.ndarray],
                        expected_scale: list[float]) -> None:
    data, meta, kind = layer
    assert kind == "labels"
    assert meta["name"].endswith(f"labels/{label_name}"), meta["name"]
    assert "channel_axis" not in meta  # napari's labels layers take no channel axis
    # napari colours are 0..1: image-label's rgba / 255.
    assert set(meta["colormap"]) == set(LABEL_COLORS)
    for value, rgba in LABEL_COLORS.items():
        assert meta["colormap"][value] == pytest.approx([v / 255 for v in rgba])
    props = meta["properties"]
    assert sorted(props["index"]) == sorted(LABEL_PROPERTIES)
    by_value = {v: i for i, v in enumerate(props["index"])}
    for value, fields in LABEL_PROPERTIES.items():
        for key, want in fields.items():
            assert props[key][by_value[value]] == want, (value, key)
    assert meta["scale"] == pytest.approx(expected_scale)
    assert len(data) == len(expected_levels)
    for level, (got, want) in enumerate(zip(data, expected_levels)):
        assert got.shape == want.shape, f"level {level}"
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"level {level}")


# Two ways to lay out a label image of a (t, c, z, y, x) image. "channel": the image's axes with one
# channel (create_labels' defaults); the reader keeps the channel axis in the labels layer.
# "no_channel": (t, z, y, x), what napari overlays on the image's per-channel layers axis for axis
# (same ndim, same scale); its axes, voxel size and factors are given, as its rank differs.
LABEL_LAYOUTS = {
    "channel": dict(shape=(SHAPE[0], 1, *SHAPE[2:]), chunks=CHUNKS, options={}),
    "no_channel": dict(shape=(SHAPE[0], *SHAPE[2:]), chunks=(1, *CHUNKS[2:]),
                       options=dict(axes="t:time:second,z:space:micrometer,y:space:micrometer,x:space:micrometer",
                                    voxel_size=[v for d, v in enumerate(VOXEL_SIZE) if d != 1],
                                    downsample_factors=(1, 2, 2, 2))),
}


@pytest.mark.parametrize("layout", LABEL_LAYOUTS)
def test_a_two_camera_acquisition_reads_each_camera_and_the_labels_layer(tmp_path, rng, layout):
    root = tmp_path / "acq.zarr"
    frames = [camera_data(rng, (1, *SHAPE[1:])) for _ in range(SHAPE[0])]
    second = [camera_data(rng, (1, *SHAPE[1:])) for _ in range(SHAPE[0])]
    spec = LABEL_LAYOUTS[layout]
    labels = label_data(rng, spec["shape"])  # a segmentation of cam1, one label volume per time point
    with tessera.create_group(root, threads=2) as acq:
        acq.create("cam1", dtype="uint16", shape=(0, *SHAPE[1:]), chunks=CHUNKS, pyramid=2, axes=AXES,
                   voxel_size=VOXEL_SIZE, attributes={"omero": OMERO})
        acq.create("cam2", dtype="uint16", shape=(0, *SHAPE[1:]), chunks=CHUNKS, ome=True, axes=AXES,
                   voxel_size=VOXEL_SIZE, attributes={"omero": {"channels": CHANNELS[::-1]}})
        acq.create_labels("cam1", "cells", colors=LABEL_COLORS, properties=LABEL_PROPERTIES, dtype="uint32",
                          shape=(0, *spec["shape"][1:]), chunks=spec["chunks"], **spec["options"])
        for t, (a, b) in enumerate(zip(frames, second)):  # interleaved, as the cameras deliver them
            acq.append("cam1", a)
            acq.append("cam2", b)
            acq.append("cam1/labels/cells", labels[t:t + 1])

    layers = read_layers(root / "cam1")
    assert [kind for _, _, kind in layers] == ["image", "labels"], [(k, m.get("name")) for _, m, k in layers]
    assert_image_layer(layers[0], root / "cam1")
    np.testing.assert_array_equal(np.asarray(layers[0][0][0]), np.concatenate(frames))
    label_levels = stored_levels(root / "cam1" / "labels" / "cells")
    np.testing.assert_array_equal(label_levels[0], labels)
    assert len(label_levels) == len(layers[0][0])  # the label's levels are the image's
    image_scale = layers[0][1]["scale"]
    expected_scale = VOXEL_SIZE if layout == "channel" else image_scale
    assert_labels_layer(layers[1], "cells", label_levels, expected_scale)
    if layout == "no_channel":  # napari overlays it on each channel layer, level for level
        assert [d.shape for d in layers[1][0]] == [d.shape[:1] + d.shape[2:] for d in layers[0][0]]

    cam2 = read_layers(root / "cam2")
    assert [kind for _, _, kind in cam2] == ["image"]
    assert_image_layer(cam2[0], root / "cam2", channels=CHANNELS[::-1])
    np.testing.assert_array_equal(np.asarray(cam2[0][0][0]), np.concatenate(second))


def test_a_plate_of_two_by_three_wells_reads_as_one_stitched_image_with_its_labels(tmp_path, rng):
    root = tmp_path / "plate.zarr"
    rows, columns, fields = ["A", "B"], ["1", "2", "3"], 2
    empty_well = ("B", "3")  # no field is created there: the plate lists five wells, napari shows zeros
    field_shape = (1, 2, 2, 16, 24)  # t, c, z, y, x of one field of view
    label_shape = (1, 1, *field_shape[2:])
    written, written_labels = {}, {}
    with tessera.create_group(root, threads=2) as acq:
        acq.create_plate("plate", rows=rows, columns=columns, field_count=fields, name="screen")
        for r in rows:
            for c in columns:
                if (r, c) == empty_well:
                    continue
                for f in range(fields):
                    key = f"plate/{r}/{c}/{f}"
                    data, labels = camera_data(rng, field_shape), label_data(rng, label_shape)
                    acq.create(key, dtype="uint16", shape=field_shape, chunks=(1, 1, 2, 8, 8), pyramid=2,
                               axes=AXES, voxel_size=VOXEL_SIZE, attributes={"omero": OMERO})
                    acq.create_labels(key, "nuclei", colors=LABEL_COLORS, properties=LABEL_PROPERTIES,
                                      dtype="uint32", shape=label_shape, chunks=(1, 1, 2, 8, 8))
                    acq.append(key, data)
                    acq.append(f"{key}/labels/nuclei", labels)
                    written[(r, c, f)], written_labels[(r, c, f)] = data, labels

    layers = read_layers(root / "plate")
    assert [kind for _, _, kind in layers] == ["image", "labels"], [(k, m.get("name")) for _, m, k in layers]
    (data, meta, _), (label_data_levels, label_meta, _) = layers
    # The reader takes its metadata from the first well's first field: channel names and voxel size.
    assert [n.rsplit(": ", 1)[-1] for n in meta["name"]] == [c["label"] for c in CHANNELS]
    assert meta["channel_axis"] == 1
    assert meta["scale"] == pytest.approx([v for d, v in enumerate(VOXEL_SIZE) if d != 1])
    assert label_meta["scale"] == pytest.approx(VOXEL_SIZE)
    # Each level is every well's first field tiled rows x columns in y, x; the empty well is zeros.
    assert len(data) == len(label_data_levels) == 2
    for pyramid, fields_written, name in ((data, written, "image"), (label_data_levels, written_labels, "labels")):
        for level, stitched in enumerate(pyramid):
            stitched = np.asarray(stitched)
            image = "" if name == "image" else "/labels/nuclei"
            field = stored_levels(root / "plate" / rows[0] / columns[0] / f"0{image}")[level].shape
            h, w = field[-2:]
            assert stitched.shape == (*field[:-2], len(rows) * h, len(columns) * w), (name, level)
            for i, r in enumerate(rows):
                for j, c in enumerate(columns):
                    tile = stitched[..., i * h:(i + 1) * h, j * w:(j + 1) * w]
                    if (r, c) == empty_well:
                        assert not tile.any(), (name, level)
                        continue
                    want = stored_levels(root / "plate" / r / c / f"0{image}")[level]
                    np.testing.assert_array_equal(tile, want, err_msg=f"{name} level {level} well {r}/{c}")
                    if level == 0:
                        np.testing.assert_array_equal(tile, fields_written[(r, c, 0)])
