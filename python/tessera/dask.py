"""Scale-out on Dask: many processes writing one tessera array, and tessera arrays as Dask arrays.

Shards are the unit of independence. :func:`to_store` rechunks a Dask array to whole shards, so
every task owns whole shards and writes each exactly once (no read-modify-write, no locks)::

    import dask.array as da
    import tessera.dask

    x = da.from_zarr("big_input.zarr")                       # any Dask array
    tessera.dask.to_store(x, "s3://lab/volume.zarr", chunks=(64, 64, 64),
                          shard_chunks=(4, 4, 4), codec="zstd", pyramid=4)
    y = tessera.dask.from_store("s3://lab/volume.zarr")      # chunks = shards

How it runs (publish last): the client resolves the array, writes a job marker
(``<location>/.tessera-job``, a random token) and no metadata. Each task encodes its region's
shards through the same pipeline as a single stream (storing each shard only while the marker
holds its job's token), and reduces its region down the pyramid as far as the region covers whole
shards of each lower level. The levels no region covered run as further, smaller waves that read
the last complete level back by its spec (its metadata is not stored yet). When every task has
succeeded the client publishes the OME-Zarr group and each level's metadata (the order a stream
writes them) and removes the marker. The files are byte-identical to one
``tessera.create(...).append(x)`` of the same array.

On failure (a task failed after its ``retries``, the client interrupted): the client cancels the
tasks not yet run, removes the marker (running tasks stop before their next shard, with a "job
cancelled" error), waits for the running tasks to end (at most ``_STOP_WAIT_S`` seconds; it can see
the tasks of a ``distributed`` cluster and of the threaded scheduler, not of the processes one) and
raises the first error. Nothing is left that opens as an array (in tessera, zarr-python or
tensorstore): the shards already written are unreferenced, and :func:`cleanup` (or the next job
with ``mode="w"``) removes them. A client killed outright leaves the same plus its marker.

A task writing to a local path first checks that it sees the job's marker: a worker that does not
(its own file system, a private ``/tmp``) fails with an error saying the location is not shared
with the client, rather than writing shards nobody will find.

Store settings travel with the job: ``storage_options`` (endpoint, region, profile, ...; see
:func:`tessera.open`) is part of the graph, so workers need no S3 settings of their own.

Works with any Dask scheduler; on a ``distributed`` cluster every worker needs tessera installed
and access to the location (a shared filesystem, or the same S3 bucket; credentials from the
workers' environment or profile files unless ``storage_options`` carries them).
"""

from __future__ import annotations

import collections
import json
import math
import os
import secrets
import threading
import time

import dask
import dask.array as da
import numpy as np

from . import InvalidArgumentError, _codec_chosen, _conversion_spec, _same_location, _tessera, open as _open

__all__ = ["to_store", "from_store", "convert", "cleanup"]

# A task's region is grown (in whole shards) to cover more pyramid levels while it stays below
# this many bytes (or the input's own chunk, when that is larger).
_REGION_BYTES = 256 << 20

# After a failure, how long the client waits for the tasks still running to stop (each stops
# before its next shard; one shard may be in flight) before it raises anyway.
_STOP_WAIT_S = 60.0


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


_running = collections.Counter()  # per process: job token -> its tasks running here
_running_lock = threading.Lock()


class _TaskOf:
    """Counts a task of `job` as running in this process while it runs (the client waits for them
    to stop after a failure)."""

    def __init__(self, job):
        self.job = job

    def __enter__(self):
        with _running_lock:
            _running[self.job] += 1

    def __exit__(self, *exc):
        with _running_lock:
            _running[self.job] -= 1
            if _running[self.job] <= 0:
                del _running[self.job]


def _running_here(job):
    with _running_lock:
        return _running.get(job, 0)


def _write_block(block, location, kwargs, job, block_info=None):
    with _TaskOf(job):
        origin = [start for start, _ in block_info[0]["array-location"]]
        last = _tessera._shared_write(location, kwargs, 0, origin, np.ascontiguousarray(block), True, job)
    return np.full((1,) * block.ndim, last, dtype=np.int64)


