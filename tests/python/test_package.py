"""The installed package: version, public names, shipped type information."""

from __future__ import annotations

import re
from pathlib import Path

import tessera


def test_version_matches_the_project():
    root = Path(__file__).resolve().parents[2]
    declared = re.search(r"project\(tessera\s+VERSION\s+([0-9.]+)", (root / "CMakeLists.txt").read_text()).group(1)
    assert tessera.__version__ == declared


def test_public_names():
    for name in tessera.__all__:
        assert hasattr(tessera, name), name
    assert callable(tessera.open) and callable(tessera.create)


def test_stubs_and_py_typed_ship_with_the_package():
    pkg = Path(tessera.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = (pkg / "_tessera.pyi").read_text()
    # The stub describes the real signatures (generated from the extension by nanobind's stubgen).
    assert "class Array" in stub and "class Stream" in stub and "class StreamStats" in stub
    assert re.search(r"def open\(location: str \| os\.PathLike\[str\], mode: str = 'r', \*, "
                     r"format: str \| None = None", stub)
    assert "class Transaction" in stub
    assert re.search(r"def __setitem__\(self, key: (typing\.)?Any, value: (typing\.)?Any, /\)", stub)
    assert "def create(" in stub and "shard_chunks:" in stub and "-> Stream" in stub
    assert re.search(r"def append\(self, data: (typing\.)?Any, /\) -> None", stub)
    assert re.search(r"def dtype\(self(, /)?\) -> numpy\.dtype", stub)


def test_error_hierarchy():
    assert issubclass(tessera.InvalidArgumentError, (tessera.Error, ValueError))
    assert issubclass(tessera.InvalidArgumentError, ValueError)
    assert issubclass(tessera.OutOfRangeError, IndexError)
    assert issubclass(tessera.NotFoundError, FileNotFoundError)
    assert issubclass(tessera.IoError, OSError)
    assert issubclass(tessera.UnsupportedError, NotImplementedError)
    assert issubclass(tessera.OutOfResourcesError, MemoryError)
    assert issubclass(tessera.FailedPreconditionError, RuntimeError)
    assert issubclass(tessera.AlreadyExistsError, FileExistsError)
    for cls in (tessera.InvalidArgumentError, tessera.OutOfRangeError, tessera.NotFoundError,
                tessera.CorruptDataError, tessera.IoError, tessera.UnsupportedError,
                tessera.OutOfResourcesError, tessera.FailedPreconditionError, tessera.AlreadyExistsError):
        assert issubclass(cls, tessera.Error)


def test_classes_cannot_be_constructed_directly():
    import pytest

    with pytest.raises(TypeError, match="Array: no constructor"):
        tessera.Array()
    with pytest.raises(TypeError, match="Stream: no constructor"):
        tessera.Stream()
