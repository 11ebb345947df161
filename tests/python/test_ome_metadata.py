"""OME-Zarr 0.5 image metadata beyond the levels: the caller's attributes on the image group (omero
inside `ome`), level 0's translation and the other levels' (voxel centres at the centres of the
blocks they reduce), and a conversion that keeps the source's axes, units, scale, translation and
omero (or, into precomputed, its voxel size as the resolution in nanometres).

Checked against ome-zarr-models (the 0.5 schema), ome-zarr's Reader (napari-ome-zarr's reader:
channel names from omero) and values worked out by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr

import tessera

REPO_ROOT = Path(__file__).resolve().parents[2]

AXES = "c:channel,z:space:micrometer,y:space:micrometer,x:space:micrometer"
VOXEL_SIZE = [1.0, 2.0, 0.5, 0.25]
TRANSLATION = [0.0, 100.0, -20.0, 7.5]
OMERO = {
    "channels": [
        {"label": "DAPI", "color": "0000FF", "active": True,
         "window": {"start": 0, "end": 4000, "min": 0, "max": 65535}},
        {"label": "GFP", "color": "00FF00", "active": True,
         "window": {"start": 100, "end": 3000, "min": 0, "max": 65535}},
    ],
    "rdefs": {"model": "color"},
}


def cli_binary() -> Path:
    binary = Path(os.environ.get("TESSERA_BIN", REPO_ROOT / "build" / "release" / "tessera"))
    if not binary.is_file():  # a missing CLI is a failure, never a skip
        pytest.fail(f"the tessera CLI is not built ({binary}): build it with scripts/build.sh (or set TESSERA_BIN)",
                    pytrace=False)
    return binary


def write_image(path: Path, rng, levels: int = 3, **options) -> np.ndarray:
    data = rng.integers(0, 4000, size=(2, 8, 16, 20), dtype=np.uint16)
    options = dict(dict(axes=AXES, voxel_size=VOXEL_SIZE, translation=TRANSLATION,
                        attributes={"omero": OMERO, "acquisition": {"stage": "A1"}}), **options)
    s = tessera.create(path, dtype="uint16", shape=data.shape, chunks=(1, 4, 8, 8), pyramid=levels, threads=2,
                       **options)
    s.append(data)
    s.close()
    return data


def group_attributes(path: Path) -> dict:
    return json.loads((path / "zarr.json").read_text())["attributes"]


def transforms(path: Path) -> list[dict]:
    """Per level: {"scale": [...], "translation": [...]} as the image group records them."""
    out = []
    for dataset in group_attributes(path)["ome"]["multiscales"][0]["datasets"]:
        t = dataset["coordinateTransformations"]
        assert t[0]["type"] == "scale", "scale comes first"
        out.append({c["type"]: c[c["type"]] for c in t})
    return out


def test_attributes_and_omero_go_on_the_image_group(tmp_path, rng):
    path = tmp_path / "acq.ome.zarr"
    write_image(path, rng)
    attrs = group_attributes(path)
    assert attrs["ome"]["omero"] == OMERO, "OME-Zarr 0.5 keeps omero inside `ome`"
    assert "omero" not in attrs
    assert attrs["acquisition"] == {"stage": "A1"}
    for k in range(3):
        level = json.loads((path / str(k) / "zarr.json").read_text())
        assert level.get("attributes", {}) == {}, f"level {k} carries no copy of the image's attributes"


def test_ome_zarr_models_validates_and_ome_zarr_reads_the_channels(tmp_path, rng):
    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader
    from ome_zarr_models.common.omero import Omero
    from ome_zarr_models.v05.image import Image

    path = tmp_path / "acq.ome.zarr"
    data = write_image(path, rng)
    image = Image.from_zarr(zarr.open_group(str(path), mode="r"))
    assert len(image.attributes.ome.multiscales[0].datasets) == 3
    # ome-zarr-models' v05 Image keeps omero (transitional in 0.5) as it is: its Omero model checks it.
    omero = Omero.model_validate(image.attributes.ome.omero)
    assert [c.window.end for c in omero.channels] == [4000, 3000]

    node = list(Reader(parse_url(str(path)))())[0]
    assert node.metadata["channel_names"] == ["DAPI", "GFP"]
    assert node.metadata["contrast_limits"] == [[0, 4000], [100, 3000]]
    np.testing.assert_array_equal(np.asarray(node.data[0]), data)


def test_translation_of_three_levels(tmp_path, rng):
    path = tmp_path / "t.ome.zarr"
    write_image(path, rng)
    # Factors 1, 2, 2, 2 (space axes halve): level k's voxel covers F = 2^k level-0 voxels along z,
    # y, x, its scale is voxel_size * F and its first voxel's centre sits at
    # translation + voxel_size * (F - 1) / 2.
    assert transforms(path) == [
        {"scale": [1.0, 2.0, 0.5, 0.25], "translation": [0.0, 100.0, -20.0, 7.5]},
        {"scale": [1.0, 4.0, 1.0, 0.5], "translation": [0.0, 101.0, -19.75, 7.625]},
        {"scale": [1.0, 8.0, 2.0, 1.0], "translation": [0.0, 103.0, -19.25, 7.875]},
    ]


def test_translation_without_a_pyramid_and_from_the_cli(tmp_path, rng):
    path = tmp_path / "one.ome.zarr"
    write_image(path, rng, levels=1, ome=True)
    assert transforms(path) == [{"scale": VOXEL_SIZE, "translation": TRANSLATION}]

    cli = tmp_path / "cli.ome.zarr"
    proc = subprocess.run([str(cli_binary()), "stream", str(cli), "--dtype", "uint8", "--shape", "4,8,8",
                           "--pyramid", "2", "--axes", "z:space:nanometer,y:space:nanometer,x:space:nanometer",
                           "--voxel-size", "40,4,4", "--translation", "0,8,16", "--input", "-"],
                          input=bytes(4 * 8 * 8), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert transforms(cli) == [
        {"scale": [40.0, 4.0, 4.0], "translation": [0.0, 8.0, 16.0]},
        {"scale": [80.0, 8.0, 8.0], "translation": [20.0, 10.0, 18.0]},
    ]


def test_translation_of_the_wrong_length_or_format_is_refused(tmp_path):
    with pytest.raises(tessera.InvalidArgumentError, match="translation"):
        tessera.create(tmp_path / "a.zarr", dtype="uint8", shape=(4, 4), ome=True, translation=[1.0, 2.0, 3.0])
    with pytest.raises(tessera.UnsupportedError, match="translation"):
        tessera.create(tmp_path / "a.h5", dtype="uint8", shape=(4, 4), translation=[1.0, 2.0])


def kept_ome(path: Path) -> dict:
    """What a conversion must keep of an image: axes, level 0's transformations, omero."""
    ome = group_attributes(path)["ome"]
    ms = ome["multiscales"][0]
    return {"axes": ms["axes"], "level0": ms["datasets"][0]["coordinateTransformations"],
            "omero": ome.get("omero")}