def _key(value):
    """A hashable stand-in for open arguments (storage_options is a dict)."""
    return json.dumps(value, sort_keys=True, default=str)


_opened = {}  # per process: (location, open arguments) -> the open tessera.Array
_levels = {}  # per process: (location, job, level) -> an unpublished level, open (the last job's only)


def _open_cached(location, **open_kwargs):
    key = (str(location), _key(open_kwargs))
    if key not in _opened:
        _opened[key] = _open(location, **open_kwargs)
    return _opened[key]


def _open_level(location, kwargs, job, level):
    key = (location, job, level)
    if key not in _levels:
        if any(k[1] != job for k in _levels):
            _levels.clear()  # another job's levels: never read again
        _levels[key] = _tessera._shared_open_level(location, kwargs, level)
    return _levels[key]


_scratch = threading.local()  # per thread: the last region's buffer, reused by the next of its shape


def _read_into_scratch(source, origin, shape):
    """A region of `source`, read into this thread's scratch buffer (memory the process has
    touched already is much cheaper than fresh pages); valid until the thread's next read."""
    shape = tuple(shape)
    out = getattr(_scratch, "array", None)
    if out is None or out.shape != shape or out.dtype != source.dtype:
        _scratch.array = out = None  # free the old one first
        out = _scratch.array = np.empty(shape, dtype=source.dtype)
    source.read(tuple(slice(o, o + n) for o, n in zip(origin, shape)), out=out)
    return out


def _write_wave(location, kwargs, job, level, origin, shape):
    with _TaskOf(job):
        data = _read_into_scratch(_open_level(location, kwargs, job, level), origin, shape)
        return _tessera._shared_write(location, kwargs, level, origin, data, False, job)


def _convert_region(src, open_kwargs, location, kwargs, job, origin, shape):
    with _TaskOf(job):
        data = _read_into_scratch(_open_cached(src, **open_kwargs), origin, shape)
        return _tessera._shared_write(location, kwargs, 0, origin, data, True, job)


