"""Scale-out on Dask: many processes writing one tessera array, and tessera arrays as Dask arrays.

Shards are the unit of independence. :func:`to_store` rechunks a Dask array to whole shards, so
every task owns whole shards and writes each exactly once (no read-modify-write, no locks)::

    import dask.array as da
    import tessera.dask

    x = da.from_zarr("big_input.zarr")                       # any Dask array
    tessera.dask.to_store(x, "s3://lab/volume.zarr", chunks=(64, 64, 64),
                          shard_chunks=(4, 4, 4), codec="zstd", pyramid=4)
    y = tessera.dask.from_store("s3://lab/volume.zarr")      # chunks = shards

How it runs: the client writes every level's metadata first (zarr.json of each level, the
precomputed info). Each task encodes its region's shards through the same pipeline as a single
stream, and reduces its region down the pyramid as far as the region covers whole shards of each
lower level. The levels no region covered run as further, smaller waves that read back the last
complete level. Finally the client publishes the OME-Zarr group. A failed run removes the metadata
it wrote, so nothing is left looking valid. The files are byte-identical to one
``tessera.create(...).append(x)`` of the same array.

Works with any Dask scheduler; on a ``distributed`` cluster every worker needs tessera installed
and access to the location (a shared filesystem, or the same S3 bucket and credentials).
"""

from __future__ import annotations

import math
import threading

import dask
import dask.array as da
import numpy as np

from . import InvalidArgumentError, _codec_chosen, _conversion_spec, _same_location, _tessera, open as _open

__all__ = ["to_store", "from_store", "convert"]

# A task's region is grown (in whole shards) to cover more pyramid levels while it stays below
# this many bytes (or the input's own chunk, when that is larger).
_REGION_BYTES = 256 << 20


