"""No memory grows with the number of arrays opened, read and closed (or streams run)."""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import tessera
from conftest import random_array, write_array


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def assert_rss_flat(cycle, warmup: int, cycles: int, what: str) -> None:
    """Runs cycle(i) `warmup` times (allocator pools, caches, first-use imports), then `cycles`
    times more; resident memory may grow by less than 20 MiB over the second batch."""
    for i in range(warmup):
        cycle(i)
    gc.collect()
    before = rss_mib()
    for i in range(cycles):
        cycle(i)
    gc.collect()
    growth = rss_mib() - before
    print(f"RSS {before:.1f} MiB -> +{growth:.2f} MiB over {cycles} cycles")
    assert growth < 20, f"RSS grew {growth:.1f} MiB over {cycles} {what} cycles"


def test_open_read_close_cycles(tmp_path):
    rng = np.random.default_rng(5)
    data = random_array(rng, "uint16", (32, 64, 64))
    write_array(tmp_path / "a.zarr", data, chunks=(8, 32, 32), shard_chunks=(2, 2, 2))
    write_array(tmp_path / "a.h5", data, chunks=(8, 32, 32), codec="gzip")
    out = np.empty((16, 32, 64), np.uint16)

    def cycle(i):
        loc = tmp_path / ("a.zarr" if i % 2 else "a.h5")
        with tessera.open(loc) as a:
            x = a[i % 32, ::3, ::-5]
            a.read((slice(8, 24), slice(0, 32)), out=out)
            _ = a.metadata, a.shape, a.dtype, repr(a)
        assert x.shape == (22, 13)
        with pytest.raises(tessera.FailedPreconditionError, match="closed"):
            a[0]

    assert_rss_flat(cycle, 100, 1000, "open/read/close")
    np.testing.assert_array_equal(out, data[8:24, 0:32])


def test_create_append_close_cycles(tmp_path):
    frame = np.ones((32, 32), np.uint8)

    def cycle(i):
        with tessera.create(tmp_path / f"s{i % 3}.zarr", dtype="uint8", shape=(0, 32, 32), chunks=(4, 16, 16),
                            threads=1, mode="w") as w:  # each cycle replaces an array of three
            for _ in range(5):
                w.append(frame)
        with pytest.raises(tessera.NotFoundError, match="missing.zarr"):
            tessera.open(tmp_path / "missing.zarr")

    assert_rss_flat(cycle, 30, 300, "create/append/close")