def _distributed_client():
    """The distributed Client the current Dask scheduler is, or None (a local scheduler)."""
    try:
        from distributed import Client
    except ImportError:
        return None
    owner = getattr(dask.base.get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


class _Job:
    """One distributed write: prepared (marker, no metadata), its tasks run, published last; or
    given up (the rest cancelled, the marker removed, running tasks waited for)."""

    def __init__(self, location, kwargs, retries):
        self.location = location
        self.kwargs = kwargs
        self.retries = retries
        self.token = secrets.token_hex(16)
        self.client = _distributed_client()
        self.futures = []

    def prepare(self):
        return _tessera._shared_prepare(self.location, self.kwargs, self.token)

    def compute(self, tasks):
        """The results of `tasks` (Delayed). The first failure raises at once (on a distributed
        cluster as soon as it completes, the other futures kept for give_up to cancel)."""
        if self.client is None:
            return dask.compute(*tasks)  # the local schedulers have no task retries
        from distributed import as_completed

        self.futures = self.client.compute(list(tasks), retries=self.retries)
        for future in as_completed(self.futures):
            if future.status == "error":
                future.result()  # raises the task's error
        results = [f.result() for f in self.futures]
        self.futures = []
        return results

    def publish(self):
        _tessera._shared_publish(self.location, self.kwargs, self.token)

    def give_up(self):
        if self.futures:
            self.client.cancel(self.futures)
        # The marker first (only while it is this job's): tasks stop writing.
        _tessera._shared_abandon(self.location, self.kwargs, self.token)
        deadline = time.monotonic() + _STOP_WAIT_S
        while self._still_running() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _still_running(self):
        if _running_here(self.token):
            return True
        if self.client is None:
            return False
        try:
            counts = self.client.run(_running_here, self.token, on_error="return")
        except Exception:
            return False  # the cluster is gone: nothing of it writes
        return any(isinstance(n, int) and n > 0 for n in counts.values())

    def run(self, levels, factors, first_wave):
        """Runs `first_wave(levels, factors)` (Delayed tasks returning the last level each
        completed), the waves of the levels above, and publishes."""
        complete = min(self.compute(first_wave(levels, factors)))
        while complete + 1 < len(levels):
            regions = _tessera._shared_regions(self.location, self.kwargs, complete)
            tasks = [dask.delayed(_write_wave, pure=False)(self.location, self.kwargs, self.token, complete, o, s)
                     for o, s in regions]
            complete = min(self.compute(tasks))
        self.publish()


def _with_storage(kwargs, storage_options):
    if storage_options is not None:
        kwargs["storage_options"] = dict(storage_options)
    return kwargs


def _source_open_kwargs(level, dataset, storage_options, hdf5_allowed_paths):
    """tessera.open's arguments for a source, as plain data (they travel to the workers)."""
    kwargs = _with_storage({"level": level}, storage_options)
    if dataset is not None:
        kwargs["dataset"] = dataset
    if hdf5_allowed_paths is not None:
        if isinstance(hdf5_allowed_paths, (str, bytes)):
            raise TypeError("hdf5_allowed_paths: expected a list of paths, got one string")
        kwargs["hdf5_allowed_paths"] = [os.fspath(p) for p in hdf5_allowed_paths]
    return kwargs


def to_store(darr, location, *, format=None, threads=1, retries=2, storage_options=None, **options):
    """Writes the Dask array ``darr`` as a new array at ``location``; returns nothing.

    ``format`` and ``options`` are those of :func:`tessera.create` (chunks, shard_chunks, codec,
    level, fill_value, dimension_names, attributes, pyramid, downsample, axes, voxel_size,
    translation, ome, mode, and the per-format options); dtype and shape come from ``darr``, which
    may have any chunking.
    ``threads``: compression threads per task (default 1: Dask runs the tasks in parallel).
    ``retries``: how often a distributed cluster reruns a failed region task (they are
    idempotent) before the job fails; the local schedulers do not retry.
    ``storage_options``: how to reach the store (see :func:`tessera.open`), carried to the workers.
    Formats: zarr3 and precomputed (identity-hash shards); an HDF5 file cannot be written by many
    processes at once (use :func:`tessera.convert`). On failure nothing at ``location`` opens as
    an array (see the module's documentation and :func:`cleanup`).
    """
    kwargs = dict(options, dtype=np.dtype(darr.dtype), shape=tuple(int(n) for n in darr.shape), threads=threads)
    kwargs["format"] = _tessera._format_of(location, format)
    kwargs = _with_storage(kwargs, storage_options)
    location = str(location)
    job = _Job(location, kwargs, retries)
    info = job.prepare()

    def first_wave(levels, factors):
        region = _region_shape([max(c) for c in darr.chunks], np.dtype(darr.dtype).itemsize, levels, factors)
        chunks = tuple(tuple(min(r, n - s) for s in range(0, n, r)) for r, n in zip(region, darr.shape))
        blocks = darr.rechunk(chunks)
        lasts = blocks.map_blocks(_write_block, location, kwargs, job.token, dtype=np.int64,
                                  chunks=tuple((1,) * n for n in blocks.numblocks),
                                  name="tessera-write-" + dask.base.tokenize(location, kwargs, job.token, darr.name))
        return list(lasts.to_delayed().ravel())

    try:
        job.run(info["levels"], info["factors"], first_wave)
    except BaseException:
        job.give_up()
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


def from_store(location, *, dataset=None, level=0, chunks=None, storage_options=None, hdf5_allowed_paths=None):
    """A Dask array reading the tessera array at ``location`` (any format and store tessera reads).

    ``chunks``: the Dask chunk shape; default: the array's shards (the chunks, unsharded) grown
    along dimension 0 to about 64 MiB, so that each task reads whole shards. ``dataset`` (HDF5) and
    ``level`` (OME-Zarr level or precomputed scale) select as :func:`tessera.open` does;
    ``storage_options`` and ``hdf5_allowed_paths`` (see :func:`tessera.open`) travel to the
    workers with the graph.
    """
    open_kwargs = _source_open_kwargs(level, dataset, storage_options, hdf5_allowed_paths)
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
                         name="tessera-" + dask.base.tokenize(str(location), _key(open_kwargs), chunks))


