"""Fixtures for the tests of the tessera Python package.

These tests import the INSTALLED package (`pip install .` puts it into the environment's
site-packages), never the sources under python/: a test run against the source tree would
not load the extension module anyway, and would hide packaging mistakes (a missing .pyi, a
Python file not shipped).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tests"))  # tests/device_support.py, tests/s3_support.py


def pytest_configure(config):
    try:
        import tessera
    except ImportError as e:
        raise pytest.UsageError(
            f"the tessera package is not installed ({e}); install it first: "
            f"{REPO_ROOT}/.venv/bin/pip install --no-build-isolation {REPO_ROOT}") from e
    where = Path(tessera.__file__).resolve()
    if REPO_ROOT / "python" in where.parents:
        raise pytest.UsageError(f"tessera was imported from the source tree ({where}), not from an installed "
                                f"package: remove python/ from sys.path / PYTHONPATH")


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's id, so each test's data is fixed across runs."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.nodeid)) % (2**32)
    return np.random.default_rng(seed)


ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]


def random_array(rng: np.random.Generator, dtype, shape) -> np.ndarray:
    """Random values covering the dtype's range (ints: all of it; floats: normal; bool: coin flips)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 1000).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    raise ValueError(dtype)


def write_array(location, data: np.ndarray, **kwargs) -> None:
    """Streams DATA (all rows at once) into a new array at LOCATION with tessera.create(**kwargs)."""
    import tessera

    kwargs.setdefault("shape", data.shape)
    kwargs.setdefault("threads", 2)
    with tessera.create(location, dtype=data.dtype, **kwargs) as w:
        w.append(data)


def trailing_row_pieces(data: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """data split, in C order, into pieces of shape (k, *data.shape[j+1:]) with j and k random
    (j = 0: whole frames; k <= data.shape[j] for j >= 1), each a view of the next elements."""
    flat = data.reshape(-1)
    shape = data.shape
    pieces, offset = [], 0
    while offset < flat.size:
        j = int(rng.integers(0, len(shape)))
        sub = math.prod(shape[j + 1:])
        while offset % sub:  # a piece starts at a whole row of its sub-shape
            j += 1
            sub = math.prod(shape[j + 1:])
        most = 3 if j == 0 else shape[j]
        k = min(int(rng.integers(1, most + 1)), (flat.size - offset) // sub)
        pieces.append(flat[offset:offset + k * sub].reshape((k,) + shape[j + 1:]))
        offset += k * sub
    return pieces