@pytest.mark.parametrize("levels", [1, 2])
def test_convert_into_zarr_keeps_the_ome_metadata(tmp_path, rng, levels):
    from ome_zarr_models.v05.image import Image

    src = tmp_path / "acq.ome.zarr"
    data = write_image(src, rng)
    dst = tmp_path / "copy.ome.zarr"
    tessera.convert(src, dst, pyramid=levels)
    assert kept_ome(dst) == kept_ome(src)
    assert group_attributes(dst)["acquisition"] == {"stage": "A1"}
    assert len(group_attributes(dst)["ome"]["multiscales"][0]["datasets"]) == levels
    if levels == 2:
        assert transforms(dst)[1] == transforms(src)[1]
    Image.from_zarr(zarr.open_group(str(dst), mode="r"))
    np.testing.assert_array_equal(tessera.open(dst)[...], data)


def test_cli_convert_with_a_pyramid_keeps_the_ome_metadata(tmp_path, rng):
    src = tmp_path / "acq.ome.zarr"
    write_image(src, rng)
    dst = tmp_path / "dst.ome.zarr"
    proc = subprocess.run([str(cli_binary()), "convert", str(src), str(dst), "--pyramid", "2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert kept_ome(dst) == kept_ome(src)
    assert transforms(dst) == transforms(src)[:2]


def test_convert_into_precomputed_gives_the_resolution_in_nanometres(tmp_path, rng):
    src = tmp_path / "acq.ome.zarr"
    write_image(src, rng, levels=1, ome=True)
    vol = tmp_path / "vol"
    tessera.convert(src, vol, format="precomputed", codec="none")
    info = json.loads((vol / "info").read_text())
    # x, y, z: micrometres * 1000.
    assert info["scales"][0]["resolution"] == [250.0, 500.0, 2000.0]


def test_convert_of_an_image_without_units_into_precomputed_keeps_the_default_resolution(tmp_path, rng):
    src = tmp_path / "plain.ome.zarr"
    write_image(src, rng, levels=1, ome=True, axes="c:channel,z:space,y:space,x:space")
    vol = tmp_path / "vol"
    tessera.convert(src, vol, format="precomputed", codec="none")
    assert json.loads((vol / "info").read_text())["scales"][0]["resolution"] == [1, 1, 1]


def test_convert_into_hdf5_carries_no_ome(tmp_path, rng):
    src = tmp_path / "acq.ome.zarr"
    data = write_image(src, rng, levels=1, ome=True)
    out = tmp_path / "a.h5"
    tessera.convert(src, out, codec="gzip")
    np.testing.assert_array_equal(tessera.open(out)[...], data)


def test_convert_of_an_ome_zarr_04_image_keeps_axes_scale_translation_and_omero(tmp_path, rng):
    from ome_zarr_models.v05.image import Image

    g = zarr.open_group(str(tmp_path / "v2.zarr"), mode="w", zarr_format=2)
    data = rng.integers(0, 1000, size=(2, 16, 12), dtype="uint16")
    g.create_array("0", shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype, compressors=None)[...] = data
    axes = [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"}]
    level0 = [{"type": "scale", "scale": [1.0, 0.5, 0.5]}, {"type": "translation", "translation": [0.0, 3.0, 4.0]}]
    g.attrs["multiscales"] = [{"version": "0.4", "axes": axes, "datasets": [{"path": "0", "coordinateTransformations": level0}]}]
    g.attrs["omero"] = OMERO
    dst = tmp_path / "v3.ome.zarr"
    tessera.convert(tmp_path / "v2.zarr", dst, codec="zstd")
    assert kept_ome(dst) == {"axes": axes, "level0": level0, "omero": OMERO}
    Image.from_zarr(zarr.open_group(str(dst), mode="r"))
    np.testing.assert_array_equal(zarr.open_array(str(dst / "0"), mode="r")[...], data)