def convert(src, dst, *, dataset=None, source_level=0, format=None, threads=1, retries=2, storage_options=None,
            source_storage_options=None, hdf5_allowed_paths=None, **options):
    """:func:`tessera.convert` as a Dask graph: every task reads its own region of ``src`` (through
    tessera, touching only what it needs) and writes that region's shards of ``dst``, so no array
    data moves between workers. Regions are whole destination shards, grown to whole source chunks
    where that fits (no source chunk is decoded twice). Arguments as :func:`tessera.convert` takes
    them (the source's chunking, codec, ... are the defaults); ``threads``: compression threads per
    task; ``retries``, ``storage_options`` (the destination's) as :func:`to_store` takes them,
    ``source_storage_options`` the source's (default: ``storage_options`` when ``src`` is a URL
    of the same scheme); ``hdf5_allowed_paths``: an HDF5 source's, as :func:`tessera.open` takes
    it. Formats written: zarr3 and precomputed.
    """
    if source_storage_options is None and storage_options is not None and str(src).split("://")[0] == str(dst).split("://")[0]:
        source_storage_options = storage_options
    open_kwargs = _source_open_kwargs(source_level, dataset, source_storage_options, hdf5_allowed_paths)
    source = _open(src, **open_kwargs)
    if options.get("mode", "w-") not in ("w-", "x") and _same_location(source.location, dst):
        raise InvalidArgumentError(f"converting {dst} into itself (mode {options['mode']}) would change what it reads")
    fmt = _tessera._format_of(dst, format)
    spec = _conversion_spec(_tessera._conversion_defaults(source, fmt, _codec_chosen(options)), options)
    kwargs = _with_storage(dict(options, spec=spec, format=fmt, threads=threads), storage_options)
    location = str(dst)
    job = _Job(location, kwargs, retries)
    info = job.prepare()

    def first_wave(levels, factors):
        shard = levels[0]["shard_shape"]
        item = source.dtype.itemsize
        unit = [math.lcm(s, min(c, n)) for s, c, n in zip(shard, source.shards or source.chunks, source.shape)]
        if item * math.prod(unit) > _REGION_BYTES:
            unit = list(shard)
        region = _region_shape(unit, item, levels, factors)
        tasks = []
        for index in np.ndindex(*[-(-n // r) for n, r in zip(source.shape, region)]):
            origin = [i * r for i, r in zip(index, region)]
            shape = [min(r, n - o) for r, n, o in zip(region, source.shape, origin)]
            tasks.append(dask.delayed(_convert_region, pure=False)(str(src), open_kwargs, location, kwargs, job.token,
                                                                   origin, shape))
        return tasks

    try:
        job.run(info["levels"], info["factors"], first_wave)
    except BaseException:
        job.give_up()
        raise


def cleanup(location, *, format=None, storage_options=None):
    """Removes what a failed or killed job left at ``location``: its unreferenced shards, any
    metadata a killed client published part of, and its job marker (``.tessera-job``).

    Only a job's leftovers are removed: a location holding a published array (and no marker) is
    refused, and so is one holding any object a job does not write (named in the error), so a
    wrong location loses nothing. Do not run it while a job writes there (that job is cancelled).
    A job with ``mode="w"`` also removes a failed job's leftovers first. ``format``: as
    :func:`to_store` takes it (default: from the location's name).
    """
    kwargs = _with_storage({"format": _tessera._format_of(location, format)}, storage_options)
    _tessera._shared_cleanup(str(location), kwargs)
