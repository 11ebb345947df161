"""append never keeps a pointer into the caller's array after it returns (README "Python": "It
blocks while the pipeline is busy (backpressure) and never keeps a pointer into the array after it
returns").

The caller's array is overwritten (or freed and its memory reused) right after each append returns,
while the pipeline is still compressing and storing earlier rows; what is stored must be what the
array held during the call. Every format, several threads, frames that fill the pipeline. The check
itself is shown to catch a stream that reads the caller's memory after append returns: a stand-in
that defers its appends to close fails it.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tessera

SEED = 0xA11_0C8
FORMATS = {
    "zarr3": ("a.zarr", dict(chunks=(4, 32, 32), shard_chunks=(2, 2, 2), codec="zstd", level=1)),
    "zarr3-unsharded": ("a.zarr", dict(chunks=(3, 40, 24), codec="blosc-lz4")),
    "hdf5": ("a.h5", dict(chunks=(4, 32, 32), codec="gzip", level=1, shuffle=True)),
    "precomputed": ("vol", dict(format="precomputed", chunks=(4, 32, 32), shard_chunks=(2, 2, 2))),
}
GARBAGE = 0xDEAD


def frames_for(n: int, shape=(96, 80)) -> np.ndarray:
    """N distinct uint16 frames (every one differs from every other and from GARBAGE)."""
    rng = np.random.default_rng([SEED, n, *shape])
    frames = rng.integers(0, 50_000, size=(n, *shape), dtype=np.uint16)
    frames[:, 0, 0] = np.arange(n, dtype=np.uint16)  # unique per frame even if the draw were not
    return frames


class DeferredAppend:
    """A stream that keeps the caller's arrays and appends them only at close: the behaviour the
    tests must catch (append returning before it has consumed the data)."""

    def __init__(self, stream):
        self.stream, self.kept = stream, []

    def append(self, data):
        self.kept.append(data)  # a reference, not a copy

    def close(self):
        for data in self.kept:
            self.stream.append(data)
        self.stream.close()


def create(tmp_path, layout: str, frames: np.ndarray, threads: int = 2):
    name, options = FORMATS[layout]
    location = tmp_path / name
    shape = frames.shape if layout == "precomputed" else (0, *frames.shape[1:])  # precomputed: bounded
    return location, tessera.create(location, dtype=frames.dtype, shape=shape, threads=threads, **options)


def append_then_scribble(stream, frames: np.ndarray, rng) -> None:
    """Each frame (or a few) in a fresh array, overwritten as soon as append returns, then freed."""
    i = 0
    while i < len(frames):
        n = int(rng.integers(1, 4))
        mine = frames[i:i + n].copy()
        stream.append(mine[0] if n == 1 else mine)
        mine[...] = GARBAGE
        del mine
        i += n
    gc.collect()


def reuse_one_buffer(stream, frames: np.ndarray) -> None:
    """Camera software: one frame buffer, refilled with the next frame after each append."""
    buf = np.empty_like(frames[0])
    for frame in frames:
        buf[...] = frame
        stream.append(buf)
    buf[...] = GARBAGE


def check_stored(location, frames: np.ndarray, how: str) -> None:
    got = tessera.open(location)[...]
    assert got.shape == frames.shape, f"{how}: stored shape {got.shape}, appended {frames.shape}"
    wrong = np.flatnonzero((got != frames).any(axis=tuple(range(1, frames.ndim))))
    assert wrong.size == 0, (
        f"{how}: {wrong.size} of {len(frames)} stored frames differ from what the array held during "
        f"append (first: frame {wrong[:5].tolist()}; frame {wrong[0]} holds "
        f"{np.unique(got[wrong[0]])[:4].tolist()}..., e.g. {GARBAGE} is what was written after append returned)")


@pytest.mark.parametrize("layout", list(FORMATS))
def test_overwriting_the_array_after_append_returns_changes_nothing_stored(tmp_path, layout):
    frames = frames_for(64)
    location, stream = create(tmp_path, layout, frames)
    append_then_scribble(stream, frames, np.random.default_rng([SEED, 1]))
    stream.close()
    check_stored(location, frames, f"{layout}, arrays overwritten after append")


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("layout", list(FORMATS))
def test_one_buffer_reused_for_every_frame(tmp_path, layout, threads):
    """A bigger stream than the pipeline holds at once (hundreds of frames, ~10 MiB), one buffer."""
    frames = frames_for(320, shape=(128, 128))
    location, stream = create(tmp_path, layout, frames, threads=threads)
    reuse_one_buffer(stream, frames)
    stream.close()
    check_stored(location, frames, f"{layout}, one buffer reused, threads={threads}")


@pytest.mark.parametrize("fill", [append_then_scribble, reuse_one_buffer], ids=["scribble", "reuse"])
def test_the_check_catches_a_stream_that_reads_the_array_after_append(tmp_path, fill):
    frames = frames_for(64)
    location, stream = create(tmp_path, "zarr3", frames)
    deferred = DeferredAppend(stream)
    if fill is append_then_scribble:
        fill(deferred, frames, np.random.default_rng([SEED, 1]))
    else:
        fill(deferred, frames)
    deferred.close()
    with pytest.raises(AssertionError, match="stored frames differ"):
        check_stored(location, frames, "deferred appends")
