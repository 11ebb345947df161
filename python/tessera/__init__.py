"""tessera: chunked, compressed, sharded N-dimensional arrays.

Read any Zarr v3 array, Neuroglancer precomputed volume or HDF5 dataset with numpy indexing,
touching only the chunks a selection needs::

    import tessera
    a = tessera.open("volume.zarr")
    block = a[5, 10:-10:3, ::-1]          # a numpy array, as numpy would index it

Change an existing Zarr or precomputed array in place: write any region, resize, batch writes::

    a = tessera.open("volume.zarr", mode="r+")
    a[0:64, 100, ::-1] = 7                # numpy broadcasting and casting; shards rewritten atomically
    with a.transaction() as t:            # stored together on a clean exit, each shard once
        t[0] = frame0
        t[1] = frame1

Stream frames into any of those formats with bounded memory::

    with tessera.create("out.zarr", dtype="uint16", shape=(0, 2048, 2048),
                        chunks=(32, 256, 256), shard_chunks=(1, 4, 4), codec="zstd") as w:
        for frame in frames:
            w.append(frame)                # zero-copy; blocks while the pipeline is busy

Convert any array tessera reads, or any array-like sliceable along dimension 0 (a numpy memmap,
an h5py dataset, a zarr array), into any format it writes::

    tessera.convert("acquisition.h5", "volume.zarr", pyramid="auto")

Scale out on Dask with :mod:`tessera.dask` (``to_store``, ``from_store``).

Errors are :class:`tessera.Error` subclasses that are also the matching built-in exceptions
(``InvalidArgumentError`` is a ``ValueError``, ``NotFoundError`` a ``FileNotFoundError``, ...).
"""

from __future__ import annotations

import os as _os
import sys as _sys
import time as _time
from concurrent.futures import ThreadPoolExecutor as _ThreadPoolExecutor

import numpy as _np

from . import _errors, _tessera
from ._errors import *  # noqa: F403  (the tessera.Error hierarchy; _errors.__all__ lists it)
from ._tessera import VERSION as __version__
from ._tessera import Acquisition, Array, Stream, StreamStats, Transaction, create, create_array, create_group, open

__all__ = ["Acquisition", "Array", "Stream", "StreamStats", "Transaction", "open", "create", "create_array", "create_group", "convert", "__version__", *_errors.__all__]

# Rows an array-like source is read in: about this many bytes, whole destination shard rows.
_SLAB_BYTES = 64 << 20


