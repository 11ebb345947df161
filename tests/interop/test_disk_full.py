"""A real full disk: a 2 MiB tmpfs mounted for the test, streams of every format that do not fit.
Each must end with a clear error naming the file and "No space left on device", keep of the new
array exactly what it published (what a crash at that moment would leave: a Zarr array of the rows
stored, a precomputed volume's info and complete files; HDF5, written at close: no new file),
remove its temporary files, and lose nothing that was there before (another file, and for HDF5
the previous file at the same path, which --overwrite replaces only with a complete one). Needs root (mount), as CI and the
test command run: skipped, saying so, for other users; a failing mount as root is a failure."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from interop_support import assert_cli_error

DISK_BYTES = 2 << 20
FRAME = (64, 128)  # uint16: 16 KiB a frame
FRAMES = 256       # 4 MiB of noise: twice the disk


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(disk)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:  # as root (CI) this must work: a failure, never a silent skip
        pytest.fail(f"mount -t tmpfs failed as root: {proc.stderr.decode(errors='replace').strip()}", pytrace=False)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def noise() -> np.ndarray:
    return np.random.default_rng(11).integers(0, 65535, size=(FRAMES, *FRAME), dtype=np.uint16)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


CASES = {
    "zarr3": ["--format", "zarr3", "--chunk", "8,64,64", "--shard-chunks", "2,1,2", "--codec", "none"],
    "zarr3-unbounded": ["--format", "zarr3", "--chunk", "8,64,64", "--codec", "none", "--unbounded"],
    "precomputed": ["--format", "precomputed", "--chunk", "8,64,64"],
    "precomputed-sharded": ["--format", "precomputed", "--chunk", "8,32,32", "--shard-chunks", "2,2,2"],
    "hdf5": ["--format", "hdf5", "--chunk", "8,64,64"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_full_disk_leaves_a_clear_error_and_nothing_lost(tessera, small_disk, tmp_path, case):
    import tessera as tessera_py

    options = list(CASES[case])
    shape = [FRAMES, *FRAME]
    if "--unbounded" in options:
        options.remove("--unbounded")
        shape[0] = 0
    target = small_disk / ("out.h5" if case == "hdf5" else "out")
    (small_disk / "keep.txt").write_text("written before the stream\n")
    previous = None
    if case == "hdf5":  # a previous file at the same path, which a failed stream must leave alone
        previous = np.arange(4 * 8, dtype=np.uint16).reshape(4, 8)
        with tessera_py.create(str(target), dtype="uint16", shape=previous.shape) as w:
            w.append(previous)
    before = snapshot(small_disk)

    raw = tmp_path / "frames.raw"
    raw.write_bytes(noise().tobytes())
    overwrite = ["--overwrite"] if previous is not None else []
    proc = tessera.run(["stream", target, "--dtype", "uint16", "--shape", ",".join(map(str, shape)), *options,
                        *overwrite, "--threads", "2", "--input", raw])
    err = assert_cli_error(proc, "I/O error", "No space left on device")
    assert str(small_disk) in err, f"the error does not name the file: {err!r}"

    after = snapshot(small_disk)
    for name, data in before.items():
        assert after.get(name) == data, f"{name} was lost or changed by the failed stream"
    temps = [n for n in after if ".tmp." in n or "tessera-tmp" in n]
    assert not temps, f"temporary files left: {temps}"
    if previous is not None:
        np.testing.assert_array_equal(tessera_py.open(str(target))[...], previous)
    elif case.startswith("zarr3"):  # the rows it published, exactly
        kept = tessera_py.open(str(target))
        np.testing.assert_array_equal(kept[...], noise()[:kept.shape[0]])
    else:  # the volume's info, as a finished stream writes it; its fixed shape
        assert tessera_py.open(str(target)).shape == tuple(shape)


def test_full_disk_from_python_raises_an_oserror_naming_the_file(small_disk):
    import tessera as tessera_py

    target = small_disk / "py.zarr"
    frames = noise()
    with pytest.raises(OSError, match="No space left on device") as caught:
        with tessera_py.create(str(target), dtype="uint16", shape=(0, *FRAME), chunks=(8, 64, 64),
                               codec="none", threads=2) as w:
            for frame in frames:
                w.append(frame[None])
    assert str(small_disk) in str(caught.value)
    assert isinstance(caught.value, tessera_py.Error)
    kept = tessera_py.open(str(target))  # the rows it published, exactly
    np.testing.assert_array_equal(kept[...], frames[:kept.shape[0]])