def _region_shape(input_chunks, itemsize, levels, factors):
    """Per dimension, the region a task writes: a multiple of level 0's shard shape at least as
    large as the input's chunks, grown to cover whole shards of lower levels while it fits."""
    shape = levels[0]["shape"]
    shard = levels[0]["shard_shape"]
    region = [max(1, -(-c // s)) * s for c, s in zip(input_chunks, shard)]
    region = [min(r, -(-n // s) * s) for r, n, s in zip(region, shape, shard)]
    budget = max(_REGION_BYTES, itemsize * math.prod(region))
    scale = [1] * len(shape)
    for level in levels[1:]:
        scale = [a * f for a, f in zip(scale, factors)]
        wanted = [math.lcm(r, a * s) for r, a, s in zip(region, scale, level["shard_shape"])]
        wanted = [min(w, -(-n // r) * r) for w, n, r in zip(wanted, shape, region)]
        if itemsize * math.prod(wanted) > budget:
            break
        region = wanted
    return region


def _write_block(block, location, kwargs, block_info=None):
    origin = [start for start, _ in block_info[0]["array-location"]]
    last = _tessera._shared_write(location, kwargs, 0, origin, np.ascontiguousarray(block))
    return np.full((1,) * block.ndim, last, dtype=np.int64)


_opened = {}  # per process: (location, open arguments) -> the open tessera.Array


def _open_cached(location, **open_kwargs):
    key = (str(location), tuple(sorted(open_kwargs.items())))
    if key not in _opened:
        _opened[key] = _open(location, **open_kwargs)
    return _opened[key]


_scratch = threading.local()  # per thread: the last region's buffer, reused by the next of its shape


def _read(location, open_kwargs, origin, shape):
    """A region of the source, read into this thread's scratch buffer (memory the process has
    touched already is much cheaper than fresh pages); valid until the thread's next read."""
    source = _open_cached(location, **open_kwargs)
    shape = tuple(shape)
    out = getattr(_scratch, "array", None)
    if out is None or out.shape != shape or out.dtype != source.dtype:
        _scratch.array = out = None  # free the old one first
        out = _scratch.array = np.empty(shape, dtype=source.dtype)
    source.read(tuple(slice(o, o + n) for o, n in zip(origin, shape)), out=out)
    return out


def _write_wave(location, kwargs, level, level_info, origin, shape):
    data = _read(level_info["location"], {"level": level_info["open_level"]}, origin, shape)
    return _tessera._shared_write(location, kwargs, level, origin, data, False)


def _convert_region(src, open_kwargs, location, kwargs, origin, shape):
    data = _read(src, open_kwargs, origin, shape)
    return _tessera._shared_write(location, kwargs, 0, origin, data)


def _finish(location, kwargs, levels, complete):
    """After the first wave (every level <= complete written): the waves of the levels above, then
    the OME-Zarr group."""
    while complete + 1 < len(levels):
        regions = _tessera._shared_regions(location, kwargs, complete)
        tasks = [dask.delayed(_write_wave, pure=False)(location, kwargs, complete, levels[complete], o, s)
                 for o, s in regions]
        complete = min(dask.compute(*tasks))
    _tessera._shared_finish(location, kwargs)


def to_store(darr, location, *, format=None, threads=1, **options):
    """Writes the Dask array ``darr`` as a new array at ``location``; returns nothing.

    ``format`` and ``options`` are those of :func:`tessera.create` (chunks, shard_chunks, codec,
    level, fill_value, dimension_names, attributes, pyramid, downsample, axes, voxel_size,
    translation, ome, and the per-format options); dtype and shape come from ``darr``, which may
    have any chunking.
    ``threads``: compression threads per task (default 1: Dask runs the tasks in parallel).
    Formats: zarr3 and precomputed (identity-hash shards); an HDF5 file cannot be written by many
    processes at once (use :func:`tessera.convert`).
    """
    kwargs = dict(options, dtype=np.dtype(darr.dtype), shape=tuple(int(n) for n in darr.shape), threads=threads)
    kwargs["format"] = _tessera._format_of(location, format)
    location = str(location)
    info = _tessera._shared_create(location, kwargs)
    try:
        levels = info["levels"]
        region = _region_shape([max(c) for c in darr.chunks], np.dtype(darr.dtype).itemsize, levels, info["factors"])
        chunks = tuple(tuple(min(r, n - s) for s in range(0, n, r)) for r, n in zip(region, darr.shape))
        blocks = darr.rechunk(chunks)
        lasts = blocks.map_blocks(_write_block, location, kwargs, dtype=np.int64,
                                  chunks=tuple((1,) * n for n in blocks.numblocks),
                                  name="tessera-write-" + dask.base.tokenize(location, kwargs, darr.name))
        _finish(location, kwargs, levels, int(lasts.min().compute()))
    except BaseException:
        _tessera._shared_abandon(location, kwargs)
        raise


class _StoreReader:
    """A picklable array-like over a tessera array, opened once per process."""

    def __init__(self, location, open_kwargs, shape, dtype):
        self.location = location
        self.open_kwargs = open_kwargs
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self._array = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_array"} | {"_array": None}

    def __getitem__(self, key):
        if self._array is None:
            self._array = _open(self.location, **self.open_kwargs)
        return self._array[key]


def from_store(location, *, dataset=None, level=0, chunks=None):
    """A Dask array reading the tessera array at ``location`` (any format and store tessera reads).

    ``chunks``: the Dask chunk shape; default: the array's shards (the chunks, unsharded) grown
    along dimension 0 to about 64 MiB, so that each task reads whole shards. ``dataset`` (HDF5) and
    ``level`` (OME-Zarr level or precomputed scale) select as :func:`tessera.open` does.
    """
    open_kwargs = {"level": level}
    if dataset is not None:
        open_kwargs["dataset"] = dataset
    array = _open(location, **open_kwargs)
    if chunks is None:
        unit = list(array.shards or array.chunks)
        unit = [min(u, n) for u, n in zip(unit, array.shape)]
        row = array.dtype.itemsize * math.prod(unit[1:])
        unit[0] = max(unit[0], min(array.shape[0], ((64 << 20) // max(row, 1)) // unit[0] * unit[0]))
        chunks = tuple(unit)
    reader = _StoreReader(str(location), open_kwargs, tuple(array.shape), array.dtype)
    return da.from_array(reader, chunks=chunks, lock=False, asarray=False, fancy=False,
                         meta=np.empty((0,) * array.ndim, dtype=array.dtype),
                         name="tessera-" + dask.base.tokenize(str(location), open_kwargs, chunks))


def convert(src, dst, *, dataset=None, source_level=0, format=None, threads=1, **options):
    """:func:`tessera.convert` as a Dask graph: every task reads its own region of ``src`` (through
    tessera, touching only what it needs) and writes that region's shards of ``dst``, so no array
    data moves between workers. Regions are whole destination shards, grown to whole source chunks
    where that fits (no source chunk is decoded twice). Arguments as :func:`tessera.convert` takes
    them (the source's chunking, codec, ... are the defaults); ``threads``: compression threads per
    task. Formats written: zarr3 and precomputed.
    """
    open_kwargs = {"level": source_level}
    if dataset is not None:
        open_kwargs["dataset"] = dataset
    source = _open(src, **open_kwargs)
    if options.get("mode", "w-") not in ("w-", "x") and _same_location(source.location, dst):
        raise InvalidArgumentError(f"converting {dst} into itself (mode {options['mode']}) would change what it reads")
    fmt = _tessera._format_of(dst, format)
    spec = _conversion_spec(_tessera._conversion_defaults(source, fmt, _codec_chosen(options)), options)
    kwargs = dict(options, spec=spec, format=fmt, threads=threads)
    location = str(dst)
    info = _tessera._shared_create(location, kwargs)
    try:
        levels = info["levels"]
        shard = levels[0]["shard_shape"]
        item = source.dtype.itemsize
        unit = [math.lcm(s, min(c, n)) for s, c, n in zip(shard, source.shards or source.chunks, source.shape)]
        if item * math.prod(unit) > _REGION_BYTES:
            unit = list(shard)
        region = _region_shape(unit, item, levels, info["factors"])
        tasks = []
        for index in np.ndindex(*[-(-n // r) for n, r in zip(source.shape, region)]):
            origin = [i * r for i, r in zip(index, region)]
            shape = [min(r, n - o) for r, n, o in zip(region, source.shape, origin)]
            tasks.append(dask.delayed(_convert_region, pure=False)(str(src), open_kwargs, location, kwargs, origin, shape))
        _finish(location, kwargs, levels, min(dask.compute(*tasks)))
    except BaseException:
        _tessera._shared_abandon(location, kwargs)
        raise