def _progress_function(progress):
    """None, a callable(bytes_done, bytes_total, seconds), or True: a line on stderr, redrawn at
    most twice a second. ``bytes_total`` None (an unbounded stream) shows no total or time left;
    the line ends when everything arrived, or at ``final=True`` (a stream's close)."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    last = [0.0]
    ended = [False]

    def line(done, total, seconds, final=False):
        final = final or (total is not None and done >= total)
        now = _time.monotonic()
        if ended[0] or (not final and now - last[0] < 0.5):
            return
        last[0] = now
        ended[0] = final
        rate = done / seconds / 1e9 if seconds > 0 else 0.0
        if total is None:
            text = f"{done / 1e9:.3f} GB  {rate:.2f} GB/s"
        else:
            left = seconds * (total - done) / done if done else 0.0
            text = f"{done / 1e9:.3f} / {total / 1e9:.3f} GB  {rate:.2f} GB/s  {left:.0f} s left"
        print(f"\r{text}   ", end="\n" if final else "", file=_sys.stderr, flush=True)

    return line


def _conversion_spec(spec, options):
    """The source's spec (its JSON form) without what belongs to a default the caller's options
    replace: a codec's level and blosc settings, the source's chunk codecs (a codec, level or
    blosc setting given), a
    precomputed encoding's block size, jpeg quality or png level, and, when
    ``shard_chunks=None`` asks for an unsharded array, the shards' index location and hash. The
    options themselves are laid over it by :func:`create` (an option given as None takes the
    field back to its default)."""
    spec = {k: dict(v) if isinstance(v, dict) else v for k, v in spec.items()}
    if "codec" in options and "level" not in options:
        spec.pop("level", None)
    if "codec" in options:  # blosc's settings belong to their codec too
        for setting in ("cname", "shuffle", "typesize", "blocksize"):
            if setting not in options:
                spec.get("zarr3", {}).pop(setting, None)
    if any(key in options for key in ("codec", "level", "cname", "shuffle", "typesize", "blocksize")):
        spec.get("zarr3", {}).pop("chunk_codecs", None)
    if "encoding" in options:  # a block size, quality or level belongs to its encoding
        for option, field in (("cseg_block", "cseg_block_xyz"), ("jpeg_quality", "jpeg_quality"),
                              ("png_level", "png_level")):
            if option not in options:
                spec.get("precomputed", {}).pop(field, None)
    if "shard_chunks" in options and options["shard_chunks"] is None:
        spec.get("zarr3", {}).pop("index_at_start", None)
        spec.get("precomputed", {}).pop("hash", None)
    return spec


def _codec_chosen(options):
    """Whether the caller of a conversion chose the codec (then a source codec the destination
    cannot write is replaced; otherwise it is an error naming it)."""
    return any(options.get(k) is not None
               for k in ("codec", "level", "encoding", "cname", "shuffle", "typesize", "blocksize"))


def _same_location(a, b):
    """Whether two locations name the same place (local paths compared after resolving them)."""
    a, b = _os.fspath(a), _os.fspath(b)
    if "://" in a or "://" in b:
        return a.rstrip("/") == b.rstrip("/")
    return _os.path.realpath(a) == _os.path.realpath(b)


def convert(src, dst, *, dataset=None, source_level=0, format=None, threads=0, progress=None, out_dataset=None,
            overwrite=False, storage_options=None, source_storage_options=None, hdf5_allowed_paths=None, **options):
    """Converts ``src`` into a new array at ``dst``, streaming with bounded memory; returns its StreamStats.

    ``src``: a location tessera reads (a Zarr v3 array or OME-Zarr image, a precomputed volume, an
    HDF5 file; local, ``s3://`` or ``http(s)://``), an open :class:`Array`, or any array-like with
    ``shape``, ``dtype`` and slicing along dimension 0 (a numpy memmap, an h5py dataset, a zarr
    array, tifffile's zarr store opened with zarr). ``dataset``: the HDF5 source's dataset;
    ``hdf5_allowed_paths``: the HDF5 source's, as :func:`open` takes it; ``source_level``: the
    OME-Zarr level or precomputed scale read.

    ``dst``, ``format`` and ``options``: as :func:`create` takes them (chunks, shard_chunks, codec,
    pyramid, ...); ``out_dataset``: the HDF5 destination's dataset path (``create``'s ``dataset``). A tessera source gives the defaults: its chunk shape, chunks per shard, codec and
    level, fill value, dimension names and attributes, where the destination's format holds them
    (else that format's default; a Zarr v3 source's chunk codecs as stored, whatever they are,
    unless ``codec``, ``level`` or a blosc setting is given: ``codec="blosc"`` with ``cname``,
    ``shuffle``, ``typesize``, ``blocksize`` as :func:`create` takes them); ``shard_chunks=None`` makes an unsharded array. An array-like
    source gives only its dtype and shape. The output is byte-identical to :func:`create` and
    ``append`` of the same values with the same options.

    Into a Zarr v3 or precomputed array of one level, a tessera source is copied region by
    region: whole destination shards, on ``threads`` workers that each read their region (only
    the source chunks it needs) and encode it, in memory of a few shards per worker whatever the
    array's cross-section; rows are published as every shard holding them is stored. Otherwise
    (pyramids, HDF5, array-likes) the source is read in slabs of whole destination shard rows, the
    next one while the current one is encoded. ``progress``: True prints bytes, GB/s and time left on stderr; a callable gets
    ``(bytes_done, bytes_total, seconds)``. ``threads``: compression (and decode) threads, 0: one
    per core.

    ``mode``: as :func:`create` takes it: 'w-' (default) raises AlreadyExistsError when anything
    exists at ``dst``; ``overwrite=True`` (or ``mode='w'``) replaces the array there. A source is
    never replaced by its own conversion.

    ``storage_options``: how to reach ``dst``'s object store (as :func:`open` takes them: endpoint_url,
    region, profile, addressing_style, anonymous, retry_timeout, access keys if you pass them);
    ``source_storage_options``: the source location's (default: ``storage_options``).
    """
    if overwrite:
        if options.get("mode", "w") != "w":
            raise ValueError(f"convert: overwrite=True and mode={options['mode']!r} disagree")
        options["mode"] = "w"
    if options.get("mode", "w-") not in ("w-", "x") and isinstance(src, (str, _os.PathLike, Array)):
        if _same_location(src.location if isinstance(src, Array) else src, dst):
            raise InvalidArgumentError(  # noqa: F405 (from _errors)
                f"converting {_os.fspath(dst)} into itself (mode {options['mode']}) would change what it reads")
    fmt = _tessera._format_of(dst, format)
    report = _progress_function(progress)
    if out_dataset is not None:
        options["dataset"] = out_dataset
    if storage_options is not None:
        options["storage_options"] = storage_options
    if source_storage_options is None:
        source_storage_options = storage_options
    if isinstance(src, Array) and (dataset is not None or source_level or hdf5_allowed_paths is not None):
        raise TypeError("convert: dataset, source_level and hdf5_allowed_paths select how tessera opens a source "
                        "location; an open Array was opened with its own")
    if isinstance(src, (str, _os.PathLike, Array)):
        array = src if isinstance(src, Array) else open(src, dataset=dataset, level=source_level,
                                                        storage_options=source_storage_options,
                                                        hdf5_allowed_paths=hdf5_allowed_paths)
        spec = _conversion_spec(_tessera._conversion_defaults(array, fmt, _codec_chosen(options)), options)
        return _tessera._convert(array, dst, dict(options, spec=spec, format=fmt, threads=threads), report)
    if dataset is not None or source_level:
        raise TypeError("convert: dataset and source_level select within a tessera source, not an array-like")
    if hdf5_allowed_paths is not None:
        raise TypeError("convert: hdf5_allowed_paths is for an HDF5 source tessera opens, not an array-like")
    shape = tuple(int(n) for n in src.shape)
    dtype = _np.dtype(src.dtype).newbyteorder("=")  # tessera stores little-endian; values are converted
    with create(dst, dtype=dtype, shape=shape, format=fmt, threads=threads, **options) as w:
        row_bytes = dtype.itemsize * int(_np.prod(shape[1:], dtype=_np.int64))
        shard_rows = w.chunks[0] * (w.shard_chunks[0] if w.shard_chunks else 1)
        rows = max(1, _SLAB_BYTES // max(row_bytes, 1)) // shard_rows * shard_rows or shard_rows
        total = shape[0] * row_bytes
        start_time = _time.monotonic()

        def read(first):
            return _np.ascontiguousarray(src[first:first + rows], dtype=dtype)

        with _ThreadPoolExecutor(1) as reader:  # the next slab is read while this one is appended
            pending = reader.submit(read, 0) if shape[0] else None
            for first in range(0, shape[0], rows):
                slab = pending.result()
                if first + rows < shape[0]:
                    pending = reader.submit(read, first + rows)
                if slab.shape != (min(rows, shape[0] - first),) + shape[1:]:
                    raise ValueError(f"convert: rows {first}..{first + rows} of the source have shape {slab.shape}")
                w.append(slab)
                if report:
                    report(min(shape[0], first + rows) * row_bytes, total, _time.monotonic() - start_time)
    return w.stats
