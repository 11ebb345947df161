"""The GIL is released while tessera works, and one Array serves several reading threads."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tessera
from conftest import random_array, write_array


class Counter(threading.Thread):
    """Counts as fast as pure Python can while the test's main thread is inside tessera."""

    def __init__(self):
        super().__init__(daemon=True)
        self.count = 0
        self.stop = False

    def run(self):
        while not self.stop:
            self.count += 1


def counted(call):
    """Runs CALL in this thread while a Counter runs; returns (counter increments, seconds)."""
    c = Counter()
    c.start()
    time.sleep(0.05)  # let it get going
    before = c.count
    t0 = time.perf_counter()
    call()
    seconds = time.perf_counter() - t0
    during = c.count - before
    c.stop = True
    c.join()
    return during, seconds


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    rng = np.random.default_rng(7)
    # compressible but not trivial: 32 MiB of camera-like uint16
    base = rng.integers(100, 140, size=(1, 512, 1024), dtype=np.uint16)
    data = np.ascontiguousarray(np.broadcast_to(base, (32, 512, 1024)) + np.arange(32, dtype=np.uint16)[:, None, None])
    return data, tmp_path_factory.mktemp("gil")


def test_append_releases_the_gil(big):
    data, root = big
    w = tessera.create(root / "a.zarr", dtype="uint16", shape=(0, 512, 1024), chunks=(16, 256, 256),
                       shard_chunks=(1, 2, 2), codec="zstd", level=1, threads=2)
    during, seconds = counted(lambda: (w.append(data), w.close()))
    print(f"append: {during} increments in {seconds:.3f} s")
    # A Python thread holding no lock runs ~10^6-10^7 increments a second; with the GIL held for
    # the whole call it would get none (at most a few before the call took it).
    assert seconds > 0.05, "the append was too short to say anything"
    assert during > 10_000 * seconds, (during, seconds)


def test_read_releases_the_gil(big):
    data, root = big
    if not (root / "a.zarr" / "zarr.json").exists():
        write_array(root / "a.zarr", data, chunks=(16, 256, 256), shard_chunks=(1, 2, 2), codec="zstd")
    a = tessera.open(root / "a.zarr")
    result = {}
    during, seconds = counted(lambda: result.setdefault("x", a[...]))
    print(f"read: {during} increments in {seconds:.3f} s")
    np.testing.assert_array_equal(result["x"], data)
    assert seconds > 0.02, "the read was too short to say anything"
    assert during > 10_000 * seconds, (during, seconds)


def test_many_threads_read_one_array(tmp_path):
    rng = np.random.default_rng(99)
    data = random_array(rng, "float32", (40, 50, 30))
    write_array(tmp_path / "a.zarr", data, chunks=(8, 16, 8), shard_chunks=(2, 2, 2))
    a = tessera.open(tmp_path / "a.zarr")
    errors = []

    def reader(seed):
        r = np.random.default_rng(seed)
        try:
            for _ in range(40):
                key = tuple(slice(int(r.integers(0, n)), None, int(r.choice([1, 2, -1, -3]))) for n in data.shape)
                got = a[key]
                if not np.array_equal(got, data[key]):
                    errors.append(f"mismatch for {key}")
                out = np.empty(data.shape[1:], np.float32)
                i = int(r.integers(0, data.shape[0]))
                a.read((i,), out=out)
                if not np.array_equal(out, data[i]):
                    errors.append(f"mismatch for row {i}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_two_threads_appending_to_one_stream_are_serialized(tmp_path):
    frames = np.arange(2 * 40 * 16, dtype=np.uint32).reshape(80, 16)
    w = tessera.create(tmp_path / "a.zarr", dtype="uint32", shape=(0, 16), chunks=(8, 16))
    barrier = threading.Barrier(2)

    def producer(part):
        barrier.wait()
        for f in part:
            w.append(f)

    # each thread appends whole frames; frames interleave but are never torn
    threads = [threading.Thread(target=producer, args=(frames[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    got = tessera.open(tmp_path / "a.zarr")[...]
    assert got.shape == frames.shape
    assert sorted(map(tuple, got)) == sorted(map(tuple, frames))
