"""tessera: chunked, compressed, sharded N-dimensional arrays.

Read any Zarr v3 array, Neuroglancer precomputed volume or HDF5 dataset with numpy indexing,
touching only the chunks a selection needs::

    import tessera
    a = tessera.open("volume.zarr")
    block = a[5, 10:-10:3, ::-1]          # a numpy array, as numpy would index it

Stream frames into any of those formats with bounded memory::

    with tessera.create("out.zarr", dtype="uint16", shape=(0, 2048, 2048),
                        chunks=(32, 256, 256), shard_chunks=(1, 4, 4), codec="zstd") as w:
        for frame in frames:
            w.append(frame)                # zero-copy; blocks while the pipeline is busy

Errors are :class:`tessera.Error` subclasses that are also the matching built-in exceptions
(``InvalidArgumentError`` is a ``ValueError``, ``NotFoundError`` a ``FileNotFoundError``, ...).
"""

from __future__ import annotations

from . import _errors
from ._errors import *  # noqa: F403  (the tessera.Error hierarchy; _errors.__all__ lists it)
from ._tessera import VERSION as __version__
from ._tessera import Array, Stream, StreamStats, create, open

__all__ = ["Array", "Stream", "StreamStats", "open", "create", "__version__", *_errors.__all__]
