"""What the HDF5 virtual dataset tests share: the element types they write and the check that tessera
reads a dataset as h5py reads it, whole and in random strided selections."""

from __future__ import annotations

import h5py

import tessera as ts
from interop_support import assert_identical

DTYPES = ["int8", "uint16", "int32", "float32", "float64", ">i4", ">f8"]


def random_selection(rng, shape):
    sel = []
    for n in shape:
        start = int(rng.integers(0, n))
        stop = int(rng.integers(start + 1, n + 1))
        sel.append(slice(start, stop, int(rng.integers(1, 4))))
    return tuple(sel)


def compare(path, name, rng, selections=8, **open_options):
    """Checks that tessera reads dataset NAME of PATH as h5py does, whole and in SELECTIONS random
    selections; returns h5py's whole read. OPEN_OPTIONS go to tessera.open."""
    with h5py.File(path, "r") as f:
        expected = f[name][()]
        picks = [random_selection(rng, expected.shape) for _ in range(selections)]
        expected_picks = [f[name][s] for s in picks]
    a = ts.open(path, dataset=name, **open_options)
    assert a.shape == expected.shape
    assert_identical(a[...], expected.astype(expected.dtype.newbyteorder("=")), f"{path}:{name}")
    for s, e in zip(picks, expected_picks):
        assert_identical(a[s], e.astype(e.dtype.newbyteorder("=")), f"{path}:{name}[{s}]")
    return expected
